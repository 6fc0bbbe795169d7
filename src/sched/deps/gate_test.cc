#include "sched/deps/gate.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace loom::sched::deps {
namespace {

using model::JobState;
using model::PendingReason;

// A job table the test writes directly: plain jobs and array tasks by id.
class FakeJobs final : public JobsView {
 public:
  JobView& Add(JobId id, JobState state = JobState::kPending) {
    JobView& v = jobs_[id];
    v.id = id;
    v.state = state;
    v.name = "job";
    return v;
  }
  // Task `task` of array `array` (ids: array + task).
  JobView& AddTask(JobId array, int64_t task, JobState state) {
    JobView& v = Add(array + static_cast<JobId>(task), state);
    v.array_task = task;
    arrays_[v.id] = array;
    return v;
  }
  void ForEachNamed(JobId id, const std::function<void(const JobView&)>& fn) const override {
    for (const auto& [jid, v] : jobs_) {
      auto a = arrays_.find(jid);
      if (jid == id || (a != arrays_.end() && a->second == id)) fn(v);
    }
  }
  void ForEachLive(const std::function<void(const JobView&)>& fn) const override {
    for (const auto& [jid, v] : jobs_) {
      if (!model::IsFinal(v.state)) fn(v);
    }
  }

 private:
  std::map<JobId, JobView> jobs_;
  std::map<JobId, JobId> arrays_;
};

model::Dependency Dep(std::string_view text) {
  auto d = model::ParseDependency(text);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : model::Dependency{};
}

Candidate Waiting(JobId id, const model::Dependency* dep = nullptr) {
  Candidate c;
  c.id = id;
  c.name = "job";
  c.dependency = dep;
  return c;
}

TEST(GateTest, AfterOkWaitsThenHoldsOrNeverHolds) {
  FakeJobs jobs;
  JobView& first = jobs.Add(1, JobState::kRunning);
  const model::Dependency dep = Dep("afterok:1");
  EXPECT_EQ(Gate(jobs, 100).Judge(Waiting(2, &dep)), PendingReason::kDependency);
  first.state = JobState::kCompleted;
  EXPECT_EQ(Gate(jobs, 100).Judge(Waiting(2, &dep)), PendingReason::kNone);
  first.state = JobState::kFailed;
  first.exit_code = 1 << 8;
  EXPECT_EQ(Gate(jobs, 100).Judge(Waiting(2, &dep)),
            PendingReason::kDependencyNeverSatisfied);
  const model::Dependency notok = Dep("afternotok:1");
  EXPECT_EQ(Gate(jobs, 100).Judge(Waiting(2, &notok)), PendingReason::kNone);
}

TEST(GateTest, AfterWithDelayWakesWhenTheDelayEnds) {
  FakeJobs jobs;
  JobView& first = jobs.Add(1);
  const model::Dependency dep = Dep("after:1+2");  // two minutes after job 1 starts
  Gate pending(jobs, 100);
  EXPECT_EQ(pending.Judge(Waiting(2, &dep)), PendingReason::kDependency);
  EXPECT_EQ(pending.wake(false), kNever);  // nothing but an event ends this wait
  // A pass that starts jobs while others wait on dependencies looks again a second later.
  EXPECT_EQ(pending.wake(true), 101);
  first.state = JobState::kRunning;
  first.started = true;
  first.start_time = 100;
  Gate running(jobs, 150);
  EXPECT_EQ(running.Judge(Waiting(2, &dep)), PendingReason::kDependency);
  EXPECT_EQ(running.wake(false), 220);
  EXPECT_EQ(Gate(jobs, 220).Judge(Waiting(2, &dep)), PendingReason::kNone);
}

TEST(GateTest, AnyOfClausesAndArrayTasks) {
  FakeJobs jobs;
  jobs.AddTask(10, 0, JobState::kCompleted);
  JobView& task1 = jobs.AddTask(10, 1, JobState::kRunning);
  jobs.Add(20, JobState::kFailed).exit_code = 1;
  const model::Dependency whole = Dep("afterany:10");
  EXPECT_EQ(Gate(jobs, 0).Judge(Waiting(30, &whole)), PendingReason::kDependency);
  const model::Dependency one = Dep("afterok:10_0");
  EXPECT_EQ(Gate(jobs, 0).Judge(Waiting(30, &one)), PendingReason::kNone);
  // `?`: one clause that holds is enough; all that can never hold is never.
  const model::Dependency any = Dep("afterok:20?afterany:10");
  EXPECT_EQ(Gate(jobs, 0).Judge(Waiting(30, &any)), PendingReason::kDependency);
  task1.state = JobState::kCompleted;
  EXPECT_EQ(Gate(jobs, 0).Judge(Waiting(30, &any)), PendingReason::kNone);
  const model::Dependency never = Dep("afterok:20?afterok:20");
  EXPECT_EQ(Gate(jobs, 0).Judge(Waiting(30, &never)), PendingReason::kDependencyNeverSatisfied);
}

TEST(GateTest, SingletonWaitsForEarlierAndRunningJobsOfTheSameUserAndName) {
  FakeJobs jobs;
  const model::Dependency dep = Dep("singleton");
  jobs.Add(5).name = "train";
  jobs.Add(7).name = "train";
  Candidate later = Waiting(7, &dep);
  later.name = "train";
  EXPECT_EQ(Gate(jobs, 0).Judge(later), PendingReason::kDependency);  // 5 came first
  Candidate earlier = Waiting(5, &dep);
  earlier.name = "train";
  EXPECT_EQ(Gate(jobs, 0).Judge(earlier), PendingReason::kNone);
  JobView& other_user = jobs.Add(3, JobState::kRunning);
  other_user.name = "train";
  other_user.uid = 1000;
  EXPECT_EQ(Gate(jobs, 0).Judge(earlier), PendingReason::kNone);
}

TEST(GateTest, HoldThenBeginTimeThenArrayThrottle) {
  FakeJobs jobs;
  Candidate c = Waiting(1);
  c.held = true;
  c.eligible_time = 500;
  EXPECT_EQ(Gate(jobs, 0).Judge(c), PendingReason::kJobHeldUser);
  c.admin_hold = true;
  EXPECT_EQ(Gate(jobs, 0).Judge(c), PendingReason::kJobHeldAdmin);
  c.held = false;
  Gate early(jobs, 100);
  EXPECT_EQ(early.Judge(c), PendingReason::kBeginTime);
  EXPECT_EQ(early.wake(false), 500);
  EXPECT_EQ(Gate(jobs, 500).Judge(c), PendingReason::kNone);

  // --array=0-9%3 with one task running: two more may start in this pass.
  Gate gate(jobs, 0);
  gate.Running(40);
  Candidate task = Waiting(41);
  task.array_id = 40;
  task.array_max_running = 3;
  EXPECT_EQ(gate.Judge(task), PendingReason::kNone);
  EXPECT_EQ(gate.Judge(task), PendingReason::kNone);
  EXPECT_EQ(gate.Judge(task), PendingReason::kJobArrayTaskLimit);
}

}  // namespace
}  // namespace loom::sched::deps
