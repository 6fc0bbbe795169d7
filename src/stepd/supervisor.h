// What loom-stepd's event loop drives: the supervision of one batch job on its node (the
// job's cgroup, its script started by stepd::BatchLauncher and joining the cgroup before it
// takes the job's user, a backstop for the time limit) or of one node's share of a step
// (its tasks, started and connected to srun by stepd::StepLauncher, in the step's cgroup);
// signals, termination (SIGTERM, then SIGKILL after KillWait) and, once it has ended, the
// result with its usage.
//
// Thread-compatible: one thread (loom-stepd's loop) owns a supervisor.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "stepd/cgroup/cgroup.h"
#include "stepd/job_env.h"
#include "stepd/launcher.h"
#include "stepd/records.h"
#include "stepd/step_launcher.h"

namespace loom::stepd {

struct SupervisorOptions {
  stepd::BatchJob job;
  stepd::NodeSettings settings;
  std::string spool;  // loomd's spool directory: the script goes to SPOOL/jobNNNNN/
  // Where the job's cgroup is made; null: no confinement (no cgroup.conf).
  stepd::CgroupSystem* cgroups = nullptr;
  stepd::StepLimits limits;
  // The backstop: a job still running this long after its time limit (the controller ends
  // it at the limit) is terminated here, as if the controller had asked.
  int64_t backstop_grace_s = 60;
  // What the backstop and the SIGKILL deadlines are timed by; it must outlive the supervisor.
  const core::Clock* clock = &core::RealClock();
};

// What loom-stepd's loop asks of a supervisor, whatever it supervises.
class Supervision {
 public:
  virtual ~Supervision() = default;
  // `sig` to the supervised processes. FailedPrecondition once they have ended.
  virtual Status Signal(int sig) = 0;
  // SIGCONT and SIGTERM now, SIGKILL once kill_wait_s has passed (at once when <= 0).
  virtual Status Terminate(int64_t kill_wait_s) = 0;
  // Sends what is due; once everything supervised has ended, the result (returned once).
  // nullopt while it runs. Never blocks for long.
  virtual std::optional<StepResult> Poll() = 0;
  // When Poll must next run for a deadline (monotonic ms); nullopt when none is pending.
  virtual std::optional<int64_t> NextDeadlineMs() const = 0;
  // A descriptor that becomes readable when Poll has something new (the caller drains it);
  // -1 when Poll must be called on a timer.
  virtual int WakeFd() const { return -1; }
};

class BatchSupervisor final : public Supervision {
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

  Status Signal(int sig) override;
  Status Terminate(int64_t kill_wait_s) override;
  // Sends what is due (the backstop's SIGTERM, SIGKILLs), then, if the script has ended:
  // kills whatever is left in its cgroup, reads the cgroup's usage, removes the cgroup and
  // returns the result. Waits at most a second for killed processes to leave the cgroup.
  std::optional<StepResult> Poll() override;
  std::optional<int64_t> NextDeadlineMs() const override;

 private:
  int64_t NowMs() const;
  StepResult Finish(const stepd::FinishedJob& ended);

  SupervisorOptions opt_;
  stepd::BatchLauncher launcher_;
  std::unique_ptr<stepd::StepCgroup> cgroup_;
  pid_t pid_ = 0;
  bool done_ = false;
  bool timed_out_ = false;
  std::optional<int64_t> backstop_at_ms_;
};

struct StepSupervisorOptions {
  stepd::StepJob step;
  stepd::NodeSettings settings;
  stepd::ConfineStep confine;  // empty: not confined (no cgroup.conf)
  int io_timeout_ms = 120000;  // how long srun may take no output before it counts as gone
  // loomd's socket for MPI wire-up messages to the step's other nodes (RelaySocketPath).
  std::string relay_socket = {};
};

// One node's share of a step: its tasks, their output to srun, their cgroup, their MPI
// wire-up (mpi/wire_up.h). The step's tasks end as they end under loomd
// (stepd::StepLauncher): when srun goes away or a rank aborts they are terminated, an OOM
// kill in the step's cgroup marks the step out of memory.
class StepSupervisor final : public Supervision {
 public:
  explicit StepSupervisor(StepSupervisorOptions options);

  // Connects to srun and starts the tasks; errors as stepd::StepLauncher::Start's (srun has
  // been told, nothing of the step is left running).
  Status Start();
  // The tasks that run now, with their session leaders.
  std::vector<TaskRecord> Tasks() const;

  Status Signal(int sig) override;
  Status Terminate(int64_t kill_wait_s) override;
  // Once every task has ended and srun has its exits: the tasks' statuses added up by
  // srun's rule, and whether the step ran out of memory.
  std::optional<StepResult> Poll() override;
  std::optional<int64_t> NextDeadlineMs() const override { return std::nullopt; }
  int WakeFd() const override { return launcher_.finished_fd(); }

 private:
  std::optional<uint32_t> step_id() const;

  StepSupervisorOptions opt_;
  stepd::StepLauncher launcher_;
  bool terminated_ = false;
  bool done_ = false;
};

}  // namespace loom::stepd
