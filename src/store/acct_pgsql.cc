#include "store/acct_pgsql.h"

#include <endian.h>
#include <libpq-fe.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

#include "core/log.h"
#include "core/strings.h"
#include "store/acct_schema.h"

namespace loom::store {
namespace {

using core::StrCat;

// Held, for its transaction, while Open checks and upgrades the schema, so that two loomdbd
// starting against one database do not both create its tables. Any constant would do; this
// one spells "LOOMACCT".
constexpr int64_t kMigrationLockKey = 0x4c4f4f4d41434354;

constexpr const char* kUpsertJobSql =
    "INSERT INTO acct_jobs (cluster, job_id, submit_time, array_job_id, array_task_id, "
    "eligible_time, start_time, end_time, uid, gid, user_name, account, partition_name, qos, "
    "state, record) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, "
    "$16) ON CONFLICT (cluster, job_id, submit_time) DO UPDATE SET array_job_id = "
    "excluded.array_job_id, array_task_id = excluded.array_task_id, eligible_time = "
    "excluded.eligible_time, start_time = excluded.start_time, end_time = excluded.end_time, "
    "uid = excluded.uid, gid = excluded.gid, user_name = excluded.user_name, account = "
    "excluded.account, partition_name = excluded.partition_name, qos = excluded.qos, state = "
    "excluded.state, record = excluded.record";
constexpr const char* kJobColumns =
    "SELECT cluster, job_id, submit_time, array_job_id, array_task_id, eligible_time, "
    "start_time, end_time, uid, gid, user_name, account, partition_name, qos, state, record "
    "FROM acct_jobs";

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// The parameters of one statement, $1, $2, ... in the order added. Strings go in binary
// format, which passes their bytes through with their length: a record's NULs survive
// without escaping, and a stray NUL in a name is refused by the server instead of cutting
// the name short. Numbers go as decimal text, typed by the column they meet. Strings are
// referenced, not copied: they must outlive the statement.
class Params {
 public:
  Params& Text(std::string_view v) { return Add(v.data(), v.size(), 1); }
  Params& Bytes(std::string_view v) { return Add(v.data(), v.size(), 1); }
  Params& Int(int64_t v) {
    numbers_.push_back(StrCat(v));
    return Add(numbers_.back().c_str(), numbers_.back().size(), 0);
  }

  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  Params& Add(const char* data, size_t size, int format) {
    // An empty string_view may carry a null pointer, which libpq would read as SQL NULL.
    values_.push_back(data != nullptr ? data : "");
    lengths_.push_back(static_cast<int>(size));
    formats_.push_back(format);
    return *this;
  }

