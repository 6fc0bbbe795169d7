// The controller's core: submissions, scheduling, dependencies, limits, nodes,
// reconfiguration and requeues. scontrol update job is in controller_core_update_test.cc, the jobs
// srun submits in controller_core_srun_test.cc.
#include "ctld/controller_core.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "core/strings.h"
#include "ctld/controller_core_test_util.h"

namespace loom::ctld {
namespace {

TEST(JobEntryTest, ACopyHasItsOwnHistory) {
  JobEntry fresh;
  EXPECT_EQ(fresh.history().restarts, 0);  // read without one being made
  EXPECT_TRUE(fresh.history().ran.empty());
  JobEntry a;
  a.mutable_history().restarts = 2;
  a.mutable_history().ran.push_back(sched::NodeAlloc{});
  JobEntry b = a;
  b.mutable_history().restarts = 3;
  EXPECT_EQ(a.history().restarts, 2);
  EXPECT_EQ(b.history().ran.size(), 1u);
  JobEntry c;
  c = b;
  c.mutable_history().ran.clear();
  EXPECT_EQ(b.history().ran.size(), 1u);
  EXPECT_EQ(c.history().restarts, 3);
}

TEST_F(CoreTest, SubmitRunComplete) {
  JobId id = Submit(Req());
  EXPECT_EQ(id, 100u);
  EXPECT_EQ(core_.next_job_id(), 101u);
  // No node daemon has registered: nothing runs.
  EXPECT_TRUE(Schedule(1).launches.empty());
  Up(2);
  Effects fx = Schedule(3);
  ASSERT_EQ(fx.launches.size(), 1u);
  EXPECT_EQ(fx.launches[0].job_id, id);
  EXPECT_EQ(State(id), JobState::kRunning);
  EXPECT_EQ(core_.Find(id)->job.start_time, 3);
  Effects end;
  core_.JobEnded(id, 0, false, 10, &end);
  EXPECT_EQ(State(id), JobState::kCompleted);
  EXPECT_EQ(end.changed.size(), 1u);
  // A non-zero exit fails the job.
  JobId bad = Submit(Req());
  Schedule(11);
  core_.JobEnded(bad, 3 << 8, false, 12, &end);
  EXPECT_EQ(State(bad), JobState::kFailed);
}

TEST_F(CoreTest, SubmissionErrorsChangeNothing) {
  Effects fx;
  model::JobRequest r = Req();
  r.partitions = {"nope"};
  EXPECT_EQ(core_.Submit(r, kAlice, 0, &fx).status().message(), "Invalid partition name specified");
  r = Req(64);  // more CPUs than any node has
  EXPECT_EQ(core_.Submit(r, kAlice, 0, &fx).status().message(),
            "Requested node configuration is not available");
  EXPECT_TRUE(fx.changed.empty());
  EXPECT_EQ(core_.next_job_id(), 100u);
}

TEST_F(CoreTest, ArrayThrottleNeverRunsMoreThanItAllows) {
  Up(0);
  model::JobRequest r = Req();
  r.array = *model::ParseArraySpec("0-4%2");
  JobId array = Submit(r);
  Effects fx = Schedule(1);
  ASSERT_EQ(fx.launches.size(), 2u);
  EXPECT_EQ(fx.launches[0].job_id, array);  // the first task takes the array's id
  EXPECT_EQ(fx.launches[1].job_id, array + 1);
  int throttled = 0;
  for (const auto& [key, e] : core_.jobs()) {
    throttled += e.job.reason == PendingReason::kJobArrayTaskLimit;
  }
  EXPECT_EQ(throttled, 3);
  for (Time t = 2; t < 10; ++t) {
    Effects ended;
    if (!fx.launches.empty()) core_.JobEnded(fx.launches[0].job_id, 0, false, t, &ended);
    fx = Schedule(t);
    int running = 0;
    for (const auto& [key, e] : core_.jobs()) running += e.job.state == JobState::kRunning;
    EXPECT_LE(running, 2);
  }
}

TEST_F(CoreTest, AfterOkChainAndAfterNotOkNeverSatisfied) {
  Up(0);
  JobId a = Submit(Req());
  model::JobRequest b = Req();
  b.dependency = *model::ParseDependency(core::StrCat("afterok:", a));
  JobId bid = Submit(b);
  model::JobRequest c = Req();
  c.dependency = *model::ParseDependency(core::StrCat("afternotok:", a));
  JobId cid = Submit(c);
  Schedule(1);
  EXPECT_EQ(State(a), JobState::kRunning);
  EXPECT_EQ(Reason(bid), PendingReason::kDependency);
  Effects fx;
  core_.JobEnded(a, 0, false, 5, &fx);
  Schedule(6);
  EXPECT_EQ(State(bid), JobState::kRunning);
  EXPECT_EQ(State(cid), JobState::kPending);
  EXPECT_EQ(Reason(cid), PendingReason::kDependencyNeverSatisfied);
}

TEST_F(CoreTest, DependencyOnAnUnknownJobIsAcceptedAndSatisfied) {
  // Slurm 22.05 accepts afterok:<unknown id> and runs the job at once.
  Up(0);
  model::JobRequest r = Req();
  r.dependency = *model::ParseDependency("afterok:999");
  JobId id = Submit(r);
  Schedule(1);
  EXPECT_EQ(State(id), JobState::kRunning);
}

TEST_F(CoreTest, SingletonWaitsForTheEarlierJobOfTheSameName) {
  Up(0);
  model::JobRequest r = Req(1, "same");
  r.dependency = *model::ParseDependency("singleton");
  JobId first = Submit(r);
  JobId second = Submit(r);
  Schedule(1);
  EXPECT_EQ(State(first), JobState::kRunning);
  EXPECT_EQ(Reason(second), PendingReason::kDependency);
  Effects fx;
  core_.JobEnded(first, 0, false, 2, &fx);
  Schedule(3);
  EXPECT_EQ(State(second), JobState::kRunning);
}

TEST_F(CoreTest, TimeLimitEndsAsTimeoutAfterSigterm) {
  Up(0);
  JobId id = Submit(Req());
  Schedule(1);
  Effects fx;
  Up(590);  // the nodes keep reporting
  core_.Tick(600, &fx);
  EXPECT_EQ(State(id), JobState::kRunning);
  core_.Tick(601, &fx);
  EXPECT_EQ(State(id), JobState::kTimeout);
  EXPECT_TRUE(core_.Find(id)->completing);  // holds its node until the processes are gone
  ASSERT_EQ(fx.signals.size(), 1u);
  EXPECT_EQ(fx.signals[0].signal, SIGTERM);
  core_.JobEnded(id, SIGTERM, false, 603, &fx);
  EXPECT_EQ(State(id), JobState::kTimeout);
  EXPECT_FALSE(core_.Find(id)->completing);
  EXPECT_TRUE(core_.Find(id)->alloc().empty());
}

TEST_F(CoreTest, SilentNodeGoesDownAndItsJobFailsOrRequeues) {
  Up(0);
  model::JobRequest keep = Req(8);
  keep.requeue = false;
  JobId failed = Submit(keep);
  JobId requeued = Submit(Req(8));  // JobRequeue: requeue by default
  Schedule(1);
  ASSERT_EQ(State(failed), JobState::kRunning);
  ASSERT_EQ(State(requeued), JobState::kRunning);
  Effects fx;
  core_.Tick(300, &fx);
  EXPECT_EQ(State(failed), JobState::kRunning);
  core_.Tick(301, &fx);  // SlurmdTimeout passed without a word from either node
  EXPECT_EQ(State(failed), JobState::kNodeFail);
  EXPECT_EQ(State(requeued), JobState::kPending);
  EXPECT_FALSE(core_.NodeUp(0));
  // The controller gave the reason: SlurmUser and the time, for sinfo -R.
  EXPECT_EQ(core_.node_admin(0).reason_user, "root");
  EXPECT_EQ(core_.node_admin(0).reason_time, 301);
  EXPECT_TRUE(Schedule(302).launches.empty());
  core_.NodeAlive("n1", 303, &fx);
  EXPECT_EQ(core_.node_admin(0).reason_time, 0);
  EXPECT_EQ(Schedule(304).launches.size(), 1u);
}

class EarlierRunTest : public CoreTest {
 protected:
  // A whole-node job that must run on n1 (-w n1), started at 1.
  JobId RunningOnN1() {
    Up(0);
    model::JobRequest r = Req(8);
    r.nodelist = "n1";
    JobId id = Submit(r);
    Schedule(1);
    EXPECT_EQ(State(id), JobState::kRunning);
    return id;
  }
};

TEST_F(EarlierRunTest, ARequeuedJobMeetsNoEarlierRunOfItselfWhenItsNodeReturns) {
  // The job needs n1; n1's daemon goes silent, the job is requeued. When n1 returns it still
  // runs the earlier run (its supervisor outlived the daemon).
  const JobId id = RunningOnN1();
  Effects fx;
  core_.NodeAlive("n2", 300, &fx);
  core_.Tick(301, &fx);
  ASSERT_EQ(State(id), JobState::kPending);
  EXPECT_EQ(core_.Find(id)->history().restarts, 1);  // counted, as Slurm counts it

  Effects back;
  core_.NodeAlive("n1", 302, &back);
  EXPECT_EQ(core_.NodeReportsJobs("n1", {id}, &back), std::vector<JobId>{id});
  ASSERT_EQ(back.signals.size(), 1u);
  EXPECT_EQ(back.signals[0].signal, SIGKILL);
  // Not launched where the earlier run still is.
  EXPECT_TRUE(Schedule(303).launches.empty());
  EXPECT_EQ(State(id), JobState::kPending);
  // The earlier run's end is no end of the job.
  core_.JobEnded(id, 9, false, 304, &fx, "n1");
  EXPECT_EQ(State(id), JobState::kPending);
  // Gone from n1's report: the job runs there again, and only a report from n1 ends it.
  core_.NodeReportsJobs("n1", {}, &fx);
  EXPECT_EQ(Schedule(305).launches.size(), 1u);
  ASSERT_EQ(State(id), JobState::kRunning);
  core_.JobEnded(id, 0, false, 306, &fx, "n2");
  EXPECT_EQ(State(id), JobState::kRunning);
  core_.JobEnded(id, 0, false, 307, &fx, "n1");
  EXPECT_EQ(State(id), JobState::kCompleted);
}

TEST_F(EarlierRunTest, ALaunchThatMeetsAnEarlierRunGoesBackToTheQueue) {
  const JobId id = RunningOnN1();
  Effects fx;
  core_.LaunchCollided(id, "n1", 0, &fx);
  EXPECT_EQ(State(id), JobState::kPending);  // not FAILED
  ASSERT_EQ(fx.signals.size(), 1u);
  EXPECT_EQ(fx.signals[0].signal, SIGKILL);
  EXPECT_EQ(core_.Find(id)->history().restarts, 0);  // it never started
  EXPECT_TRUE(Schedule(3).launches.empty());
  core_.NodeReportsJobs("n1", {}, &fx);
  EXPECT_EQ(Schedule(4).launches.size(), 1u);
}

TEST_F(EarlierRunTest, ABatchJobItsNodeNeverReportsGoesBackToTheQueue) {
  // Its launch was lost (a controller killed after storing the start, before sending it):
  // n1's daemon reports nothing. Within the grace the launch may still be on its way.
  const JobId id = RunningOnN1();
  Effects fx;
  EXPECT_TRUE(core_.NodeMissesJobs("n1", {}, 1 + ControllerCore::kLaunchGraceS - 1, &fx).empty());
  EXPECT_TRUE(core_.NodeMissesJobs("n1", {id}, 1 + ControllerCore::kLaunchGraceS, &fx).empty());
  EXPECT_TRUE(core_.NodeMissesJobs("n2", {}, 1 + ControllerCore::kLaunchGraceS, &fx).empty());
  EXPECT_EQ(State(id), JobState::kRunning);
  EXPECT_EQ(core_.NodeMissesJobs("n1", {}, 1 + ControllerCore::kLaunchGraceS, &fx),
            std::vector<JobId>{id});
  EXPECT_EQ(State(id), JobState::kPending);
  EXPECT_EQ(core_.Find(id)->history().restarts, 1);
}

TEST_F(CoreTest, JobIdZeroNamesNoJob) {
  // Found by request_fuzzer: every plain job's array id is 0, so id 0 used to name them all.
  Up(0);
  JobId a = Submit(Req());
  JobId b = Submit(Req());
  Effects fx;
  EXPECT_EQ(core_.Signal(0, std::nullopt, SIGKILL, kRoot, 1, &fx).message(),
            "Invalid job id specified");
  EXPECT_EQ(core_.UpdateJob(0, PriorityEdit(5), kRoot, 1, &fx).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(State(a), JobState::kPending);
  EXPECT_EQ(State(b), JobState::kPending);
}

TEST_F(CoreTest, OnlyOwnersRootAndSlurmUserActOnAJob) {
  Up(0);
  JobId id = Submit(Req(), kAlice);
  Effects fx;
  EXPECT_EQ(core_.Signal(id, std::nullopt, 0, kBob, 1, &fx).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(core_.Hold(id, kBob, &fx).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(State(id), JobState::kPending);
  EXPECT_TRUE(core_.Signal(id, std::nullopt, 0, kRoot, 1, &fx).ok());
  EXPECT_EQ(State(id), JobState::kCancelled);
  EXPECT_EQ(core_.Signal(4242, std::nullopt, 0, kRoot, 1, &fx).message(),
            "Invalid job id specified");
}

TEST_F(CoreTest, HoldAndRelease) {
  Up(0);
  model::JobRequest r = Req();
  r.hold = true;
  JobId id = Submit(r);
  Schedule(1);
  EXPECT_EQ(Reason(id), PendingReason::kJobHeldUser);
  Effects fx;
  ASSERT_TRUE(core_.Release(id, kAlice, &fx).ok());
  Schedule(2);
  EXPECT_EQ(State(id), JobState::kRunning);
  // An administrator's hold is not the user's to release.
  JobId other = Submit(Req(8));
  JobId blocked = Submit(Req(8));
  ASSERT_TRUE(core_.Hold(blocked, kRoot, &fx).ok());
  EXPECT_EQ(core_.Release(blocked, kAlice, &fx).code(), absl::StatusCode::kPermissionDenied);
  (void)other;
}

TEST_F(CoreTest, CancelRunningSendsSigtermAndEndsCancelled) {
  Up(0);
  JobId id = Submit(Req());
  Schedule(1);
  Effects fx;
  ASSERT_TRUE(core_.Signal(id, std::nullopt, 0, kAlice, 5, &fx).ok());
  EXPECT_EQ(State(id), JobState::kCancelled);
  EXPECT_TRUE(core_.Find(id)->completing);
  ASSERT_EQ(fx.signals.size(), 1u);
  core_.JobEnded(id, SIGTERM, false, 6, &fx);
  EXPECT_EQ(State(id), JobState::kCancelled);
  // Ended jobs leave the table after MinJobAge.
  core_.Tick(6 + 301, &fx);
  EXPECT_EQ(core_.Find(id), nullptr);
}


// -w: the job gets the nodes it names (and more when it needs more); -x: never those.
TEST_F(CoreTest, NodeListAndExcludeDecideWhereAJobRuns) {
  Up(0);
  auto node_of = [&](JobId id) {
    std::vector<std::string> names;
    for (const sched::NodeAlloc& a : core_.Find(id)->alloc()) {
      names.push_back(core_.cluster().nodes[a.node].name);
    }
    return names;
  };
  model::JobRequest on_n2 = Req();
  on_n2.nodelist = "n2";
  JobId a = Submit(on_n2);
  model::JobRequest not_n1 = Req();
  not_n1.exclude = "n1";
  JobId b = Submit(not_n1);
  model::JobRequest both = Req();
  both.nodelist = "n1";
  both.shape.min_nodes = both.shape.max_nodes = 2;
  both.shape.ntasks = 2;
  JobId c = Submit(both);
  model::JobRequest pair = Req();
  pair.nodelist = "n[1-2]";  // no -N: as many nodes as it names
  JobId d = Submit(pair);
  Schedule(1);
  EXPECT_EQ(node_of(a), std::vector<std::string>{"n2"});
  EXPECT_EQ(node_of(b), std::vector<std::string>{"n2"});
  EXPECT_EQ(node_of(c), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(node_of(d), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(core_.Find(d)->request->shape.min_nodes, 2);

  Effects fx;
  model::JobRequest will = Req(8);  // a whole node: only n1 is free, but -w n2 waits for n2
  will.nodelist = "n2";
  auto when = core_.TestOnly(will, 2, &fx);
  ASSERT_TRUE(when.ok()) << when.status();
  EXPECT_EQ(when->nodes, "n2");
  model::JobRequest bogus = Req();
  bogus.nodelist = "n9";
  EXPECT_EQ(core_.Submit(bogus, kAlice, 2, &fx).status().message(), "Invalid node name specified");
  model::JobRequest outside = Req();
  outside.partitions = {"small"};
  outside.nodelist = "n2";  // not in partition small
  EXPECT_EQ(core_.Submit(outside, kAlice, 2, &fx).status().message(),
            "Requested node configuration is not available");

  // A node it must have is drained: it waits, saying why.
  ASSERT_TRUE(core_.UpdateNodes({"n1"}, "drain", "maint", kRoot, 3, &fx).ok());
  model::JobRequest wants_n1 = Req();
  wants_n1.nodelist = "n1";
  JobId e = Submit(wants_n1, kAlice, 3);
  Schedule(4);
  EXPECT_EQ(State(e), JobState::kPending);
  EXPECT_EQ(core_.Find(e)->job.reason, PendingReason::kReqNodeNotAvail);
}

TEST_F(CoreTest, DrainedNodeTakesNoNewWorkButKeepsItsJob) {
  Up(0);
  model::JobRequest whole = Req(8);
  JobId first = Submit(whole);
  Schedule(1);
  ASSERT_EQ(State(first), JobState::kRunning);
  const int32_t node = core_.Find(first)->alloc().front().node;
  const std::string name = core_.cluster().nodes[node].name;
  Effects fx;
  ASSERT_TRUE(core_.UpdateNodes({name}, "drain", "maint", kRoot, 2, &fx).ok());
  EXPECT_EQ(fx.nodes_changed, std::vector<int32_t>{node});
  EXPECT_EQ(State(first), JobState::kRunning);
  JobId second = Submit(whole);
  JobId third = Submit(whole);
  Schedule(3);
  // One node left for two whole-node jobs.
  EXPECT_EQ(State(second), JobState::kRunning);
  EXPECT_EQ(State(third), JobState::kPending);
  EXPECT_NE(core_.Find(second)->alloc().front().node, node);
  EXPECT_EQ(core_.node_admin(node).reason_user, "root");
  EXPECT_EQ(core_.node_admin(node).reason_time, 2);
  EXPECT_EQ(core_.cluster().nodes[node].reason, "maint");
  // RESUME gives it back.
  ASSERT_TRUE(core_.UpdateNodes({name}, "RESUME", "", kRoot, 4, &fx).ok());
  EXPECT_FALSE(core_.cluster().nodes[node].drain);
  EXPECT_EQ(core_.cluster().nodes[node].reason, "");
  EXPECT_EQ(core_.node_admin(node).reason_time, 0);
}

TEST_F(CoreTest, DownNodeLosesItsJobsAndStaysDownWhileItsDaemonReports) {
  Up(0);
  model::JobRequest r = Req(8);
  r.requeue = false;
  JobId id = Submit(r);
  Schedule(1);
  const int32_t node = core_.Find(id)->alloc().front().node;
  const std::string name = core_.cluster().nodes[node].name;
  Effects fx;
  ASSERT_TRUE(core_.UpdateNodes({name}, "DOWN", "broken", kRoot, 2, &fx).ok());
  EXPECT_EQ(State(id), JobState::kNodeFail);
  core_.NodeAlive(name, 3, &fx);
  EXPECT_EQ(core_.cluster().nodes[node].state, model::NodeState::kDown);
  EXPECT_EQ(core_.cluster().nodes[node].reason, "broken");
  ASSERT_TRUE(core_.UpdateNodes({name}, "resume", "", kRoot, 4, &fx).ok());
  EXPECT_EQ(core_.cluster().nodes[node].state, model::NodeState::kIdle);
}

TEST_F(CoreTest, NodeUpdatesAreCheckedBeforeAnythingChanges) {
  Up(0);
  Effects fx;
  EXPECT_EQ(core_.UpdateNodes({"n1"}, "DRAIN", "x", kAlice, 1, &fx).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(core_.UpdateNodes({"n1"}, "DRAIN", "", kRoot, 1, &fx).message(),
            "You must specify a reason when DOWNING or DRAINING a node. Request denied");
  EXPECT_EQ(core_.UpdateNodes({"n1"}, "SLEEPY", "x", kRoot, 1, &fx).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core_.UpdateNodes({"n1", "nope"}, "DRAIN", "x", kRoot, 1, &fx).code(),
            absl::StatusCode::kNotFound);
  EXPECT_FALSE(core_.cluster().nodes[0].drain);
  EXPECT_TRUE(fx.nodes_changed.empty());
}

TEST_F(CoreTest, RestoredNodeKeepsItsAdministrativeState) {
  core_.RestoreNode("n2", /*drain=*/true, /*down=*/false, "disk", 0, "root", 77);
  EXPECT_TRUE(core_.cluster().nodes[1].drain);
  EXPECT_EQ(core_.cluster().nodes[1].reason, "disk");
  EXPECT_EQ(core_.node_admin(1).reason_time, 77);
  // Its daemon registering again does not wipe the drain's reason, nor does its silence.
  Effects fx;
  core_.NodeAlive("n2", 100, &fx);
  EXPECT_EQ(core_.cluster().nodes[1].reason, "disk");
  core_.Tick(100 + 301, &fx);
  EXPECT_EQ(core_.cluster().nodes[1].state, model::NodeState::kDown);
  EXPECT_EQ(core_.cluster().nodes[1].reason, "disk");
  core_.NodeAlive("n2", 402, &fx);
  EXPECT_EQ(core_.cluster().nodes[1].reason, "disk");
  EXPECT_TRUE(core_.cluster().nodes[1].drain);
}


TEST_F(CoreTest, TestOnlySaysWhenAndWhereWithoutSubmitting) {
  Up(0);
  auto [a, b] = FillBothNodes(10);
  (void)a;
  const size_t before = core_.jobs().size();
  Effects fx;
  model::JobRequest r = Req(2);
  auto w = core_.TestOnly(r, 20, &fx);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->job_id, b + 1);
  EXPECT_EQ(w->start, 10 + 600);  // when the first running job's time limit ends
  EXPECT_EQ(w->cpus, 2);
  EXPECT_EQ(w->partition, "batch");
  EXPECT_TRUE(w->nodes == "n1" || w->nodes == "n2") << w->nodes;
  EXPECT_EQ(core_.jobs().size(), before);
  EXPECT_TRUE(fx.next_id_changed);
  EXPECT_EQ(Submit(Req()), b + 2);  // the id was spent
  r.shape.cpus_per_task = 64;
  EXPECT_FALSE(core_.TestOnly(r, 20, &fx).ok());
}


TEST_F(CoreTest, UnreachableNodeAtLaunchIsANodeFailureNotAJobFailure) {
  Up(0);
  model::JobRequest keep = Req();
  model::JobRequest once = Req();
  once.requeue = false;
  JobId a = Submit(keep);
  JobId b = Submit(once);
  JobId c = Submit(Req());
  Schedule(1);
  Effects fx;
  core_.LaunchFailed(a, "node 127.0.0.1:1: connection refused", 2, &fx, /*node_unreachable=*/true);
  core_.LaunchFailed(b, "node 127.0.0.1:1: connection refused", 2, &fx, true);
  core_.LaunchFailed(c, "cannot chdir to /nope", 2, &fx);
  EXPECT_EQ(State(a), JobState::kPending);  // requeued
  EXPECT_EQ(State(b), JobState::kNodeFail);
  EXPECT_EQ(State(c), JobState::kFailed);
}

// A node whose daemon refuses the launch's connection takes no new work until it reports
// again: the requeued job is not sent back to it over and over (each time counting a
// restart) while SlurmdTimeout has not yet passed.
TEST_F(CoreTest, ANodeThatRefusedALaunchTakesNoWorkUntilItReports) {
  Up(0);
  model::JobRequest on_n1 = Req();
  on_n1.nodelist = "n1";
  const JobId a = Submit(on_n1);
  const JobId other = Submit(Req(8));  // fills n2
  Schedule(1);
  ASSERT_EQ(State(a), JobState::kRunning);
  ASSERT_EQ(State(other), JobState::kRunning);
  Effects fx;
  core_.LaunchFailed(a, "node 127.0.0.1:1: connection refused", 2, &fx, true, "n1");
  EXPECT_EQ(State(a), JobState::kPending);
  EXPECT_EQ(core_.cluster().nodes[0].state, model::NodeState::kDown);
  EXPECT_EQ(core_.cluster().nodes[0].reason, "Not responding");
  for (Time t = 2; t < 10; ++t) Schedule(t);
  EXPECT_EQ(State(a), JobState::kPending);
  EXPECT_EQ(core_.Find(a)->history().restarts, 1);
  // Its daemon reports again: the job goes back there.
  core_.NodeAlive("n1", 10, &fx);
  Schedule(10);
  EXPECT_EQ(State(a), JobState::kRunning);
  EXPECT_EQ(core_.Find(a)->history().restarts, 1);
}


conf::SiteConfig SiteFrom(const std::string& name, const std::string& text) {
  auto site = conf::testing::SiteFromText("ctld_core_test_" + name, text);
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

constexpr char kHeader[] =
    "ClusterName=t\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\nGresTypes=gpu\n";

TEST_F(CoreTest, ReconfigureKeepsJobsAndNodeStateAndAddsNodes) {
  Up(0);
  JobId running = Submit(Req(8));
  Schedule(1);
  ASSERT_EQ(State(running), JobState::kRunning);
  const std::string on = core_.cluster().nodes[core_.Find(running)->alloc().front().node].name;
  Effects fx;
  ASSERT_TRUE(core_.UpdateNodes({"n2"}, "DRAIN", "disk", kRoot, 2, &fx).ok());
  // n0 comes first in the new file, so every index moves; n3 is new.
  auto site = SiteFrom("grow", std::string(kHeader) +
                                   "NodeName=n0 CPUs=8 RealMemory=16000\n"
                                   "NodeName=n[1-3] CPUs=8 RealMemory=16000 Gres=gpu:a100:4\n"
                                   "PartitionName=batch Nodes=n[0-3] Default=YES MaxTime=1-00:00:00\n");
  ASSERT_TRUE(core_.Reconfigure(site, CoreOptions{}).ok());
  ASSERT_EQ(core_.cluster().nodes.size(), 4u);
  const JobEntry* e = core_.Find(running);
  EXPECT_EQ(e->job.state, JobState::kRunning);
  EXPECT_EQ(core_.cluster().nodes[e->alloc().front().node].name, on);
  EXPECT_TRUE(core_.cluster().nodes[2].drain);  // n2 kept its drain
  EXPECT_EQ(core_.cluster().nodes[2].reason, "disk");
  EXPECT_TRUE(core_.NodeUp(1));                                           // n1 still alive
  EXPECT_FALSE(core_.NodeUp(3));                                          // n3 not heard from yet
  EXPECT_EQ(core_.cluster().nodes[3].state, model::NodeState::kDown);
  EXPECT_EQ(e->partition, 0);
}

TEST_F(CoreTest, ReconfigureKeepsWhereEndedJobsRan) {
  // Node indices move with the new file; an ended job still names the node it ran on, and
  // one whose node is gone names none.
  Up(0);
  JobId first = Submit(Req(8));
  JobId second = Submit(Req(8));
  Schedule(1);
  ASSERT_EQ(State(first), JobState::kRunning);
  ASSERT_EQ(State(second), JobState::kRunning);
  const auto ran_on = [&](JobId id) {
    const sched::Allocation& ran = core_.Find(id)->placement();
    return ran.empty() ? std::string() : core_.cluster().nodes[ran.front().node].name;
  };
  const std::string first_on = ran_on(first);
  const std::string second_on = ran_on(second);
  ASSERT_NE(first_on, second_on);
  Effects fx;
  core_.JobEnded(first, 0, false, 2, &fx);
  core_.JobEnded(second, 0, false, 2, &fx);
  ASSERT_EQ(ran_on(first), first_on);
  // The node `second` ran on comes first in the new file; the other is gone.
  auto site = SiteFrom("swap", std::string(kHeader) + "NodeName=n0 CPUs=8 RealMemory=16000\n" +
                                   "NodeName=" + second_on + " CPUs=8 RealMemory=16000\n" +
                                   "PartitionName=batch Nodes=n0," + second_on +
                                   " Default=YES MaxTime=1-00:00:00\n");
  ASSERT_TRUE(core_.Reconfigure(site, CoreOptions{}).ok());
  EXPECT_EQ(ran_on(second), second_on);
  EXPECT_EQ(ran_on(first), "");
  EXPECT_EQ(State(first), JobState::kCompleted);
}

TEST_F(CoreTest, ReconfigureThatWouldStrandAJobChangesNothing) {
  Up(0);
  FillBothNodes(1);
  auto site = SiteFrom("shrink", std::string(kHeader) +
                                     "NodeName=n1 CPUs=8 RealMemory=16000\n"
                                     "PartitionName=batch Nodes=n1 Default=YES\n");
  Status s = core_.Reconfigure(site, CoreOptions{});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("node n2 is not in the new configuration"));
  EXPECT_EQ(core_.cluster().nodes.size(), 2u);
}

TEST_F(CoreTest, NodeReportingLessThanConfiguredIsDrainedWithSlurmsReason) {
  Effects fx;
  core_.NodeRegistered("n1", model::Resources{8, 4, 16000}, 1, &fx);  // as configured
  EXPECT_FALSE(core_.cluster().nodes[0].drain);
  core_.NodeRegistered("n2", model::Resources{2, 0, 16000}, 1, &fx);
  const model::Node& n2 = core_.cluster().nodes[1];
  EXPECT_TRUE(n2.drain);
  EXPECT_EQ(n2.reason,
            "Low socket*core*thread count, Low CPUs (reported:2 < configured:8), "
            "gres/gpu count reported lower than configured (0 < 4)");
  EXPECT_EQ(core_.node_admin(1).reason_user, "root");
  EXPECT_EQ(fx.nodes_changed, std::vector<int32_t>{1});
  EXPECT_TRUE(core_.NodeUp(1));  // up, but drained

  ControllerCore trusting(Site(), CoreOptions{.config_overrides = true}, 1);
  trusting.NodeRegistered("n2", model::Resources{2, 0, 100}, 1, &fx);
  EXPECT_FALSE(trusting.cluster().nodes[1].drain);
}

TEST_F(CoreTest, IdenticalSubmissionsShareOneRequestButAreStoredEachOnTheirOwn) {
  model::JobRequest r = Req();
  r.script = "#!/bin/sh\ntrue\n";
  r.environment = {{"HOME", "/home/alice"}};
  Effects fx;
  const JobId a = *core_.Submit(r, kAlice, 0, &fx);
  r.environment = {{"HOME", "/home/alice"}, {"OTHER", "1"}};  // only what the store keeps
  const JobId b = *core_.Submit(r, kAlice, 0, &fx);
  r.name = "other";
  const JobId c = *core_.Submit(r, kAlice, 0, &fx);
  EXPECT_EQ(core_.Find(a)->request, core_.Find(b)->request);
  EXPECT_NE(core_.Find(a)->request, core_.Find(c)->request);
  EXPECT_EQ(core_.Find(c)->request->name, "other");
  ASSERT_EQ(fx.submitted.size(), 3u);
  EXPECT_EQ(fx.submitted[1].id, b);
  EXPECT_EQ(fx.submitted[1].environment.size(), 2u);
}

TEST_F(CoreTest, RequeueKillsThenQueuesAgainAndRunsOnceTheNodesAreFree) {
  Up(0);
  JobId id = Submit(Req(8));
  Schedule(1);
  ASSERT_EQ(State(id), JobState::kRunning);
  Effects fx;
  ASSERT_TRUE(core_.Requeue(id, /*hold=*/false, kAlice, 5, &fx).ok());
  EXPECT_EQ(State(id), JobState::kPending);
  ASSERT_EQ(fx.signals.size(), 1u);
  EXPECT_EQ(fx.signals[0].signal, SIGTERM);
  EXPECT_EQ(core_.Find(id)->history().restarts, 1);
  // Not before its processes are gone.
  EXPECT_TRUE(Schedule(6).launches.empty());
  core_.JobEnded(id, SIGTERM, false, 7, &fx);
  Effects again = Schedule(8);
  ASSERT_EQ(again.launches.size(), 1u);
  EXPECT_EQ(State(id), JobState::kRunning);
  // An ended job goes straight back; requeue_hold holds it; a pending one is refused.
  core_.JobEnded(id, 0, false, 9, &fx);
  ASSERT_EQ(State(id), JobState::kCompleted);
  ASSERT_TRUE(core_.Requeue(id, /*hold=*/true, kAlice, 10, &fx).ok());
  EXPECT_EQ(State(id), JobState::kPending);
  EXPECT_EQ(Reason(id), PendingReason::kJobHeldUser);
  EXPECT_EQ(core_.Requeue(id, false, kAlice, 11, &fx).message(), "Job is pending execution");
  EXPECT_EQ(core_.Requeue(id, false, kBob, 11, &fx).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(core_.Requeue(999999, false, kRoot, 11, &fx).code(), absl::StatusCode::kNotFound);
}

// Passes and node usage look at live entries only; an ended job leaves them, and one
// requeued after it ended comes back.
TEST_F(CoreTest, LiveEntriesAreTheJobsNotOverYet) {
  Up(0);
  JobId done = Submit(Req(8));
  JobId running = Submit(Req(8));
  JobId waiting = Submit(Req(8));
  Schedule(1);
  ASSERT_EQ(State(waiting), JobState::kPending);
  auto live_ids = [this] {
    std::vector<JobId> ids;
    for (const JobEntry* e : core_.LiveEntries()) ids.push_back(e->job.id);
    return ids;
  };
  EXPECT_EQ(live_ids(), (std::vector<JobId>{done, running, waiting}));
  Effects fx;
  core_.JobEnded(done, 0, false, 2, &fx);
  EXPECT_EQ(live_ids(), (std::vector<JobId>{running, waiting}));
  // The freed node goes to the waiting job; the ended one stays listed but out of passes.
  Effects next = Schedule(3);
  ASSERT_EQ(next.launches.size(), 1u);
  EXPECT_EQ(next.launches[0].job_id, waiting);
  EXPECT_EQ(core_.jobs().size(), 3u);
  // Cancelled while running: it holds its nodes (live) until its processes are gone.
  ASSERT_TRUE(core_.Signal(running, std::nullopt, 0, kAlice, 4, &fx).ok());
  EXPECT_EQ(live_ids(), (std::vector<JobId>{running, waiting}));
  core_.JobEnded(running, SIGTERM, false, 5, &fx);
  EXPECT_EQ(live_ids(), (std::vector<JobId>{waiting}));
  ASSERT_TRUE(core_.Requeue(done, /*hold=*/false, kAlice, 6, &fx).ok());
  EXPECT_EQ(live_ids(), (std::vector<JobId>{done, waiting}));
  Effects again = Schedule(7);
  ASSERT_EQ(again.launches.size(), 1u);
  EXPECT_EQ(again.launches[0].job_id, done);
}

TEST_F(CoreTest, JobsANodeStillRunsButTheControllerDoesNotAreKilledThere) {
  Up(0);
  JobId running = Submit(Req());
  JobId ended = Submit(Req());
  Effects fx;
  core_.Schedule(1, &fx);
  ASSERT_EQ(State(running), JobState::kRunning);
  const int32_t node = core_.Find(running)->alloc().front().node;
  const std::string name = core_.cluster().nodes[node].name;
  core_.JobEnded(ended, 0, false, 2, &fx);  // while its node's daemon was away, say
  Effects report;
  auto orphans = core_.NodeReportsJobs(name, {running, ended, 999999}, &report);
  // The running job is where the node says; the ended and the unknown one are killed there.
  EXPECT_EQ(orphans, (std::vector<JobId>{ended, 999999}));
  ASSERT_EQ(report.signals.size(), 2u);
  EXPECT_EQ(report.signals[0].job_id, ended);
  EXPECT_EQ(report.signals[0].signal, SIGKILL);
  EXPECT_EQ(report.signals[0].nodes, (std::vector<int32_t>{node}));
  EXPECT_EQ(report.signals[1].job_id, 999999u);
  EXPECT_TRUE(core_.NodeReportsJobs("no-such-node", {ended}, &report).empty());
  EXPECT_EQ(State(running), JobState::kRunning);
}

}  // namespace
}  // namespace loom::ctld
