// Placement through the planner: which nodes and devices a job gets under topology-aware
// and first-fit placement, on GPU nodes, switch trees and NVL72-style blocks.
#include <gtest/gtest.h>

#include <memory>

#include "sched/plan/planner.h"
#include "sched/select/devices.h"

namespace loom::sched {
namespace {

Cluster GpuCluster(const char* machine, int nodes) {
  auto topo = std::make_shared<const model::NodeTopology>(*model::CatalogTopology(machine));
  Cluster c;
  model::Partition part;
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.name = "n" + std::to_string(i);
    n.capacity = Resources{.cpus = topo->num_cpus(), .gpus = topo->num_gpus(), .mem_mb = 1 << 20};
    n.gpu_type = topo->gpus[0].type;
    n.topology = topo;
    c.nodes.push_back(n);
    part.nodes.push_back(i);
  }
  c.partitions.push_back(part);
  return c;
}

// Leaves of `per_leaf` nodes under one spine.
void AddTree(Cluster& c, int per_leaf) {
  model::ClusterTopology& t = c.topology;
  t.kind = model::ClusterTopology::Kind::kTree;
  const int leaves = (static_cast<int>(c.nodes.size()) + per_leaf - 1) / per_leaf;
  t.leaf_of.resize(c.nodes.size());
  for (int l = 0; l < leaves; ++l) {
    model::Switch s{.name = "leaf" + std::to_string(l), .level = 0, .parent = leaves};
    for (int n = l * per_leaf; n < std::min<int>((l + 1) * per_leaf, c.nodes.size()); ++n) {
      s.nodes.push_back(n);
      t.leaf_of[n] = l;
    }
    t.switches.push_back(s);
  }
  model::Switch spine{.name = "spine", .level = 1};
  for (int l = 0; l < leaves; ++l) spine.children.push_back(l);
  t.switches.push_back(spine);
}

// A job on `node` using `gpus` (whole node's CPUs share by GPU count) until t=1000.
RunningJob Busy(const Cluster& c, JobId id, int node, model::GpuMask gpus) {
  const Resources& cap = c.nodes[node].capacity;
  NodeAlloc a(node, Resources{.cpus = 0, .gpus = model::GpuCount(gpus), .mem_mb = 0});
  a.amount.cpus = cap.cpus * a.amount.gpus / std::max(1, cap.gpus);
  a.gpu_ids = gpus;
  return RunningJob{id, {a}, 0, 1000};
}

PendingJob GpusJob(int gpus) {  // --gpus=N -c 4: N one-GPU tasks on any nodes
  PendingJob j;
  j.id = 99;
  j.estimate = 100;
  j.shape.ntasks = gpus;
  j.shape.max_nodes = gpus;
  j.shape.gpus_per_task = 1;
  j.shape.cpus_per_task = 4;
  return j;
}

PendingJob NodesJob(int nodes, int gpus_per_node) {  // -N n --gpus-per-node=g
  PendingJob j;
  j.id = 98;
  j.estimate = 100;
  j.shape.min_nodes = j.shape.max_nodes = nodes;
  j.shape.ntasks = nodes;
  j.shape.ntasks_per_node = 1;
  j.shape.gpus_per_node = gpus_per_node;
  return j;
}

Allocation FitNow(Cluster& c, Placement how, std::span<const RunningJob> running,
                  const PendingJob& job, Time now = 10) {
  c.placement = how;
  ++c.generation;
  Planner p;
  p.Reset(c, now, running);
  Allocation a;
  EXPECT_TRUE(p.FitsAt(job, now, &a));
  return a;
}

TEST(PlacementTest, EightGpusWhenOnlyScatteredGpusAreFreeLandOnTheIdleNode) {
  Cluster c = GpuCluster("dgx-a100", 4);
  std::vector<RunningJob> running;
  for (int n = 0; n < 3; ++n) running.push_back(Busy(c, n + 1, n, 0b00111111));
  Allocation topo = FitNow(c, Placement::kTopology, running, GpusJob(8));
  ASSERT_EQ(topo.size(), 1u);
  EXPECT_EQ(topo[0].node, 3);
  EXPECT_EQ(topo[0].gpu_ids, 0xffu);
  EXPECT_EQ(DomainsSpanned(c, topo), 1);
  // First fit takes the two free GPUs of each node in turn: four nodes, four domains.
  Allocation ff = FitNow(c, Placement::kFirstFit, running, GpusJob(8));
  EXPECT_EQ(ff.size(), 4u);
  EXPECT_EQ(DomainsSpanned(c, ff), 4);
}

TEST(PlacementTest, SmallJobsPackPartlyUsedNodesAndKeepWholeOnesFree) {
  Cluster c = GpuCluster("pcie-8gpu-nvlink-pairs", 3);
  std::vector<RunningJob> running{Busy(c, 1, 1, 0b00000001)};
  Allocation a = FitNow(c, Placement::kTopology, running, NodesJob(1, 1));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].node, 1);             // the partly used node
  EXPECT_EQ(a[0].gpu_ids, 0b10u);      // GPU 0's NVLink partner
  // CPUs come from the GPU's NUMA node (CPUs 0-31 on this machine).
  for (int32_t cpu : a[0].cpu_ids.ToVector()) EXPECT_LT(cpu, 32);
  Allocation ff = FitNow(c, Placement::kFirstFit, running, NodesJob(1, 1));
  EXPECT_EQ(ff[0].node, 0);
  EXPECT_EQ(ff[0].gpu_ids, 0b1u);
}

