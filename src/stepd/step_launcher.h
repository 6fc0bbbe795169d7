// The tasks of jobs srun submitted, on this node. For each such job the node runs its block
// of the step's tasks, as the job's user, each in a process group of its own with pipes for
// stdout and stderr (unless -o/-e name per-task files), and keeps one connection to srun
// (StepIo frames, proto/loom/v1/loom.proto): a hello with the job's key, then the tasks'
// output as it comes, cut at line ends so that lines of different tasks never mix, then each
// task's exit once its output is all sent. The job ends on this node when every task has
// ended and srun has been told; Reap() then reports the node's share of the step's status.
//
// If srun goes away (its connection breaks), the node ends the tasks (SIGTERM, then SIGKILL
// after KillWait): nobody would see their output or their exit.
//
// Thread-safe: the daemon's RPC threads call Start, Signal and Terminate, its loop thread
// calls Reap. Each job's I/O and reaping run on a thread of the job's own. As with
// BatchLauncher, the daemon must leave SIGCHLD alone and never wait(-1).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "core/status.h"
#include "model/job.h"
#include "stepd/cgroup/cgroup.h"
#include "stepd/job_env.h"
#include "stepd/launcher.h"

namespace loom::stepd {

// One node's share of srun's step.
struct StepJob {
  // The job as for a batch script: identity, allocation (node_index is this node; tasks_per_node
  // the step's layout, or empty for TasksPerNode()), environment, working directory. The
  // script fields are not used.
  BatchJob job;
  std::vector<std::string> argv;  // the command; a name without '/' is looked up in PATH
  std::string io_host;            // where srun listens
  int32_t io_port = 0;
  std::string io_key;
  bool unbuffered = false;
  // Files each task opens, patterns expanded per task (%t %n %N %j %u %x ...); empty: the
  // stream goes to srun (stdin: /dev/null). Equal stdout and stderr patterns share one file.
  std::string stdout_pattern;
  std::string stderr_pattern;
  std::string stdin_pattern;
  // Set for a step inside the job's allocation (srun from a batch script or a salloc shell):
  // its id, nodes and this node's tasks. Unset: the job's only step (a job srun submitted),
  // its tasks a block of the job's layout.
  std::optional<StepPlacement> placement;
  BindingOptions binding;  // --cpu-bind, --gpu-bind, --gpus-per-task
  std::string node_cpus;   // the CPUs the job holds on this node ("0-7"); empty: unknown
  // The job's only step (no placement): how its task ids map onto the job's nodes (-m).
  model::Distribution distribution = model::Distribution::kBlock;
  // For MPI wire-up (mpi/wire_up.h): the loomd of each of the step's nodes, in the step's
  // order, and TreeWidth; empty when the step asked for none.
  std::vector<std::string> node_addresses = {};
  int32_t tree_width = 0;
};

class WireUp;  // mpi/wire_up.h
// Starts the step's MPI wire-up on this node, once srun has been reached and before the
// tasks start; null when the step asks for none.
using StartWireUpFn = std::function<StatusOr<std::unique_ptr<WireUp>>()>;

// A step whose tasks have all ended on this node: the job's only step (step_id unset) or a
// step inside the job's allocation.
struct FinishedStep : FinishedJob {
  std::optional<uint32_t> step_id;
  // From the step's cgroup when it was confined (0 otherwise): the CPU time of every process
  // that ran in it. user_cpu_us and system_cpu_us add up the tasks'; max_rss_bytes is the
  // cgroup's peak, or the largest task's.
  int64_t cgroup_cpu_us = 0;
};

// Cuts the bytes one task writes to one stream into the Output payloads srun gets: whole
// lines (a line longer than `max_chunk` in pieces of that size), or with `unbuffered` the
// bytes as they came. Thread-compatible.
class OutputChunker {
 public:
  explicit OutputChunker(bool unbuffered = false, size_t max_chunk = 64 << 10)
      : unbuffered_(unbuffered), max_chunk_(max_chunk) {}
  // The bytes just read; returns what is ready to send, in order.
  std::vector<std::string> Add(std::string_view bytes);
  // At the end of the stream: the last line, when it had no newline.
  std::optional<std::string> Flush();

