// The controller's core with the jobs srun submits (core_srun.cc): tasks on every node of
// the job, which ends once every node has reported, survives a restart of the controller,
// and fails with its nodes or its launch.
#include <gtest/gtest.h>

#include <csignal>

#include "ctld/controller_core.h"
#include "ctld/controller_core_test_util.h"
#include "ctld/persist.h"

namespace loom::ctld {
namespace {

// `srun -N2 ...`: a job whose tasks run on both nodes.
model::JobRequest SrunReq() {
  model::JobRequest r = Req();
  r.shape.min_nodes = 2;
  r.shape.max_nodes = 2;
  r.shape.ntasks = 2;
  r.requeue = false;
  r.srun = model::SrunStep{{"hostname"}, "127.0.0.1", 4000, "key", false, "",          "",
                           "",           "",          "",   "",    "",    std::nullopt};
  return r;
}

TEST_F(CoreTest, SrunJobEndsOnceEveryNodeHasReported) {
  Up(0);
  JobId id = Submit(SrunReq());
  Effects fx = Schedule(1);
  ASSERT_EQ(fx.launches.size(), 1u);
  ASSERT_EQ(core_.Find(id)->alloc().size(), 2u);
  Effects end;
  core_.JobEnded(id, 0, false, 5, &end, "n2");
  EXPECT_EQ(State(id), JobState::kRunning);  // n1's tasks still run
  EXPECT_TRUE(end.ended.empty());
  core_.JobEnded(id, 0, false, 6, &end, "n2");  // a repeated report counts once
  EXPECT_EQ(State(id), JobState::kRunning);
  core_.JobEnded(id, 0, false, 7, &end, "n1");
  EXPECT_EQ(State(id), JobState::kCompleted);
  EXPECT_EQ(core_.Find(id)->job.end_time, 7);
  EXPECT_TRUE(core_.Find(id)->alloc().empty());
}

// The reports that came before a restart count after it: they are stored with the job.
TEST_F(CoreTest, SrunJobReportsSurviveARestart) {
  Up(0);
  JobId id = Submit(SrunReq());
  Schedule(1);
  Effects end;
  core_.JobEnded(id, 3 << 8, false, 5, &end, "n2");
  EXPECT_EQ(end.steps_changed, std::vector<JobId>{id});
  const JobEntry* e = core_.Find(id);
  auto stored =
      DecodeSteps(EncodeSteps(core_.StepsOf(id), e->history().step.get()).value(), "test");
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(stored->srun.has_value());
  EXPECT_EQ(stored->srun->nodes_done.count("n2"), 1u);

  ControllerCore restarted(Site(), CoreOptions{.kill_wait_s = 30, .slurmd_timeout_s = 300}, 100);
  restarted.Restore({*e}, id + 1);
  restarted.RestoreSteps(id, std::move(stored->steps), std::move(stored->srun));
  Effects after;
  restarted.NodeAlive("n1", 6, &after);
  restarted.NodeAlive("n2", 6, &after);
  restarted.JobEnded(id, 0, false, 7, &after, "n1");
  EXPECT_EQ(restarted.Find(id)->job.state, JobState::kFailed);  // n2's exit 3 was kept
  EXPECT_EQ(restarted.Find(id)->job.exit_code, 3 << 8);
}

TEST_F(CoreTest, SrunJobFailsWithTheHighestExitCodeOfItsNodes) {
  Up(0);
  JobId id = Submit(SrunReq());
  Schedule(1);
  Effects end;
  core_.JobEnded(id, SIGKILL, false, 5, &end, "n1");
  core_.JobEnded(id, 3 << 8, false, 6, &end, "elsewhere");  // not one of its nodes
  EXPECT_EQ(State(id), JobState::kRunning);
  core_.JobEnded(id, 3 << 8, false, 6, &end, "n2");
  EXPECT_EQ(State(id), JobState::kFailed);
  EXPECT_EQ(core_.Find(id)->job.exit_code, 3 << 8);  // an exit counts over a signal
}

TEST_F(CoreTest, CancelledSrunJobHoldsItsNodesUntilEveryNodeReports) {
  Up(0);
  JobId id = Submit(SrunReq());
  Schedule(1);
  Effects fx;
  ASSERT_TRUE(core_.Signal(id, std::nullopt, 0, kAlice, 5, &fx).ok());
  EXPECT_EQ(State(id), JobState::kCancelled);
  ASSERT_EQ(fx.signals.size(), 1u);
  EXPECT_EQ(fx.signals[0].nodes.size(), 2u);  // SIGTERM to the tasks on both nodes
  core_.JobEnded(id, SIGTERM, false, 6, &fx, "n1");
  EXPECT_TRUE(core_.Find(id)->completing);
  core_.JobEnded(id, SIGTERM, false, 7, &fx, "n2");
  EXPECT_FALSE(core_.Find(id)->completing);
  EXPECT_EQ(State(id), JobState::kCancelled);
  EXPECT_TRUE(core_.Find(id)->alloc().empty());
}

TEST_F(CoreTest, SrunLaunchFailureOnOneNodeEndsTheTasksOnTheOthers) {
  Up(0);
  JobId id = Submit(SrunReq());
  Schedule(1);
  Effects fx;
  core_.LaunchFailed(id, "user unknown", 2, &fx, false, "n2");
  EXPECT_EQ(State(id), JobState::kFailed);
  EXPECT_TRUE(core_.Find(id)->completing);
  ASSERT_EQ(fx.signals.size(), 1u);
  EXPECT_EQ(fx.signals[0].signal, SIGTERM);
  core_.JobEnded(id, SIGTERM, false, 3, &fx, "n1");  // n2 never started anything
  EXPECT_FALSE(core_.Find(id)->completing);
  EXPECT_EQ(State(id), JobState::kFailed);
  // Unreachable from the start: a node failure, and never requeued.
  JobId lost = Submit(SrunReq());
  Schedule(4);
  Effects fx2;
  core_.LaunchFailed(lost, "no answer", 5, &fx2, true, "n1");
  EXPECT_EQ(State(lost), JobState::kNodeFail);
}

TEST_F(CoreTest, SrunJobOnASilentNodeEndsAsNodeFailAndItsOtherTasksAreEnded) {
  Up(0);
  JobId id = Submit(SrunReq());
  Schedule(1);
  Effects fx;
  core_.NodeAlive("n2", 250, &fx);  // only n2 keeps reporting
  core_.Tick(301, &fx);
  EXPECT_EQ(State(id), JobState::kNodeFail);
  EXPECT_TRUE(core_.Find(id)->completing);
  ASSERT_FALSE(fx.signals.empty());
  core_.JobEnded(id, SIGTERM, false, 302, &fx, "n2");
  EXPECT_FALSE(core_.Find(id)->completing);
}

}  // namespace
}  // namespace loom::ctld
