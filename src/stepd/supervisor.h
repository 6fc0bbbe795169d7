// The supervision of one batch job on its node, which loom-stepd's event loop drives: the
// job's cgroup, its script (started by noded::BatchLauncher, joining the cgroup before it
// takes the job's user), signals, termination (SIGTERM, then SIGKILL after KillWait), a
// backstop for the time limit, and, once the script has ended, the result with its usage.
//
// Thread-compatible: one thread (loom-stepd's loop) owns a supervisor.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "noded/cgroup/cgroup.h"
#include "noded/job_env.h"
#include "noded/launcher.h"
#include "stepd/records.h"

namespace loom::stepd {

struct SupervisorOptions {
  noded::BatchJob job;
  noded::NodeSettings settings;
  std::string spool;  // loomd's spool directory: the script goes to SPOOL/jobNNNNN/
  // Where the job's cgroup is made; null: no confinement (no cgroup.conf).
  noded::CgroupSystem* cgroups = nullptr;
  noded::StepLimits limits;
  // The backstop: a job still running this long after its time limit (the controller ends
  // it at the limit) is terminated here, as if the controller had asked.
  int64_t backstop_grace_s = 60;
  // Reads a monotonic clock in milliseconds (the steady clock when empty).
  std::function<int64_t()> monotonic_ms;
};

class BatchSupervisor {
 public:
  explicit BatchSupervisor(SupervisorOptions options);
  BatchSupervisor(const BatchSupervisor&) = delete;
  BatchSupervisor& operator=(const BatchSupervisor&) = delete;

  // Creates the job's cgroup (<scope>/job_<id>/step_batch) with its limits and starts the
  // script in it. On error nothing of the job is left (cgroup removed) and the message says
  // what failed.
  Status Start();
  // The script's pid (its process group and session); 0 before Start.
  pid_t job_pid() const { return pid_; }

  // `sig` to the job's processes. FailedPrecondition once the job has ended.
  Status Signal(int sig);
  // SIGCONT and SIGTERM now, SIGKILL once kill_wait_s has passed (at once when <= 0).
  Status Terminate(int64_t kill_wait_s);

  // Sends what is due (the backstop's SIGTERM, SIGKILLs), then, if the script has ended:
  // kills whatever is left in its cgroup, reads the cgroup's usage, removes the cgroup and
  // returns the result. Returns it once; nullopt while the job runs. Never blocks for long
  // (waits at most a second for killed processes to leave the cgroup).
  std::optional<StepResult> Poll();
  // When Poll must next run for a deadline (monotonic ms); nullopt when none is pending.
  std::optional<int64_t> NextDeadlineMs() const;

 private:
  int64_t NowMs() const;
  StepResult Finish(const noded::FinishedJob& ended);

  SupervisorOptions opt_;
  noded::BatchLauncher launcher_;
  std::unique_ptr<noded::StepCgroup> cgroup_;
  pid_t pid_ = 0;
  bool done_ = false;
  bool timed_out_ = false;
  std::optional<int64_t> backstop_at_ms_;
};

}  // namespace loom::stepd
