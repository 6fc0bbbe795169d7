#include "store/sqlite_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/strings.h"
#include "store/internal/sqlite_util.h"

namespace loom::store {
namespace {

using core::StrCat;
using internal::Binder;
using internal::ColumnBlob;
using internal::ColumnText;
using internal::ResetOnExit;
using internal::StmtPtr;
namespace fs = std::filesystem;

constexpr uint64_t kMaxId = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr std::string_view kNextJobIdCounter = "next_job_id";
// Past a checkpoint SQLite truncates the WAL back to this size, so one burst of
// submissions does not leave a large file behind.
constexpr int64_t kJournalSizeLimit = 64 << 20;

constexpr const char* kPutJobSql =
    "INSERT OR REPLACE INTO jobs (id, array_job_id, array_task_id, request_id, job_name, "
    "user_name, uid, gid, account, partition_name, state, reason, priority, time_limit_s, "
    "exit_code, submit_time, eligible_time, start_time, end_time, nodes, allocation, "
    "ran_allocation, restarts, last_sched_eval) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
constexpr const char* kUpdateJobSql =
    "UPDATE jobs SET state = ?, reason = ?, priority = ?, time_limit_s = ?, exit_code = ?, "
    "eligible_time = ?, start_time = ?, end_time = ?, nodes = ?, allocation = ?, "
    "ran_allocation = ?, restarts = ?, last_sched_eval = ? WHERE id = ?";
constexpr const char* kSelectJobsSql =
    "SELECT id, array_job_id, array_task_id, request_id, job_name, user_name, uid, gid, "
    "account, partition_name, state, reason, priority, time_limit_s, exit_code, submit_time, "
    "eligible_time, start_time, end_time, nodes, allocation, ran_allocation, restarts, "
    "last_sched_eval FROM jobs ORDER BY id";

std::optional<model::PendingReason> ParsePendingReason(std::string_view name) {
  using Underlying = std::underlying_type_t<model::PendingReason>;
  for (int i = 0; i <= std::numeric_limits<Underlying>::max(); ++i) {
    const auto r = static_cast<model::PendingReason>(i);
    if (model::PendingReasonName(r) == name) return r;
  }
  return std::nullopt;
}

// Status::message() is an absl::string_view, which this abseil keeps apart from std's.
std::string_view MessageOf(const Status& s) { return {s.message().data(), s.message().size()}; }

Status InvalidId(std::string_view what, uint64_t id) {
  return absl::InvalidArgumentError(
      StrCat(what, " ", id, " is not valid: ids run from 1 to 2^63-1"));
}

}  // namespace

struct SqliteStore::Statements {
  StmtPtr begin;
  StmtPtr commit;
  StmtPtr rollback;
  StmtPtr put_job;
  StmtPtr update_job;
  StmtPtr delete_job;
  StmtPtr put_request;
  StmtPtr delete_request;
  StmtPtr select_request;
  StmtPtr put_node;
  StmtPtr delete_node;
  StmtPtr set_counter;
  StmtPtr put_value;
  StmtPtr delete_value;
  StmtPtr select_jobs;
  StmtPtr select_requests;
  StmtPtr select_nodes;
  StmtPtr select_counters;
  StmtPtr select_values;
};

SqliteStore::SqliteStore(SqliteStoreOptions options)
    : options_(std::move(options)),
      path_((fs::path(options_.state_save_location) / kFileName).string()) {}

SqliteStore::~SqliteStore() { Close(); }

void SqliteStore::Close() {
  stmts_.reset();  // statements are finalized before the connection closes
  if (db_ != nullptr) {
    sqlite3_close(db_);
    db_ = nullptr;
  }
}

Status SqliteStore::Error(int rc, std::string_view doing, std::string_view detail_in) const {
  const std::string detail(!detail_in.empty() ? detail_in
                           : db_ != nullptr   ? std::string_view(sqlite3_errmsg(db_))
                                              : std::string_view(sqlite3_errstr(rc)));
  const std::string dir = options_.state_save_location;
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(StrCat(path_, ": the disk is full while ", doing, " (",
                                                 detail, "). Free space on the filesystem holding ",
                                                 dir, ", then retry."));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(
          StrCat(path_, " is damaged or is not a database (", detail, ", while ", doing,
                 "). Loom has not changed the file. Stop loomctld, move ", kFileName, " (and any ",
                 kFileName, "-wal beside it) out of ", dir,
                 " for inspection and restore it from a backup; starting with an empty "
                 "StateSaveLocation forgets every job."));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(
          StrCat(path_, " is locked by another process (", detail, ", while ", doing,
                 "): only one loomctld may use a StateSaveLocation. Stop the other one, or give "
                 "this one its own StateSaveLocation."));
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_CANTOPEN:
      return absl::PermissionDeniedError(
          StrCat(path_, ": cannot write or open the file while ", doing, " (", detail,
                 "). Check that ", dir, " and ", kFileName,
                 " are readable and writable by the user loomctld runs as (SlurmUser)."));
    case SQLITE_IOERR:
      return absl::UnavailableError(StrCat(path_, ": I/O error while ", doing, " (", detail,
                                           "). Check the disk and the kernel log."));
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(
          StrCat(path_, ": out of memory while ", doing, " (", detail, ")."));
    case SQLITE_CONSTRAINT:
      return absl::InvalidArgumentError(
          StrCat(path_, ": a record was refused while ", doing, " (", detail, ")."));
    default:
      return absl::InternalError(
          StrCat(path_, ": SQLite failed while ", doing, " (", detail, ", code ", rc, ")."));
  }
}

