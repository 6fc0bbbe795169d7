// What a node's supervisors (loom-stepd) keep on disk so that they outlive loomd: one
// directory per supervisor, made by loomd (mode 0700, so only loomd's user reaches the
// control socket and the result):
//
//   SPOOL/stepd/<node>_job<id>/         a job's batch script
//   SPOOL/stepd/<node>_job<id>.srun/    the tasks of a job srun submitted (its only step)
//   SPOOL/stepd/<node>_job<id>.<step>/  step <step> inside a job's allocation
//
//   launch.pb  what loomd hands over (a LaunchBatchRequest, or a StepdStepLaunch for the
//              tasks of a step); loom-stepd reads and removes it
//   pid        "STEPD_PID STEPD_START JOB_PID JOB_START": who runs, with start times (for a
//              step, JOB_PID and JOB_START are 0: its tasks are listed in `tasks`)
//   tasks      a step's tasks on the node, "TASK PID START" lines (PID leads the task's
//              session)
//   socket     the unix socket loomd talks to loom-stepd over (control.h)
//   result     how it ended (StepResult), written atomically once; loomd removes the
//              directory after the controller has the report
//
// Pure functions over paths and text, plus small file helpers; thread-safe.
#pragma once

#include <sys/types.h>

#include <compare>
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
  std::string tasks;
  std::string socket;
  std::string result;
};

// What one supervisor runs: a job's batch script, the tasks of a job srun submitted (the
// job's only step), or step `step_id` inside a job's allocation.
struct StepRef {
  enum class Kind { kBatch, kOnlyStep, kStep };
  uint64_t job_id = 0;
  Kind kind = Kind::kBatch;
  uint32_t step_id = 0;  // kStep only

  static StepRef Batch(uint64_t job) { return {job, Kind::kBatch, 0}; }
  static StepRef OnlyStep(uint64_t job) { return {job, Kind::kOnlyStep, 0}; }
  static StepRef Step(uint64_t job, uint32_t step) { return {job, Kind::kStep, step}; }
  bool is_batch() const { return kind == Kind::kBatch; }
  // The step id a report of its end carries: set for kStep only.
  std::optional<uint32_t> reported_step() const {
    return kind == Kind::kStep ? std::optional(step_id) : std::nullopt;
  }
  friend auto operator<=>(const StepRef&, const StepRef&) = default;
};
// "job 42", "job 42's tasks" or "step 42.3", for messages.
std::string Describe(const StepRef& ref);
// The value of loom-stepd's --step: "srun", "3"; empty for a batch script.
std::string StepArg(const StepRef& ref);
// The supervisor loom-stepd --job JOB --step ARG runs; InvalidArgument for a bad ARG.
StatusOr<StepRef> ParseStepArg(uint64_t job, std::string_view arg);

// SPOOL/stepd: where every supervisor directory of the node whose spool is `spool` lives.
std::string StepdRoot(const std::string& spool);
// SPOOL/stepd/<node>.hardware: what loomd found on the host (a v1::NodeHardware).
std::string HardwarePath(const std::string& spool, const std::string& node);
// SPOOL/stepd/<node>.relay: loomd's unix socket for its supervisors' MPI wire-up messages
// (v1::StepRelay frames), which it passes to the other nodes of their steps.
std::string RelaySocketPath(const std::string& spool, const std::string& node);
StepdPaths PathsOf(const std::string& spool, const std::string& node, const StepRef& ref);
// The supervisors of `node` that have a directory under StepdRoot(spool), ascending.
std::vector<StepRef> ListSupervised(const std::string& spool, const std::string& node);

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
// A descriptor that becomes readable once process `pid` has ended (pidfd_open; it neither
// waits for nor reaps the process), close-on-exec; -1 when the kernel offers none.
int OpenPidFd(pid_t pid);

struct PidRecord {
  ProcessRef stepd;
  ProcessRef job;  // the batch script, also its process group and session
  friend bool operator==(const PidRecord&, const PidRecord&) = default;
};
std::string FormatPidRecord(const PidRecord& r);
// InvalidArgument naming `where` when `text` is not a pid record.
StatusOr<PidRecord> ParsePidRecord(std::string_view text, std::string_view where);

// One task of a step on the node: its task id and the leader of its session.
struct TaskRecord {
  int32_t task = 0;
  ProcessRef process;
  friend bool operator==(const TaskRecord&, const TaskRecord&) = default;
};
std::string FormatTaskRecords(const std::vector<TaskRecord>& tasks);
// InvalidArgument naming `where` and the line when `text` is not a task list.
StatusOr<std::vector<TaskRecord>> ParseTaskRecords(std::string_view text, std::string_view where);

// How a batch script, or a step's tasks, ended on this node.
struct StepResult {
  uint64_t job_id = 0;
  int32_t wait_status = 0;     // the script's raw status from wait(2); for a step, its tasks'
                               // statuses added up by srun's rule (model::StepStatus)
  bool out_of_memory = false;  // the job's cgroup saw the OOM killer end one of its processes
  bool terminated = false;     // it was asked to end (scancel, time limit, shutdown)
  bool killed = false;         // it outlived KillWait and got SIGKILL
  bool timed_out = false;      // loom-stepd's own time-limit backstop ended it
  int64_t user_cpu_us = 0;     // the script and the children it waited for
  int64_t system_cpu_us = 0;
  int64_t cgroup_cpu_us = 0;  // every process of the job's cgroup; 0 without a cgroup
  int64_t max_rss_bytes = 0;  // the cgroup's peak memory, or the largest process's (rusage)
  friend bool operator==(const StepResult&, const StepResult&) = default;
};
// "key=value" lines.
std::string FormatResult(const StepResult& r);
// InvalidArgument naming `where` and the line for text that is not a result.
StatusOr<StepResult> ParseResult(std::string_view text, std::string_view where);

// Whether a file written by WriteFileAtomic must survive a crash of the node. Files that
// describe this boot's processes (a launch request, a supervisor's pid, its tasks, the
// hardware found) die with them, so syncing them to disk buys nothing: on a virtual machine
// each sync costs the writer about 0.2 ms of CPU, and a job wrote four of them.
enum class Durability {
  kUntilReboot,    // visible to every reader at once; may be lost with the node's power
  kSurvivesCrash,  // on disk once the call returns: fsync of the file and its directory
};
// Writes `data` to `path` so that a reader sees the old file or the whole new one, never a
// part (a temporary file beside it, then rename).
Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode,
                       Durability durability);
// NotFound when `path` does not exist.
StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace loom::stepd
