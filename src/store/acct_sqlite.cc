#include "store/acct_sqlite.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "core/strings.h"
#include "store/acct_schema.h"
#include "store/internal/sqlite_util.h"

namespace loom::store {
namespace {

using core::StrCat;
using internal::Binder;
using internal::ColumnBlob;
using internal::ColumnText;
using internal::ResetOnExit;
using internal::StmtPtr;

constexpr const char* kUpsertJobSql =
    "INSERT INTO acct_jobs (cluster, job_id, submit_time, array_job_id, array_task_id, "
    "eligible_time, start_time, end_time, uid, gid, user_name, account, partition_name, qos, "
    "state, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (cluster, job_id, submit_time) DO UPDATE SET array_job_id = "
    "excluded.array_job_id, array_task_id = excluded.array_task_id, eligible_time = "
    "excluded.eligible_time, start_time = excluded.start_time, end_time = excluded.end_time, "
    "uid = excluded.uid, gid = excluded.gid, user_name = excluded.user_name, account = "
    "excluded.account, partition_name = excluded.partition_name, qos = excluded.qos, state = "
    "excluded.state, record = excluded.record";
constexpr const char* kJobColumns =
    "SELECT cluster, job_id, submit_time, array_job_id, array_task_id, eligible_time, "
    "start_time, end_time, uid, gid, user_name, account, partition_name, qos, state, record "
    "FROM acct_jobs";

class SqliteAcctStore final : public AcctStore {
 public:
  explicit SqliteAcctStore(SqliteAcctOptions options) : options_(std::move(options)) {}
  ~SqliteAcctStore() override {
    upsert_.reset();
    if (db_ != nullptr) sqlite3_close(db_);
  }

  Status Open() override {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::path(options_.path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) {
      return absl::FailedPreconditionError(StrCat("cannot create the accounting store's directory ",
                                                  dir.string(), ": ", ec.message()));
    }
    int rc =
        sqlite3_open_v2(options_.path.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) return Error(rc, "opening");
    sqlite3_busy_timeout(db_, options_.busy_timeout_ms);
    RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL", "switching to WAL"));
    RETURN_IF_ERROR(Exec("PRAGMA synchronous=FULL", "setting synchronous=FULL"));
    if (options_.max_page_count_for_testing > 0) {
      RETURN_IF_ERROR(
          Exec(StrCat("PRAGMA max_page_count=", options_.max_page_count_for_testing).c_str(),
               "capping the file"));
    }
    RETURN_IF_ERROR(Migrate());
    sqlite3_stmt* s = nullptr;
    rc = sqlite3_prepare_v3(db_, kUpsertJobSql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK) return Error(rc, "preparing the job upsert");
    upsert_.reset(s);
    return absl::OkStatus();
  }

  Status UpsertJobs(const std::vector<AcctJobRow>& rows) override {
    if (rows.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "beginning a transaction"));
    for (const AcctJobRow& r : rows) {
      ResetOnExit reset(upsert_.get());
      Binder b(upsert_.get());
      b.Text(r.cluster)
          .Int(static_cast<int64_t>(r.job_id))
          .Int(r.submit_time)
          .Int(static_cast<int64_t>(r.array_job_id))
          .Int(r.array_task_id)
          .Int(r.eligible_time)
          .Int(r.start_time)
          .Int(r.end_time)
          .Int(r.uid)
          .Int(r.gid)
          .Text(r.user)
          .Text(r.account)
          .Text(r.partition)
          .Text(r.qos)
          .Text(r.state)
          .Blob(r.record);
      int rc = b.rc();
      if (rc == SQLITE_OK) rc = sqlite3_step(upsert_.get());
      if (rc != SQLITE_DONE) {
        Status err = Error(rc, StrCat("storing job ", r.job_id));
        Exec("ROLLBACK", "rolling back").IgnoreError();
        return err;
      }
    }
    if (Status s = Exec("COMMIT", "committing job records"); !s.ok()) {
      Exec("ROLLBACK", "rolling back").IgnoreError();
      return s;
    }
    return absl::OkStatus();
  }