Status SqliteStore::Exec(const char* sql, std::string_view doing) {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Error(rc, doing);
  return absl::OkStatus();
}

Status SqliteStore::StepDone(sqlite3_stmt* stmt, std::string_view doing) {
  ResetOnExit reset(stmt);
  const int rc = sqlite3_step(stmt);
  if (rc != SQLITE_DONE) return Error(rc, doing);
  return absl::OkStatus();
}

namespace {

// Runs a statement that returns one row and hands back its first column as text (or as an
// integer); used only while opening.
StatusOr<std::string> QueryText(sqlite3* db, const std::string& sql, int* rc_out) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr);
  StmtPtr stmt(raw);
  if (rc == SQLITE_OK) rc = sqlite3_step(stmt.get());
  *rc_out = rc;
  if (rc == SQLITE_ROW) return ColumnText(stmt.get(), 0);
  if (rc == SQLITE_DONE) return std::string();
  return absl::UnknownError("");  // the caller turns *rc_out into the message
}

// Makes a new directory entry durable (the database file, or StateSaveLocation itself).
Status SyncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return absl::UnavailableError(
        StrCat("cannot sync directory ", dir.string(), ": ", std::strerror(err)));
  }
  ::close(fd);
  return absl::OkStatus();
}

}  // namespace

Status SqliteStore::Open() {
  if (db_ != nullptr) return absl::FailedPreconditionError(StrCat(path_, " is already open"));
  if (options_.state_save_location.empty()) {
    return absl::InvalidArgumentError(
        "StateSaveLocation is empty: set it in slurm.conf to a directory for the "
        "controller's state");
  }
  const fs::path dir(options_.state_save_location);
  std::error_code ec;
  bool dir_created = false;
  if (!fs::exists(dir, ec)) {
    dir_created = fs::create_directories(dir, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          StrCat("cannot create StateSaveLocation ", dir.string(), ": ", ec.message(),
                 ". Create it, writable by the user loomctld runs as (SlurmUser)."));
    }
  } else if (!fs::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(
        StrCat("StateSaveLocation ", dir.string(), " is not a directory"));
  }
  const bool file_created = !fs::exists(path_, ec);
  Status status = OpenLocked();
  if (status.ok() && file_created) status = SyncDirectory(dir);
  if (status.ok() && dir_created) status = SyncDirectory(dir.parent_path());
  if (!status.ok()) {
    Close();
    return status;
  }
  // From here on a clean close checkpoints the WAL into the (now verified) file.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, nullptr);
  return absl::OkStatus();
}

