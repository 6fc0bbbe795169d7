// Steps inside a running job's allocation, and salloc's allocation-only jobs.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "conf/testing/site_text.h"
#include "ctld/controller_core.h"
#include "ctld/persist.h"

namespace loom::ctld {
namespace {

using model::JobState;

conf::SiteConfig Site() {
  auto site = conf::testing::SiteFromText(
      "ctld_core_steps_test",
      "ClusterName=t\nSlurmctldHost=localhost\n"
         "NodeName=n[1-2] CPUs=8 RealMemory=16000\n"
         "PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=1-00:00:00\n");
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

// What srun asks for; 0: not given.
StepAsk Ask(JobId job, int32_t ntasks = 0, int32_t nodes = 0, int32_t per_node = 0,
            int32_t cpus_per_task = 0, bool exclusive = false) {
  StepAsk ask;
  ask.job_id = job;
  ask.ntasks = ntasks;
  ask.nodes = nodes;
  ask.ntasks_per_node = per_node;
  ask.cpus_per_task = cpus_per_task;
  ask.exclusive = exclusive;
  return ask;
}

const Caller kAlice{1001, 1001, "alice"};
const Caller kBob{1002, 1002, "bob"};

class StepsTest : public testing::Test {
 protected:
  StepsTest() : StepsTest(Site()) {}
  explicit StepsTest(const conf::SiteConfig& site)
      : core_(site, CoreOptions{.kill_wait_s = 30, .slurmd_timeout_s = 300}, 100) {
    Effects fx;
    core_.NodeAlive("n1", 0, &fx);
    core_.NodeAlive("n2", 0, &fx);
  }
  void TearDown() override { EXPECT_EQ(core_.refused_transitions(), 0); }
  // A running job of two whole nodes (8 CPUs each), alice's.
  JobId RunningJob(bool allocation_only = false) {
    model::JobRequest r;
    r.name = "job";
    r.shape.min_nodes = 2;
    r.shape.max_nodes = 2;
    r.shape.ntasks = 16;
    r.time_limit_s = 600;
    r.allocation_only = allocation_only;
    Effects fx;
    auto id = core_.Submit(r, kAlice, 0, &fx);
    EXPECT_TRUE(id.ok()) << id.status();
    Effects run;
    core_.Schedule(1, &run);
    EXPECT_EQ(core_.Find(*id)->job.state, JobState::kRunning);
    return *id;
  }
  StatusOr<std::optional<StepRecord>> Step(StepAsk ask, const Caller& who = kAlice) {
    Effects fx;
    auto step = core_.CreateStep(ask, who, 10, &fx);
    if (step.ok() && step->has_value()) {
      EXPECT_EQ(fx.steps_changed, std::vector<JobId>{ask.job_id});  // to store
    }
    return step;
  }
  const StepRecord& Record(JobId job, uint32_t step) {
    for (const auto& [e, s] : core_.Steps(job)) {
      if (s->id == step) return *s;
    }
    ADD_FAILURE() << "no step " << job << "." << step;
    static StepRecord none;
    return none;
  }
  ControllerCore core_;
};

TEST_F(StepsTest, StepsGetIdsInOrderAndEndWithoutEndingTheJob) {
  JobId job = RunningJob();
  auto a = Step(Ask(job, 8));
  ASSERT_TRUE(a.ok() && a->has_value()) << a.status();
  EXPECT_EQ((*a)->id, 0u);
  EXPECT_EQ((*a)->nodes, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ((*a)->tasks_per_node, (std::vector<int32_t>{4, 4}));
  auto b = Step(Ask(job, 1));
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->id, 1u);
  EXPECT_EQ((*b)->nodes, (std::vector<int32_t>{0}));  // one task: one node

  Effects fx;
  core_.StepNodeEnded(job, 0, "n1", 0, "", 20, &fx);
  EXPECT_EQ(Record(job, 0).state, JobState::kRunning);  // n2's tasks still run
  core_.StepNodeEnded(job, 0, "n2", 0, "", 21, &fx);
  EXPECT_EQ(Record(job, 0).state, JobState::kCompleted);
  EXPECT_EQ(Record(job, 0).end_time, 21);
  core_.StepNodeEnded(job, 1, "n1", 3 << 8, "", 22, &fx);
  EXPECT_EQ(Record(job, 1).state, JobState::kFailed);
  EXPECT_EQ(Record(job, 1).status.wait_status(), 3 << 8);
  EXPECT_EQ(core_.Find(job)->job.state, JobState::kRunning);  // the job goes on
}

TEST_F(StepsTest, ANodeThatCannotStartItsTasksFailsTheStepAndSaysWhy) {
  JobId job = RunningJob();
  auto a = Step(Ask(job, 8));
  ASSERT_TRUE(a.ok() && a->has_value()) << a.status();
  Effects fx;
  core_.StepNodeEnded(job, 0, "n2", 1 << 8, "launch not delivered to n2", 20, &fx);
  EXPECT_EQ(Record(job, 0).launch_failed_node, "n2");
  EXPECT_EQ(Record(job, 0).launch_error, "launch not delivered to n2");
  // The tasks that did start are ended.
  ASSERT_EQ(fx.signals.size(), 1u);
  EXPECT_EQ(fx.signals[0].signal, SIGKILL);
  EXPECT_EQ(fx.signals[0].step, 0u);
  core_.StepNodeEnded(job, 0, "n1", SIGKILL, "", 21, &fx);
  EXPECT_EQ(Record(job, 0).state, JobState::kFailed);
  EXPECT_EQ(core_.Find(job)->job.state, JobState::kRunning);
}

TEST_F(StepsTest, NodesAndTasksFollowTheRequest) {
  JobId job = RunningJob();
  auto one = Step(Ask(job, 0, 1, 2));
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->tasks_per_node, (std::vector<int32_t>{2}));
  auto every = Step(Ask(job));  // one task on each node
  ASSERT_TRUE(every.ok() && every->has_value());
  EXPECT_EQ((*every)->tasks_per_node, (std::vector<int32_t>{1, 1}));
  auto wide = Step(Ask(job, 4, 0, 0, 4));
  ASSERT_TRUE(wide.ok() && wide->has_value());
  EXPECT_EQ((*wide)->tasks_per_node, (std::vector<int32_t>{2, 2}));
}

TEST_F(StepsTest, RequestsTheJobCannotHoldAreRefusedInSlurmsWords) {
  JobId job = RunningJob();
  EXPECT_EQ(Step(Ask(job, 17)).status().message(), "More processors requested than permitted");
  EXPECT_EQ(Step(Ask(job, 0, 3)).status().message(),
            "Requested node configuration is not available");
  EXPECT_EQ(Step(Ask(job), kBob).status().message(), "Access/permission denied");
  EXPECT_EQ(Step(Ask(999)).status().message(), "Invalid job id specified");
}

TEST_F(StepsTest, ExclusiveStepsWaitForCpusOtherStepsHold) {
  JobId job = RunningJob();
  auto all = Step(Ask(job, 16, 0, 0, 0, true));
  ASSERT_TRUE(all.ok() && all->has_value());
  auto waits = Step(Ask(job, 1, 0, 0, 0, true));
  ASSERT_TRUE(waits.ok());
  EXPECT_FALSE(waits->has_value());  // busy: srun asks again
  auto shares = Step(Ask(job, 1));
  ASSERT_TRUE(shares.ok() && shares->has_value());  // not --exclusive: shares the CPUs
  Effects fx;
  core_.StepNodeEnded(job, 0, "n1", 0, "", 20, &fx);
  core_.StepNodeEnded(job, 0, "n2", 0, "", 20, &fx);
  auto now_runs = Step(Ask(job, 1, 0, 0, 0, true));
  ASSERT_TRUE(now_runs.ok() && now_runs->has_value());
}

TEST_F(StepsTest, ScancelOfAStepSignalsOnlyItsNodesAndEndsItCancelled) {
  JobId job = RunningJob();
  ASSERT_TRUE(Step(Ask(job, 0, 1)).ok());
  Effects fx;
  ASSERT_TRUE(core_.SignalStep(job, 0, 0, kAlice, 15, &fx).ok());
  ASSERT_EQ(fx.signals.size(), 1u);
  EXPECT_EQ(fx.signals[0].step, std::optional<uint32_t>(0));
  EXPECT_EQ(fx.signals[0].signal, SIGTERM);
  EXPECT_EQ(fx.signals[0].nodes.size(), 1u);
  core_.StepNodeEnded(job, 0, "n1", SIGTERM, "", 16, &fx);
  EXPECT_EQ(Record(job, 0).state, JobState::kCancelled);
  EXPECT_EQ(core_.Find(job)->job.state, JobState::kRunning);
  EXPECT_FALSE(core_.SignalStep(job, 0, 0, kAlice, 17, &fx).ok());  // already ended
  EXPECT_EQ(core_.SignalStep(job, 7, 0, kAlice, 17, &fx).message(), "Invalid job id specified");
}

TEST_F(StepsTest, CancellingTheJobEndsItsSteps) {
  JobId job = RunningJob();
  ASSERT_TRUE(Step(Ask(job)).ok());
  Effects fx;
  ASSERT_TRUE(core_.Signal(job, std::nullopt, 0, kAlice, 30, &fx).ok());
  EXPECT_EQ(Record(job, 0).state, JobState::kCancelled);
  EXPECT_EQ(Record(job, 0).end_time, 30);
  EXPECT_FALSE(Step(Ask(job)).ok());  // no new steps once it ends
}

TEST_F(StepsTest, TheBatchScriptsEndKillsStepsStillRunning) {
  JobId job = RunningJob();
  ASSERT_TRUE(Step(Ask(job)).ok());
  Effects fx;
  core_.JobEnded(job, 0, false, 40, &fx);
  EXPECT_EQ(core_.Find(job)->job.state, JobState::kCompleted);
  EXPECT_EQ(Record(job, 0).state, JobState::kCancelled);
  ASSERT_EQ(fx.signals.size(), 1u);
  EXPECT_EQ(fx.signals[0].signal, SIGKILL);
  EXPECT_EQ(fx.signals[0].nodes.size(), 2u);
}

TEST_F(StepsTest, SallocsAllocationEndsWhenReleased) {
  JobId ok = RunningJob(/*allocation_only=*/true);
  Effects fx;
  EXPECT_EQ(core_.ReleaseAllocation(ok, 0, kBob, 50, &fx).message(), "Access/permission denied");
  ASSERT_TRUE(core_.ReleaseAllocation(ok, 0, kAlice, 50, &fx).ok());
  EXPECT_EQ(core_.Find(ok)->job.state, JobState::kCompleted);
  JobId bad = RunningJob(true);
  ASSERT_TRUE(core_.ReleaseAllocation(bad, 2 << 8, kAlice, 51, &fx).ok());
  EXPECT_EQ(core_.Find(bad)->job.state, JobState::kFailed);
  EXPECT_EQ(core_.Find(bad)->job.exit_code, 2 << 8);
  EXPECT_FALSE(core_.ReleaseAllocation(bad, 0, kAlice, 52, &fx).ok());
}

TEST_F(StepsTest, ACancelledAllocationFreesItsNodesAtOnce) {
  JobId job = RunningJob(true);
  Effects fx;
  ASSERT_TRUE(core_.Signal(job, std::nullopt, 0, kAlice, 30, &fx).ok());
  EXPECT_EQ(core_.Find(job)->job.state, JobState::kCancelled);
  EXPECT_FALSE(core_.Find(job)->holds_nodes());  // nothing of salloc's runs on them
}

TEST_F(StepsTest, ABatchJobIsNotReleasedBySalloc) {
  JobId job = RunningJob(false);
  Effects fx;
  EXPECT_FALSE(core_.ReleaseAllocation(job, 0, kAlice, 50, &fx).ok());
  EXPECT_EQ(core_.Find(job)->job.state, JobState::kRunning);
}

// A restarted controller gets the steps back from the store: their records as they were,
// and new steps numbered on from the last.
TEST_F(StepsTest, StoredStepsComeBackWhole) {
  JobId job = RunningJob();
  StepAsk ask = Ask(job, 2, 0, 0, 2, true);
  ask.name = "train";
  ask.command = "python train.py";
  ask.distribution = model::Distribution::kCyclic;
  ask.cpu_bind = "cores";
  ASSERT_TRUE(Step(ask).ok());
  ASSERT_TRUE(Step(Ask(job, 1)).ok());
  Effects fx;
  core_.StepNodeEnded(job, 1, "n1", 3 << 8, "", 20, &fx);
  core_.StepNodeEnded(job, 0, "n2", 0, "", 21, &fx);  // step 0 still runs on n1
  EXPECT_EQ(fx.steps_changed, (std::vector<JobId>{job, job}));
  ASSERT_NE(core_.StepsOf(job), nullptr);
  EXPECT_EQ(JobOfStepsKey(StepsKey(job)), job);
  EXPECT_EQ(JobOfStepsKey("config_digest"), std::nullopt);

  EXPECT_EQ(EncodeSteps(nullptr, nullptr), std::nullopt);
  auto stored = DecodeSteps(EncodeSteps(core_.StepsOf(job), nullptr).value(), "test");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_FALSE(stored->srun.has_value());
  JobSteps* back = &stored->steps;
  EXPECT_EQ(back->next_id, 2u);
  ASSERT_EQ(back->steps.size(), 2u);
  const StepRecord& was = core_.StepsOf(job)->steps.at(0);
  const StepRecord& now = back->steps.at(0);
  EXPECT_EQ(now.name, "train");
  EXPECT_EQ(now.command, was.command);
  EXPECT_EQ(now.state, JobState::kRunning);
  EXPECT_EQ(now.nodes, was.nodes);
  EXPECT_EQ(now.tasks_per_node, was.tasks_per_node);
  EXPECT_EQ(now.cpus_held, was.cpus_held);
  EXPECT_EQ(now.distribution, model::Distribution::kCyclic);
  EXPECT_EQ(now.cpu_bind, "cores");
  EXPECT_EQ(now.nodes_done, was.nodes_done);
  EXPECT_EQ(back->steps.at(1).state, JobState::kFailed);
  EXPECT_EQ(back->steps.at(1).status.wait_status(), 3 << 8);
  EXPECT_FALSE(DecodeSteps("not a table", "steps of job 1").ok());

  // A new controller with the job and its steps: step 0 ends when n1 reports, the next
  // step is 2.
  ControllerCore restarted(Site(), CoreOptions{.kill_wait_s = 30, .slurmd_timeout_s = 300}, 100);
  std::vector<JobEntry> entries = {*core_.Find(job)};
  restarted.Restore(std::move(entries), job + 1);
  restarted.RestoreSteps(job, std::move(*back));
  Effects after;
  restarted.StepNodeEnded(job, 0, "n1", 0, "", 30, &after);
  ASSERT_EQ(restarted.Steps(job).size(), 2u);
  EXPECT_EQ(restarted.Steps(job)[0].second->state, JobState::kCompleted);
  restarted.NodeAlive("n1", 30, &after);
  restarted.NodeAlive("n2", 30, &after);
  auto next = restarted.CreateStep(Ask(job, 1), kAlice, 31, &after);
  ASSERT_TRUE(next.ok() && next->has_value()) << next.status();
  EXPECT_EQ((*next)->id, 2u);
}

}  // namespace
}  // namespace loom::ctld

