#include "model/job.h"

#include "core/strings.h"

namespace loom::model {

Status Job::Transition(JobState to, int64_t now) {
  if (!CanTransition(state, to)) {
    return absl::FailedPreconditionError(core::StrCat(
        "job ", id, " cannot go from ", JobStateName(state), " to ", JobStateName(to)));
  }
  if (to == JobState::kRunning && state == JobState::kPending) {
    start_time = now;
    reason = PendingReason::kNone;
  }
  if (to == JobState::kPending) {  // requeue
    start_time = 0;
    end_time = 0;
    eligible_time = now;
  }
  if (IsFinal(to)) end_time = now;
  state = to;
  return absl::OkStatus();
}

}  // namespace loom::model