  std::deque<std::string> numbers_;  // a deque keeps each number's address while it grows
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

// Results are asked for in binary format: a text or BYTEA value is its bytes, a BIGINT eight
// bytes in network order.
std::string GetBytes(const PGresult* r, int row, int column) {
  return std::string(PQgetvalue(r, row, column), PQgetlength(r, row, column));
}

int64_t GetInt(const PGresult* r, int row, int column) {
  const char* v = PQgetvalue(r, row, column);
  if (PQgetlength(r, row, column) == 4) {
    uint32_t n;
    std::memcpy(&n, v, sizeof n);
    return static_cast<int32_t>(be32toh(n));
  }
  uint64_t n = 0;
  if (PQgetlength(r, row, column) == 8) std::memcpy(&n, v, sizeof n);
  return static_cast<int64_t>(be64toh(n));
}

// libpq's messages end in a newline and may span lines ("...\n\tIs the server running...");
// a Status reads as one line.
std::string OneLine(const char* text) {
  std::string out;
  for (const char* p = text != nullptr ? text : ""; *p != '\0'; ++p) {
    const bool space = *p == '\n' || *p == '\t' || *p == ' ';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : *p;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

class PgsqlAcctStore final : public AcctStore {
 public:
  explicit PgsqlAcctStore(PgsqlAcctOptions options) : options_(std::move(options)) {}
  ~PgsqlAcctStore() override {
    if (conn_ != nullptr) PQfinish(conn_);
  }
  PgsqlAcctStore(const PgsqlAcctStore&) = delete;
  PgsqlAcctStore& operator=(const PgsqlAcctStore&) = delete;

  Status Open() override {
    if (conn_ == nullptr) RETURN_IF_ERROR(Connect());
    return WithReconnect("checking the accounting schema", [&] { return Migrate(); });
  }

  Status UpsertJobs(const std::vector<AcctJobRow>& rows) override {
    if (rows.empty()) return absl::OkStatus();
    return WithReconnect("storing job records", [&] {
      return InTransaction("storing job records", [&]() -> Status {
        for (const AcctJobRow& r : rows) {
          Params p;
          p.Text(r.cluster)
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
              .Bytes(r.record);
          RETURN_IF_ERROR(Exec(kUpsertJobSql, p, StrCat("storing job ", r.job_id)).status());
        }
        return absl::OkStatus();
      });
    });
  }

  StatusOr<std::vector<AcctJobRow>> FindJobs(const AcctJobFilter& f) override {
    std::vector<std::string> where;
    Params p;
    int next = 1;  // the number of the next $n
    // "column IN ($a, $b, ...)" over the next `n` parameters, added by the caller.
    auto in_list = [&](const char* column, size_t n, int first) {
      std::string s = StrCat(column, " IN (");
      for (size_t i = 0; i < n; ++i) s += StrCat(i ? ", $" : "$", first + static_cast<int>(i));
      return s + ")";
    };
    if (!f.cluster.empty()) {
      where.push_back(StrCat("cluster = $", next++));
      p.Text(f.cluster);
    }
    if (!f.job_ids.empty()) {
      // One list of parameters serves both columns.
      where.push_back(StrCat("(", in_list("job_id", f.job_ids.size(), next), " OR ",
                             in_list("array_job_id", f.job_ids.size(), next), ")"));
      for (uint64_t id : f.job_ids) p.Int(static_cast<int64_t>(id));
      next += static_cast<int>(f.job_ids.size());
    }
    if (!f.uids.empty() || !f.users.empty()) {
      std::vector<std::string> either;
      if (!f.uids.empty()) either.push_back(in_list("uid", f.uids.size(), next));
      for (uint32_t u : f.uids) p.Int(u);
      next += static_cast<int>(f.uids.size());
      if (!f.users.empty()) either.push_back(in_list("user_name", f.users.size(), next));
      for (const std::string& u : f.users) p.Text(u);
      next += static_cast<int>(f.users.size());
      where.push_back(StrCat("(", core::Join(either, " OR "), ")"));
    }
    auto texts_in = [&](const char* column, const std::vector<std::string>& values) {
      if (values.empty()) return;
      where.push_back(in_list(column, values.size(), next));
      for (const std::string& v : values) p.Text(v);
      next += static_cast<int>(values.size());
    };
    texts_in("account", f.accounts);
    texts_in("partition_name", f.partitions);
    texts_in("state", f.states);
    if (f.active_to) {
      where.push_back(StrCat("submit_time <= $", next++));
      p.Int(*f.active_to);
    }
    if (f.active_from) {
      where.push_back(StrCat("(end_time = 0 OR end_time >= $", next++, ")"));
      p.Int(*f.active_from);
    }
    std::string sql = kJobColumns;
    if (!where.empty()) sql += " WHERE " + core::Join(where, " AND ");
    sql += " ORDER BY job_id, submit_time";

    return WithReconnect("reading job records", [&]() -> StatusOr<std::vector<AcctJobRow>> {
      ASSIGN_OR_RETURN(ResultPtr res, Exec(sql.c_str(), p, "reading job records"));
      const PGresult* r = res.get();
      std::vector<AcctJobRow> out;
      out.reserve(PQntuples(r));
      for (int i = 0; i < PQntuples(r); ++i) {
        AcctJobRow row;
        row.cluster = GetBytes(r, i, 0);
        row.job_id = static_cast<uint64_t>(GetInt(r, i, 1));
        row.submit_time = GetInt(r, i, 2);
        row.array_job_id = static_cast<uint64_t>(GetInt(r, i, 3));
        row.array_task_id = GetInt(r, i, 4);
        row.eligible_time = GetInt(r, i, 5);
        row.start_time = GetInt(r, i, 6);
        row.end_time = GetInt(r, i, 7);
        row.uid = static_cast<uint32_t>(GetInt(r, i, 8));
        row.gid = static_cast<uint32_t>(GetInt(r, i, 9));
        row.user = GetBytes(r, i, 10);
        row.account = GetBytes(r, i, 11);
        row.partition = GetBytes(r, i, 12);
        row.qos = GetBytes(r, i, 13);
        row.state = GetBytes(r, i, 14);
        row.record = GetBytes(r, i, 15);
        out.push_back(std::move(row));
      }
      return out;
    });
  }

  StatusOr<int64_t> PurgeJobs(int64_t ended_before) override {
    return WithReconnect("purging job records", [&]() -> StatusOr<int64_t> {
      Params p;
      p.Int(ended_before);
      ASSIGN_OR_RETURN(ResultPtr res,
                       Exec("DELETE FROM acct_jobs WHERE end_time > 0 AND end_time < $1", p,
                            "purging job records"));
      return static_cast<int64_t>(std::strtoll(PQcmdTuples(res.get()), nullptr, 10));
    });
  }

  Status ChangeEntities(const std::vector<AcctEntity>& put,
                        const std::vector<AcctEntityKey>& remove) override {
    if (put.empty() && remove.empty()) return absl::OkStatus();
    return WithReconnect("changing entities", [&] {
      return InTransaction("changing entities", [&]() -> Status {
        for (const AcctEntityKey& k : remove) {
          Params p;
          p.Text(k.kind).Text(k.name);
          RETURN_IF_ERROR(Exec("DELETE FROM acct_entities WHERE kind = $1 AND name = $2", p,
                               StrCat("deleting ", k.kind, " ", k.name))
                              .status());
        }
        for (const AcctEntity& e : put) {
          Params p;
          p.Text(e.kind).Text(e.name).Bytes(e.record);
          RETURN_IF_ERROR(Exec("INSERT INTO acct_entities (kind, name, record) VALUES ($1, $2, "
                               "$3) ON CONFLICT (kind, name) DO UPDATE SET record = "
                               "excluded.record",
                               p, StrCat("storing ", e.kind, " ", e.name))
                              .status());
        }
        return absl::OkStatus();
      });
    });
  }

  StatusOr<std::vector<AcctEntity>> ListEntities(std::string_view kind) override {
    return WithReconnect("listing entities", [&]() -> StatusOr<std::vector<AcctEntity>> {
      Params p;
      p.Text(kind);
      ASSIGN_OR_RETURN(
          ResultPtr res,
          Exec("SELECT kind, name, record FROM acct_entities WHERE kind = $1 ORDER BY name", p,
               StrCat("listing ", kind, " entities")));
      std::vector<AcctEntity> out;
      for (int i = 0; i < PQntuples(res.get()); ++i) {
        out.push_back(
            {GetBytes(res.get(), i, 0), GetBytes(res.get(), i, 1), GetBytes(res.get(), i, 2)});
      }
      return out;
    });
  }

  StatusOr<std::vector<AcctEntity>> ListEntitiesBetween(std::string_view kind,
                                                        std::string_view from,
                                                        std::string_view to) override {
    return WithReconnect("listing entities", [&]() -> StatusOr<std::vector<AcctEntity>> {
      Params p;
      p.Text(kind);
      p.Text(from);
      p.Text(to);
      // Byte order whatever the database's collation, as the SQLite store compares.
      ASSIGN_OR_RETURN(
          ResultPtr res,
          Exec("SELECT kind, name, record FROM acct_entities WHERE kind = $1 AND name "
               "COLLATE \"C\" >= $2 AND name COLLATE \"C\" < $3 ORDER BY name COLLATE \"C\"",
               p, StrCat("listing ", kind, " entities")));
      std::vector<AcctEntity> out;
      for (int i = 0; i < PQntuples(res.get()); ++i) {
        out.push_back(
            {GetBytes(res.get(), i, 0), GetBytes(res.get(), i, 1), GetBytes(res.get(), i, 2)});
      }
      return out;
    });
  }

  std::string Location() const override {
    return StrCat(options_.host.empty() ? "localhost" : options_.host, ":", options_.port, "/",
                  options_.database);
  }

 private:
  Status Connect() {
    const std::string port = StrCat(options_.port);
    const std::string timeout = StrCat(options_.connect_timeout_s);
    std::vector<const char*> keys;
    std::vector<const char*> values;
    auto set = [&](const char* key, const std::string& value) {
      if (value.empty()) return;  // libpq's default (its environment variable, then built-in)
      keys.push_back(key);
      values.push_back(value.c_str());
    };
    set("host", options_.host);
    set("port", port);
    set("user", options_.user);
    set("password", options_.password);
    set("dbname", options_.database);
    set("connect_timeout", timeout);
    // Names and states are UTF-8 in Loom; the server must not convert them.
    const std::string encoding = "UTF8";
    set("client_encoding", encoding);
    const std::string application = "loom-accounting";
    set("application_name", application);
    keys.push_back(nullptr);
    values.push_back(nullptr);
    conn_ = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/0);
    if (conn_ == nullptr) {
      return absl::ResourceExhaustedError(
          StrCat("accounting store ", Location(), ": libpq could not allocate a connection"));
    }
    // Without a processor libpq prints the server's notices and warnings on stderr; they
    // belong in the daemon's log.
    PQsetNoticeProcessor(conn_, &PgsqlAcctStore::OnNotice, this);
    if (PQstatus(conn_) != CONNECTION_OK) {
      return absl::UnavailableError(
          StrCat("accounting store ", Location(),
                 ": cannot connect to PostgreSQL: ", OneLine(PQerrorMessage(conn_)),
                 " (check that the server runs there and accepts this user, and that the "
                 "database exists, as slurmdbd.conf's StorageHost, StoragePort, StorageUser, "
                 "StoragePass and StorageLoc say)"));
    }
    return absl::OkStatus();
  }

  static void OnNotice(void* self, const char* message) {
    core::LogAt(core::LogLevel::kVerbose, "accounting store {}: PostgreSQL: {}",
                static_cast<PgsqlAcctStore*>(self)->Location(), OneLine(message));
  }

  // Runs `op`, one whole method (its transaction from BEGIN to COMMIT), on a live connection.
  // When the connection is down before it starts or is lost while it runs, the connection is
  // reset once and `op` runs again from the start. Running an operation twice is safe even
  // when its COMMIT was lost in flight: each one writes every row it names, whole, by key.
  template <typename Op>
  auto WithReconnect(std::string_view doing, Op op) -> decltype(op()) {
    bool reset = false;
    if (PQstatus(conn_) != CONNECTION_OK) {
      reset = true;
      PQreset(conn_);
      if (PQstatus(conn_) != CONNECTION_OK) return Unreachable(doing);
    }
    lost_ = false;
    auto result = op();
    if (result.ok() || !lost_ || reset) return result;
    PQreset(conn_);
    if (PQstatus(conn_) != CONNECTION_OK) return Unreachable(doing);
    lost_ = false;
    result = op();
    if (!result.ok() && lost_) return Unreachable(doing);
    return result;
  }

  Status Unreachable(std::string_view doing) const {
    return absl::UnavailableError(
        StrCat("accounting store ", Location(), ": lost the PostgreSQL server while ", doing,
               ", and reconnecting once did not help: ", OneLine(PQerrorMessage(conn_)),
               " (check that the server runs and accepts connections there, as slurmdbd.conf's "
               "StorageHost, StoragePort and StorageLoc say; the next call tries again)"));
  }

  // Runs `body` between BEGIN and COMMIT; rolls back when either fails.
  template <typename Body>
  Status InTransaction(std::string_view doing, Body body) {
    RETURN_IF_ERROR(Exec("BEGIN", {}, StrCat(doing, ": beginning a transaction")).status());
    Status s = body();
    if (s.ok()) s = Exec("COMMIT", {}, StrCat(doing, ": committing")).status();
    if (!s.ok() && PQtransactionStatus(conn_) != PQTRANS_IDLE) {
      // The first error is the one to report; a failed rollback ends with the connection.
      (void)Exec("ROLLBACK", {}, StrCat(doing, ": rolling back"));
    }
    return s;
  }

  // Runs one statement; its rows, if any, come back in binary format.
  StatusOr<ResultPtr> Exec(const char* sql, const Params& p, std::string_view doing) {
    ResultPtr res(PQexecParams(conn_, sql, p.size(), /*paramTypes=*/nullptr, p.values(),
                               p.lengths(), p.formats(), /*resultFormat=*/1));
    const ExecStatusType st = res != nullptr ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return res;
    return Error(res.get(), doing);
  }

  // The error of a failed statement as a Status: what failed, where, and what to do where the
  // server's SQLSTATE says. Marks the connection lost when it is.
  Status Error(const PGresult* res, std::string_view doing) {
    const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    const std::string sqlstate = state != nullptr ? state : "";
    std::string what =
        res != nullptr ? OneLine(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)) : "";
    if (what.empty()) what = OneLine(PQerrorMessage(conn_));
    // Class 08 is a connection failure; 57P01..57P03 a server shutting down or starting up.
    if (PQstatus(conn_) != CONNECTION_OK || sqlstate.starts_with("08") ||
        sqlstate.starts_with("57P0")) {
      lost_ = true;
      return absl::UnavailableError(StrCat("accounting store ", Location(),
                                           ": lost the connection while ", doing, ": ", what));
    }
    std::string text = StrCat("accounting store ", Location(), ": ", doing, " failed: ", what);
    if (!sqlstate.empty()) text += StrCat(" (SQLSTATE ", sqlstate, ")");
    if (sqlstate == "53100") {
      return absl::ResourceExhaustedError(
          StrCat(text,
                 "; the server's disk is full: free space where its data directory "
                 "lives, then retry"));
    }
    if (sqlstate == "25006") {
      return absl::FailedPreconditionError(
          StrCat(text,
                 "; the database is read-only (a standby, or default_transaction_read_only "
                 "is on): point StorageHost at the primary, or make the database writable"));
    }
    if (sqlstate.starts_with("22")) {
      return absl::InvalidArgumentError(
          StrCat(text,
                 "; the server refuses the value as given (PostgreSQL's text holds no NUL "
                 "byte and must be valid UTF-8)"));
    }
    if (sqlstate == "42501") {
      return absl::PermissionDeniedError(
          StrCat(text, "; grant StorageUser rights on the database and its tables"));
    }
    // Serialization failures, deadlocks, lock timeouts, too many connections, out of memory:
    // the next attempt may succeed.
    if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03" ||
        sqlstate.starts_with("53")) {
      return absl::UnavailableError(text);
    }
    return absl::InternalError(text);
  }

