// What a node's batch-job supervisors (loom-stepd) keep on disk so that it outlives loomd:
// one directory per job, SPOOL/stepd/<node>_job<id>/, made by loomd (mode 0700, so only
// loomd's user reaches the control socket and the result):
//
//   launch.pb  the LaunchBatchRequest loomd hands over; loom-stepd reads and removes it
//   pid        "STEPD_PID STEPD_START JOB_PID JOB_START": who runs, with start times
//   socket     the unix socket loomd talks to loom-stepd over (control.h)
//   result     how the job ended (StepResult), written atomically once; loomd removes the
//              directory after the controller has the report
//
// Pure functions over paths and text, plus small file helpers; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::stepd {

struct StepdPaths {
  std::string dir;
  std::string launch;
  std::string pid;
  std::string socket;
  std::string result;
};

// SPOOL/stepd: where every supervisor directory of the node whose spool is `spool` lives.
std::string StepdRoot(const std::string& spool);
StepdPaths PathsOf(const std::string& spool, const std::string& node, uint64_t job_id);
// The jobs of `node` that have a directory under StepdRoot(spool), ascending.
std::vector<uint64_t> ListJobs(const std::string& spool, const std::string& node);

// A process named by its pid and its start time (clock ticks after boot, field 22 of
// /proc/PID/stat), so that a pid the kernel has since given to another process is not
// taken for it.
struct ProcessRef {
  pid_t pid = 0;
  uint64_t start_time = 0;
  friend bool operator==(const ProcessRef&, const ProcessRef&) = default;
};
// The start time of `pid`; nullopt when no such process exists (or it is a zombie).
std::optional<uint64_t> StartTimeOf(pid_t pid);
// The process that `pid` is now; nullopt when none.
std::optional<ProcessRef> RefOf(pid_t pid);
// Whether `p` still runs: its pid exists, is not a zombie, and started when recorded.
bool IsAlive(const ProcessRef& p);

struct PidRecord {
  ProcessRef stepd;
  ProcessRef job;  // the batch script, also its process group and session
  friend bool operator==(const PidRecord&, const PidRecord&) = default;
};
std::string FormatPidRecord(const PidRecord& r);
// InvalidArgument naming `where` when `text` is not a pid record.
StatusOr<PidRecord> ParsePidRecord(std::string_view text, std::string_view where);

// How a batch job ended on this node.
struct StepResult {
  uint64_t job_id = 0;
  int32_t wait_status = 0;     // the script's raw status from wait(2)
  bool out_of_memory = false;  // the job's cgroup saw the OOM killer end one of its processes
  bool terminated = false;     // it was asked to end (scancel, time limit, shutdown)
  bool killed = false;         // it outlived KillWait and got SIGKILL
  bool timed_out = false;      // loom-stepd's own time-limit backstop ended it
  int64_t user_cpu_us = 0;     // the script and the children it waited for
  int64_t system_cpu_us = 0;
  int64_t cgroup_cpu_us = 0;  // every process of the job's cgroup; 0 without a cgroup
  int64_t max_rss_bytes = 0;  // the cgroup's peak memory; 0 without a cgroup
  friend bool operator==(const StepResult&, const StepResult&) = default;
};
// "key=value" lines.
std::string FormatResult(const StepResult& r);
// InvalidArgument naming `where` and the line for text that is not a result.
StatusOr<StepResult> ParseResult(std::string_view text, std::string_view where);

// Writes `data` to `path` so that a reader sees the old file or the whole new one, never a
// part, and so that it survives a crash once this returns: a temporary file beside it,
// fsync, rename, fsync of the directory.
Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode);
// NotFound when `path` does not exist.
StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace loom::stepd