TEST(PlacementTest, MultiNodeJobsStayUnderOneLeafSwitchWithBestFit) {
  Cluster c = GpuCluster("dgx-a100", 16);
  AddTree(c, 4);
  std::vector<RunningJob> running;
  // Leaf 0: nodes 0,1 busy (2 idle). Leaf 1: node 4 busy (3 idle). Leaves 2,3 idle.
  for (int n : {0, 1, 4}) running.push_back(Busy(c, n + 1, n, 0xff));
  Allocation a = FitNow(c, Placement::kTopology, running, NodesJob(3, 8));
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(LeavesSpanned(c, a), 1);
  for (const NodeAlloc& na : a) EXPECT_EQ(c.topology.leaf_of[na.node], 1);  // tightest leaf
  Allocation ff = FitNow(c, Placement::kFirstFit, running, NodesJob(3, 8));
  EXPECT_EQ(LeavesSpanned(c, ff), 2);  // nodes 2, 3 and 5
  // Too big for any leaf: the fewest leaves under the spine.
  Allocation big = FitNow(c, Placement::kTopology, running, NodesJob(8, 8));
  EXPECT_EQ(LeavesSpanned(c, big), 2);
}

TEST(PlacementTest, SwitchesLimitWaitsUntilItsMaxTime) {
  Cluster c = GpuCluster("dgx-a100", 8);
  AddTree(c, 4);
  std::vector<RunningJob> running{Busy(c, 1, 0, 0xff), Busy(c, 2, 4, 0xff)};
  PendingJob job = NodesJob(4, 8);
  job.submit = 0;
  job.shape.switches = 1;
  job.shape.switches_wait_s = 600;
  c.placement = Placement::kTopology;
  Planner p;
  p.Reset(c, 10, running);
  Allocation a;
  EXPECT_FALSE(p.FitsAt(job, 10, &a));  // 3 + 3 idle nodes: needs two leaves
  p.Reset(c, 600, running);
  EXPECT_TRUE(p.FitsAt(job, 600, &a));  // waited long enough: any leaves
  EXPECT_EQ(LeavesSpanned(c, a), 2);
  // And the reservation it gets is one a single leaf can honour: when node 0 frees.
  p.Reset(c, 10, running);
  Time t = p.EarliestStart(job, 10, kNever, 1, &a);
  EXPECT_EQ(t, 600);  // the wait ends before node 0 frees at 1000
}

