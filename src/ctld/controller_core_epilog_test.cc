// The controller's side of the site's Prolog and Epilog: an ended allocation holds its nodes
// until each has run its epilog, failures drain nodes with Slurm's reasons, and a job whose
// prolog failed goes back to the queue held.
#include <csignal>

#include "ctld/controller_core_test_util.h"

namespace loom::ctld {
namespace {

CoreOptions WithNodeScripts(bool nohold) {
  return CoreOptions{.kill_wait_s = 30,
                     .slurmd_timeout_s = 300,
                     .node_scripts = true,
                     .nohold_on_prolog_fail = nohold};
}

class EpilogTest : public CoreTest {
 protected:
  EpilogTest() : EpilogTest(false) {}
  explicit EpilogTest(bool nohold) : CoreTest(WithNodeScripts(nohold)) { Up(0); }
  // A job on both nodes, started at 1.
  JobId TwoNodeJob() {
    model::JobRequest r = Req(1);
    r.shape.min_nodes = r.shape.max_nodes = 2;
    r.shape.ntasks = 2;
    JobId id = Submit(r);
    Schedule(1);
    EXPECT_EQ(State(id), JobState::kRunning);
    return id;
  }
  const JobEntry& Entry(JobId id) { return *core_.Find(id); }
};

TEST_F(EpilogTest, AnEndedJobKeepsItsNodesUntilEveryNodeRanItsEpilog) {
  JobId id = TwoNodeJob();
  Effects fx;
  core_.JobEnded(id, 0, false, 10, &fx, "n1");
  EXPECT_EQ(State(id), JobState::kCompleted);
  EXPECT_TRUE(Entry(id).completing);
  EXPECT_EQ(Entry(id).shown_state(), JobState::kCompleting);
  ASSERT_EQ(fx.terminations, std::vector<JobId>{id});
  EXPECT_EQ(Entry(id).history().epilog_nodes, (std::vector<int32_t>{0, 1}));
  // Its nodes are not free yet: a job that needs both waits.
  JobId next = Submit(Req(8));
  JobId other = Submit(Req(8));
  Schedule(11);
  EXPECT_EQ(State(next), JobState::kPending);
  // A repeated end changes nothing; n1's epilog frees nothing while n2's is missing.
  core_.JobEnded(id, 0, false, 11, &fx, "n1");
  core_.EpilogComplete(id, "n1", false, "", 12, &fx);
  EXPECT_TRUE(Entry(id).completing);
  core_.EpilogComplete(id, "n1", false, "", 12, &fx);  // repeated
  EXPECT_TRUE(Entry(id).completing);
  core_.EpilogComplete(id, "n2", false, "", 13, &fx);
  EXPECT_FALSE(Entry(id).completing);
  EXPECT_TRUE(Entry(id).alloc().empty());
  EXPECT_EQ(Entry(id).placement().size(), 2u);  // still says where it ran
  Schedule(14);
  EXPECT_EQ(State(next), JobState::kRunning);
  EXPECT_EQ(State(other), JobState::kRunning);
  EXPECT_FALSE(core_.cluster().nodes[0].drain);
}

TEST_F(EpilogTest, AFailedEpilogDrainsItsNodeWithSlurmsReason) {
  JobId id = TwoNodeJob();
  Effects fx;
  core_.JobEnded(id, 0, false, 10, &fx, "n1");
  Effects failed;
  core_.EpilogComplete(id, "n2", true, "/etc/slurm/epilog: exit status 1", 11, &failed);
  core_.EpilogComplete(id, "n1", false, "", 11, &failed);
  EXPECT_FALSE(Entry(id).completing);
  EXPECT_TRUE(core_.cluster().nodes[1].drain);
  EXPECT_EQ(core_.cluster().nodes[1].reason, "Epilog error");
  EXPECT_EQ(failed.nodes_changed, std::vector<int32_t>{1});
  EXPECT_FALSE(core_.cluster().nodes[0].drain);
}

TEST_F(EpilogTest, ACancelledJobsEpilogsRunOnceItsProcessesAreGone) {
  JobId id = TwoNodeJob();
  Effects fx;
  ASSERT_TRUE(core_.Signal(id, std::nullopt, 0, kAlice, 5, &fx).ok());
  EXPECT_EQ(fx.signals.size(), 1u);
  EXPECT_TRUE(fx.terminations.empty());
  Effects ended;
  core_.JobEnded(id, SIGTERM, false, 6, &ended, "n1");
  EXPECT_EQ(ended.terminations, std::vector<JobId>{id});
  EXPECT_EQ(State(id), JobState::kCancelled);
  EXPECT_TRUE(Entry(id).completing);
  // KillWait passing does not free nodes whose epilog is awaited.
  core_.Tick(6 + 100, &ended);
  EXPECT_TRUE(Entry(id).completing);
}

TEST_F(EpilogTest, NodesAreAskedAgainEachMinuteAndALostNodeIsNotWaitedFor) {
  JobId id = TwoNodeJob();
  Effects fx;
  core_.JobEnded(id, 0, false, 10, &fx, "n1");
  core_.EpilogComplete(id, "n1", false, "", 11, &fx);
  Effects tick;
  core_.Tick(12, &tick);  // stamps the request
  EXPECT_TRUE(tick.terminations.empty());
  core_.NodeAlive("n2", 12 + 59, &tick);
  core_.Tick(12 + 59, &tick);
  EXPECT_TRUE(tick.terminations.empty());
  core_.Tick(12 + 60, &tick);
  EXPECT_EQ(tick.terminations, std::vector<JobId>{id});
  // n2 falls silent: its epilog will not come, and the job is over (and, ended long ago,
  // purged in the same tick).
  core_.NodeAlive("n1", 12 + 59 + 301, &tick);
  core_.Tick(12 + 59 + 301, &tick);
  const JobEntry* e = core_.Find(id);
  EXPECT_TRUE(e == nullptr || !e->completing);
  JobId next = Submit(Req(8), kAlice, 12 + 59 + 301);
  Schedule(12 + 59 + 302);
  EXPECT_EQ(State(next), JobState::kRunning);  // on n1, free again
}

TEST_F(EpilogTest, AFailedPrologDrainsTheNodeAndRequeuesTheJobHeld) {
  JobId id = Submit(Req(1));
  Schedule(1);
  const int32_t head = Entry(id).alloc().front().node;
  const std::string node = core_.cluster().nodes[head].name;
  Effects fx;
  core_.PrologFailed(id, node, "prolog of job 100 failed: exit status 1", 2, &fx);
  EXPECT_TRUE(core_.cluster().nodes[head].drain);
  EXPECT_EQ(core_.cluster().nodes[head].reason, "Prolog error");
  EXPECT_EQ(State(id), JobState::kPending);
  EXPECT_EQ(Reason(id), PendingReason::kLaunchFailedRequeuedHeld);
  EXPECT_EQ(model::PendingReasonName(Reason(id)), "launch failed requeued held");
  EXPECT_EQ(Entry(id).job.priority, 0);
  EXPECT_EQ(Entry(id).history().restarts, 1);
  // Nothing of it ran: no signal, its node runs the epilog at once.
  EXPECT_TRUE(fx.signals.empty());
  EXPECT_EQ(fx.terminations, std::vector<JobId>{id});
  core_.EpilogComplete(id, node, false, "", 3, &fx);
  EXPECT_FALSE(Entry(id).completing);
  // A pass keeps the reason; the user may not release it, an administrator may.
  Schedule(4);
  EXPECT_EQ(Reason(id), PendingReason::kLaunchFailedRequeuedHeld);
  EXPECT_FALSE(core_.Release(id, kAlice, &fx).ok());
  ASSERT_TRUE(core_.Release(id, kRoot, &fx).ok());
  Schedule(5);
  EXPECT_EQ(State(id), JobState::kRunning);
  EXPECT_NE(Entry(id).alloc().front().node, head);  // not on the drained node
}

TEST_F(EpilogTest, AStepsFailedPrologOnAnotherNodeEndsTheScriptToo) {
  JobId id = TwoNodeJob();
  Effects fx;
  core_.PrologFailed(id, "n2", "exit status 1", 2, &fx);
  EXPECT_EQ(State(id), JobState::kPending);
  ASSERT_EQ(fx.signals.size(), 1u);  // the script on n1 is ended
  EXPECT_TRUE(Entry(id).completing);
  EXPECT_TRUE(fx.terminations.empty());  // once its processes are gone
  core_.JobEnded(id, SIGTERM, false, 3, &fx, "n1");
  EXPECT_EQ(fx.terminations, std::vector<JobId>{id});
}

TEST_F(EpilogTest, PrologSlurmctldDecidesTheLaunch) {
  JobId id = Submit(Req(1));
  Effects start = Schedule(1);
  ASSERT_EQ(start.launches.size(), 1u);
  EXPECT_FALSE(start.launches[0].after_prolog);
  Effects fx;
  core_.CtldPrologDone(id, true, "", 2, &fx);
  ASSERT_EQ(fx.launches.size(), 1u);  // now it goes out
  EXPECT_TRUE(fx.launches[0].after_prolog);
  EXPECT_TRUE(Entry(id).history().ctld_prolog_done);
  // A failure sends a batch job back to the queue, not held, to run again (and the prolog
  // with it).
  JobId other = Submit(Req(1));
  Schedule(3);
  Effects failed;
  core_.CtldPrologDone(other, false, "exit status 1", 4, &failed);
  EXPECT_EQ(State(other), JobState::kPending);
  EXPECT_EQ(Reason(other), PendingReason::kNone);
  for (const char* node : {"n1", "n2"}) core_.EpilogComplete(other, node, false, "", 4, &failed);
  Schedule(5);
  EXPECT_EQ(Reason(other), PendingReason::kBeginTime);  // not again at once
  EXPECT_EQ(State(other), JobState::kPending);
  EXPECT_FALSE(Entry(other).history().ctld_prolog_done);
  EXPECT_TRUE(failed.launches.empty());
  // A job srun submitted cannot go back: it is cancelled, saying why.
  model::JobRequest interactive = Req(1);
  interactive.srun.emplace();
  interactive.srun->argv = {"true"};
  JobId srun_job = Submit(interactive);
  Schedule(6);
  ASSERT_EQ(State(srun_job), JobState::kRunning);
  core_.CtldPrologDone(srun_job, false, "exit status 2", 6, &failed);
  EXPECT_EQ(State(srun_job), JobState::kCancelled);
  EXPECT_EQ(Entry(srun_job).history().launch_error, "PrologSlurmctld failed: exit status 2");
}

class NoHoldTest : public EpilogTest {
 protected:
  NoHoldTest() : EpilogTest(/*nohold=*/true) {}
};

TEST_F(NoHoldTest, NoHoldOnPrologFailRequeuesWithoutAHold) {
  JobId id = Submit(Req(1));
  Schedule(1);
  Effects fx;
  core_.PrologFailed(id, core_.cluster().nodes[Entry(id).alloc().front().node].name, "x", 2, &fx);
  EXPECT_EQ(State(id), JobState::kPending);
  EXPECT_EQ(Reason(id), PendingReason::kNone);
  EXPECT_GT(Entry(id).job.priority, 0);
}

}  // namespace
}  // namespace loom::ctld
