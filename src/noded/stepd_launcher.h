// loomd's side of loom-stepd: starts one supervisor per batch job and one per step's share
// of tasks on the node, passes them signals and termination over their sockets, learns how
// they ended from their result files, and, after a restart of loomd, finds the supervisors
// still running (Recover) so that their jobs and steps carry on and are reported when they
// end.
//
// Thread-safe: a launch that waits for its supervisor (a step's connects to srun first)
// holds no lock meanwhile, so signals, reaping and other launches go on. Never waits on
// processes other than the short-lived one it spawns to detach each supervisor (by its pid).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "core/status.h"
#include "hw/hardware.h"
#include "loom/v1/loom.pb.h"
#include "stepd/control.h"
#include "stepd/launcher.h"
#include "stepd/records.h"

namespace loom::noded {

struct StepdLauncherOptions {
  std::string stepd_path;  // the loom-stepd binary
  std::string spool;       // loomd's spool directory
  std::string node;        // this node's name (several loomd may share a host)
  std::string slurm_conf;  // handed to loom-stepd, which reads cgroup.conf beside it
  int ready_timeout_s = 60;
};

class StepdLauncher {
 public:
  explicit StepdLauncher(StepdLauncherOptions options);
  ~StepdLauncher();
  StepdLauncher(const StepdLauncher&) = delete;
  StepdLauncher& operator=(const StepdLauncher&) = delete;

  // Writes `req` for the job's supervisor, starts loom-stepd detached (its own session,
  // not loomd's child) and waits until it says the script runs, or why it could not start
  // it (that error is returned; the supervisor's directory is then removed). AlreadyExists
  // while a supervisor of the job's script runs.
  Status Start(const v1::LaunchBatchRequest& req);
  // The same for this node's share of the step `req` launches (the tasks of a job srun
  // submitted, or a step inside a job's allocation): the supervisor has connected to srun
  // and started the tasks when this returns.
  Status StartStep(const v1::LaunchTasksRequest& req);
  // Leaves what loomd found on the host for the supervisors it starts from now on
  // (HardwarePath; written atomically).
  Status WriteHardware(const v1::NodeHardware& hardware);

  // `sig` to what `ref`'s supervisor runs. NotFound when it does not run here.
  Status Signal(const stepd::StepRef& ref, int sig);
  // SIGTERM, and SIGKILL after kill_wait_s. NotFound when it does not run here.
  Status Terminate(const stepd::StepRef& ref, int64_t kill_wait_s);

  // A supervised script or step that ended, and how.
  struct Ended {
    stepd::StepRef ref;
    stepd::FinishedJob how;
  };
  // What ended since the last call: those whose result appeared, and those whose supervisor
  // died without one (reported as killed; what is left of their processes is killed). Each
  // is returned once; its directory stays until Forget.
  std::vector<Ended> Reap();
  // The controller has the end: the directory goes.
  void Forget(const stepd::StepRef& ref);
  // Adopts every supervisor directory of this node under the spool: after a restart of
  // loomd, scripts and steps that still run and those that ended meanwhile. Returns them.
  std::vector<stepd::StepRef> Recover();

  bool IsRunning(const stepd::StepRef& ref) const;
  // The supervisors of `job_id` whose end has not been returned by Reap, ascending.
  std::vector<stepd::StepRef> Of(uint64_t job_id) const;
  // Every supervisor whose end has not been returned by Reap, ascending.
  std::vector<stepd::StepRef> Running() const;
  // The jobs with a supervisor here whose end has not been returned by Reap, ascending.
  std::vector<uint64_t> RunningJobs() const;
  // The pid of job_id's batch script (the leader of its session) while it runs; 0 when the
  // script does not run here or its supervisor has not recorded it yet.
  pid_t ScriptPid(uint64_t job_id) const;
  // The tasks of step `ref` that its supervisor started and that still run.
  std::vector<stepd::TaskRecord> StepTasks(const stepd::StepRef& ref) const;
  // Waits at most `timeout` for one of the running supervisors to exit (each is watched
  // through a pidfd, never waited for), so that its end is reaped at once. Returns at the
  // timeout when none does.
  void WaitForEnd(std::chrono::milliseconds timeout);

 private:
  struct Entry {
    stepd::PidRecord pids;  // zero until read
    bool starting = false;  // its launch waits for the supervisor's word
    bool reaped = false;
    bool running() const { return !starting && !reaped; }
  };
  stepd::StepdPaths PathsFor(const stepd::StepRef& ref) const;
  // Leaves `launch` for `ref`'s supervisor, starts it and waits for its word.
  Status Spawn(const stepd::StepRef& ref, const google::protobuf::MessageLite& launch);
  // Starts the supervisor Spawn prepared and returns its word ("ok", "error ...", or empty
  // when it said nothing in time).
  StatusOr<std::string> StartAndWait(const stepd::StepRef& ref);
  Status Ask(const stepd::StepRef& ref, const stepd::ControlRequest& request);
  bool IsRunningLocked(const stepd::StepRef& ref) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<stepd::StepRef> RunningLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StepdLauncherOptions opt_;
  mutable core::Mutex mu_;
  std::map<stepd::StepRef, Entry> supervised_ ABSL_GUARDED_BY(mu_);
  std::map<stepd::StepRef, int> watched_ ABSL_GUARDED_BY(mu_);  // running supervisors' pidfds
};

}  // namespace loom::noded