Status SqliteStore::OpenLocked() {
  int rc = sqlite3_open_v2(
      path_.c_str(), &db_,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
      nullptr);
  if (rc != SQLITE_OK) return Error(rc, "opening the file");
  // Until the file is known good, closing must not checkpoint a WAL into it.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  sqlite3_busy_timeout(db_, options_.busy_timeout_ms);
  // Held for the life of the connection: a second controller on the same directory fails
  // to open instead of interleaving its writes with ours. In WAL mode this also keeps the
  // WAL index in memory (no -shm file).
  RETURN_IF_ERROR(Exec("PRAGMA locking_mode=EXCLUSIVE", "setting the locking mode"));
  RETURN_IF_ERROR(Exec("PRAGMA cell_size_check=ON", "enabling cell size checks"));

  int64_t version = 0;
  RETURN_IF_ERROR(CheckHeader(&version));

  StatusOr<std::string> mode = QueryText(db_, "PRAGMA journal_mode=WAL", &rc);
  if (!mode.ok()) return Error(rc, "switching to WAL mode");
  if (*mode != "wal") {
    return absl::FailedPreconditionError(
        StrCat(path_, ": cannot use WAL mode (the journal mode stayed '", *mode,
               "'). Put StateSaveLocation on a local filesystem."));
  }
  RETURN_IF_ERROR(Exec(options_.unsafe_skip_fsync_on_commit_for_benchmark
                           ? "PRAGMA synchronous=NORMAL"
                           : "PRAGMA synchronous=FULL",
                       "setting synchronous mode"));
  RETURN_IF_ERROR(Exec(StrCat("PRAGMA journal_size_limit=", kJournalSizeLimit).c_str(),
                       "setting the WAL size limit"));
  RETURN_IF_ERROR(Exec(StrCat("PRAGMA cache_size=-", std::max(64, options_.cache_kib)).c_str(),
                       "setting the cache size"));
  if (options_.max_page_count_for_testing > 0) {
    RETURN_IF_ERROR(
        Exec(StrCat("PRAGMA max_page_count=", options_.max_page_count_for_testing).c_str(),
             "capping the file size"));
  }
  if (version == 0) {
    RETURN_IF_ERROR(CreateSchema());
  } else if (version < kSchemaVersion) {
    RETURN_IF_ERROR(Migrate(version));
  }
  return Prepare();
}

Status SqliteStore::CheckHeader(int64_t* version_out) {
  int rc = SQLITE_OK;
  // The first read of the file: one that is not SQLite, or whose header is damaged, fails
  // here, before anything is written.
  StatusOr<std::string> tables = QueryText(db_, "SELECT count(*) FROM sqlite_schema", &rc);
  if (!tables.ok()) return Error(rc, "reading the schema");
  if (options_.verify_on_open) {
    StatusOr<std::string> check = QueryText(db_, "PRAGMA quick_check(5)", &rc);
    if (!check.ok()) return Error(rc, "checking the file's integrity");
    if (*check != "ok") {
      std::string problems = *check;
      std::replace(problems.begin(), problems.end(), '\n', ' ');
      return Error(SQLITE_CORRUPT, "checking the file's integrity", problems);
    }
  }
  StatusOr<std::string> app_id = QueryText(db_, "PRAGMA application_id", &rc);
  if (!app_id.ok()) return Error(rc, "reading the application id");
  const bool is_loom = *app_id == std::to_string(kApplicationId);
  if (*tables == "0" && (*app_id == "0" || is_loom)) {
    *version_out = 0;
    return absl::OkStatus();
  }
  if (!is_loom) {
    return absl::FailedPreconditionError(
        StrCat(path_, " is an SQLite database but not a Loom store (application id ", *app_id,
               "). Loom has not changed it. Move it out of ", options_.state_save_location,
               " or point StateSaveLocation at another directory."));
  }
  StatusOr<std::string> version = QueryText(db_, "SELECT version FROM schema_version", &rc);
  if (!version.ok()) {
    return Error(SQLITE_CORRUPT, "reading the schema version", sqlite3_errmsg(db_));
  }
  const std::optional<int64_t> v = core::ParseInt(*version);
  if (!v.has_value() || *v < 1) {
    return Error(SQLITE_CORRUPT, "reading the schema version",
                 StrCat("schema version '", *version, "'"));
  }
  if (*v > kSchemaVersion) {
    return absl::FailedPreconditionError(
        StrCat(path_, " was written by a newer Loom (schema version ", *v,
               "; this loomctld knows versions up to ", kSchemaVersion,
               "). Loom has not changed the file. Run the newer loomctld, or restore a "
               "StateSaveLocation saved by this version."));
  }
  // Older versions are brought up to date by Migrate(), in one transaction.
  *version_out = *v;
  return absl::OkStatus();
}

