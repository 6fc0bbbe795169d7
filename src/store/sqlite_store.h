// The embedded store: one SQLite database, `<StateSaveLocation>/loom.db`, in WAL mode with
// synchronous=FULL, so a batch is on stable storage before Commit() returns. The file is
// held with an exclusive lock for as long as the store is open: one controller per
// StateSaveLocation. Schema, durability argument and error texts: docs/design/store.md.
//
// Thread-compatibility: thread-compatible. The controller calls it from its state-owner
// thread only; the SQLite connection is opened without SQLite's own mutexes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "store/store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace loom::store {

struct SqliteStoreOptions {
  // The directory holding loom.db (slurm.conf's StateSaveLocation). Created, with its
  // parents, if missing.
  std::string state_save_location;
  // How long Open() and Commit() wait for a lock held by another process before failing.
  int busy_timeout_ms = 5000;
  // SQLite's page cache for this connection (PRAGMA cache_size), in KiB. The controller
  // appends and rarely reads back (a submission when its job starts, soon after it was
  // written), so a small cache does; the kernel's page cache keeps the file anyway.
  int cache_kib = 512;
  // Runs SQLite's quick_check over the whole file in Open(), so damage is found on start
  // rather than in the middle of a later Commit(). Linear in the file's size.
  bool verify_on_open = true;

  // For measurement only: synchronous=NORMAL instead of FULL. A commit then survives the
  // process being killed but not a power loss, which breaks Store::Commit()'s contract.
  bool unsafe_skip_fsync_on_commit_for_benchmark = false;
  // For tests: caps the database at this many pages (PRAGMA max_page_count), so a commit
  // that needs more fails exactly as on a full disk. 0: no cap.
  int64_t max_page_count_for_testing = 0;
};

class SqliteStore final : public Store {
 public:
  // The schema this build writes. Open() upgrades files with a lower version (in one
  // transaction) and refuses files with a higher one.
  static constexpr int kSchemaVersion = 3;
  // PRAGMA application_id of a Loom store ("LOOM"), so `file(1)` and Open() can tell.
  static constexpr int32_t kApplicationId = 0x4C4F4F4D;
  static constexpr std::string_view kFileName = "loom.db";

  explicit SqliteStore(SqliteStoreOptions options);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  Status Open() override;
  Status Commit(const Batch& batch) override;
  StatusOr<Snapshot> Recover() override;
  StatusOr<std::string> ReadRequest(model::JobId id) override;
  // The database file's path: `<state_save_location>/loom.db`.
  std::string Location() const override { return path_; }

 private:
  struct Statements;

  Status OpenLocked();
  // The file's schema version; 0 for a new, empty file.
  Status CheckHeader(int64_t* version);
  Status CreateSchema();             // sqlite_schema.cc
  Status Migrate(int64_t from);      // sqlite_schema.cc
  Status Prepare();
  Status Apply(const Mutation& m);
  Status ApplyOne(const PutJob& m);
  Status ApplyOne(const UpdateJob& m);
  Status ApplyOne(const DeleteJob& m);
  Status ApplyOne(const PutRequest& m);
  Status ApplyOne(const DeleteRequest& m);
  Status ApplyOne(const PutNode& m);
  Status ApplyOne(const DeleteNode& m);
  Status ApplyOne(const SetNextJobId& m);
  Status ApplyOne(const PutValue& m);
  Status ApplyOne(const DeleteValue& m);
  Status Exec(const char* sql, std::string_view doing);
  Status StepDone(sqlite3_stmt* stmt, std::string_view doing);
  void RollbackIfOpen();
  void Close();
  // Turns a SQLite result code into a Status saying what failed, where and what to do.
  // `detail` replaces SQLite's own message when given.
  Status Error(int rc, std::string_view doing, std::string_view detail = {}) const;

  const SqliteStoreOptions options_;
  const std::string path_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<Statements> stmts_;
};

// Constructs a SqliteStore for `options` and opens it.
StatusOr<std::unique_ptr<SqliteStore>> OpenSqliteStore(SqliteStoreOptions options);

}  // namespace loom::store
