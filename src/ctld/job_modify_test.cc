#include "ctld/job_modify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/job_desc.h"
#include "policy/lua_script.h"

namespace loom::ctld {
namespace {

TEST(JobModify, TheUpdateReadsAsJobDescAndComesBack) {
  JobEdit edit;
  edit.time_limit_s = 600 * 60;
  edit.comment = "old";
  edit.partition = "normal";
  model::JobRequest r = RequestOfEdit(edit);
  const nlohmann::json before = policy::JobDescOf(r, {});
  EXPECT_EQ(before["time_limit"], 600);
  EXPECT_EQ(before["partition"], "normal");
  EXPECT_EQ(before["priority"], policy::kNoVal);  // not in the update
  EXPECT_TRUE(before["account"].is_null());
  // The script caps the time, empties the comment, adds an account.
  nlohmann::json after = before;
  after["time_limit"] = 120;
  after["comment"] = nullptr;
  after["account"] = "physics";
  std::vector<std::string> ignored;
  ASSERT_TRUE(policy::ApplyJobDesc(before, after, &r, &ignored).ok());
  EditFromRequest(r, &edit);
  EXPECT_EQ(edit.time_limit_s, 120 * 60);
  EXPECT_FALSE(edit.comment.has_value());  // dropped from the update
  EXPECT_EQ(edit.account, "physics");
  EXPECT_EQ(edit.partition, "normal");
  EXPECT_FALSE(edit.priority.has_value());
  EXPECT_FALSE(edit.nodes.has_value());
}

TEST(JobModify, AnEmptiedValueGivenEmptyStays) {
  JobEdit edit;
  edit.comment = "";  // Comment= clears the comment
  model::JobRequest r = RequestOfEdit(edit);
  EditFromRequest(r, &edit);
  ASSERT_TRUE(edit.comment.has_value());
  EXPECT_EQ(*edit.comment, "");
}

TEST(JobModify, JobRecIsTheJobAsItIs) {
  v1::JobInfo job;
  job.set_job_id(42);
  job.set_state("PENDING");
  job.set_uid(1000);
  job.set_user("alice");
  job.set_partition("gpu");
  job.set_time_limit_s(3600);
  job.mutable_spec()->set_account("physics");
  const nlohmann::json rec = JobRecOf(job);
  EXPECT_EQ(rec["job_id"], 42);
  EXPECT_EQ(rec["job_state"], "PENDING");
  EXPECT_EQ(rec["user_name"], "alice");
  EXPECT_EQ(rec["partition"], "gpu");
  EXPECT_EQ(rec["time_limit"], 60);
  EXPECT_EQ(rec["account"], "physics");
}

}  // namespace
}  // namespace loom::ctld
