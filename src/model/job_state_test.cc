#include "model/job_state.h"

#include <gtest/gtest.h>

namespace loom::model {
namespace {

TEST(JobState, NamesAsSlurmPrintsThem) {
  EXPECT_EQ(JobStateName(JobState::kPending), "PENDING");
  EXPECT_EQ(JobStateShortName(JobState::kPending), "PD");
  EXPECT_EQ(JobStateName(JobState::kNodeFail), "NODE_FAIL");
  EXPECT_EQ(JobStateShortName(JobState::kCompleting), "CG");
  EXPECT_EQ(JobStateName(JobState::kOutOfMemory), "OUT_OF_MEMORY");
}

TEST(JobState, ParsesLongAndShortFormsInAnyCase) {
  EXPECT_EQ(ParseJobState("pd"), JobState::kPending);
  EXPECT_EQ(ParseJobState("Running"), JobState::kRunning);
  EXPECT_EQ(ParseJobState("TO"), JobState::kTimeout);
  EXPECT_FALSE(ParseJobState("WAITING").has_value());
}

TEST(JobState, StateMachine) {
  EXPECT_TRUE(CanTransition(JobState::kPending, JobState::kRunning));
  EXPECT_TRUE(CanTransition(JobState::kPending, JobState::kCancelled));
  EXPECT_FALSE(CanTransition(JobState::kPending, JobState::kCompleted));
  EXPECT_FALSE(CanTransition(JobState::kPending, JobState::kTimeout));
  EXPECT_TRUE(CanTransition(JobState::kRunning, JobState::kTimeout));
  // COMPLETING is shown for a job whose processes are being killed, never a state.
  EXPECT_FALSE(CanTransition(JobState::kRunning, JobState::kCompleting));
  EXPECT_FALSE(CanTransition(JobState::kCompleting, JobState::kCompleted));
  EXPECT_FALSE(CanTransition(JobState::kCompleted, JobState::kRunning));
  EXPECT_TRUE(CanTransition(JobState::kNodeFail, JobState::kPending));  // requeue
  for (JobState s : {JobState::kCompleted, JobState::kCancelled, JobState::kFailed}) {
    EXPECT_TRUE(IsFinal(s));
    EXPECT_FALSE(CanTransition(s, JobState::kRunning));
  }
}

TEST(JobState, EndedStateFromTheWaitStatus) {
  EXPECT_EQ(EndedState(0, false), JobState::kCompleted);
  EXPECT_EQ(EndedState(3 << 8, false), JobState::kFailed);
  EXPECT_EQ(EndedState(9, false), JobState::kFailed);  // killed by SIGKILL
  EXPECT_EQ(EndedState(0, true), JobState::kOutOfMemory);
}

TEST(PendingReason, SlurmSpelling) {
  EXPECT_EQ(PendingReasonName(PendingReason::kResources), "Resources");
  EXPECT_EQ(PendingReasonName(PendingReason::kDependencyNeverSatisfied),
            "DependencyNeverSatisfied");
  EXPECT_EQ(PendingReasonName(PendingReason::kPartitionTimeLimit), "PartitionTimeLimit");
  EXPECT_EQ(PendingReasonName(PendingReason::kJobHeldUser), "JobHeldUser");
}

}  // namespace
}  // namespace loom::model
