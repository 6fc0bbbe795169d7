#include "core/clock.h"

#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace loom::core {
namespace {

TEST(SimulatedClock, StartsWhereToldAndMovesOnlyWhenAdvanced) {
  SimulatedClock clock(1'764'620'222);
  EXPECT_EQ(clock.UnixSeconds(), 1'764'620'222);
  EXPECT_EQ(clock.MonotonicMs(), 0);
  EXPECT_EQ(clock.UnixSeconds(), 1'764'620'222);
  clock.Advance(std::chrono::milliseconds(1500));
  EXPECT_EQ(clock.UnixSeconds(), 1'764'620'223);
  EXPECT_EQ(clock.MonotonicMs(), 1500);
  EXPECT_EQ(clock.Wall().time_since_epoch(),
            std::chrono::seconds(1'764'620'222) + std::chrono::milliseconds(1500));
}

TEST(SimulatedClock, NeverGoesBack) {
  SimulatedClock clock(100);
  clock.Advance(std::chrono::seconds(5));
  clock.Advance(std::chrono::seconds(-3));
  EXPECT_EQ(clock.UnixSeconds(), 105);
  EXPECT_EQ(clock.MonotonicMs(), 5000);
}

TEST(SimulatedClock, ThreadsAdvancingTogetherLoseNoTime) {
  SimulatedClock clock(0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&clock] {
      for (int i = 0; i < 1000; ++i) clock.Advance(std::chrono::milliseconds(1));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(clock.MonotonicMs(), 4000);
}

TEST(RealClock, ReadsTheSystemsClocks) {
  const Clock& clock = RealClock();
  const auto before = std::chrono::system_clock::now();
  const auto wall = clock.Wall();
  EXPECT_LE(before, wall);
  EXPECT_LE(wall - before, std::chrono::minutes(1));
  const auto m1 = clock.Monotonic();
  const auto m2 = clock.Monotonic();
  EXPECT_LE(m1, m2);
}

}  // namespace
}  // namespace loom::core
