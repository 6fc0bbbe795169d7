// Properties of GPU placement in the simulator, on the synthetic DGX and NVL72 workloads
// and on the Alibaba GPU trace, under every policy and both placements: no GPU or CPU is
// ever held by two jobs at once (checked here from the allocations, independently of the
// simulator's own check), every GPU job gets exactly its GPUs, CPUs sit in the GPUs'
// NUMA nodes whenever enough were free there, and both placements do the same work.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "sched/backfill/policy.h"
#include "sim/gpu_workload.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim/synthetic.h"
#include "tests/support/sanitized.h"

namespace loom::sim {
namespace {

// Jobs per synthetic workload (twice as many from a trace); under a sanitizer, a quarter.
constexpr int kJobs = test_support::kSanitized ? 400 : 1500;

struct Hold {
  Time start, end;
  sched::JobId job;
};

// Per (node, GPU or CPU id), the intervals it was held; overlapping ones are a defect.
class DeviceLedger {
 public:
  void Add(const JobRecord& r, const sched::Allocation& alloc) {
    for (const sched::NodeAlloc& a : alloc) {
      for (int g = 0; g < model::kMaxGpusPerNode; ++g) {
        if (a.gpu_ids >> g & 1) gpus_[{a.node, g}].push_back({r.start, r.start + r.run, r.id});
      }
      for (int32_t c : a.cpu_ids.ToVector()) cpus_[{a.node, c}].push_back({r.start, r.start + r.run, r.id});
    }
  }
  // The first overlap found, or "".
  std::string Overlap() {
    for (auto* m : {&gpus_, &cpus_}) {
      for (auto& [key, holds] : *m) {
        std::sort(holds.begin(), holds.end(),
                  [](const Hold& a, const Hold& b) { return a.start < b.start; });
        for (size_t i = 1; i < holds.size(); ++i) {
          if (holds[i].start < holds[i - 1].end) {
            return "node " + std::to_string(key.first) + " device " + std::to_string(key.second) +
                   ": jobs " + std::to_string(holds[i - 1].job) + " and " +
                   std::to_string(holds[i].job);
          }
        }
      }
    }
    return "";
  }

 private:
  std::map<std::pair<int32_t, int32_t>, std::vector<Hold>> gpus_, cpus_;
};

void CheckWorkload(const GpuWorkload& w) {
  for (const char* policy : {"fcfs", "easy", "conservative", "slurm"}) {
    double work[2] = {0, 0};
    for (int p = 0; p < 2; ++p) {
      sched::Cluster cluster = w.cluster;
      cluster.placement = p == 0 ? sched::Placement::kFirstFit : sched::Placement::kTopology;
      auto pol = sched::MakePolicy(policy, sched::PolicyOptions{});
      ASSERT_TRUE(pol.ok());
      DeviceLedger ledger;
      int64_t wrong_counts = 0;
      SimOptions so;
      so.on_start = [&](const JobRecord& r, const sched::Allocation& alloc) {
        ledger.Add(r, alloc);
        for (const sched::NodeAlloc& a : alloc) {
          const model::Node& n = cluster.nodes[a.node];
          if (n.topology && model::GpuCount(a.gpu_ids) != a.amount.gpus) ++wrong_counts;
        }
      };
      auto res = Simulate(cluster, w.jobs, **pol, so);
      ASSERT_TRUE(res.ok()) << w.name << " " << policy << ": " << res.status();
      EXPECT_EQ(ledger.Overlap(), "") << w.name << " " << policy << " placement " << p;
      EXPECT_EQ(wrong_counts, 0);
      for (const JobRecord& r : res->jobs) {
        ASSERT_GE(r.start, r.submit);
        work[p] += static_cast<double>(r.run) * r.gpus;
        if (p == 1) EXPECT_NE(r.numa_local, 0) << w.name << " job " << r.id;
      }
      GpuSummary g = SummarizeGpu(*res, p == 0 ? "first-fit" : "topo");
      if (p == 1 && g.single_domain_jobs > 0) {
        EXPECT_EQ(g.single_domain_fraction, 1.0) << w.name << " " << policy;
      }
      if (p == 1 && g.leaf_local_jobs > 0) {
        EXPECT_EQ(g.leaf_local_fraction, 1.0) << w.name << " " << policy;
      }
    }
    // No communication model: both placements run exactly the same GPU time.
    EXPECT_EQ(work[0], work[1]) << w.name << " " << policy;
  }
}

TEST(GpuPropertyTest, SyntheticDgx) {
  auto w = SyntheticWorkload({.kind = "dgx", .seed = 3, .nodes = 32, .jobs = kJobs, .load = 1.0});
  ASSERT_TRUE(w.ok()) << w.status();
  CheckWorkload(*w);
}

TEST(GpuPropertyTest, SyntheticNvl72) {
  auto w = SyntheticWorkload({.kind = "nvl72", .seed = 4, .nodes = 36, .jobs = kJobs, .load = 1.0});
  ASSERT_TRUE(w.ok()) << w.status();
  CheckWorkload(*w);
}

TEST(GpuPropertyTest, AlibabaTrace) {
  const std::string dir = std::string(LOOM_SHARED_DIR) + "/data/gpu-traces/alibaba-gpu-v2023";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " not present";
  auto w = ReadAlibabaGpuTrace(dir);
  ASSERT_TRUE(w.ok()) << w.status();
  w->jobs.resize(std::min<size_t>(w->jobs.size(), 2 * kJobs));
  CheckWorkload(*w);
}

}  // namespace
}  // namespace loom::sim
