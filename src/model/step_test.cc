#include "model/step.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace loom::model {
namespace {

// wait(2) statuses as the kernel builds them.
int32_t Exited(int code) { return (code & 0xff) << 8; }
int32_t Killed(int sig, bool core = false) { return sig | (core ? 0x80 : 0); }

TEST(TaskCounts, OnePerNodeWithoutOptions) {
  EXPECT_EQ(TaskCounts({}, {4, 4}), (std::vector<int32_t>{1, 1}));
}

TEST(TaskCounts, NtasksPerNodeOnEveryNode) {
  EXPECT_EQ(TaskCounts({std::nullopt, 3, std::nullopt}, {4, 4, 4}),
            (std::vector<int32_t>{3, 3, 3}));
}

TEST(TaskCounts, NtasksDealtRoundRobinWhileNodesHaveCpus) {
  EXPECT_EQ(TaskCounts({3, std::nullopt, std::nullopt}, {4, 4}), (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(TaskCounts({4, std::nullopt, std::nullopt}, {4, 4}), (std::vector<int32_t>{2, 2}));
  // The first node holds only one CPU: it takes one task, the second node the rest.
  EXPECT_EQ(TaskCounts({4, std::nullopt, std::nullopt}, {1, 8}), (std::vector<int32_t>{1, 3}));
  // -c 2 halves what each node takes.
  EXPECT_EQ(TaskCounts({3, std::nullopt, 2}, {2, 4}), (std::vector<int32_t>{1, 2}));
}

TEST(TaskCounts, OvercommittedTasksGoRoundRobinOnceNodesAreFull) {
  EXPECT_EQ(TaskCounts({5, std::nullopt, std::nullopt}, {1, 1}), (std::vector<int32_t>{3, 2}));
}

TEST(BlockLayout, TasksFillTheFirstNodeFirst) {
  const std::vector<int32_t> counts = {2, 1, 3};
  EXPECT_EQ(FirstTask(counts, 0), 0);
  EXPECT_EQ(FirstTask(counts, 1), 2);
  EXPECT_EQ(FirstTask(counts, 2), 3);
  EXPECT_EQ(TaskTotal(counts), 6);
}

TEST(TaskIds, BlockFillsEachNodeInTurn) {
  using V = std::vector<std::vector<int32_t>>;
  EXPECT_EQ(TaskIds({4, 4}, Distribution::kBlock), (V{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(TaskIds({2, 1}, Distribution::kBlock), (V{{0, 1}, {2}}));
}

TEST(TaskIds, CyclicDealsRoundRobinOverNodesWithRoom) {
  using V = std::vector<std::vector<int32_t>>;
  EXPECT_EQ(TaskIds({4, 4}, Distribution::kCyclic), (V{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(TaskIds({3, 1}, Distribution::kCyclic), (V{{0, 2, 3}, {1}}));
}

TEST(ParseDistribution, NodeLevelOnly) {
  EXPECT_EQ(ParseDistribution("block"), Distribution::kBlock);
  EXPECT_EQ(ParseDistribution("cyclic:block"), Distribution::kCyclic);
  EXPECT_EQ(ParseDistribution("plane=4"), std::nullopt);
  EXPECT_EQ(ParseDistribution("arbitrary"), std::nullopt);
}

TEST(StepStatus, HighestExitCodeWins) {
  StepStatus s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.ExitCode(), 0);
  s.Add(Exited(0));
  s.Add(Exited(3));
  s.Add(Exited(1));
  EXPECT_EQ(s.ExitCode(), 3);
  EXPECT_EQ(s.wait_status(), Exited(3));
}

TEST(StepStatus, KilledTaskGives128PlusSignal) {
  StepStatus s;
  s.Add(Killed(SIGTERM));
  EXPECT_EQ(s.ExitCode(), 128 + SIGTERM);
  s.Add(Killed(SIGKILL));  // the first signal stays
  EXPECT_EQ(s.ExitCode(), 128 + SIGTERM);
}

TEST(StepStatus, AnExitCountsOverASignalAsInSrun) {
  StepStatus a;
  a.Add(Killed(SIGSEGV));
  a.Add(Exited(2));
  EXPECT_EQ(a.ExitCode(), 2);
  StepStatus b;
  b.Add(Exited(0));
  b.Add(Killed(SIGSEGV));
  EXPECT_EQ(b.ExitCode(), 0);
}

TEST(StepStatus, AddingPerNodeThenOverNodesGivesTheSameAnswer) {
  StepStatus node1, node2, all, whole;
  for (int32_t st : {Exited(0), Killed(SIGKILL)}) {
    node1.Add(st);
    whole.Add(st);
  }
  for (int32_t st : {Exited(4), Exited(1)}) {
    node2.Add(st);
    whole.Add(st);
  }
  all.Add(node1.wait_status());
  all.Add(node2.wait_status());
  EXPECT_EQ(all.ExitCode(), 4);
  EXPECT_EQ(all.ExitCode(), whole.ExitCode());
}

TEST(DescribeTaskEnd, SlurmsWords) {
  EXPECT_EQ(DescribeTaskEnd(Exited(0)), "");
  EXPECT_EQ(DescribeTaskEnd(Exited(3)), "Exited with exit code 3");
  EXPECT_EQ(DescribeTaskEnd(Killed(SIGKILL)), "Killed");
  EXPECT_EQ(DescribeTaskEnd(Killed(SIGTERM)), "Terminated");
  EXPECT_EQ(DescribeTaskEnd(Killed(SIGSEGV, true)), "Segmentation fault (core dumped)");
}

}  // namespace
}  // namespace loom::model
