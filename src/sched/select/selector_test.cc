#include "sched/select/selector.h"

#include <gtest/gtest.h>

namespace loom::sched {
namespace {

const Resources kNode{.cpus = 64, .gpus = 8, .mem_mb = 512000};

TEST(Selector, CoreLevelSingleNodeTakesTheFirstThatFits) {
  model::JobShape s{.ntasks = 4, .cpus_per_task = 8, .mem_per_cpu_mb = 1000, .gpus_per_node = 2};
  std::vector<Candidate> c = {{0, Resources{.cpus = 16, .gpus = 8, .mem_mb = 512000}, kNode},
                              {1, kNode, kNode}};
  Allocation a;
  ASSERT_TRUE(SelectNodes(s, c, &a));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].node, 1);
  EXPECT_EQ(a[0].amount, (Resources{.cpus = 32, .gpus = 2, .mem_mb = 32000}));
}

// -N2 -n4 spreads its tasks as Slurm lays them out: 2 and 2 (-n3: 2 and 1), not as many as
// fit on the first node; without an exact node count tasks fill the preferred node first.
TEST(Selector, AnExactNodeCountSpreadsTheTasks) {
  model::JobShape s{.min_nodes = 2, .max_nodes = 2, .ntasks = 4, .cpus_per_task = 1};
  std::vector<Candidate> c = {{0, kNode, kNode}, {1, kNode, kNode}, {2, kNode, kNode}};
  Allocation a;
  ASSERT_TRUE(SelectNodes(s, c, &a));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].amount.cpus, 2);
  EXPECT_EQ(a[1].amount.cpus, 2);
  s.ntasks = 3;
  ASSERT_TRUE(SelectNodes(s, c, &a));
  EXPECT_EQ(a[0].amount.cpus, 2);
  EXPECT_EQ(a[1].amount.cpus, 1);
  // A node with room for one task gets one; the rest go where they fit.
  s.ntasks = 6;
  c[0].free.cpus = 1;
  ASSERT_TRUE(SelectNodes(s, c, &a));
  EXPECT_EQ(a[0].amount.cpus, 1);
  EXPECT_EQ(a[1].amount.cpus, 5);
  // -n4 with up to 3 nodes packs the first.
  s = model::JobShape{.min_nodes = 1, .max_nodes = 3, .ntasks = 4, .cpus_per_task = 1};
  c[0].free.cpus = 64;
  ASSERT_TRUE(SelectNodes(s, c, &a));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].amount.cpus, 4);
}

TEST(Selector, MemoryAndGpusLimitTasks) {
  model::JobShape s{.ntasks = 1, .cpus_per_task = 1, .mem_per_node_mb = 600000};
  EXPECT_EQ(TasksThatFit(s, kNode, kNode), 0);
  s.mem_per_node_mb = 0;
  s.mem_per_cpu_mb = 100000;
  EXPECT_EQ(TasksThatFit(s, kNode, kNode), 1);  // 5 CPUs' worth of memory, 1 task asked
  s.ntasks = 10;
  EXPECT_EQ(TasksThatFit(s, kNode, kNode), 5);
  s.gpus_per_node = 9;
  EXPECT_EQ(TasksThatFit(s, kNode, kNode), 0);
}

TEST(Selector, GpusPerTaskCpusPerGpuAndMemPerGpu) {
  // --gpus=4 as four one-GPU tasks of 2 CPUs, with 12 CPUs and 100 GB per GPU.
  model::JobShape s{.max_nodes = 4, .ntasks = 4, .cpus_per_task = 2};
  s.gpus_per_task = 1;
  s.cpus_per_gpu = 12;
  s.mem_per_gpu_mb = 100000;
  EXPECT_EQ(AmountFor(s, 3, kNode), (Resources{.cpus = 36, .gpus = 3, .mem_mb = 300000}));
  EXPECT_EQ(TasksThatFit(s, kNode, kNode), 4);
  // 40 free CPUs hold three tasks' GPUs with their 12 CPUs each, not four.
  EXPECT_EQ(TasksThatFit(s, Resources{.cpus = 40, .gpus = 8, .mem_mb = 512000}, kNode), 3);
  // Memory per GPU limits too: 250 GB hold two.
  EXPECT_EQ(TasksThatFit(s, Resources{.cpus = 64, .gpus = 8, .mem_mb = 250000}, kNode), 2);
  // Free GPUs limit the tasks.
  EXPECT_EQ(TasksThatFit(s, Resources{.cpus = 64, .gpus = 1, .mem_mb = 512000}, kNode), 1);
}

