// Every slurm.conf shipped under examples/ loads, and the two main ones describe the
// clusters their header comments promise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "conf/site_config.h"
#include "conf/slurm_conf.h"

namespace loom::conf {
namespace {

using ::testing::HasSubstr;

std::string ErrorText(const StatusOr<ClusterConfig>& r) {
  return r.ok() ? "<ok>" : std::string(r.status().message());
}

TEST(Examples, EverySlurmConfLoads) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator("examples")) {
    if (!entry.is_regular_file() || entry.path().filename() != "slurm.conf") continue;
    std::vector<Diagnostic> warnings;
    auto c = LoadSlurmConf(entry.path().string(), &warnings);
    ASSERT_TRUE(c.ok()) << entry.path() << ":\n" << ErrorText(c);
    for (const Diagnostic& w : warnings) {
      EXPECT_THAT(w.message, HasSubstr("not acted on by Loom yet")) << w.ToString();
    }
    ++loaded;
  }
  EXPECT_GE(loaded, 2);
}

TEST(Examples, GpuTrainingCluster) {
  auto c = LoadSlurmConf("examples/slurm.conf", nullptr);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  ASSERT_EQ(c->nodes.size(), 64u);
  for (const NodeConfig& n : c->nodes) {
    EXPECT_EQ(n.GresCount("gpu", "a100"), 8) << n.name;
    EXPECT_EQ(n.cpus, 128) << n.name;
  }
  EXPECT_EQ(c->nodes[63].addr, "10.1.0.64");
  EXPECT_EQ(c->controllers.size(), 2u);
  const PartitionConfig* train = c->FindPartition("train");
  ASSERT_NE(train, nullptr);
  EXPECT_TRUE(train->is_default);
  EXPECT_EQ(train->nodes.size(), 64u);
  EXPECT_EQ(c->FindPartition("debug")->max_time_s, 3600);
  EXPECT_GT(c->FindPartition("debug")->priority_tier, train->priority_tier);
  EXPECT_EQ(c->FindPartition("long")->max_time_s, 14 * 86400);
  // The backfill window covers the longest partition time limit.
  EXPECT_GE(int64_t{c->scheduler.bf_window_min} * 60, c->FindPartition("long")->max_time_s);
}

TEST(Examples, MixedCluster) {
  auto c = LoadSlurmConf("examples/mixed/slurm.conf", nullptr);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  int h100 = 0, a100 = 0, cpu_only = 0;
  for (const NodeConfig& n : c->nodes) {
    if (n.HasFeature("h100")) h100 += static_cast<int>(n.GresCount("gpu", "h100"));
    if (n.HasFeature("a100")) a100 += static_cast<int>(n.GresCount("gpu", "a100"));
    if (n.GpuCount() == 0) ++cpu_only;
  }
  EXPECT_EQ(h100, 128);
  EXPECT_EQ(a100, 128);
  EXPECT_EQ(cpu_only, 36);
  EXPECT_EQ(c->DefaultPartition()->name, "compute");
  EXPECT_EQ(c->FindPartition("training")->oversubscribe, OverSubscribe::kExclusive);
}

// The cluster the seed articles' job scripts run on (examples/seeds): every partition they
// name, enough 8-GPU nodes for the largest (16 nodes of 8 H100s), its GPU and network
// layout beside it.
TEST(Examples, SeedsCluster) {
  std::vector<Diagnostic> warnings;
  auto site = LoadSiteConfig("examples/seeds/slurm.conf", &warnings);
  ASSERT_TRUE(site.ok()) << site.status();
  const ClusterConfig& c = site->cluster;
  int h100_nodes = 0, cpu_nodes = 0;
  for (const NodeConfig& n : c.nodes) {
    h100_nodes += n.GresCount("gpu", "h100") == 8;
    cpu_nodes += n.GpuCount() == 0;
    EXPECT_EQ(n.addr, "127.0.0.1") << n.name;
  }
  EXPECT_EQ(h100_nodes, 16);
  EXPECT_EQ(cpu_nodes, 4);
  for (const char* name : {"train", "training", "compute", "debug", "gpu", "inference"}) {
    EXPECT_NE(c.FindPartition(name), nullptr) << name;
  }
  EXPECT_EQ(c.DefaultPartition()->name, "train");
  EXPECT_EQ(c.FindPartition("train")->max_time_s, 7 * 86400);  // --time=7-00:00:00 fits
  EXPECT_EQ(c.FindPartition("train")->nodes.size(), 16u);
  EXPECT_EQ(c.def_mem_per_cpu_mb, 3900);
  int with_topology = 0;
  for (const auto& t : site->node_topologies) with_topology += t != nullptr;
  EXPECT_EQ(with_topology, 16);
  EXPECT_FALSE(site->network.empty());
}

}  // namespace
}  // namespace loom::conf
