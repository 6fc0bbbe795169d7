// The SQLite store's schema: creating it in a new file and bringing a file written by an
// older Loom up to kSchemaVersion. docs/design/store.md describes each version.
#include <sqlite3.h>

#include "core/strings.h"
#include "store/sqlite_store.h"

namespace loom::store {
namespace {

using core::StrCat;

// The jobs table of version 3: each row names its submission (`requests`) by id (since
// version 2) and keeps where an ended job ran, its requeue count and its last scheduling
// evaluation (since version 3).
constexpr const char* kJobsTableSql = R"sql(
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY CHECK (id > 0),
  array_job_id INTEGER CHECK (array_job_id IS NULL OR array_job_id > 0),
  array_task_id INTEGER CHECK (array_task_id IS NULL OR array_task_id >= 0),
  request_id INTEGER NOT NULL CHECK (request_id > 0),
  job_name TEXT NOT NULL,
  user_name TEXT NOT NULL,
  uid INTEGER NOT NULL,
  gid INTEGER NOT NULL,
  account TEXT NOT NULL,
  partition_name TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL,
  priority INTEGER NOT NULL,
  time_limit_s INTEGER NOT NULL,
  exit_code INTEGER NOT NULL,
  submit_time INTEGER NOT NULL,
  eligible_time INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  nodes TEXT NOT NULL,
  allocation BLOB NOT NULL,
  ran_allocation BLOB NOT NULL DEFAULT '',
  restarts INTEGER NOT NULL DEFAULT 0,
  last_sched_eval INTEGER NOT NULL DEFAULT 0
);
)sql";

// Submissions, stored once each; a job array's tasks share one.
constexpr const char* kRequestsTableSql = R"sql(
CREATE TABLE requests (
  id INTEGER PRIMARY KEY CHECK (id > 0),
  request BLOB NOT NULL
);
)sql";

// Names avoid SQL keywords. Job and request ids are INTEGER PRIMARY KEY (the rowid), the
// other tables are keyed by name and stored WITHOUT ROWID.
constexpr const char* kOtherTablesSql = R"sql(
CREATE TABLE schema_version (
  version INTEGER NOT NULL
);
CREATE TABLE nodes (
  node_name TEXT PRIMARY KEY CHECK (node_name <> ''),
  state TEXT NOT NULL,
  drain INTEGER NOT NULL,
  reason TEXT NOT NULL,
  reason_uid INTEGER NOT NULL,
  reason_time INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE counters (
  counter_name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE named_values (
  value_name TEXT PRIMARY KEY CHECK (value_name <> ''),
  value BLOB NOT NULL
) WITHOUT ROWID;
)sql";

// Version 1 kept the submission in every job row (`jobs.request`, the same bytes in each task
// of an array). Version 2 moves it to `requests`, keyed by the array's id (or the job's own).
constexpr const char* kFromVersion1Sql = R"sql(
INSERT OR IGNORE INTO requests (id, request)
  SELECT COALESCE(array_job_id, id), request FROM jobs ORDER BY id;
ALTER TABLE jobs RENAME TO jobs_version_1;
)sql";
constexpr const char* kFromVersion1CopySql = R"sql(
INSERT INTO jobs (id, array_job_id, array_task_id, request_id, job_name, user_name, uid, gid,
                  account, partition_name, state, reason, priority, time_limit_s, exit_code,
                  submit_time, eligible_time, start_time, end_time, nodes, allocation)
  SELECT id, array_job_id, array_task_id, COALESCE(array_job_id, id), job_name, user_name, uid,
         gid, account, partition_name, state, reason, priority, time_limit_s, exit_code,
         submit_time, eligible_time, start_time, end_time, nodes, allocation
  FROM jobs_version_1;
DROP TABLE jobs_version_1;
)sql";

// Version 3 adds three columns to version 2's jobs table; the defaults hold for older rows
// (where an ended job ran, its requeues and its last evaluation were not kept).
constexpr const char* kFromVersion2Sql = R"sql(
ALTER TABLE jobs ADD COLUMN ran_allocation BLOB NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN last_sched_eval INTEGER NOT NULL DEFAULT 0;
)sql";

}  // namespace

Status SqliteStore::CreateSchema() {
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "creating the schema"));
  Status status = Exec(kOtherTablesSql, "creating the schema");
  if (status.ok()) status = Exec(kRequestsTableSql, "creating the schema");
  if (status.ok()) status = Exec(kJobsTableSql, "creating the schema");
  if (status.ok()) {
    status = Exec(StrCat("INSERT INTO schema_version (version) VALUES (", kSchemaVersion, ");",
                         "PRAGMA application_id=", kApplicationId, ";")
                      .c_str(),
                  "creating the schema");
  }
  if (status.ok()) status = Exec("COMMIT", "creating the schema");
  if (!status.ok()) RollbackIfOpen();
  return status;
}

Status SqliteStore::Migrate(int64_t from) {
  const std::string doing = StrCat("upgrading the file from schema version ", from, " to ",
                                   kSchemaVersion);
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", doing));
  Status status = absl::OkStatus();
  if (from == 1) {
    status = Exec(kRequestsTableSql, doing);
    if (status.ok()) status = Exec(kFromVersion1Sql, doing);
    if (status.ok()) status = Exec(kJobsTableSql, doing);
    if (status.ok()) status = Exec(kFromVersion1CopySql, doing);
  } else if (from == 2) {
    status = Exec(kFromVersion2Sql, doing);
  }
  if (status.ok()) {
    status = Exec(StrCat("UPDATE schema_version SET version = ", kSchemaVersion).c_str(), doing);
  }
  if (status.ok()) status = Exec("COMMIT", doing);
  if (!status.ok()) RollbackIfOpen();
  return status;
}

}  // namespace loom::store
