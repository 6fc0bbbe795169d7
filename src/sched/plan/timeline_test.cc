#include "sched/plan/timeline.h"

#include <gtest/gtest.h>

namespace loom::sched {
namespace {

Resources Cpus(int32_t n) { return Resources{.cpus = n}; }

TEST(Timeline, FreeOverIsTheLeastFreeInTheWindow) {
  Timeline t;
  std::vector<Resources> caps = {Resources{.cpus = 10, .gpus = 8, .mem_mb = 1000}};
  t.Reset(caps, 100);
  t.Add(0, Resources{.cpus = 4, .gpus = 2, .mem_mb = 100}, 100, 200);
  t.Add(0, Cpus(3), 150, 300);
  EXPECT_EQ(t.FreeOver(0, 100, 150), (Resources{.cpus = 6, .gpus = 6, .mem_mb = 900}));
  EXPECT_EQ(t.FreeOver(0, 100, 151).cpus, 3);
  EXPECT_EQ(t.FreeOver(0, 200, 300).cpus, 7);  // the first job's interval is half-open
  EXPECT_EQ(t.FreeOver(0, 300, kNever).cpus, 10);
}

TEST(Timeline, EarliestFitSkipsPastBlockingSteps) {
  Timeline t;
  std::vector<Resources> caps = {Cpus(10)};
  t.Reset(caps, 0);
  t.Add(0, Cpus(8), 0, 50);    // 2 free until 50
  t.Add(0, Cpus(5), 60, 100);  // 5 free over [60, 100)
  EXPECT_EQ(t.EarliestFit(0, Cpus(2), 0, 1000, kNever), 0);
  EXPECT_EQ(t.EarliestFit(0, Cpus(5), 0, 10, kNever), 50);    // fits in the gap [50, 60)
  EXPECT_EQ(t.EarliestFit(0, Cpus(5), 0, 20, kNever), 50);    // 5 free over [60,100) too
  EXPECT_EQ(t.EarliestFit(0, Cpus(6), 0, 10, kNever), 50);    // [50, 60) holds 10 free
  EXPECT_EQ(t.EarliestFit(0, Cpus(6), 0, 11, kNever), 100);   // would overlap [60, 100)
  EXPECT_EQ(t.EarliestFit(0, Cpus(11), 0, 1, kNever), kNever);  // larger than the node
  EXPECT_EQ(t.EarliestFit(0, Cpus(6), 0, 11, 100), kNever);   // not before the limit
}

TEST(Timeline, EarliestFitRoundsToTheResolution) {
  Timeline t;
  std::vector<Resources> caps = {Cpus(4)};
  t.Reset(caps, 10);
  t.Add(0, Cpus(4), 10, 75);
  EXPECT_EQ(t.EarliestFit(0, Cpus(1), 10, 5, kNever, 60), 120);
  EXPECT_EQ(t.EarliestFit(0, Cpus(1), 10, 5, kNever, 1), 75);
}

TEST(Timeline, RemoveUndoesAddAndMergesSteps) {
  Timeline t;
  std::vector<Resources> caps = {Cpus(8)};
  t.Reset(caps, 0);
  t.Add(0, Cpus(2), 10, 20);
  t.Add(0, Cpus(3), 15, 30);
  t.Remove(0, Cpus(3), 15, 30);
  t.Remove(0, Cpus(2), 10, 20);
  EXPECT_EQ(t.steps(0), 1u);
  EXPECT_EQ(t.FreeOver(0, 0, kNever).cpus, 8);
}

TEST(Timeline, BuildEqualsAddingOneByOne) {
  std::vector<Resources> caps = {Cpus(16), Cpus(16)};
  std::vector<Timeline::Interval> ivs = {
      {0, Cpus(4), 0, 40}, {0, Cpus(2), 0, 20}, {1, Cpus(8), 5, 50},
      {0, Cpus(4), 30, 60}, {1, Cpus(1), 0, kNever}, {0, Cpus(3), -10, 5}};
  Timeline bulk, one;
  one.Reset(caps, 0);
  for (const auto& iv : ivs) one.Add(iv.node, iv.amount, iv.from, iv.to);
  bulk.Build(caps, 0, ivs);
  for (int32_t n = 0; n < 2; ++n) {
    for (Time a = 0; a < 70; a += 5) {
      EXPECT_EQ(bulk.FreeOver(n, a, a + 5), one.FreeOver(n, a, a + 5)) << n << " " << a;
    }
  }
}

TEST(Timeline, NextReleaseFindsWhenUsageDrops) {
  Timeline t;
  std::vector<Resources> caps = {Cpus(8)};
  t.Reset(caps, 0);
  t.Add(0, Cpus(2), 0, 20);
  t.Add(0, Cpus(2), 10, 40);
  EXPECT_EQ(t.NextRelease(0, 0), 20);
  EXPECT_EQ(t.NextRelease(0, 20), 40);
  EXPECT_EQ(t.NextRelease(0, 40), kNever);
}

}  // namespace
}  // namespace loom::sched
