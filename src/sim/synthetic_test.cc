#include "sim/synthetic.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/gpu_topology.h"

namespace loom::sim {
namespace {

// GPUs a job's shape asks for in all.
int64_t Gpus(const model::JobShape& s) {
  return s.gpus_per_task > 0 ? int64_t{s.gpus_per_task} * s.ntasks
                             : int64_t{s.gpus_per_node} * s.max_nodes;
}

GpuWorkload Make(const SyntheticOptions& opts) {
  auto w = SyntheticWorkload(opts);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *std::move(w) : GpuWorkload{};
}

TEST(Synthetic, DgxClusterUnderALeafSpineTree) {
  GpuWorkload w = Make({});
  EXPECT_EQ(w.name, "synthetic-dgx-seed1");
  ASSERT_EQ(w.cluster.nodes.size(), 128u);
  EXPECT_EQ(w.cluster.nodes.front().name, "dgx-001");
  EXPECT_EQ(w.cluster.nodes.back().name, "dgx-128");
  int64_t gpus = 0;
  for (const model::Node& n : w.cluster.nodes) {
    gpus += n.capacity.gpus;
    EXPECT_EQ(n.capacity, (model::Resources{256, 8, 1024 * 1024}));
    EXPECT_EQ(n.gpu_type, "a100");
    ASSERT_NE(n.topology, nullptr);
    EXPECT_EQ(*n.topology, *model::CatalogTopology("dgx-a100"));
    EXPECT_EQ(n.sockets * n.cores_per_socket * n.threads_per_core, 256);
  }
  EXPECT_EQ(gpus, 1024);
  ASSERT_EQ(w.cluster.partitions.size(), 1u);
  EXPECT_EQ(w.cluster.partitions[0].nodes.size(), 128u);

  const model::ClusterTopology& net = w.cluster.topology;
  EXPECT_EQ(net.kind, model::ClusterTopology::Kind::kTree);
  ASSERT_EQ(net.switches.size(), 17u);
  for (int l = 0; l < 16; ++l) {
    const model::Switch& leaf = net.switches[l];
    EXPECT_EQ(leaf.level, 0);
    EXPECT_EQ(leaf.parent, 16);
    ASSERT_EQ(leaf.nodes.size(), 8u);
    EXPECT_EQ(leaf.nodes.front(), 8 * l);
    EXPECT_TRUE(leaf.children.empty());
  }
  EXPECT_EQ(net.switches[0].name, "leaf01");
  EXPECT_EQ(net.switches[15].name, "leaf16");
  const model::Switch& spine = net.switches[16];
  EXPECT_EQ(spine.name, "spine");
  EXPECT_EQ(spine.level, 1);
  EXPECT_EQ(spine.parent, -1);
  EXPECT_EQ(spine.children.size(), 16u);
  EXPECT_TRUE(spine.nodes.empty());
  ASSERT_EQ(net.leaf_of.size(), 128u);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(net.leaf_of[i], i / 8);
}

TEST(Synthetic, LastLeafMayBePartial) {
  GpuWorkload w = Make({.nodes = 20, .nodes_per_leaf = 8, .jobs = 10});
  const model::ClusterTopology& net = w.cluster.topology;
  ASSERT_EQ(net.switches.size(), 4u);
  EXPECT_EQ(net.switches[2].nodes, (std::vector<int32_t>{16, 17, 18, 19}));
  EXPECT_EQ(net.switches[3].children, (std::vector<int32_t>{0, 1, 2}));
}

TEST(Synthetic, Nvl72RacksAreBlocks) {
  GpuWorkload w = Make({.kind = "nvl72"});
  EXPECT_EQ(w.name, "synthetic-nvl72-seed1");
  ASSERT_EQ(w.cluster.nodes.size(), 72u);
  for (const model::Node& n : w.cluster.nodes) {
    EXPECT_EQ(n.capacity.gpus, 4);
    EXPECT_EQ(n.capacity.cpus, 144);
    EXPECT_EQ(n.gpu_type, "gb200");
    EXPECT_TRUE(n.topology->nvlink_spans_nodes);
  }
  const model::ClusterTopology& net = w.cluster.topology;
  EXPECT_EQ(net.kind, model::ClusterTopology::Kind::kBlock);
  EXPECT_TRUE(net.switches.empty());
  ASSERT_EQ(net.blocks.size(), 4u);
  for (int b = 0; b < 4; ++b) {
    ASSERT_EQ(net.blocks[b].nodes.size(), 18u);
    EXPECT_EQ(net.blocks[b].nodes.front(), 18 * b);
  }
  EXPECT_EQ(net.blocks[0].name, "block01");
  EXPECT_EQ(net.block_sizes, std::vector<int32_t>{18});
  for (int i = 0; i < 72; ++i) EXPECT_EQ(net.leaf_of[i], i / 18);

  bool whole_rack = false;
  for (const SimJob& j : w.jobs) {
    const int64_t k = Gpus(j.shape);
    EXPECT_LE(k, 72);
    if (k > 4) {
      EXPECT_EQ(j.shape.gpus_per_node, 4);
      EXPECT_EQ(j.shape.ntasks_per_node, 4);
      EXPECT_EQ(j.shape.min_nodes, k / 4);
    }
    whole_rack |= k == 72;
  }
  EXPECT_TRUE(whole_rack);
}

TEST(Synthetic, BadOptionsAreErrors) {
  auto w = SyntheticWorkload({.kind = "tpu"});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(w.status().message()).find("'tpu'"), std::string::npos);
  EXPECT_FALSE(SyntheticWorkload({.kind = "nvl72", .nodes = 20}).ok());
  EXPECT_FALSE(SyntheticWorkload({.jobs = 0}).ok());
  EXPECT_FALSE(SyntheticWorkload({.load = 0}).ok());
  EXPECT_FALSE(SyntheticWorkload({.load = NAN}).ok());
  EXPECT_FALSE(SyntheticWorkload({.nodes = -1}).ok());
}

TEST(Synthetic, SameSeedSameWorkload) {
  GpuWorkload a = Make({.seed = 7, .jobs = 2000});
  GpuWorkload b = Make({.seed = 7, .jobs = 2000});
  GpuWorkload c = Make({.seed = 8, .jobs = 2000});
  ASSERT_EQ(a.jobs.size(), 2000u);
  ASSERT_EQ(b.jobs.size(), a.jobs.size());
  bool differs = false;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].id, b.jobs[i].id);
    EXPECT_EQ(a.jobs[i].submit, b.jobs[i].submit);
    EXPECT_EQ(a.jobs[i].run, b.jobs[i].run);
    EXPECT_EQ(a.jobs[i].estimate, b.jobs[i].estimate);
    EXPECT_EQ(a.jobs[i].shape, b.jobs[i].shape);
    differs |= a.jobs[i].run != c.jobs[i].run || !(a.jobs[i].shape == c.jobs[i].shape);
  }
  EXPECT_EQ(a.notes, b.notes);
  EXPECT_EQ(a.cluster.topology, b.cluster.topology);
  EXPECT_TRUE(differs);
}

