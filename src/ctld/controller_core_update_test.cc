// scontrol update job: which fields, for whom, checked before anything changes, and how a
// changed submission is admitted again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ctld/controller_core_test_util.h"

namespace loom::ctld {
namespace {

TEST_F(CoreTest, PriorityUpdateIsForAdministratorsAndZeroHolds) {
  Up(0);
  JobId id = Submit(Req(64 / 8));
  Effects fx;
  EXPECT_EQ(core_.UpdateJob(id, PriorityEdit(5), kAlice, 0, &fx).code(),
            absl::StatusCode::kPermissionDenied);
  ASSERT_TRUE(core_.UpdateJob(id, PriorityEdit(0), kRoot, 0, &fx).ok());
  EXPECT_EQ(Reason(id), PendingReason::kJobHeldAdmin);
  EXPECT_TRUE(Schedule(1).launches.empty());
  ASSERT_TRUE(core_.UpdateJob(id, PriorityEdit(1000), kRoot, 0, &fx).ok());
  EXPECT_EQ(core_.Find(id)->job.priority, 1000);
  Schedule(2);
  EXPECT_EQ(State(id), JobState::kRunning);
  EXPECT_EQ(core_.UpdateJob(id, PriorityEdit(7), kRoot, 0, &fx).message(),
            "Job is no longer pending execution");
}

TEST_F(CoreTest, UpdateJobChangesTheSubmissionOfPendingJobs) {
  JobId id = Submit(Req(2, "before"));  // no node is up: it waits
  Effects fx;
  ASSERT_TRUE(core_.UpdateJob(id, Edit({{"jobname", "after"}, {"Partition", "small"},
                                        {"NumTasks", "3"}, {"Comment", "moved"}}),
                              kAlice, 1, &fx)
                  .ok());
  const JobEntry& e = *core_.Find(id);
  EXPECT_EQ(e.request->name, "after");
  EXPECT_EQ(e.request->comment, "moved");
  EXPECT_EQ(e.job.partition, "small");
  EXPECT_EQ(e.request->shape.ntasks, 3);
  ASSERT_EQ(fx.resubmitted.size(), 1u);  // stored again, as a whole
  EXPECT_EQ(fx.resubmitted[0].id, id);
  EXPECT_EQ(fx.resubmitted[0].request, e.request);
  EXPECT_EQ(fx.changed.size(), 1u);

  // Checked as a new submission: nothing changes when one field is wrong.
  Effects none;
  EXPECT_EQ(core_.UpdateJob(id, Edit({{"Partition", "nope"}, {"JobName", "x"}}), kAlice, 2,
                            &none)
                .message(),
            "Invalid partition name specified");
  EXPECT_EQ(core_.UpdateJob(id, Edit({{"NumNodes", "3"}}), kAlice, 2, &none).message(),
            "Requested node configuration is not available");
  EXPECT_EQ(core_.Find(id)->request->name, "after");
  EXPECT_TRUE(none.resubmitted.empty());
  EXPECT_EQ(core_.UpdateJob(id, Edit({{"JobName", "x"}}), kBob, 2, &none).code(),
            absl::StatusCode::kPermissionDenied);

  // A running job takes a new name, not a new shape.
  Up(3);
  Schedule(4);
  ASSERT_EQ(State(id), JobState::kRunning);
  EXPECT_EQ(core_.UpdateJob(id, Edit({{"NumTasks", "1"}}), kAlice, 5, &none).message(),
            "Job is no longer pending execution");
  ASSERT_TRUE(core_.UpdateJob(id, Edit({{"JobName", "renamed"}}), kAlice, 5, &fx).ok());
  EXPECT_EQ(core_.Find(id)->request->name, "renamed");
}

TEST_F(CoreTest, UpdateJobMovesAPendingJobWithReqNodeListAndExcNodeList) {
  JobId id = Submit(Req());  // no node is up: it waits
  Effects fx;
  ASSERT_TRUE(core_.UpdateJob(id, Edit({{"ReqNodeList", "n2"}}), kAlice, 1, &fx).ok());
  EXPECT_EQ(core_.Find(id)->request->nodelist, "n2");
  EXPECT_EQ(core_.UpdateJob(id, Edit({{"ExcNodeList", "n2"}}), kAlice, 1, &fx).message(),
            "Requested node configuration is not available");  // both would name n2
  EXPECT_EQ(core_.UpdateJob(id, Edit({{"ReqNodeList", "n7"}}), kAlice, 1, &fx).message(),
            "Invalid node name specified");
  Up(2);
  Schedule(3);
  ASSERT_EQ(State(id), JobState::kRunning);
  EXPECT_EQ(core_.cluster().nodes[core_.Find(id)->alloc()[0].node].name, "n2");
}

// --nice N: N places back among the waiting jobs; only admins may go forward.
TEST_F(CoreTest, NiceMovesAJobBackAndOnlyAdminsForward) {
  JobId first = Submit(Req());
  model::JobRequest nice = Req();
  nice.nice = 100;
  JobId niced = Submit(nice);
  JobId third = Submit(Req());
  EXPECT_GT(core_.Find(first)->job.priority, core_.Find(niced)->job.priority);
  EXPECT_GT(core_.Find(third)->job.priority, core_.Find(niced)->job.priority);
  EXPECT_EQ(core_.Find(first)->job.priority - core_.Find(niced)->job.priority, 101);
  Effects fx;
  model::JobRequest ahead = Req();
  ahead.nice = -10;
  EXPECT_EQ(core_.Submit(ahead, kAlice, 0, &fx).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(core_.Submit(ahead, kRoot, 0, &fx).ok());
  // scontrol update job Nice=0 puts it back in submission order.
  ASSERT_TRUE(core_.UpdateJob(niced, Edit({{"Nice", "0"}}), kAlice, 1, &fx).ok());
  EXPECT_EQ(core_.Find(first)->job.priority - core_.Find(niced)->job.priority, 1);
  EXPECT_EQ(core_.UpdateJob(niced, Edit({{"Nice", "-5"}}), kAlice, 1, &fx).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ParseJobEdit({{"Nice", "x"}}).status().message(), "Invalid nice value: x");
}

TEST_F(CoreTest, UpdateJobOfAnArrayChangesAllItsWaitingTasks) {
  model::JobRequest r = Req(1, "arr");
  r.array = model::ParseArraySpec("0-2").value();
  JobId id = Submit(r);
  Effects fx;
  EXPECT_THAT(std::string(core_.UpdateJob(id + 1, Edit({{"JobName", "one"}}), kAlice, 1, &fx)
                              .message()),
              testing::HasSubstr("update JobId=" + std::to_string(id)));
  ASSERT_TRUE(core_.UpdateJob(id, Edit({{"JobName", "all"}}), kAlice, 1, &fx).ok());
  for (JobId t = id; t < id + 3; ++t) EXPECT_EQ(core_.Find(t)->request->name, "all");
  ASSERT_EQ(fx.resubmitted.size(), 1u);
  EXPECT_EQ(fx.resubmitted[0].id, id);
  // Fields outside the submission may change for one task.
  ASSERT_TRUE(core_.UpdateJob(id + 2, Edit({{"TimeLimit", "5"}}), kAlice, 1, &fx).ok());
  EXPECT_EQ(core_.Find(id + 2)->job.time_limit_s, 300);
  EXPECT_EQ(core_.Find(id + 1)->job.time_limit_s, 600);
}

TEST(ParseJobEditTest, SlurmsErrors) {
  using Fields = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(ParseJobEdit(Fields{{"Shoes", "red"}}).status().message(),
            "Update of this parameter is not supported: Shoes=red");
  EXPECT_EQ(ParseJobEdit(Fields{{"TimeLimit", "soon"}}).status().message(),
            "Invalid time limit specification");
  EXPECT_EQ(ParseJobEdit(Fields{{"Features", "a&|b"}}).status().message(),
            "Invalid feature specification");
  EXPECT_EQ(ParseJobEdit(Fields{{"NumNodes", "2-1"}}).status().message(),
            "Invalid NumNodes value: 2-1");
  EXPECT_EQ(ParseJobEdit(Fields{{"Dependency", "afterok:x"}}).status().message(),
            "Job dependency problem");
  auto ok = ParseJobEdit(Fields{{"NumNodes", "1-2"}, {"MinMemoryCPU", "2G"}, {"Requeue", "0"},
                                {"Dependency", ""}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->nodes, (std::pair<int32_t, int32_t>(1, 2)));
  EXPECT_EQ(ok->mem_per_cpu_mb, 2048);
  EXPECT_EQ(ok->requeue, false);
  EXPECT_TRUE(ok->dependency.has_value());
}


}  // namespace
}  // namespace loom::ctld