 private:
  bool unbuffered_;
  size_t max_chunk_;
  std::string pending_;
};

// Where a command runs from: `name` itself when it holds a '/', else the first executable file
// of that name in the directories of `path` (relative ones taken from `work_dir`); `name`
// unchanged when none has it (its exec then fails as Slurm's does: "No such file or
// directory", exit code 2).
std::string FindCommand(const std::string& name, const std::string& path,
                        const std::string& work_dir);

// The cgroup a step's tasks on this node run in (cgroup.conf; see noded/cgroup/cgroup.h),
// made for `step` ("0", "1", ... or "srun" for a job srun submitted); null: not confined.
using ConfineStep = std::function<StatusOr<std::unique_ptr<StepCgroup>>(const StepJob& step,
                                                                       const std::string& name)>;

class StepLauncher {
 public:
  // `io_timeout_ms`: how long a write to srun may make no progress before srun counts as gone.
  // `confine`, when set, gives each step its cgroup: the tasks join it before they take the
  // job's user; once they have all ended, an OOM kill in it marks the step out of memory,
  // what is left in it is killed and it is removed.
  explicit StepLauncher(NodeSettings settings, int io_timeout_ms = 120000,
                        ConfineStep confine = {});
  // Stops forwarding output and joins the I/O threads; tasks still running are left running.
  ~StepLauncher();
  StepLauncher(const StepLauncher&) = delete;
  StepLauncher& operator=(const StepLauncher&) = delete;

  // Connects to srun, says hello, and starts this node's tasks. Errors, each naming the job:
  // fields that disagree (ValidateBatchJob), a job already running here, srun unreachable,
  // the user unknown here or not loomd's own when loomd is not root, pipes or fork failing.
  // On an error after the connection, srun is told why (a Failure frame) and nothing of the
  // job is left running. A task whose command cannot be run still starts: it writes
  // "loom-stepd: error: execve(): CMD: REASON" to its stderr and exits with the errno.
  // `wire_up`, when set, starts the step's MPI wire-up: each task's environment gets what it
  // adds, and it is stopped once the tasks have all ended.
  Status Start(const StepJob& step, const StartWireUpFn& wire_up = {});
  // Sends `sig` to every task's process group: of step `step` of the job, or of all its
  // steps when unset. NotFound when no such step runs here.
  Status Signal(model::JobId job, int sig, std::optional<uint32_t> step = std::nullopt);
  // SIGCONT and SIGTERM to every task (of `step`, or of all the job's steps), SIGKILL once
  // kill_wait_s seconds have passed (at once when <= 0); a second call keeps the earlier
  // deadline. NotFound when no such step runs here.
  Status Terminate(model::JobId job, int64_t kill_wait_s,
                   std::optional<uint32_t> step = std::nullopt);
  // The steps whose tasks have all ended here since the last call (their exits sent to srun,
  // or srun gone), each with the tasks' wait statuses added up by srun's rule
  // (model::StepStatus). Never blocks.
  std::vector<FinishedStep> Reap();

  // Readable (an eventfd) once a step has finished since it was last read, so that a
  // caller waiting for Reap need not poll; -1 when it could not be made.
  int finished_fd() const;

  // Whether some step of `job` (or step `step` of it) runs here.
  bool IsRunning(model::JobId job, std::optional<uint32_t> step = std::nullopt) const;

  // The tasks of `job` (every job's for 0) that still run here: their job, step (unset: the
  // job's only step, for a job srun submitted), task id and pid (the leader of the task's
  // session).
  struct TaskPid {
    model::JobId job_id = 0;
    std::optional<uint32_t> step_id;
    int32_t task = 0;
    pid_t pid = 0;
  };
  std::vector<TaskPid> TaskPids(model::JobId job) const;

 private:
  struct Task;
  struct Step;
  // The I/O thread of `step`: forwards output, reaps tasks, sends exits, then marks the step
  // finished.
  void RunIo(Step* step);
  Status TerminateLocked(Step& step, int64_t kill_wait_s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const NodeSettings settings_;
  const int io_timeout_ms_;
  const ConfineStep confine_;
  const int finished_fd_;
  mutable core::Mutex mu_;
  // By job and step (unset: the job's only step).
  using StepKey = std::pair<model::JobId, std::optional<uint32_t>>;
  std::map<StepKey, std::unique_ptr<Step>> steps_ ABSL_GUARDED_BY(mu_);
  // The steps of `job` (of step `step` only, when set) that have not finished.
  std::vector<Step*> Matching(model::JobId job, std::optional<uint32_t> step) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
};

}  // namespace loom::stepd
