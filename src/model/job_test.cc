#include "model/job.h"

#include <gtest/gtest.h>

namespace loom::model {
namespace {

TEST(Job, LifecycleSetsTimestamps) {
  Job j;
  j.id = 7;
  j.submit_time = 100;
  j.reason = PendingReason::kResources;
  ASSERT_TRUE(j.Transition(JobState::kRunning, 150).ok());
  EXPECT_EQ(j.start_time, 150);
  EXPECT_EQ(j.reason, PendingReason::kNone);
  ASSERT_TRUE(j.Transition(JobState::kCompleted, 201).ok());
  EXPECT_EQ(j.end_time, 201);
}

TEST(Job, IllegalStepChangesNothing) {
  Job j;
  j.id = 8;
  Status s = j.Transition(JobState::kCompleted, 10);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("PENDING to COMPLETED"), std::string::npos);
  EXPECT_EQ(j.state, JobState::kPending);
  EXPECT_EQ(j.end_time, 0);
}

TEST(Job, RequeueAfterNodeFailure) {
  Job j;
  j.id = 9;
  ASSERT_TRUE(j.Transition(JobState::kRunning, 10).ok());
  ASSERT_TRUE(j.Transition(JobState::kNodeFail, 20).ok());
  ASSERT_TRUE(j.Transition(JobState::kPending, 30).ok());
  EXPECT_EQ(j.start_time, 0);
  EXPECT_EQ(j.end_time, 0);
  EXPECT_EQ(j.eligible_time, 30);
}

}  // namespace
}  // namespace loom::model
