// The controller's scheduling passes (core_schedule.cc): when they run, with which
// trigger, and the waits that time alone ends.
#include <gtest/gtest.h>

#include "conf/testing/site_text.h"
#include "core/strings.h"
#include "ctld/controller_core.h"
#include "ctld/controller_core_test_util.h"

namespace loom::ctld {
namespace {

TEST_F(CoreTest, APassIsSkippedWhenNothingItLooksAtChanged) {
  Up(1);
  const JobId first = Submit(Req(), kAlice, 1);
  Effects fx;
  EXPECT_TRUE(core_.Schedule(2, &fx));
  EXPECT_EQ(State(first), JobState::kRunning);
  model::JobRequest held = Req();
  held.hold = true;
  const JobId h = Submit(held, kAlice, 2);
  // Nothing a pass looks at changed: no pass, and the held job says why it waits.
  EXPECT_FALSE(core_.Schedule(2, &fx));
  EXPECT_EQ(Reason(h), PendingReason::kJobHeldUser);
  // A job that may run, a release or a node calls for an event pass; the clock alone does
  // not while no job waits.
  const JobId plain = Submit(Req(), kAlice, 2);
  EXPECT_TRUE(core_.Schedule(2, &fx));
  EXPECT_EQ(State(plain), JobState::kRunning);
  EXPECT_FALSE(core_.Schedule(2, &fx));
  ASSERT_TRUE(core_.Release(h, kAlice, &fx).ok());
  EXPECT_TRUE(core_.Schedule(2, &fx));
  EXPECT_EQ(State(h), JobState::kRunning);
  EXPECT_FALSE(core_.Schedule(2, &fx));
  EXPECT_FALSE(core_.Schedule(3, &fx));
  EXPECT_FALSE(core_.Schedule(30, &fx));
  EXPECT_FALSE(core_.Schedule(60, &fx));
  // While a job waits, the `slurm` policy's timed passes come on their grid: the backfill
  // pass every bf_interval (30 s), which begins with the main pass sched_interval asks for
  // (60 s), and nothing between.
  model::JobRequest later = Req();
  later.begin_time = 10000;
  Submit(later, kAlice, 61);
  EXPECT_TRUE(core_.Schedule(61, &fx));
  EXPECT_FALSE(core_.Schedule(89, &fx));
  EXPECT_TRUE(core_.Schedule(90, &fx));
  EXPECT_FALSE(core_.Schedule(91, &fx));
  EXPECT_TRUE(core_.Schedule(125, &fx));  // a late look runs the tick it missed, once
  EXPECT_FALSE(core_.Schedule(126, &fx));
  core_.NodeAlive("n1", 400, &fx);  // after SlurmdTimeout: n2 goes silent
  core_.Tick(400, &fx);
  EXPECT_TRUE(core_.Schedule(400, &fx));
}

// The controller passes each pass what caused it, as the simulator does: a submission, a job
// that released its nodes, the backfill cycle, the main pass of sched_interval.
TEST_F(CoreTest, EachPassNamesWhatCausedIt) {
  auto site = conf::testing::SiteFromText(
      "ctld_core_test",
      "ClusterName=t\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\n"
      "SchedulerParameters=bf_interval=30,sched_interval=45,default_queue_depth=1\n"
      "NodeName=n1 CPUs=8 RealMemory=16000\n"
      "PartitionName=batch Nodes=n1 Default=YES MaxTime=1-00:00:00\n");
  ASSERT_TRUE(site.ok()) << site.status();
  ControllerCore core(*site, CoreOptions{}, 1);
  Effects fx;
  core.NodeAlive("n1", 0, &fx);
  auto submit = [&](int cpus, Time now, model::Dependency dep = model::Dependency{}) {
    model::JobRequest r = Req(cpus);
    r.dependency = std::move(dep);
    return core.Submit(r, kAlice, now, &fx).value();
  };
  const JobId big = submit(8, 1);
  EXPECT_TRUE(core.Schedule(1, &fx));  // a submission
  EXPECT_EQ(core.Find(big)->job.state, JobState::kRunning);
  // Three jobs wait behind it (one for its dependency); an event pass tests
  // default_queue_depth (1) of them.
  const JobId second = submit(8, 2);
  const JobId third = submit(1, 2, model::ParseDependency("afterany:1").value());
  const JobId fourth = submit(1, 2);
  EXPECT_TRUE(core.Schedule(2, &fx));
  EXPECT_EQ(core.last_pass().jobs_tested, 1);
  EXPECT_EQ(core.Find(second)->job.reason, PendingReason::kResources);
  EXPECT_EQ(core.Find(third)->job.reason, PendingReason::kDependency);
  // The backfill cycle at 30: the main pass (second blocks its partition) then the backfill
  // pass, which tests both jobs that may run.
  EXPECT_TRUE(core.Schedule(30, &fx));
  EXPECT_EQ(core.last_pass().jobs_tested, 3);
  // sched_interval's main pass at 45: no backfill.
  EXPECT_TRUE(core.Schedule(45, &fx));
  EXPECT_EQ(core.last_pass().jobs_tested, 1);
  EXPECT_EQ(core.Find(fourth)->job.reason, PendingReason::kPriority);
  // The big job ends: a termination pass starts the next one.
  core.JobEnded(big, 0, false, 50, &fx);
  EXPECT_TRUE(core.Schedule(50, &fx));
  EXPECT_EQ(core.Find(second)->job.state, JobState::kRunning);
}

// Waits that time alone ends (a begin time, an `after:` delay) bring a pass when they end,
// however long sched_interval is.
TEST_F(CoreTest, APassComesWhenABeginTimeOrAnAfterDelayIsOver) {
  Up(0);
  model::JobRequest later = Req();
  later.begin_time = 30;
  const JobId begins = Submit(later, kAlice, 0);
  const JobId first = Submit(Req(), kAlice, 0);
  model::JobRequest after = Req();
  after.dependency = model::ParseDependency(core::StrCat("after:", first, "+1")).value();
  const JobId follows = Submit(after, kAlice, 0);
  Effects fx;
  EXPECT_TRUE(core_.Schedule(1, &fx));
  EXPECT_EQ(Reason(begins), PendingReason::kBeginTime);
  EXPECT_EQ(State(first), JobState::kRunning);
  EXPECT_EQ(Reason(follows), PendingReason::kDependency);
  // The pass after one that started jobs, while others wait on dependencies, sees when
  // `after:first+1` is over: a minute after first started (delays are in minutes).
  EXPECT_TRUE(core_.Schedule(2, &fx));
  EXPECT_FALSE(core_.Schedule(29, &fx));
  EXPECT_TRUE(core_.Schedule(30, &fx));
  EXPECT_EQ(State(begins), JobState::kRunning);
  EXPECT_EQ(State(follows), JobState::kPending);
  // (30 is also a backfill tick; the next look is the delay's end.)
  EXPECT_FALSE(core_.Schedule(59, &fx));
  EXPECT_TRUE(core_.Schedule(61, &fx));
  EXPECT_EQ(State(follows), JobState::kRunning);
}

}  // namespace
}  // namespace loom::ctld
