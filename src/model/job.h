// A job as the controller keeps it beside its request (model::JobRequest, which has what was
// asked for: name, account, QOS, shape, ...): who submitted it, where it stands in the state
// machine, and its timestamps. Value type; thread-compatible. State changes go through
// Transition(), which refuses steps the state machine does not allow.
#pragma once

#include <cstdint>
#include <string>

#include "core/interned.h"
#include "core/status.h"
#include "model/job_state.h"

namespace loom::model {

using JobId = uint64_t;

struct Job {
  JobId id = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  // Names repeat across a cluster's jobs: each is kept once (8 bytes here, not 32).
  core::Interned user;
  core::Interned partition;  // the partition it was given
  int64_t time_limit_s = 0;  // core::kUnlimitedSeconds when unlimited
  int64_t priority = 0;

  JobState state = JobState::kPending;
  PendingReason reason = PendingReason::kNone;
  int32_t exit_code = 0;
  int64_t submit_time = 0;  // Unix seconds
  int64_t eligible_time = 0;
  int64_t start_time = 0;  // 0 until started
  int64_t end_time = 0;    // 0 until ended; the predicted end while running

  // Moves the job to `to` at time `now`, setting the timestamps Slurm sets (start_time on
  // RUNNING, end_time on a final state; a requeue clears them). Fails, changing nothing,
  // if the state machine does not allow the step.
  Status Transition(JobState to, int64_t now);
};

}  // namespace loom::model