TEST(PlacementTest, ThirtySixGpusOnNvl72BlocksStayInOneBlock) {
  Cluster c = GpuCluster("gb200-nvl72-tray", 36);
  c.topology.kind = model::ClusterTopology::Kind::kBlock;
  c.topology.leaf_of.resize(36);
  for (int b = 0; b < 2; ++b) {
    model::Block block{.name = "block" + std::to_string(b)};
    for (int n = b * 18; n < (b + 1) * 18; ++n) {
      block.nodes.push_back(n);
      c.topology.leaf_of[n] = b;
    }
    c.topology.blocks.push_back(block);
  }
  c.topology.block_sizes = {18};
  std::vector<RunningJob> running;
  for (int n = 0; n < 5; ++n) running.push_back(Busy(c, n + 1, n, 0xf));
  for (int n = 10; n < 18; ++n) running.push_back(Busy(c, n + 1, n, 0xf));
  Allocation topo = FitNow(c, Placement::kTopology, running, NodesJob(9, 4));
  EXPECT_EQ(DomainsSpanned(c, topo), 1);
  EXPECT_EQ(LeavesSpanned(c, topo), 1);
  // First fit: nodes 5-9 of block 0, then four of block 1: two NVLink domains.
  Allocation ff = FitNow(c, Placement::kFirstFit, running, NodesJob(9, 4));
  EXPECT_EQ(DomainsSpanned(c, ff), 2);
  // --gpus=36 lands in one block too.
  Allocation gpus = FitNow(c, Placement::kTopology, running, GpusJob(36));
  EXPECT_EQ(DomainsSpanned(c, gpus), 1);
}

TEST(PlacementTest, SegmentsStayInsideBlocks) {
  Cluster c = GpuCluster("gb200-nvl72-tray", 36);
  c.topology.kind = model::ClusterTopology::Kind::kBlock;
  c.topology.leaf_of.resize(36);
  for (int b = 0; b < 2; ++b) {
    model::Block block{.name = "block" + std::to_string(b)};
    for (int n = b * 18; n < (b + 1) * 18; ++n) {
      block.nodes.push_back(n);
      c.topology.leaf_of[n] = b;
    }
    c.topology.blocks.push_back(block);
  }
  // Five trays free in block 0 (13-17), seven in block 1 (29-35).
  std::vector<RunningJob> running;
  for (int n = 0; n < 13; ++n) running.push_back(Busy(c, n + 1, n, 0xf));
  for (int n = 18; n < 29; ++n) running.push_back(Busy(c, n + 1, n, 0xf));
  for (Placement how : {Placement::kTopology, Placement::kFirstFit}) {
    PendingJob job = NodesJob(8, 4);
    job.shape.segment = 4;
    Allocation a = FitNow(c, how, running, job);
    ASSERT_EQ(a.size(), 8u);
    int in_block[2] = {0, 0};
    for (const NodeAlloc& na : a) ++in_block[c.topology.leaf_of[na.node]];
    EXPECT_EQ(in_block[0], 4);
    EXPECT_EQ(in_block[1], 4);
  }
  // Segments of 8: neither block has eight free trays.
  PendingJob job = NodesJob(8, 4);
  job.shape.segment = 8;
  c.placement = Placement::kTopology;
  Planner p;
  p.Reset(c, 10, running);
  Allocation a;
  EXPECT_FALSE(p.FitsAt(job, 10, &a));
}

TEST(PlacementTest, StartsInOnePassNeverShareDevices) {
  Cluster c = GpuCluster("dgx-h100", 2);
  c.placement = Placement::kTopology;
  Planner p;
  p.Reset(c, 0, {});
  model::GpuMask used[2] = {0, 0};
  core::CpuSet cpus[2];
  for (int i = 0; i < 8; ++i) {
    Allocation a;
    ASSERT_TRUE(p.FitsAt(GpusJob(2), 0, &a)) << i;
    p.Hold(a, 0, 100);
    for (const NodeAlloc& na : a) {
      EXPECT_EQ(used[na.node] & na.gpu_ids, 0u);
      EXPECT_FALSE(cpus[na.node].Intersects(na.cpu_ids));
      used[na.node] |= na.gpu_ids;
      cpus[na.node] |= na.cpu_ids;
      EXPECT_EQ(model::GpuCount(na.gpu_ids), na.amount.gpus);
      EXPECT_EQ(na.cpu_ids.count(), na.amount.cpus);
    }
  }
  EXPECT_EQ(used[0] | used[1], 0xffu);
  Allocation a;
  EXPECT_FALSE(p.FitsAt(GpusJob(1), 0, &a));
}

}  // namespace
}  // namespace loom::sched