Status SqliteStore::Prepare() {
  stmts_ = std::make_unique<Statements>();
  const auto prepare = [&](StmtPtr* out, const char* sql) -> Status {
    sqlite3_stmt* raw = nullptr;
    const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    out->reset(raw);
    if (rc != SQLITE_OK) return Error(rc, StrCat("preparing '", sql, "'"));
    return absl::OkStatus();
  };
  Statements& s = *stmts_;
  RETURN_IF_ERROR(prepare(&s.begin, "BEGIN IMMEDIATE"));
  RETURN_IF_ERROR(prepare(&s.commit, "COMMIT"));
  RETURN_IF_ERROR(prepare(&s.rollback, "ROLLBACK"));
  RETURN_IF_ERROR(prepare(&s.put_job, kPutJobSql));
  RETURN_IF_ERROR(prepare(&s.update_job, kUpdateJobSql));
  RETURN_IF_ERROR(prepare(&s.delete_job, "DELETE FROM jobs WHERE id = ?"));
  RETURN_IF_ERROR(
      prepare(&s.put_request, "INSERT OR REPLACE INTO requests (id, request) VALUES (?, ?)"));
  RETURN_IF_ERROR(prepare(&s.delete_request, "DELETE FROM requests WHERE id = ?"));
  RETURN_IF_ERROR(prepare(&s.select_request, "SELECT request FROM requests WHERE id = ?"));
  RETURN_IF_ERROR(prepare(&s.put_node,
                          "INSERT OR REPLACE INTO nodes (node_name, state, drain, reason, "
                          "reason_uid, reason_time) VALUES (?, ?, ?, ?, ?, ?)"));
  RETURN_IF_ERROR(prepare(&s.delete_node, "DELETE FROM nodes WHERE node_name = ?"));
  RETURN_IF_ERROR(prepare(&s.set_counter,
                          "INSERT OR REPLACE INTO counters (counter_name, value) VALUES (?, ?)"));
  RETURN_IF_ERROR(prepare(&s.put_value,
                          "INSERT OR REPLACE INTO named_values (value_name, value) VALUES (?, ?)"));
  RETURN_IF_ERROR(prepare(&s.delete_value, "DELETE FROM named_values WHERE value_name = ?"));
  RETURN_IF_ERROR(prepare(&s.select_jobs, kSelectJobsSql));
  RETURN_IF_ERROR(prepare(&s.select_requests, "SELECT id, request FROM requests ORDER BY id"));
  RETURN_IF_ERROR(prepare(&s.select_nodes,
                          "SELECT node_name, state, drain, reason, reason_uid, reason_time "
                          "FROM nodes ORDER BY node_name"));
  RETURN_IF_ERROR(prepare(&s.select_counters, "SELECT counter_name, value FROM counters"));
  RETURN_IF_ERROR(
      prepare(&s.select_values, "SELECT value_name, value FROM named_values ORDER BY value_name"));
  return absl::OkStatus();
}