  // The schema's version; 0 for a new, empty database. Refuses a database that holds tables
  // but is not a Loom accounting store.
  StatusOr<int> Version() {
    ASSIGN_OR_RETURN(ResultPtr tables,
                     Exec("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()", {},
                          "reading the database's tables"));
    bool has_meta = false;
    for (int i = 0; i < PQntuples(tables.get()); ++i) {
      if (GetBytes(tables.get(), i, 0) == "loom_acct_meta") has_meta = true;
    }
    if (!has_meta) {
      if (PQntuples(tables.get()) > 0) {
        return absl::FailedPreconditionError(
            StrCat("accounting store ", Location(),
                   " is not a Loom accounting store (it has other tables); give StorageLoc a "
                   "new database"));
      }
      return 0;
    }
    ASSIGN_OR_RETURN(ResultPtr meta, Exec("SELECT key, value FROM loom_acct_meta", {},
                                          "reading the schema version"));
    std::string application;
    int version = -1;
    for (int i = 0; i < PQntuples(meta.get()); ++i) {
      const std::string key = GetBytes(meta.get(), i, 0);
      if (key == "application") application = GetBytes(meta.get(), i, 1);
      if (key == "schema_version") {
        version = static_cast<int>(core::ParseInt(GetBytes(meta.get(), i, 1)).value_or(-1));
      }
    }
    if (application != kAcctApplication || version < 1) {
      return absl::FailedPreconditionError(
          StrCat("accounting store ", Location(),
                 " is not a Loom accounting store (no schema version); give StorageLoc a new "
                 "database"));
    }
    return version;
  }