// An exclusive job holds every CPU and GPU, and the memory it asked for: per CPU of all the
// node's CPUs, per node, or (asking none) the whole node's, as Slurm allocates it.
TEST(Selector, ExclusiveHoldsTheMemoryItAskedFor) {
  model::JobShape s{.ntasks = 1, .exclusive = true};
  EXPECT_EQ(AmountFor(s, 1, kNode), kNode);
  s.mem_per_cpu_mb = 3900;
  EXPECT_EQ(AmountFor(s, 1, kNode), (Resources{.cpus = 64, .gpus = 8, .mem_mb = 64 * 3900}));
  s.mem_per_cpu_mb = 0;
  s.mem_per_node_mb = 64000;
  EXPECT_EQ(AmountFor(s, 1, kNode), (Resources{.cpus = 64, .gpus = 8, .mem_mb = 64000}));
  s.mem_per_node_mb = 0;
  s.mem_per_cpu_mb = 100000;  // more than the node has: all of it
  EXPECT_EQ(AmountFor(s, 1, kNode), kNode);
}

TEST(Selector, ExclusiveNeedsAWholeIdleNode) {
  model::JobShape s{.min_nodes = 2, .max_nodes = 2, .ntasks = 2, .exclusive = true};
  std::vector<Candidate> c = {{0, Resources{.cpus = 63, .gpus = 8, .mem_mb = 512000}, kNode},
                              {1, kNode, kNode},
                              {2, kNode, kNode}};
  Allocation a;
  ASSERT_TRUE(SelectNodes(s, c, &a));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].node, 1);
  EXPECT_EQ(a[1].node, 2);
  EXPECT_EQ(a[0].amount, kNode);
}

TEST(Selector, MultiNodeSpreadsTasksAndHonoursNodeBounds) {
  // -N 2 -n 10: every node gets at least one task; at most two nodes.
  model::JobShape s{.min_nodes = 2, .max_nodes = 2, .ntasks = 10};
  std::vector<Candidate> c = {{0, Resources{.cpus = 3}, Resources{.cpus = 8}},
                              {1, Resources{.cpus = 8}, Resources{.cpus = 8}},
                              {2, Resources{.cpus = 8}, Resources{.cpus = 8}}};
  Allocation a;
  ASSERT_TRUE(SelectNodes(s, c, &a));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].node, 0);
  EXPECT_EQ(a[0].amount.cpus, 3);
  EXPECT_EQ(a[1].node, 1);
  EXPECT_EQ(a[1].amount.cpus, 7);
  // -N 1-2 -n 14: the preferred first node is too small to reach 14 within two nodes,
  // so the roomiest nodes are taken instead.
  s = model::JobShape{.min_nodes = 1, .max_nodes = 2, .ntasks = 14};
  ASSERT_TRUE(SelectNodes(s, c, &a));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].node, 1);
  EXPECT_EQ(a[1].node, 2);
  EXPECT_EQ(a[0].amount.cpus + a[1].amount.cpus, 14);
  s.ntasks = 17;
  EXPECT_FALSE(SelectNodes(s, c, &a));
}

TEST(Selector, NtasksPerNode) {
  model::JobShape s{.min_nodes = 3, .max_nodes = 3, .ntasks = 12, .ntasks_per_node = 4};
  std::vector<Candidate> c = {{0, Resources{.cpus = 3}, Resources{.cpus = 8}},
                              {1, Resources{.cpus = 8}, Resources{.cpus = 8}},
                              {2, Resources{.cpus = 4}, Resources{.cpus = 8}},
                              {3, Resources{.cpus = 5}, Resources{.cpus = 8}}};
  Allocation a;
  ASSERT_TRUE(SelectNodes(s, c, &a));
  ASSERT_EQ(a.size(), 3u);
  for (const auto& na : a) EXPECT_EQ(na.amount.cpus, 4);
  EXPECT_EQ(a[0].node, 1);
  c.pop_back();
  EXPECT_FALSE(SelectNodes(s, c, &a));
}

}  // namespace
}  // namespace loom::sched
