// The controller's durable state behind one interface: job records, the submissions they
// were made from, node states, the next job id and a few named values, written in atomic batches and read back whole on start.
// SQLite (sqlite_store.h) is the embedded implementation; a shared PostgreSQL store for
// high availability can implement the same interface later.
//
// Thread-compatibility: a Store is thread-compatible, not thread-safe. The controller calls
// it from its state-owner thread only; nothing here takes a lock on the caller's behalf.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"
#include "model/job.h"
#include "model/job_state.h"
#include "model/node.h"

namespace loom::store {

// The part of a job record that changes after submission: what UpdateJob writes.
struct JobProgress {
  model::JobId id = 0;  // > 0 and < 2^63
  model::JobState state = model::JobState::kPending;
  model::PendingReason reason = model::PendingReason::kNone;
  int64_t priority = 0;
  int64_t time_limit_s = 0;  // as model::Job::time_limit_s
  int32_t exit_code = 0;
  int64_t eligible_time = 0;  // Unix seconds, as model::Job
  int64_t start_time = 0;
  int64_t end_time = 0;
  std::string nodes;       // the allocated nodes as a hostlist expression; empty if none
  std::string allocation;  // the serialized allocation (per-node CPUs, GPUs); bytes
  // Once it ended: where it ran (serialized as `allocation`), for queries. Empty if it never
  // ran, or while it still holds its nodes.
  std::string ran_allocation;
  int32_t restarts = 0;         // times requeued (Slurm's Restarts)
  int64_t last_sched_eval = 0;  // Unix seconds: when the scheduler last considered it
  friend bool operator==(const JobProgress&, const JobProgress&) = default;
};

// What the controller needs to rebuild a job after a restart: its progress, and what was
// fixed when it was submitted. The columns are the job's state and the fields it is looked
// up by; the submission itself is stored once, apart (PutRequest), and shared by every task
// of an array: `request_id` names it.
struct JobRecord : JobProgress {
  model::JobId array_job_id = 0;          // 0: not part of a job array
  std::optional<uint32_t> array_task_id;  // set on each task of an array
  model::JobId request_id = 0;            // the submission's key (PutRequest); > 0
  std::string name;
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string account;
  std::string partition;
  int64_t submit_time = 0;  // Unix seconds, as model::Job
  const JobProgress& progress() const { return *this; }
  JobProgress& progress() { return *this; }
  friend bool operator==(const JobRecord&, const JobRecord&) = default;
};

// A node's administrative and health state: what `scontrol update node` and the health
// checks change and a restart must not forget. Capacity comes from the configuration.
struct NodeRecord {
  std::string name;  // NodeName; not empty
  model::NodeState state = model::NodeState::kUnknown;
  bool drain = false;
  std::string reason;       // free text as given with Reason=
  uint32_t reason_uid = 0;  // who set the reason
  int64_t reason_time = 0;  // Unix seconds; 0 when no reason is set

  friend bool operator==(const NodeRecord&, const NodeRecord&) = default;
};

// The mutations a batch may hold. Puts and deletes are idempotent: putting a record
// replaces any record with the same key; deleting one that is not there does nothing.
struct PutJob {  // a new job (or one whose record is rewritten whole)
  JobRecord job;
};
struct UpdateJob {  // a stored job's state changed; fails the batch when no record has the id
  JobProgress job;
};
struct DeleteJob {  // e.g. the purge of a job that ended more than MinJobAge ago
  model::JobId id = 0;
};
struct PutRequest {  // a submission, stored once for all the jobs that name it
  model::JobId id = 0;  // > 0; by convention the id of its first job
  std::string request;  // the serialized submission (bytes, may hold NULs)
};
struct DeleteRequest {  // once no job names the submission any more
  model::JobId id = 0;
};
struct PutNode {
  NodeRecord node;
};
struct DeleteNode {  // a node no longer in the configuration
  std::string name;
};
struct SetNextJobId {  // the id the next submission will get; > 0
  model::JobId next_job_id = 0;
};
struct PutValue {     // a named value, e.g. the digest of the configuration last loaded
  std::string key;    // not empty
  std::string value;  // bytes
};

struct DeleteValue {  // a named value no longer needed
  std::string key;
};

using Mutation = std::variant<PutJob, UpdateJob, DeleteJob, PutRequest, DeleteRequest, PutNode,
                              DeleteNode, SetNextJobId, PutValue, DeleteValue>;

// One group commit: mutations applied in order, all or none.
struct Batch {
  std::vector<Mutation> mutations;

  template <typename M>
  Batch& Add(M mutation) {
    mutations.emplace_back(std::move(mutation));
    return *this;
  }
  bool empty() const { return mutations.empty(); }
  size_t size() const { return mutations.size(); }
};

// Everything the store holds, as Recover() reads it.
struct Snapshot {
  std::vector<JobRecord> jobs;    // ascending id
  std::map<model::JobId, std::string> requests;  // the stored submissions by id
  std::vector<NodeRecord> nodes;  // ascending name
  model::JobId next_job_id = 0;   // 0: never set (a new store)
  std::map<std::string, std::string> values;
};

class Store {
 public:
  virtual ~Store() = default;

  // Opens the store, creating it empty when there is none. Fails, changing nothing on
  // disk, if what is there is unreadable, damaged, not a Loom store, from a newer Loom, or
  // held by another process. Every other method needs a successful Open() first.
  virtual Status Open() = 0;

  // Applies the batch's mutations in order in one transaction. When it returns OK the
  // whole batch is durable: it survives the process being killed (SIGKILL) and the machine
  // losing power from that moment on. When it returns an error nothing of the batch is
  // stored and everything committed before is intact; the store stays usable, so the
  // caller may retry once the cause (e.g. a full disk) is gone. An empty batch is OK and
  // writes nothing.
  virtual Status Commit(const Batch& batch) = 0;

  // Reads back every job record, submission, node record, the next job id and the named
  // values, as left by the last successful Commit().
  virtual StatusOr<Snapshot> Recover() = 0;

  // One stored submission (PutRequest), as committed; NotFound when there is none with `id`.
  virtual StatusOr<std::string> ReadRequest(model::JobId id) = 0;

  // Where the state lives, for messages (e.g. the database file's path).
  virtual std::string Location() const = 0;
};

}  // namespace loom::store