  Status Migrate() {
    const int target = options_.schema_version_for_testing > 0 ? options_.schema_version_for_testing
                                                               : kAcctSchemaVersion;
    return InTransaction("checking the accounting schema", [&]() -> Status {
      RETURN_IF_ERROR(Exec(StrCat("SELECT pg_advisory_xact_lock(", kMigrationLockKey, ")").c_str(),
                           {}, "waiting for another loomdbd to finish upgrading the schema")
                          .status());
      ASSIGN_OR_RETURN(const int version, Version());
      if (version > kAcctSchemaVersion) {
        return absl::FailedPreconditionError(StrCat("accounting store ", Location(),
                                                    " was written by a newer Loom (accounting "
                                                    "schema ",
                                                    version, "; this build knows up to ",
                                                    kAcctSchemaVersion,
                                                    "); run that version's loomdbd"));
      }
      for (int v = version + 1; v <= target; ++v) {
        for (const std::string& sql : AcctSchemaStep(v, "BYTEA")) {
          RETURN_IF_ERROR(
              Exec(sql.c_str(), {}, StrCat("upgrading the schema to version ", v)).status());
        }
      }
      if (version < target) {
        const std::string v = StrCat(target);
        Params p;
        p.Text("application").Text(kAcctApplication).Text("schema_version").Text(v);
        RETURN_IF_ERROR(Exec("INSERT INTO loom_acct_meta (key, value) VALUES ($1, $2), ($3, $4) "
                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                             p, "recording the schema version")
                            .status());
      }
      return absl::OkStatus();
    });
  }

  const PgsqlAcctOptions options_;
  PGconn* conn_ = nullptr;
  // Set by Error when a statement failed because the connection is gone; WithReconnect
  // clears it before each attempt.
  bool lost_ = false;
};

}  // namespace

StatusOr<std::unique_ptr<AcctStore>> OpenPgsqlAcctStore(PgsqlAcctOptions options) {
  auto store = std::make_unique<PgsqlAcctStore>(std::move(options));
  RETURN_IF_ERROR(store->Open());
  return std::unique_ptr<AcctStore>(std::move(store));
}

}  // namespace loom::store
