// What the controller writes to its store and reads back from it: the batch that makes one
// round of effects durable, the job table rebuilt after a restart, and a job's script and
// environment, which only the store keeps. A submission is written once, when it arrives,
// shared by all tasks of an array; later changes of a job write only its progress
// (store::UpdateJob). Thread-compatible: called from the controller's state-owner thread.
#pragma once

#include <string_view>
#include <vector>

#include "core/status.h"
#include "ctld/controller_core.h"
#include "model/job_request.h"
#include "store/store.h"

namespace loom::ctld {

// The mutations that make `fx` durable: each new submission (whole, in its wire form), each
// new job's record, the progress of every other job `fx` changed (once each, as the core
// holds it now), the purged jobs and forgotten submissions, the administrative state of
// the nodes it changed, and the next job id.
store::Batch BatchFor(const Effects& fx, const ControllerCore& core);

// Adds to `batch` each submission `fx` changed (fx.resubmitted) as it must now be stored: the
// request the jobs hold, with the script and environment read back from `store`.
Status AddResubmissions(const Effects& fx, store::Store& store, store::Batch* batch);

// The job table the store describes, for ControllerCore::Restore: every job with its
// submission (without script and environment; the tasks of an array share one). DataLoss,
// naming the job and `location`, when a job's submission is missing or unreadable.
StatusOr<std::vector<JobEntry>> EntriesFrom(const store::Snapshot& snapshot,
                                            const sched::Cluster& cluster,
                                            std::string_view location);

// The submission `id` as it was made, script and environment included.
StatusOr<model::JobRequest> ReadSubmission(store::Store& store, JobId id);
// A stored submission's bytes (store::Store::ReadRequest) decoded; `what` names it in errors.
StatusOr<model::JobRequest> DecodeSubmission(std::string_view bytes, std::string_view what);

}  // namespace loom::ctld