void SqliteStore::RollbackIfOpen() {
  // After some errors (a full disk among them) SQLite has already rolled the transaction
  // back; otherwise it is still open and is rolled back here.
  if (sqlite3_get_autocommit(db_)) return;
  if (stmts_ != nullptr && stmts_->rollback != nullptr) {
    ResetOnExit reset(stmts_->rollback.get());
    sqlite3_step(stmts_->rollback.get());
  } else {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Status SqliteStore::Commit(const Batch& batch) {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError(StrCat(path_, ": Commit() before a successful Open()"));
  }
  if (batch.empty()) return absl::OkStatus();
  if (Status status = StepDone(stmts_->begin.get(), "starting a transaction"); !status.ok()) {
    return Status(status.code(), StrCat("batch not committed: ", MessageOf(status)));
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    Status status = Apply(batch.mutations[i]);
    if (!status.ok()) {
      RollbackIfOpen();
      return Status(
          status.code(),
          StrCat("batch not committed (rolled back at mutation ", i + 1, " of ", batch.size(),
                 "; everything committed before is intact): ", MessageOf(status)));
    }
  }
  Status status = StepDone(stmts_->commit.get(), "committing");
  if (!status.ok()) {
    RollbackIfOpen();
    return Status(status.code(),
                  StrCat("batch not committed (", batch.size(),
                         " mutations rolled back; everything committed before is intact): ",
                         MessageOf(status)));
  }
  return absl::OkStatus();
}

Status SqliteStore::Apply(const Mutation& m) {
  return std::visit([this](const auto& one) { return ApplyOne(one); }, m);
}

Status SqliteStore::ApplyOne(const PutJob& m) {
  const JobRecord& j = m.job;
  if (j.id == 0 || j.id > kMaxId) return InvalidId("job id", j.id);
  if (j.array_job_id > kMaxId) return InvalidId("array job id", j.array_job_id);
  if (j.request_id == 0 || j.request_id > kMaxId) return InvalidId("request id", j.request_id);
  sqlite3_stmt* s = stmts_->put_job.get();
  ResetOnExit reset(s);
  Binder b(s);
  b.Int(static_cast<int64_t>(j.id));
  if (j.array_job_id != 0) {
    b.Int(static_cast<int64_t>(j.array_job_id));
  } else {
    b.Null();
  }
  if (j.array_task_id.has_value()) {
    b.Int(*j.array_task_id);
  } else {
    b.Null();
  }
  b.Int(static_cast<int64_t>(j.request_id))
      .Text(j.name)
      .Text(j.user)
      .Int(j.uid)
      .Int(j.gid)
      .Text(j.account)
      .Text(j.partition)
      .Text(model::JobStateName(j.state))
      .Text(model::PendingReasonName(j.reason))
      .Int(j.priority)
      .Int(j.time_limit_s)
      .Int(j.exit_code)
      .Int(j.submit_time)
      .Int(j.eligible_time)
      .Int(j.start_time)
      .Int(j.end_time)
      .Text(j.nodes)
      .Blob(j.allocation)
      .Blob(j.ran_allocation)
      .Int(j.restarts)
      .Int(j.last_sched_eval);
  int rc = b.rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("writing job ", j.id));
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const UpdateJob& m) {
  const JobProgress& j = m.job;
  if (j.id == 0 || j.id > kMaxId) return InvalidId("job id", j.id);
  sqlite3_stmt* s = stmts_->update_job.get();
  ResetOnExit reset(s);
  int rc = Binder(s)
               .Text(model::JobStateName(j.state))
               .Text(model::PendingReasonName(j.reason))
               .Int(j.priority)
               .Int(j.time_limit_s)
               .Int(j.exit_code)
               .Int(j.eligible_time)
               .Int(j.start_time)
               .Int(j.end_time)
               .Text(j.nodes)
               .Blob(j.allocation)
               .Blob(j.ran_allocation)
               .Int(j.restarts)
               .Int(j.last_sched_eval)
               .Int(static_cast<int64_t>(j.id))
               .rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("updating job ", j.id));
  if (sqlite3_changes(db_) != 1) {
    return absl::NotFoundError(
        StrCat(path_, ": job ", j.id, " has no record to update; it must be put first"));
  }
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const PutRequest& m) {
  if (m.id == 0 || m.id > kMaxId) return InvalidId("request id", m.id);
  sqlite3_stmt* s = stmts_->put_request.get();
  ResetOnExit reset(s);
  int rc = Binder(s).Int(static_cast<int64_t>(m.id)).Blob(m.request).rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("writing request ", m.id));
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const DeleteRequest& m) {
  if (m.id == 0 || m.id > kMaxId) return InvalidId("request id", m.id);
  sqlite3_stmt* s = stmts_->delete_request.get();
  ResetOnExit reset(s);
  int rc = Binder(s).Int(static_cast<int64_t>(m.id)).rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("deleting request ", m.id));
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const DeleteJob& m) {
  if (m.id == 0 || m.id > kMaxId) return InvalidId("job id", m.id);
  sqlite3_stmt* s = stmts_->delete_job.get();
  ResetOnExit reset(s);
  int rc = Binder(s).Int(static_cast<int64_t>(m.id)).rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("deleting job ", m.id));
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const PutNode& m) {
  const NodeRecord& n = m.node;
  if (n.name.empty()) return absl::InvalidArgumentError("a node record has an empty name");
  sqlite3_stmt* s = stmts_->put_node.get();
  ResetOnExit reset(s);
  int rc = Binder(s)
               .Text(n.name)
               .Text(model::NodeStateName(n.state))
               .Int(n.drain ? 1 : 0)
               .Text(n.reason)
               .Int(n.reason_uid)
               .Int(n.reason_time)
               .rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("writing node ", n.name));
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const DeleteNode& m) {
  if (m.name.empty()) return absl::InvalidArgumentError("a node deletion has an empty name");
  sqlite3_stmt* s = stmts_->delete_node.get();
  ResetOnExit reset(s);
  int rc = Binder(s).Text(m.name).rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("deleting node ", m.name));
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const SetNextJobId& m) {
  if (m.next_job_id == 0 || m.next_job_id > kMaxId) return InvalidId("next job id", m.next_job_id);
  sqlite3_stmt* s = stmts_->set_counter.get();
  ResetOnExit reset(s);
  int rc = Binder(s).Text(kNextJobIdCounter).Int(static_cast<int64_t>(m.next_job_id)).rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, "writing the next job id");
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const PutValue& m) {
  if (m.key.empty()) return absl::InvalidArgumentError("a named value has an empty name");
  sqlite3_stmt* s = stmts_->put_value.get();
  ResetOnExit reset(s);
  int rc = Binder(s).Text(m.key).Blob(m.value).rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("writing value '", m.key, "'"));
  return absl::OkStatus();
}