// The exact numbers seed 1 gives (submit, GPUs, run, estimate), so that a change of
// platform or of the generator shows.
TEST(Synthetic, SeedOneIsStable) {
  GpuWorkload w = Make({.jobs = 1000});
  ASSERT_EQ(w.jobs.size(), 1000u);
  std::string got;
  for (const SimJob& j : std::span(w.jobs).first(5)) {
    got += std::to_string(j.submit) + " " + std::to_string(Gpus(j.shape)) + " " +
           std::to_string(j.run) + " " + std::to_string(j.estimate) + "\n";
  }
  EXPECT_EQ(got, "103 1 146 600\n160 1 168 600\n208 1 5 600\n213 4 116 600\n243 1 172 600\n");
}

TEST(Synthetic, JobsMatchTheirTargets) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    GpuWorkload w = Make({.seed = seed, .jobs = 20000, .load = 0.7});
    ASSERT_EQ(w.jobs.size(), 20000u);
    int64_t gpus = 0, work = 0, single = 0, per_node_form = 0, small = 0;
    std::vector<int64_t> runs;
    for (const SimJob& j : w.jobs) {
      const model::JobShape& s = j.shape;
      const int64_t k = Gpus(s);
      ASSERT_GE(k, 1);
      ASSERT_LE(k, 64);
      ASSERT_EQ(k & (k - 1), 0) << "a power of two";
      gpus += k;
      work += k * j.run;
      single += k == 1;
      runs.push_back(j.run);
      ASSERT_GE(j.run, 1);
      ASSERT_LE(j.run, 7 * 86400);
      ASSERT_GE(j.estimate, j.run);
      ASSERT_LE(j.estimate, 7 * 86400);
      if (j.estimate < 7 * 86400) {
        ASSERT_EQ(j.estimate % 600, 0);
        ASSERT_LT(j.estimate, 3 * j.run + 600);
      }
      ASSERT_EQ(s.TotalCpus(), 16 * k);
      if (k <= 8) {
        ++small;
        if (s.gpus_per_node > 0) {  // -N1 --gpus-per-node=k
          ++per_node_form;
          ASSERT_EQ(s.max_nodes, 1);
          ASSERT_EQ(s.ntasks, 1);
          ASSERT_EQ(s.gpus_per_node, k);
          ASSERT_EQ(s.mem_per_node_mb, 65536 * k);
        } else {  // --gpus=k
          ASSERT_EQ(s.min_nodes, 1);
          ASSERT_EQ(s.max_nodes, k);
          ASSERT_EQ(s.ntasks, k);
          ASSERT_EQ(s.gpus_per_task, 1);
          ASSERT_EQ(s.cpus_per_task, 16);
          ASSERT_EQ(s.mem_per_cpu_mb, 4096);
        }
      } else {
        ASSERT_EQ(s.min_nodes, k / 8);
        ASSERT_EQ(s.max_nodes, k / 8);
        ASSERT_EQ(s.ntasks, k);
        ASSERT_EQ(s.ntasks_per_node, 8);
        ASSERT_EQ(s.gpus_per_node, 8);
        ASSERT_EQ(s.cpus_per_task, 16);
        ASSERT_EQ(s.mem_per_cpu_mb, 4096);
      }
    }
    std::sort(runs.begin(), runs.end());
    const double mean_gpus = static_cast<double>(gpus) / 20000;
    const double median_run = (runs[9999] + runs[10000]) / 2.0;
    EXPECT_NEAR(mean_gpus, 3.716, 0.05 * 3.716);
    EXPECT_GT(single, 20000 / 2);  // median 1 GPU
    EXPECT_NEAR(median_run, 206, 0.1 * 206);
    EXPECT_NEAR(static_cast<double>(per_node_form) / small, 0.5, 0.02);
    // Offered load: GPU-seconds asked per second of arrivals, over all GPUs.
    const double span = static_cast<double>(w.jobs.back().submit - w.jobs.front().submit);
    EXPECT_NEAR(static_cast<double>(work) / (span * 1024), 0.7, 0.03 * 0.7);
    EXPECT_TRUE(std::is_sorted(w.jobs.begin(), w.jobs.end(), [](const SimJob& a, const SimJob& b) {
      return a.submit < b.submit;
    }));
  }
}

