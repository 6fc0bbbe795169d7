// Starting, signalling and reaping batch scripts on this node. A job's script runs in a new
// session (its own process group), as the job's user when loomd runs as root, in its working
// directory, with its --output/--error/--input files and the environment of BatchEnvironment().
//
// Thread-compatible: a launcher belongs to the daemon thread that owns the node's job table;
// other threads post to that thread. Nothing here installs signal handlers or waits on
// processes it did not start (Reap waits on each started pid, never on -1). In return the
// daemon must leave SIGCHLD's disposition alone (ignoring it makes the kernel reap scripts
// before Reap can read their status) and must not wait(-1).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/run_program.h"
#include "core/status.h"
#include "model/job.h"
#include "stepd/job_env.h"
#include "stepd/spawn.h"

namespace loom::stepd {

// A batch script that has ended, as Reap reports it.
struct FinishedJob {
  model::JobId job_id = 0;
  pid_t pid = 0;
  int wait_status = 0;      // the raw status from wait(2): WIFEXITED/WEXITSTATUS/WTERMSIG
  bool terminated = false;  // Terminate() was called for it
  bool killed = false;      // it outlived its kill_wait and was sent SIGKILL
  int64_t user_cpu_us = 0;  // CPU time of the script and the children it waited for
  int64_t system_cpu_us = 0;
  // The largest resident set: of the script (or a task) or a child it waited for (rusage),
  // or the cgroup's peak when confined.
  int64_t max_rss_bytes = 0;
  bool out_of_memory = false;  // the job's cgroup saw the OOM killer end one of its processes
};

// The I/O files of a batch script: the patterns expanded for this node. A relative path is
// opened in the job's working directory (or /tmp, when that cannot be entered).
struct JobFiles {
  std::string stdin_path;  // "/dev/null" without --input
  std::string stdout_path;
  std::string stderr_path;  // equal to stdout_path when the two share one file
};

// The files `job` reads and writes; `user` stands for %u when job.user is empty.
JobFiles ExpandJobFiles(const BatchJob& job, const std::string& user);

// What loomd needs from a launcher; tests of the daemon substitute a fake.
class JobLauncher {
 public:
  virtual ~JobLauncher() = default;

  // Starts job's batch script and returns its pid once the script has been exec'd. On error
  // nothing of the job is left running and the message says what failed and where (see
  // BatchLauncher::Start).
  virtual StatusOr<pid_t> Start(const BatchJob& job, const std::string& spool_dir) = 0;
  // Sends `sig` to every process of the job's process group. NotFound for a job that is not
  // running here.
  virtual Status Signal(model::JobId job, int sig) = 0;
  // Sends SIGCONT and SIGTERM to the job's processes and SIGKILL once kill_wait_s seconds have
  // passed with the script still running (at once when kill_wait_s <= 0). Returns at once; the
  // SIGKILL is sent by the first Reap() after the deadline. A second call keeps the earlier
  // deadline. NotFound for a job that is not running here.
  virtual Status Terminate(model::JobId job, int64_t kill_wait_s) = 0;
  // Sends due SIGKILLs, then collects every script that has ended since the last call, without
  // blocking. Processes a script left behind in its process group are killed when it ends.
  virtual std::vector<FinishedJob> Reap() = 0;
};

class BatchLauncher final : public JobLauncher {
 public:
  // The SIGKILL deadlines of Terminate are kept on `clock`'s monotonic time; it must outlive
  // the launcher.
  explicit BatchLauncher(NodeSettings settings, const core::Clock& clock = core::RealClock());
  // Leaves running jobs running: they belong to the node, not to this object.
  ~BatchLauncher() override = default;
  BatchLauncher(const BatchLauncher&) = delete;
  BatchLauncher& operator=(const BatchLauncher&) = delete;

  // Writes the script to SPOOL/jobNNNNN/slurm_script (directory and file mode 0700, owned by
  // the job's user; SPOOL is created 0755 when missing), then forks. The child starts a new
  // session; when loomd runs as root it takes the job's supplementary groups, gid and uid
  // (root's jobs run as root); it enters the working directory, or /tmp with an error line in
  // the job's stderr when it cannot; it opens stdin, stdout and stderr as the user (created
  // 0644 under the job's SLURM_UMASK, appended or truncated per the open mode); it resets
  // every signal's disposition and the signal mask, closes every other descriptor and execs
  // the script, which runs under its #! interpreter (/bin/sh when it has none).
  //
  // Errors, each naming the job: job fields that disagree (ValidateBatchJob), a uid without a
  // passwd entry, another uid than loomd's own when loomd is not root, a job already running,
  // a spool file that cannot be written, and anything the child fails at before exec (groups
  // or uid, an I/O file that cannot be opened, the script's interpreter missing). A failure in
  // the child is also written, as "loom-stepd: error: ...", into the job's stderr file when that
  // (or else its stdout file) could be opened, as Slurm does; the child is reaped here.
  StatusOr<pid_t> Start(const BatchJob& job, const std::string& spool_dir) override;
  // Start, with the script joining the cgroups whose open cgroup.procs files are
  // `cgroup_procs_fds` before it takes the job's user (see ProcessSpec).
  StatusOr<pid_t> Start(const BatchJob& job, const std::string& spool_dir,
                        const std::vector<int>& cgroup_procs_fds);
  Status Signal(model::JobId job, int sig) override;
  Status Terminate(model::JobId job, int64_t kill_wait_s) override;
  std::vector<FinishedJob> Reap() override;

  // Whether the job's script has been started and not yet reaped.
  bool IsRunning(model::JobId job) const { return running_.contains(job); }
  size_t running_count() const { return running_.size(); }
  // The earliest pending SIGKILL deadline on the monotonic clock, for the daemon's loop to
  // call Reap() by; nullopt when none is pending.
  std::optional<int64_t> NextDeadlineMs() const;

 private:
  struct Running {
    pid_t pid = 0;  // also the process group id
    std::string spool_job_dir;
    bool terminated = false;
    bool killed = false;
    std::optional<int64_t> kill_at_ms;
    // The site's TaskEpilog, run once the script has ended (task_scripts.h).
    std::vector<std::string> epilogs;
    core::ProgramRun epilog_run;
  };

  int64_t NowMs() const { return clock_.MonotonicMs(); }

  NodeSettings settings_;
  const core::Clock& clock_;
  std::map<model::JobId, Running> running_;
};

}  // namespace loom::stepd
