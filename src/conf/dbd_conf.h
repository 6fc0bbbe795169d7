// slurmdbd.conf, as Slurm's accounting daemon reads it beside slurm.conf: where loomdbd
// listens and where it keeps its records.
//
//   DbdHost=name  DbdAddr=address  DbdPort=6819     where the daemon listens
//   StorageType=accounting_storage/sqlite|mysql|pgsql  (mysql is refused: Loom has no
//                MySQL backend; sqlite is Loom's embedded default)
//   StorageHost, StoragePort, StorageUser, StoragePass  the PostgreSQL server
//   StorageLoc   SQLite: the database file; PostgreSQL: the database name
//   SlurmUser    who the daemon runs as, and who may send it job records
//   LogFile, PidFile, DebugLevel, PurgeJobAfter
//   AuthInfo=socket=PATH  the MUNGE socket;  PrivateData=jobs,users,accounts  what only
//                admins and the records' owners see
//
// Keys are case-insensitive; `#` starts a comment. Keys Slurm knows that Loom does not act
// on are warnings; unknown keys and bad values are errors naming file:line. Pure functions
// (LoadDbdConf apart, which reads a file); thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "conf/diagnostic.h"
#include "core/log.h"
#include "core/status.h"

namespace loom::conf {

enum class AcctStorageType { kSqlite, kPgsql };

struct DbdConfig {
  std::string dbd_host = "localhost";
  std::string dbd_addr;  // empty: dbd_host
  int32_t dbd_port = 6819;
  AcctStorageType storage_type = AcctStorageType::kSqlite;
  std::string storage_host = "localhost";
  int32_t storage_port = 0;  // 0: the backend's default (PostgreSQL: 5432)
  std::string storage_user;
  std::string storage_pass;
  std::string storage_loc;  // empty: the backend's default
  std::string slurm_user = "root";
  std::string log_file;
  std::string pid_file;
  core::LogLevel debug_level = core::LogLevel::kInfo;
  int64_t purge_job_after_s = 0;  // 0: keep forever
  std::string munge_socket;       // AuthInfo=socket=PATH; empty: libmunge's default
  // PrivateData's kinds, lower-cased (jobs, usage, accounts, users, all).
  std::vector<std::string> private_data;
  bool Private(std::string_view kind) const;
};

StatusOr<DbdConfig> ParseDbdConf(std::string_view text, std::string_view file_name,
                                 std::vector<Diagnostic>* warnings);
// The file at `path`. NotFound when there is none.
StatusOr<DbdConfig> LoadDbdConf(const std::string& path, std::vector<Diagnostic>* warnings);

}  // namespace loom::conf
