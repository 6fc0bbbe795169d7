#include "sched/cadence.h"

#include <gtest/gtest.h>

namespace loom::sched {
namespace {

// A policy that only says when it wants passes.
class Timed final : public Policy {
 public:
  Timed(int64_t periodic, int64_t main, int64_t gap) : periodic_(periodic), main_(main), gap_(gap) {}
  std::string_view name() const override { return "timed"; }
  int64_t periodic_interval() const override { return periodic_; }
  int64_t main_interval() const override { return main_; }
  int64_t min_event_gap() const override { return gap_; }
  void Pass(const PassInput&, PassOutput*) override {}

 private:
  int64_t periodic_, main_, gap_;
};

TEST(CadenceTest, TimedPassesFallOnTheGridWhileJobsWait) {
  Timed policy(30, 45, 0);
  Cadence c(policy);
  EXPECT_EQ(c.NextTick(10, true), 30);
  EXPECT_EQ(c.NextTick(30, true), 45);
  EXPECT_EQ(c.NextTick(10, false), kNever);  // an empty queue needs no timed pass
  EXPECT_EQ(c.TimedPass(10, 29, true), std::nullopt);
  EXPECT_EQ(c.TimedPass(10, 30, true), PassTrigger::kPeriodic);
  EXPECT_EQ(c.TimedPass(30, 45, true), PassTrigger::kMain);
  EXPECT_EQ(c.TimedPass(30, 45, false), std::nullopt);
  // Both due at once: the periodic pass alone (it begins with the main pass).
  EXPECT_EQ(c.TimedPass(80, 90, true), PassTrigger::kPeriodic);
  // A driver that looked late runs one pass for the ticks it missed.
  EXPECT_EQ(c.TimedPass(31, 200, true), PassTrigger::kPeriodic);
  EXPECT_EQ(c.TimedPass(200, 200, true), std::nullopt);
}

TEST(CadenceTest, PoliciesWithoutTimedPassesNeverTick) {
  Timed policy(0, 0, 0);
  Cadence c(policy);
  EXPECT_EQ(c.NextTick(10, true), kNever);
  EXPECT_EQ(c.TimedPass(10, 1000, true), std::nullopt);
  Timed disabled(-1, 0, 0);  // bf_interval=-1
  EXPECT_EQ(Cadence(disabled).NextTick(10, true), kNever);
}

TEST(CadenceTest, EventPassesKeepTheMinimumGap) {
  Timed policy(0, 0, 5);
  Cadence c(policy);
  EXPECT_TRUE(c.EventPassAllowed(100));
  c.EventPassRan(100);
  EXPECT_FALSE(c.EventPassAllowed(104));
  EXPECT_EQ(c.allowed_at(), 105);
  EXPECT_TRUE(c.EventPassAllowed(105));
  Timed none(0, 0, 0);
  Cadence any(none);
  any.EventPassRan(100);
  EXPECT_TRUE(any.EventPassAllowed(100));
}

TEST(CadenceTest, SlurmPolicyTakesItsIntervalsFromSchedulerParameters) {
  PolicyOptions o;
  o.bf_interval_s = 30;
  o.sched_interval_s = 60;
  o.sched_min_interval_us = 1'000'000;  // Slurm's largest: one second
  auto slurm = MakePolicy("slurm", o);
  ASSERT_TRUE(slurm.ok());
  EXPECT_EQ((*slurm)->periodic_interval(), 30);
  EXPECT_EQ((*slurm)->main_interval(), 60);
  EXPECT_EQ((*slurm)->min_event_gap(), 1);
  o.sched_interval_s = -1;
  o.sched_min_interval_us = 2;  // Slurm's default: below the drivers' one-second clock
  auto off = MakePolicy("slurm", o);
  EXPECT_EQ((*off)->main_interval(), 0);
  EXPECT_EQ((*off)->min_event_gap(), 0);
  auto easy = MakePolicy("easy", o);
  EXPECT_EQ((*easy)->periodic_interval(), 0);
  EXPECT_EQ((*easy)->main_interval(), 0);
}

}  // namespace
}  // namespace loom::sched
