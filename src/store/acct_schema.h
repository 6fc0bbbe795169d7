// The accounting store's schema, one list of versioned steps that both implementations run
// (acct_sqlite.cc, acct_pgsql.cc), so their tables agree. Step N brings a store at version
// N-1 to version N; the version is kept in the table loom_acct_meta (key 'schema_version'),
// next to key 'application' = kAcctApplication, which marks the database as Loom's.
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loom::store {

// The schema this build writes.
inline constexpr int kAcctSchemaVersion = 3;
inline constexpr std::string_view kAcctApplication = "loom-accounting";

// The statements of step `version` (1..kAcctSchemaVersion), with `blob_type` as the
// backend's name for a byte string (SQLite: BLOB; PostgreSQL: BYTEA).
std::vector<std::string> AcctSchemaStep(int version, std::string_view blob_type);

}  // namespace loom::store
