// loomd's side of loom-stepd: starts one supervisor per batch job, passes it signals and
// termination over its socket, learns how jobs ended from their result files, and, after a
// restart of loomd, finds the supervisors still running (Recover) so that their jobs carry
// on and are reported when they end.
//
// Thread-compatible: loomd serialises calls (one mutex). Never waits on processes other
// than the short-lived one it forks to detach each supervisor (by its pid).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "loom/v1/loom.pb.h"
#include "noded/launcher.h"
#include "stepd/control.h"
#include "stepd/records.h"

namespace loom::stepd {

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
  StepdLauncher(const StepdLauncher&) = delete;
  StepdLauncher& operator=(const StepdLauncher&) = delete;

  // Writes `req` for the job's supervisor, starts loom-stepd detached (its own session,
  // not loomd's child) and waits until it says the script runs, or why it could not start
  // it (that error is returned; the job's directory is then removed). AlreadyExists while
  // a supervisor of the job runs.
  Status Start(const v1::LaunchBatchRequest& req);
  // `sig` to the job's processes. NotFound for a job without a supervisor here.
  Status Signal(uint64_t job_id, int sig);
  // SIGTERM, and SIGKILL after kill_wait_s. NotFound for a job without a supervisor here.
  Status Terminate(uint64_t job_id, int64_t kill_wait_s);

  // Jobs that ended since the last call: those whose result appeared, and those whose
  // supervisor died without one (reported as killed; the job's processes, if any are left,
  // are killed). Each job is returned once; its directory stays until Forget.
  std::vector<noded::FinishedJob> Reap();
  // The controller has the job's end: its directory goes.
  void Forget(uint64_t job_id);
  // Adopts every supervisor directory of this node under the spool: after a restart of
  // loomd, jobs that still run and jobs that ended meanwhile. Returns the adopted jobs.
  std::vector<uint64_t> Recover();

  bool IsRunning(uint64_t job_id) const;
  // The pid of job_id's batch script (the leader of its session) while it runs; 0 when the
  // job does not run here or its supervisor has not recorded it yet.
  pid_t ScriptPid(uint64_t job_id) const;
  // Jobs whose end has not been returned by Reap, ascending.
  std::vector<uint64_t> Running() const;

 private:
  struct Entry {
    PidRecord pids;  // zero until read
    bool reaped = false;
  };
  StepdPaths PathsFor(uint64_t job_id) const;
  Status Ask(uint64_t job_id, const ControlRequest& request);

  StepdLauncherOptions opt_;
  std::map<uint64_t, Entry> jobs_;
};

}  // namespace loom::stepd
