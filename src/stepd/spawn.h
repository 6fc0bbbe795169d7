// Starting one process of a job on this node, the part batch scripts (launcher.h) and srun's
// tasks (step_launcher.h) share: fork; in the child a new session, every signal back to its
// default, the job's user (when loomd runs as root), its working directory (or /tmp, with an
// error line, when it cannot be entered), its umask, its standard descriptors, its TMPDIR,
// SLURM_TASK_PID, no other descriptor, then exec. The child makes only async-signal-safe
// calls (loomd has other threads); everything it needs is prepared before the fork.
//
// Thread-safe: it touches no shared state. Descriptors the caller hands in should be
// close-on-exec in the caller, so that no other process started meanwhile inherits them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "stepd/job_env.h"

namespace loom::stepd {

// One of the child's standard descriptors: a file it opens as the user (relative paths in
// its working directory), or a descriptor the caller made, such as a pipe's end.
struct StdioSpec {
  std::string path;  // used when fd < 0
  int fd = -1;
};

// Who a job's processes run as on this node.
struct JobIdentity {
  UserInfo user;              // the passwd entry of the job's uid
  uint32_t gid = 0;           // the job's gid
  bool become_user = false;   // loomd is root: setgroups, setgid, setuid to the job's user
  std::vector<gid_t> groups;  // the user's supplementary groups, when become_user
};

// The identity of a job of `uid` and `gid`. NotFound (naming the uid) when the node has no
// passwd entry for it; PermissionDenied when loomd is not root and the uid is not its own.
StatusOr<JobIdentity> ResolveIdentity(uint32_t uid, uint32_t gid);
// The identity of `job`: from job.known_user when loomd resolved it for the job's uid,
// otherwise ResolveIdentity(job.uid, job.gid).
StatusOr<JobIdentity> IdentityOf(const BatchJob& job);

struct ProcessSpec {
  JobIdentity who;
  std::string work_dir;  // "/" when empty
  StdioSpec in;
  StdioSpec out;
  StdioSpec err;        // neither a path nor a descriptor: stderr shares stdout's
  bool append = false;  // files are opened O_APPEND, else O_TRUNC
  mode_t umask = 022;
  std::string program;            // the file executed
  std::vector<std::string> argv;  // argv[0] included
  // A program the kernel will not run (no #! line, ENOEXEC; a noexec mount, EACCES) runs as
  // `/bin/sh program argv[1]...` (batch scripts); otherwise its exec fails.
  bool sh_fallback = false;
  // The environment. SLURM_TASK_PID is added with the child's pid. A TMPDIR that cannot be
  // created or written becomes /tmp, with two error lines in the child's stderr.
  std::map<std::string, std::string> environment;
  // How a failure before exec shows. kReport: the line "loom-stepd: error: WHAT: REASON" goes to
  // the child's stderr file (or stdout's, when only that opened), and SpawnProcess fails with
  // the same text once the child has been reaped. kExitWithErrno: the same line goes to the
  // child's stderr, and the child exits with the errno as its exit code (as slurmstepd does
  // for tasks: a missing command exits 2), so SpawnProcess succeeds.
  enum class OnFailure { kReport, kExitWithErrno };
  OnFailure on_failure = OnFailure::kReport;
  // Open, writable cgroup.procs files (close-on-exec in the caller): the child writes "0"
  // to each, joining those cgroups, right after it starts its session and before it takes
  // the job's user, so that everything it runs is confined. A failure is reported as above.
  std::vector<int> cgroup_procs_fds;
  // A descriptor (>= 3, close-on-exec in the caller) the process keeps under its number
  // across exec: a PMI server's socket (PMI_FD). -1: none.
  int inherit_fd = -1;
  // The CPUs the process may run on (sched_setaffinity, before the job's user is taken);
  // empty: those it inherits. CPUs this host does not have are left out; when none of them
  // is here the process keeps the inherited set (an emulated node's CPU ids).
  std::vector<int32_t> cpu_affinity;
  // Written to the process's stderr just before exec: notice_head followed by the process's
  // pid in decimal (when notice_head is not empty), then notice_tail (srun's
  // --cpu-bind=verbose and --gpu-bind=verbose lines).
  std::string notice_head;
  std::string notice_tail;
};

// Forks and starts `spec`; returns the child's pid, which is also its process group and
// session id, once it has exec'd (or, with kExitWithErrno, exited before exec): from then on
// signalling its process group reaches it.
StatusOr<pid_t> SpawnProcess(const ProcessSpec& spec);

// A started process that has ended and been reaped.
struct Reaped {
  int wait_status = 0;      // the raw status from wait(2)
  int64_t user_cpu_us = 0;  // CPU time of the process and the children it waited for
  int64_t system_cpu_us = 0;
  int64_t max_rss_bytes = 0;  // the largest resident set of it or a child it waited for
};

// If `pid`, a process SpawnProcess started (its own process group's leader), has ended: kills
// what it left running in its process group (background processes do not outlive it), reaps
// it and says how it ended; nullopt while it runs. Never blocks. A process someone else reaped
// (SIGCHLD ignored, a stray wait(-1)) reads as killed by SIGKILL, its status being lost.
std::optional<Reaped> ReapIfEnded(pid_t pid);

// The passwd entry of `uid`; NotFound (naming the uid) when the node has none.
StatusOr<UserInfo> LookupUser(uint32_t uid);

// The umask a job asks for with SLURM_UMASK in its environment (octal, as srun and sbatch
// set it); 022 when it has none or a malformed one.
mode_t UmaskOf(const std::map<std::string, std::string>& environment);

// strerror's description for `err`, as the messages here say it.
std::string ErrnoText(int err);

}  // namespace loom::stepd
