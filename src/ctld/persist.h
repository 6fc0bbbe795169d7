// Between the controller's job table and the store: a job entry as a store record (whole, or
// the part that changes after submission) and back. The submission is stored apart, once
// (store::PutRequest); a record names it by JobEntry::submission_id(). The allocation
// travels as JSON naming nodes by name, so a reordered node table reads back right.
// Pure functions; thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "ctld/controller_core.h"
#include "store/store.h"

namespace loom::ctld {

std::string EncodeAllocation(const sched::Allocation& alloc, const sched::Cluster& cluster);
// Fails on bytes that are not an allocation, or that name a node the cluster lacks.
StatusOr<sched::Allocation> DecodeAllocation(std::string_view bytes, const sched::Cluster& cluster);

store::JobRecord ToRecord(const JobEntry& e, const sched::Cluster& cluster);
// What changed since submission: state, reason, priority, limit, exit code, times, nodes,
// where an ended job ran, requeues and the last scheduling evaluation.
store::JobProgress ToProgress(const JobEntry& e, const sched::Cluster& cluster);
// The entry a record describes, with `request` as its submission; `key` is left 0 (the
// core assigns it on Restore).
StatusOr<JobEntry> FromRecord(const store::JobRecord& r, const sched::Cluster& cluster,
                              std::shared_ptr<const model::JobRequest> request);

// A job's steps as the store keeps them: the named value StepsKey(job) holds EncodeSteps.
std::string StepsKey(JobId job);
// The job a named value's key stores the steps of; nullopt for another key.
std::optional<JobId> JobOfStepsKey(std::string_view key);
// What is stored of a job's steps: those inside its allocation and, for a job srun
// submitted, the reports of its nodes so far.
struct StoredSteps {
  JobSteps steps;
  std::optional<StepProgress> srun;
};
// The value to store for `job` (StepsKey); nullopt when it has nothing to store.
std::optional<std::string> EncodeSteps(const JobSteps* steps, const StepProgress* srun);
// DataLoss naming `what` for bytes that are not stored steps.
StatusOr<StoredSteps> DecodeSteps(std::string_view bytes, std::string_view what);

}  // namespace loom::ctld