Status SqliteStore::ApplyOne(const DeleteValue& m) {
  sqlite3_stmt* s = stmts_->delete_value.get();
  ResetOnExit reset(s);
  int rc = Binder(s).Text(m.key).rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc != SQLITE_DONE) return Error(rc, StrCat("deleting value '", m.key, "'"));
  return absl::OkStatus();
}

StatusOr<Snapshot> SqliteStore::Recover() {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError(StrCat(path_, ": Recover() before a successful Open()"));
  }
  const auto unknown = [&](std::string_view what, std::string_view name, std::string_view owner) {
    return absl::DataLossError(
        StrCat(path_, ": ", owner, " has ", what, " '", name,
               "', which this loomctld does not know. The file is damaged or was written by "
               "a newer Loom; Loom has not changed it."));
  };
  Snapshot snap;
  int rc;
  {
    sqlite3_stmt* s = stmts_->select_jobs.get();
    ResetOnExit reset(s);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      JobRecord j;
      j.id = static_cast<model::JobId>(sqlite3_column_int64(s, 0));
      j.array_job_id = static_cast<model::JobId>(sqlite3_column_int64(s, 1));
      if (sqlite3_column_type(s, 2) != SQLITE_NULL) {
        j.array_task_id = static_cast<uint32_t>(sqlite3_column_int64(s, 2));
      }
      j.request_id = static_cast<model::JobId>(sqlite3_column_int64(s, 3));
      j.name = ColumnText(s, 4);
      j.user = ColumnText(s, 5);
      j.uid = static_cast<uint32_t>(sqlite3_column_int64(s, 6));
      j.gid = static_cast<uint32_t>(sqlite3_column_int64(s, 7));
      j.account = ColumnText(s, 8);
      j.partition = ColumnText(s, 9);
      const std::string state = ColumnText(s, 10);
      const std::optional<model::JobState> parsed_state = model::ParseJobState(state);
      if (!parsed_state.has_value()) return unknown("state", state, StrCat("job ", j.id));
      j.state = *parsed_state;
      const std::string reason = ColumnText(s, 11);
      const std::optional<model::PendingReason> parsed_reason = ParsePendingReason(reason);
      if (!parsed_reason.has_value()) return unknown("reason", reason, StrCat("job ", j.id));
      j.reason = *parsed_reason;
      j.priority = sqlite3_column_int64(s, 12);
      j.time_limit_s = sqlite3_column_int64(s, 13);
      j.exit_code = static_cast<int32_t>(sqlite3_column_int64(s, 14));
      j.submit_time = sqlite3_column_int64(s, 15);
      j.eligible_time = sqlite3_column_int64(s, 16);
      j.start_time = sqlite3_column_int64(s, 17);
      j.end_time = sqlite3_column_int64(s, 18);
      j.nodes = ColumnText(s, 19);
      j.allocation = ColumnBlob(s, 20);
      j.ran_allocation = ColumnBlob(s, 21);
      j.restarts = static_cast<int32_t>(sqlite3_column_int64(s, 22));
      j.last_sched_eval = sqlite3_column_int64(s, 23);
      snap.jobs.push_back(std::move(j));
    }
    if (rc != SQLITE_DONE) return Error(rc, "reading the jobs");
  }
  {
    sqlite3_stmt* s = stmts_->select_requests.get();
    ResetOnExit reset(s);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      snap.requests.emplace(static_cast<model::JobId>(sqlite3_column_int64(s, 0)),
                            ColumnBlob(s, 1));
    }
    if (rc != SQLITE_DONE) return Error(rc, "reading the requests");
  }
  {
    sqlite3_stmt* s = stmts_->select_nodes.get();
    ResetOnExit reset(s);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      NodeRecord n;
      n.name = ColumnText(s, 0);
      const std::string state = ColumnText(s, 1);
      const std::optional<model::NodeState> parsed = model::ParseNodeState(state);
      if (!parsed.has_value()) return unknown("state", state, StrCat("node ", n.name));
      n.state = *parsed;
      n.drain = sqlite3_column_int64(s, 2) != 0;
      n.reason = ColumnText(s, 3);
      n.reason_uid = static_cast<uint32_t>(sqlite3_column_int64(s, 4));
      n.reason_time = sqlite3_column_int64(s, 5);
      snap.nodes.push_back(std::move(n));
    }
    if (rc != SQLITE_DONE) return Error(rc, "reading the nodes");
  }
  {
    sqlite3_stmt* s = stmts_->select_counters.get();
    ResetOnExit reset(s);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      if (ColumnText(s, 0) == kNextJobIdCounter) {
        snap.next_job_id = static_cast<model::JobId>(sqlite3_column_int64(s, 1));
      }
    }
    if (rc != SQLITE_DONE) return Error(rc, "reading the next job id");
  }
  {
    sqlite3_stmt* s = stmts_->select_values.get();
    ResetOnExit reset(s);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      snap.values.emplace(ColumnText(s, 0), ColumnBlob(s, 1));
    }
    if (rc != SQLITE_DONE) return Error(rc, "reading the named values");
  }
  return snap;
}

StatusOr<std::string> SqliteStore::ReadRequest(model::JobId id) {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError(
        StrCat(path_, ": ReadRequest() before a successful Open()"));
  }
  if (id == 0 || id > kMaxId) return InvalidId("request id", id);
  sqlite3_stmt* s = stmts_->select_request.get();
  ResetOnExit reset(s);
  int rc = Binder(s).Int(static_cast<int64_t>(id)).rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) return ColumnBlob(s, 0);
  if (rc == SQLITE_DONE) {
    return absl::NotFoundError(StrCat(path_, " holds no request ", id));
  }
  return Error(rc, StrCat("reading request ", id));
}

StatusOr<std::unique_ptr<SqliteStore>> OpenSqliteStore(SqliteStoreOptions options) {
  auto store = std::make_unique<SqliteStore>(std::move(options));
  RETURN_IF_ERROR(store->Open());
  return store;
}

}  // namespace loom::store
