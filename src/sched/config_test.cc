// The example sites load whole (slurm.conf + gres.conf + topology.conf) into a cluster the
// scheduler places jobs on by topology.
#include "sched/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sched/plan/planner.h"
#include "sched/select/devices.h"

namespace loom::sched {
namespace {

Cluster LoadExample(const std::string& path) {
  std::vector<conf::Diagnostic> warnings;
  auto site = conf::LoadSiteConfig(std::string(LOOM_SOURCE_DIR) + "/" + path, &warnings);
  EXPECT_TRUE(site.ok()) << site.status();
  if (!site.ok()) return Cluster{};
  return ClusterFromSite(*site);
}

PendingJob NodesJob(int nodes, int gpus_per_node, int partition) {
  PendingJob j;
  j.id = 1;
  j.partition = partition;
  j.estimate = 3600;
  j.shape.min_nodes = j.shape.max_nodes = nodes;
  j.shape.ntasks = nodes;
  j.shape.ntasks_per_node = 1;
  j.shape.gpus_per_node = gpus_per_node;
  return j;
}

TEST(SiteConfigTest, DgxExampleHasNodeInsidesAndASwitchTree) {
  Cluster c = LoadExample("examples/slurm.conf");
  ASSERT_EQ(c.nodes.size(), 64u);
  ASSERT_NE(c.nodes[0].topology, nullptr);
  EXPECT_EQ(c.nodes[0].topology->num_gpus(), 8);
  EXPECT_EQ(c.nodes[0].topology->num_domains(), 1);
  EXPECT_EQ(c.nodes[0].topology->gpus[5].numa, 1);
  ASSERT_EQ(c.topology.kind, model::ClusterTopology::Kind::kTree);
  EXPECT_EQ(c.topology.leaf_of[9], 1);  // gpu-10 under leaf02

  // Leaf 1 (gpu-09..16) half busy; a 4-node job goes under a single leaf.
  std::vector<RunningJob> running;
  for (int n = 8; n < 12; ++n) {
    NodeAlloc a(n, Resources{.cpus = 128, .gpus = 8, .mem_mb = 1000});
    a.gpu_ids = 0xff;
    running.push_back(RunningJob{static_cast<JobId>(n), {a}, 0, 7200});
  }
  Planner p;
  p.Reset(c, 10, running);
  Allocation alloc;
  ASSERT_TRUE(p.FitsAt(NodesJob(4, 8, 1), 10, &alloc));  // partition "train"
  EXPECT_EQ(LeavesSpanned(c, alloc), 1);
}

TEST(SiteConfigTest, Nvl72ExampleIsTwoNvlinkBlocks) {
  Cluster c = LoadExample("examples/nvl72/slurm.conf");
  ASSERT_EQ(c.nodes.size(), 36u);
  ASSERT_NE(c.nodes[0].topology, nullptr);
  EXPECT_TRUE(c.nodes[0].topology->nvlink_spans_nodes);
  ASSERT_EQ(c.topology.kind, model::ClusterTopology::Kind::kBlock);
  EXPECT_EQ(c.topology.blocks.size(), 2u);
  Planner p;
  p.Reset(c, 0, {});
  Allocation alloc;
  ASSERT_TRUE(p.FitsAt(NodesJob(9, 4, 0), 0, &alloc));
  EXPECT_EQ(DomainsSpanned(c, alloc), 1);  // 36 GPUs in one NVLink block
}

TEST(SiteConfigTest, MissingTopologyConfIsAClearError) {
  const std::string dir = testing::TempDir() + "/site_no_topology";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/slurm.conf");
    f << "ClusterName=x\nSlurmctldHost=h\nTopologyPlugin=topology/tree\n"
         "NodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=n[1-2] Default=YES\n";
  }
  std::vector<conf::Diagnostic> warnings;
  auto site = conf::LoadSiteConfig(dir + "/slurm.conf", &warnings);
  ASSERT_FALSE(site.ok());
  EXPECT_NE(site.status().message().find("topology.conf, which does not exist"),
            absl::string_view::npos)
      << site.status();
}

TEST(SiteConfigTest, SiteWithoutTopologyConfIsFlat) {
  // examples/mixed has no topology.conf and does not ask for one.
  std::vector<conf::Diagnostic> warnings;
  auto site = conf::LoadSiteConfig(std::string(LOOM_SOURCE_DIR) + "/examples/mixed/slurm.conf",
                                   &warnings);
  ASSERT_TRUE(site.ok()) << site.status();
  EXPECT_TRUE(site->network.empty());
}

TEST(SiteConfigTest, CpuOnlyNodesGiveJobsDistinctCpuIds) {
  // Without gres.conf or GPUs a node's CPUs are still numbered, so two jobs sharing it get
  // CPU ids of their own (scontrol show job -d, ConstrainCores).
  const std::string dir = testing::TempDir() + "/site_cpu_only";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/slurm.conf");
    f << "ClusterName=x\nSlurmctldHost=h\n"
         "NodeName=n[1-2] CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=1\n"
         "PartitionName=p Nodes=n[1-2] Default=YES\n";
  }
  std::vector<conf::Diagnostic> warnings;
  auto site = conf::LoadSiteConfig(dir + "/slurm.conf", &warnings);
  ASSERT_TRUE(site.ok()) << site.status();
  Cluster c = ClusterFromSite(*site);
  ASSERT_EQ(c.nodes.size(), 2u);
  ASSERT_NE(c.nodes[0].topology, nullptr);
  EXPECT_EQ(c.nodes[0].topology, c.nodes[1].topology);  // one shape, one topology
  EXPECT_EQ(c.nodes[0].topology->num_cpus(), 8);
  EXPECT_EQ(c.nodes[0].topology->num_gpus(), 0);

  PendingJob j;
  j.id = 1;
  j.partition = 0;
  j.estimate = 60;
  j.shape.min_nodes = j.shape.max_nodes = 1;
  j.shape.ntasks = 1;
  j.shape.cpus_per_task = 3;
  NodeAlloc held(0, Resources{.cpus = 3, .mem_mb = 0});
  held.cpu_ids.set(0);
  held.cpu_ids.set(1);
  held.cpu_ids.set(2);
  std::vector<RunningJob> running{RunningJob{7, {held}, 0, 3600}};
  Planner p;
  p.Reset(c, 10, running);
  Allocation alloc;
  ASSERT_TRUE(p.FitsAt(j, 10, &alloc));
  p.AssignDevices(&alloc);
  ASSERT_EQ(alloc.size(), 1u);
  EXPECT_EQ(alloc[0].node, 0);  // the tighter fit
  EXPECT_EQ(alloc[0].cpu_ids.count(), 3);
  EXPECT_FALSE(alloc[0].cpu_ids.Intersects(held.cpu_ids));
}

}  // namespace
}  // namespace loom::sched
