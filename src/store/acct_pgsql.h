// The accounting store on a PostgreSQL server, for sites that keep accounting in a database
// they already run (slurmdbd.conf's StorageHost, StoragePort, StorageUser, StoragePass and
// StorageLoc name it). One libpq connection; each write is one transaction, committed before
// the call returns. A connection found lost (the server restarted, a network blip) is reset
// and the call run again once, so a server restart between two calls goes unnoticed; a server
// that stays away fails the call with Unavailable, and the next call tries again.
// Thread-compatible.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "store/acct_store.h"

namespace loom::store {

// Where the database is, as slurmdbd.conf names it. An empty string leaves the setting to
// libpq's defaults (PGHOST, PGUSER, ... then the local socket and the process's user).
struct PgsqlAcctOptions {
  std::string host;      // StorageHost: a host name, an address or a unix-socket directory
  int port = 5432;       // StoragePort
  std::string user;      // StorageUser
  std::string password;  // StoragePass
  std::string database;  // StorageLoc
  int connect_timeout_s = 10;
  // For tests: stop the schema at this version (0: this build's), to test upgrades.
  int schema_version_for_testing = 0;
};

// Connects and opens (creating or upgrading) the store.
StatusOr<std::unique_ptr<AcctStore>> OpenPgsqlAcctStore(PgsqlAcctOptions options);

}  // namespace loom::store
