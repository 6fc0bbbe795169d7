// Between the controller's job table and the store: a job entry as a store record (whole, or
// the part that changes after submission) and back. The submission is stored apart, once
// (store::PutRequest); a record names it by JobEntry::submission_id(). The allocation
// travels as JSON naming nodes by name, so a reordered node table reads back right.
// Pure functions; thread-safe.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "ctld/core.h"
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

}  // namespace loom::ctld