TEST(Synthetic, SizesLargerThanTheClusterAreLeftOut) {
  GpuWorkload w = Make({.nodes = 2, .jobs = 3000});
  for (const SimJob& j : w.jobs) EXPECT_LE(Gpus(j.shape), 16);
  EXPECT_TRUE(std::any_of(w.notes.begin(), w.notes.end(), [](const std::string& n) {
    return n.find("left out of the mix: 32, 64 GPUs") != std::string::npos;
  }));
}

TEST(Synthetic, RunTimeSigmaGivesTheCappedMean) {
  const double mu = std::log(kSyntheticRunMedianS);
  const double s = kSyntheticRunSigma;
  const double c = std::log(static_cast<double>(kSyntheticRunCapS));
  auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const double capped_mean = std::exp(mu + s * s / 2) * phi((c - mu - s * s) / s) +
                             kSyntheticRunCapS * (1 - phi((c - mu) / s));
  EXPECT_NEAR(capped_mean, kSyntheticRunMeanS, 0.01);
}

TEST(Synthetic, InverseNormalCdf) {
  EXPECT_EQ(InverseNormalCdf(0.5), 0.0);
  EXPECT_NEAR(InverseNormalCdf(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(InverseNormalCdf(0.025), -1.959963984540054, 1e-14);
  EXPECT_NEAR(InverseNormalCdf(0.001), -3.090232306167813, 1e-14);
  EXPECT_NEAR(InverseNormalCdf(1e-10), -6.361340902404056, 1e-13);
  for (double p = 0.0005; p < 1; p += 0.001) {
    const double x = InverseNormalCdf(p);
    EXPECT_NEAR(0.5 * std::erfc(-x / std::sqrt(2.0)), p, 1e-14 * std::max(1.0, p / (1 - p)));
  }
}

}  // namespace
}  // namespace loom::sim
