// The accounting daemon's durable state (loomdbd, Slurm's slurmdbd) behind one interface:
// job records as the controller sends them, and the entities sacctmgr manages (clusters,
// accounts, users, associations, QOS). Two implementations keep it: SQLite, embedded, the
// default (acct_sqlite.cc), and PostgreSQL for sites (acct_pgsql.cc). Both run the same
// versioned schema (acct_schema.h), so a daemon started on an older store upgrades it.
//
// The store keeps a job's searchable columns and its whole record as opaque bytes (the
// daemon's serialized record); what a record means, and the exact rules of sacct's time
// window, live in the daemon. The store narrows by columns only.
//
// Thread-compatibility: thread-compatible. The daemon serializes its calls.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::store {

// One job (one array task, one attempt) as the accounting keeps it. Its key is
// (cluster, job_id, submit_time): a requeued job keeps its key and is rewritten.
struct AcctJobRow {
  std::string cluster;
  uint64_t job_id = 0;         // JobIDRaw; > 0
  uint64_t array_job_id = 0;   // 0: not part of an array
  int64_t array_task_id = -1;  // -1: none
  int64_t submit_time = 0;     // Unix seconds
  int64_t eligible_time = 0;   // 0: never eligible
  int64_t start_time = 0;      // 0: never started
  int64_t end_time = 0;        // 0: has not ended
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
  std::string account;
  std::string partition;
  std::string qos;
  std::string state;   // Slurm's base state name: PENDING, RUNNING, COMPLETED, ...
  std::string record;  // the whole record, bytes; the store never reads them

  friend bool operator==(const AcctJobRow&, const AcctJobRow&) = default;
};

// Which jobs FindJobs returns: every condition given must hold; an empty list or an unset
// bound does not narrow.
struct AcctJobFilter {
  std::string cluster;
  std::vector<uint64_t> job_ids;  // a job matches by job_id, or by array_job_id
  // A job matches by uid, or by user name (the records of users the system does not know);
  // both empty: any user.
  std::vector<uint32_t> uids;
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  std::vector<std::string> partitions;
  std::vector<std::string> states;
  // Jobs that may have been alive in [active_from, active_to]: submitted at or before
  // active_to and not ended before active_from (end_time 0 or >= active_from).
  std::optional<int64_t> active_from;
  std::optional<int64_t> active_to;
};

// Something sacctmgr manages, kept whole: `kind` is "cluster", "account", "user", "assoc"
// or "qos"; `name` is its key within the kind (an association's is cluster/account/user/
// partition); `record` its serialized form, opaque here.
struct AcctEntity {
  std::string kind;
  std::string name;
  std::string record;

  friend bool operator==(const AcctEntity&, const AcctEntity&) = default;
};

struct AcctEntityKey {
  std::string kind;
  std::string name;
};

class AcctStore {
 public:
  virtual ~AcctStore() = default;

  // Connects and brings the schema to this build's version (creating it in an empty
  // store, upgrading an older one in one transaction). Fails, changing nothing, on a store
  // written by a newer Loom or one that is not a Loom accounting store.
  virtual Status Open() = 0;

  // Inserts or replaces each row by its key, all in one transaction: when OK, every row is
  // durable; on error none is stored and the store stays usable.
  virtual Status UpsertJobs(const std::vector<AcctJobRow>& rows) = 0;

  // Deletes the jobs that ended before `ended_before` (PurgeJobAfter), in one transaction;
  // returns how many. Jobs that have not ended stay.
  virtual StatusOr<int64_t> PurgeJobs(int64_t ended_before) = 0;

  // The rows `filter` selects, ordered by job_id then submit_time.
  virtual StatusOr<std::vector<AcctJobRow>> FindJobs(const AcctJobFilter& filter) = 0;

  // Puts (insert or replace) and deletes entities in one transaction.
  virtual Status ChangeEntities(const std::vector<AcctEntity>& put,
                                const std::vector<AcctEntityKey>& remove) = 0;

  // Every entity of `kind`, ordered by name.
  virtual StatusOr<std::vector<AcctEntity>> ListEntities(std::string_view kind) = 0;
  // The entities of `kind` whose names lie in [from, to) in byte order, ordered so (the
  // usage rollups, named cluster/zero-padded hour).
  virtual StatusOr<std::vector<AcctEntity>> ListEntitiesBetween(std::string_view kind,
                                                                std::string_view from,
                                                                std::string_view to) = 0;

  // Where the data lives, for messages: a file's path, or the server and database.
  virtual std::string Location() const = 0;
};

}  // namespace loom::store