namespace loom::ctld {
namespace {

// MpiParams=ports: each step gets ports no running step holds on its nodes.
class PortsTest : public StepsTest {
 protected:
  PortsTest() : StepsTest(PortsSite()) {}
  static conf::SiteConfig PortsSite() {
    conf::SiteConfig site = Site();
    site.cluster.mpi_ports_low = 12000;
    site.cluster.mpi_ports_high = 12005;
    return site;
  }
};

TEST_F(PortsTest, StepsGetPortsNoRunningStepOnTheirNodesHolds) {
  JobId job = RunningJob();
  auto a = Step(Ask(job, 4, 2));  // 2 tasks per node: 2 ports
  ASSERT_TRUE(a.ok() && a->has_value()) << a.status();
  EXPECT_EQ((*a)->resv_ports, (std::vector<int32_t>{12000, 12001}));
  auto b = Step(Ask(job, 3, 1));  // one node, 3 tasks
  ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
  EXPECT_EQ((*b)->resv_ports, (std::vector<int32_t>{12002, 12003, 12004}));
  // Two more on a node that holds five: the range is spent.
  auto c = Step(Ask(job, 4, 2));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("MpiParams=ports=12000-12005 has not 2 ports free"),
            std::string_view::npos)
      << c.status();
  // Once the first ends, its ports are free again.
  Effects fx;
  core_.StepNodeEnded(job, 0, "n1", 0, "", 20, &fx);
  core_.StepNodeEnded(job, 0, "n2", 0, "", 21, &fx);
  auto d = Step(Ask(job, 4, 2));
  ASSERT_TRUE(d.ok() && d->has_value()) << d.status();
  EXPECT_EQ((*d)->resv_ports, (std::vector<int32_t>{12000, 12001}));
}

}  // namespace
}  // namespace loom::ctld