  StatusOr<std::vector<AcctJobRow>> FindJobs(const AcctJobFilter& f) override {
    std::string sql = kJobColumns;
    std::vector<std::string> where;
    std::vector<std::string> texts;  // bound by value below, in order
    std::vector<int64_t> ints;
    // Each condition appends its SQL and remembers what to bind, in order.
    struct Param {
      bool text;
      size_t index;
    };
    std::vector<Param> params;
    auto text = [&](const std::string& v) {
      texts.push_back(v);
      params.push_back({true, texts.size() - 1});
    };
    auto integer = [&](int64_t v) {
      ints.push_back(v);
      params.push_back({false, ints.size() - 1});
    };
    auto in_list = [&](const char* column, size_t n) {
      std::string s = StrCat(column, " IN (");
      for (size_t i = 0; i < n; ++i) s += i ? ",?" : "?";
      return s + ")";
    };
    if (!f.cluster.empty()) {
      where.push_back("cluster = ?");
      text(f.cluster);
    }
    if (!f.job_ids.empty()) {
      where.push_back(StrCat("(", in_list("job_id", f.job_ids.size()), " OR ",
                             in_list("array_job_id", f.job_ids.size()), ")"));
      for (uint64_t id : f.job_ids) integer(static_cast<int64_t>(id));
      for (uint64_t id : f.job_ids) integer(static_cast<int64_t>(id));
    }
    if (!f.uids.empty() || !f.users.empty()) {
      std::vector<std::string> either;
      if (!f.uids.empty()) either.push_back(in_list("uid", f.uids.size()));
      if (!f.users.empty()) either.push_back(in_list("user_name", f.users.size()));
      where.push_back(StrCat("(", core::Join(either, " OR "), ")"));
      for (uint32_t u : f.uids) integer(u);
      for (const std::string& u : f.users) text(u);
    }
    auto texts_in = [&](const char* column, const std::vector<std::string>& values) {
      if (values.empty()) return;
      where.push_back(in_list(column, values.size()));
      for (const std::string& v : values) text(v);
    };
    texts_in("account", f.accounts);
    texts_in("partition_name", f.partitions);
    texts_in("state", f.states);
    if (f.active_to) {
      where.push_back("submit_time <= ?");
      integer(*f.active_to);
    }
    if (f.active_from) {
      where.push_back("(end_time = 0 OR end_time >= ?)");
      integer(*f.active_from);
    }
    if (!where.empty()) sql += " WHERE " + core::Join(where, " AND ");
    sql += " ORDER BY job_id, submit_time";

    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr);
    if (rc != SQLITE_OK) return Error(rc, "preparing a job search");
    StmtPtr stmt(raw);
    Binder b(raw);
    for (const Param& p : params) {
      if (p.text) {
        b.Text(texts[p.index]);
      } else {
        b.Int(ints[p.index]);
      }
    }
    if (b.rc() != SQLITE_OK) return Error(b.rc(), "binding a job search");
    std::vector<AcctJobRow> out;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
      AcctJobRow r;
      r.cluster = ColumnText(raw, 0);
      r.job_id = static_cast<uint64_t>(sqlite3_column_int64(raw, 1));
      r.submit_time = sqlite3_column_int64(raw, 2);
      r.array_job_id = static_cast<uint64_t>(sqlite3_column_int64(raw, 3));
      r.array_task_id = sqlite3_column_int64(raw, 4);
      r.eligible_time = sqlite3_column_int64(raw, 5);
      r.start_time = sqlite3_column_int64(raw, 6);
      r.end_time = sqlite3_column_int64(raw, 7);
      r.uid = static_cast<uint32_t>(sqlite3_column_int64(raw, 8));
      r.gid = static_cast<uint32_t>(sqlite3_column_int64(raw, 9));
      r.user = ColumnText(raw, 10);
      r.account = ColumnText(raw, 11);
      r.partition = ColumnText(raw, 12);
      r.qos = ColumnText(raw, 13);
      r.state = ColumnText(raw, 14);
      r.record = ColumnBlob(raw, 15);
      out.push_back(std::move(r));
    }
    if (rc != SQLITE_DONE) return Error(rc, "reading job records");
    return out;
  }

  StatusOr<int64_t> PurgeJobs(int64_t ended_before) override {
    RETURN_IF_ERROR(Run(
        "DELETE FROM acct_jobs WHERE end_time > 0 AND end_time < ?",
        [&](Binder& b) { b.Int(ended_before); }, "purging job records"));
    return static_cast<int64_t>(sqlite3_changes(db_));
  }

  Status ChangeEntities(const std::vector<AcctEntity>& put,
                        const std::vector<AcctEntityKey>& remove) override {
    if (put.empty() && remove.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "beginning a transaction"));
    auto fail = [&](Status s) {
      Exec("ROLLBACK", "rolling back").IgnoreError();
      return s;
    };
    for (const AcctEntityKey& k : remove) {
      Status s = Run(
          "DELETE FROM acct_entities WHERE kind = ? AND name = ?",
          [&](Binder& b) { b.Text(k.kind).Text(k.name); }, "deleting an entity");
      if (!s.ok()) return fail(s);
    }
    for (const AcctEntity& e : put) {
      Status s = Run(
          "INSERT INTO acct_entities (kind, name, record) VALUES (?, ?, ?) ON CONFLICT (kind, "
          "name) DO UPDATE SET record = excluded.record",
          [&](Binder& b) { b.Text(e.kind).Text(e.name).Blob(e.record); }, "storing an entity");
      if (!s.ok()) return fail(s);
    }
    if (Status s = Exec("COMMIT", "committing entities"); !s.ok()) return fail(s);
    return absl::OkStatus();
  }

  StatusOr<std::vector<AcctEntity>> ListEntities(std::string_view kind) override {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(
        db_, "SELECT kind, name, record FROM acct_entities WHERE kind = ? ORDER BY name", -1, &raw,
        nullptr);
    if (rc != SQLITE_OK) return Error(rc, "preparing an entity listing");
    StmtPtr stmt(raw);
    const std::string k(kind);
    Binder(raw).Text(k);
    std::vector<AcctEntity> out;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
      out.push_back({ColumnText(raw, 0), ColumnText(raw, 1), ColumnBlob(raw, 2)});
    }
    if (rc != SQLITE_DONE) return Error(rc, "listing entities");
    return out;
  }

  StatusOr<std::vector<AcctEntity>> ListEntitiesBetween(std::string_view kind,
                                                        std::string_view from,
                                                        std::string_view to) override {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db_,
                                "SELECT kind, name, record FROM acct_entities WHERE kind = ? AND "
                                "name >= ? AND name < ? ORDER BY name",
                                -1, &raw, nullptr);
    if (rc != SQLITE_OK) return Error(rc, "preparing an entity range");
    StmtPtr stmt(raw);
    const std::string k(kind), f(from), t(to);
    Binder(raw).Text(k).Text(f).Text(t);
    std::vector<AcctEntity> out;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
      out.push_back({ColumnText(raw, 0), ColumnText(raw, 1), ColumnBlob(raw, 2)});
    }
    if (rc != SQLITE_DONE) return Error(rc, "listing an entity range");
    return out;
  }

  std::string Location() const override { return options_.path; }

 private:
  // The schema's version; 0 for a new, empty database. Refuses a database that holds
  // tables but is not a Loom accounting store.
  StatusOr<int> Version() {
    bool has_meta = false;
    int tables = 0;
    RETURN_IF_ERROR(
        Query("SELECT name FROM sqlite_master WHERE type = 'table'", [&](sqlite3_stmt* s) {
          ++tables;
          if (ColumnText(s, 0) == "loom_acct_meta") has_meta = true;
        }));
    if (!has_meta) {
      if (tables > 0) {
        return absl::FailedPreconditionError(
            StrCat(options_.path,
                   " is not a Loom accounting store (it has other tables); "
                   "give StorageLoc a new file"));
      }
      return 0;
    }
    std::string application;
    int version = -1;
    RETURN_IF_ERROR(Query("SELECT key, value FROM loom_acct_meta", [&](sqlite3_stmt* s) {
      const std::string key = ColumnText(s, 0);
      if (key == "application") application = ColumnText(s, 1);
      if (key == "schema_version") version = std::atoi(ColumnText(s, 1).c_str());
    }));
    if (application != kAcctApplication || version < 1) {
      return absl::FailedPreconditionError(
          StrCat(options_.path, " is not a Loom accounting store (no schema version)"));
    }
    return version;
  }

  Status Migrate() {
    const int target = options_.schema_version_for_testing > 0 ? options_.schema_version_for_testing
                                                               : kAcctSchemaVersion;
    RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "beginning the schema check"));
    auto fail = [&](Status s) {
      Exec("ROLLBACK", "rolling back").IgnoreError();
      return s;
    };
    StatusOr<int> version = Version();
    if (!version.ok()) return fail(version.status());
    if (*version > kAcctSchemaVersion) {
      return fail(absl::FailedPreconditionError(StrCat(
          options_.path, " was written by a newer Loom (accounting schema ", *version,
          "; this build knows up to ", kAcctSchemaVersion, "); run that version's loomdbd")));
    }
    for (int v = *version + 1; v <= target; ++v) {
      for (const std::string& sql : AcctSchemaStep(v, "BLOB")) {
        if (Status s = Exec(sql.c_str(), StrCat("upgrading the schema to version ", v)); !s.ok()) {
          return fail(s);
        }
      }
    }
    if (*version < target) {
      const std::string v = StrCat(target);
      Status s = Run(
          "INSERT OR REPLACE INTO loom_acct_meta (key, value) VALUES (?, ?), (?, ?)",
          [&](Binder& b) {
            b.Text("application").Text(kAcctApplication).Text("schema_version").Text(v);
          },
          "recording the schema version");
      if (!s.ok()) return fail(s);
    }
    if (Status s = Exec("COMMIT", "committing the schema"); !s.ok()) return fail(s);
    return absl::OkStatus();
  }

  template <typename BindFn>
  Status Run(const char* sql, BindFn bind, std::string_view doing) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &raw, nullptr);
    if (rc != SQLITE_OK) return Error(rc, doing);
    StmtPtr stmt(raw);
    Binder b(raw);
    bind(b);
    rc = b.rc();
    if (rc == SQLITE_OK) rc = sqlite3_step(raw);
    if (rc != SQLITE_DONE) return Error(rc, doing);
    return absl::OkStatus();
  }

  template <typename RowFn>
  Status Query(const char* sql, RowFn row) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &raw, nullptr);
    if (rc != SQLITE_OK) return Error(rc, "reading the schema");
    StmtPtr stmt(raw);
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) row(raw);
    if (rc != SQLITE_DONE) return Error(rc, "reading the schema");
    return absl::OkStatus();
  }

  Status Exec(const char* sql, std::string_view doing) {
    char* msg = nullptr;
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &msg);
    std::string detail = msg != nullptr ? msg : "";
    sqlite3_free(msg);
    if (rc != SQLITE_OK) return Error(rc, doing, detail);
    return absl::OkStatus();
  }

  Status Error(int rc, std::string_view doing, std::string_view detail = {}) const {
    const std::string what =
        detail.empty() && db_ != nullptr ? sqlite3_errmsg(db_) : std::string(detail);
    std::string text = StrCat("accounting store ", options_.path, ": ", doing, " failed: ", what);
    const int primary = rc & 0xff;
    if (primary == SQLITE_FULL) {
      return absl::ResourceExhaustedError(text +
                                          " (the disk or the file's cap is full; free space)");
    }
    if (primary == SQLITE_READONLY) return absl::FailedPreconditionError(text + " (read-only)");
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) return absl::UnavailableError(text);
    return absl::InternalError(text);
  }

  const SqliteAcctOptions options_;
  sqlite3* db_ = nullptr;
  StmtPtr upsert_;
};

}  // namespace

StatusOr<std::unique_ptr<AcctStore>> OpenSqliteAcctStore(SqliteAcctOptions options) {
  auto store = std::make_unique<SqliteAcctStore>(std::move(options));
  RETURN_IF_ERROR(store->Open());
  return std::unique_ptr<AcctStore>(std::move(store));
}

}  // namespace loom::store
