// Job records as text, for the accounting: what `loom sim --accounting-out` writes and
// `sacctmgr archive load` reads into loomdbd, so that sacct and sreport answer questions about
// a simulated month. The format is sacct's own parsable output (`sacct -a -P -o ...`): a
// header line of sacct field names, then one line per job, fields separated by '|'. So a
// Slurm site's history, dumped with sacct, loads the same way.
//
//   # Cluster=easy TRES=cpu=100,node=1,billing=100
//   Cluster|JobID|JobIDRaw|JobName|User|UID|Account|...|State|ExitCode|NNodes|NCPUS|...
//   easy|1|1|job|u3|3|g2|...|COMPLETED|0:0|1|8|...
//
// Lines starting with '#' are comments; `# Cluster=NAME TRES=...` gives what a cluster has
// (sreport's capacity). Times are sacct's (local time, 2026-09-01T13:00:00), or Unix seconds;
// "Unknown" and "None" are unset. Columns sacct has and the records do not keep (Elapsed,
// CPUTime, ...: they follow from the others) are read past and named in the notes. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "sched/types.h"
#include "sim/simulator.h"

namespace loom::sim {

// One job (an array task, one attempt) as sacct lists it.
struct AccountingRecord {
  std::string cluster;
  uint64_t job_id = 0;         // JobIDRaw
  uint64_t array_job_id = 0;   // 0: not an array task
  int64_t array_task_id = -1;  // -1: none
  std::string name;
  std::string user;
  std::optional<uint32_t> uid;  // unset: the file gives none (the loader looks the user up)
  std::string group;
  std::optional<uint32_t> gid;
  std::string account;
  std::string partition;
  std::string qos;
  int64_t submit = 0;  // Unix seconds; 0: unknown
  int64_t eligible = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t time_limit_s = 0;  // core::kUnlimitedSeconds: UNLIMITED; 0: not given
  std::string state;         // base state: COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  std::optional<uint32_t> cancelled_by;
  int32_t exit_code = 0;  // ExitCode "code:signal"
  int32_t exit_signal = 0;
  int32_t derived_exit_code = 0;  // DerivedExitCode's code
  int32_t nodes = 0;
  int32_t cpus = 0;
  std::string req_tres;
  std::string alloc_tres;
  std::string node_list;
  std::string work_dir;
};

struct AccountingFile {
  std::map<std::string, std::string> cluster_tres;  // `# Cluster=NAME TRES=...` lines
  std::vector<AccountingRecord> records;
  // Lines read past: steps (123.batch, 123.0), and the folded pending tasks of an array
  // (123_[4-10]), which hold no job of their own.
  int64_t skipped_steps = 0;
  int64_t skipped_pending_arrays = 0;
  std::vector<std::string> ignored_columns;  // sacct columns the records do not keep
};

// Writes `file` in the format above (its comment lines, the header, one line per record).
void WriteAccountingFile(std::ostream& os, const AccountingFile& file);

// Reads the format above. `name` is used in messages; errors name name:line and the column.
// A file without a Cluster column gives every record `default_cluster` (which may be empty).
StatusOr<AccountingFile> ParseAccountingFile(std::string_view text, std::string_view name,
                                             std::string_view default_cluster);
// The same, handing each record to `each` in file order instead of keeping it (the result's
// `records` stay empty), so that a large file is read in little memory; the first error
// `each` returns stops the reading and is returned.
StatusOr<AccountingFile> ReadAccountingFile(std::string_view text, std::string_view name,
                                            std::string_view default_cluster,
                                            const std::function<Status(AccountingRecord&&)>& each);

// The records of one simulated run: job j of `jobs` ran as `result.jobs` says, on `cluster`,
// with simulated time 0 at Unix time `epoch`; the records belong to cluster `cluster_name`.
// A job's state is COMPLETED, or FAILED with its exit status.
std::vector<AccountingRecord> SimAccountingRecords(std::string_view cluster_name,
                                                   const sched::Cluster& cluster,
                                                   std::span<const SimJob> jobs,
                                                   const SimResult& result, int64_t epoch);

// What `cluster` has, as a TRES string: "cpu=N,mem=NM,node=N,billing=N,gres/gpu=N".
std::string ClusterTres(const sched::Cluster& cluster);

// A cluster name for a run ("slurm+fairshare" -> "slurm-fairshare", "topo/easy" ->
// "topo-easy"): lower case letters, digits, '-' and '_'.
std::string SimClusterName(std::string_view run);

}  // namespace loom::sim
