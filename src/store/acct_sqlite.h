// The embedded accounting store: one SQLite database file (slurmdbd.conf's StorageLoc, or
// `<dir>/loom_acct.db` under a `loom cluster up` directory) in WAL mode with
// synchronous=FULL, so UpsertJobs is on stable storage before it returns. Thread-compatible.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "store/acct_store.h"

namespace loom::store {

struct SqliteAcctOptions {
  std::string path;  // the database file; its directory is created when missing
  int busy_timeout_ms = 5000;
  // For tests: stop the schema at this version (0: this build's), to test upgrades.
  int schema_version_for_testing = 0;
  // For tests: cap the file at this many pages, so writes fail as on a full disk.
  int64_t max_page_count_for_testing = 0;
};

// Opens (creating or upgrading) the store.
StatusOr<std::unique_ptr<AcctStore>> OpenSqliteAcctStore(SqliteAcctOptions options);

}  // namespace loom::store
