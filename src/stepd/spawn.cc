#include "stepd/spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/strings.h"

namespace loom::stepd {
namespace {

using core::StrCat;

// ---------------------------------------------------------------------------------------
// Between fork and exec the child may only make async-signal-safe calls (the daemon has other
// threads, whose locks a forked child inherits in whatever state they were), so everything
// it needs is prepared in the parent, and it reports with write(2) alone.

struct ChildPlan {
  bool become_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  const std::vector<gid_t>* groups = nullptr;
  const char* identity = nullptr;  // "user alice (uid 1001, gid 1001)", for messages
  const char* work_dir = nullptr;
  // Each standard descriptor: a descriptor to take over (>= 0), else a path to open.
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  const char* stdin_path = nullptr;
  const char* stdout_path = nullptr;
  const char* stderr_path = nullptr;  // nullptr (and no stderr_fd): stderr shares stdout's
  int output_flags = 0;               // O_APPEND or O_TRUNC
  mode_t umask = 022;
  const char* program = nullptr;
  const char* program_name = nullptr;  // argv[0], for messages
  std::vector<char*> argv;             // the program, its arguments
  std::vector<char*> sh_argv;          // /bin/sh, the program, its arguments; empty: no fallback
  std::vector<char*> envp;
  int tmpdir_slot = -1;                   // envp index of TMPDIR, or -1
  const char* tmpdir = nullptr;           // its value
  const char* tmpdir_fallback = nullptr;  // "TMPDIR=/tmp"
  char* task_pid_digits = nullptr;        // where SLURM_TASK_PID's value goes (room for 20 digits)
  // The write end of a close-on-exec pipe: it closes at exec or exit, which tells the parent
  // that the child is past setsid (so its process group can be signalled). With
  // report_failures, a failure before exec is written to it too; else the child exits with
  // the errno.
  int report_fd = -1;
  int inherit_fd = -1;  // kept, under its number, across exec
  bool report_failures = true;
  const std::vector<int>* cgroup_procs_fds = nullptr;  // joined before the user is taken
  bool set_affinity = false;
  cpu_set_t affinity;  // when set_affinity
  const char* notice_head = nullptr;  // written to stderr before exec, around the pid
  const char* notice_tail = nullptr;
};

constexpr char kMessagePrefix[] = "loom-stepd: error: ";

void WriteString(int fd, const char* s) {
  if (fd < 0 || s == nullptr) return;
  size_t left = strlen(s);
  while (left > 0) {
    ssize_t n = write(fd, s, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s += n;
    left -= static_cast<size_t>(n);
  }
}

const char* ChildErrnoText(int err) {
  const char* text = strerrordesc_np(err);
  return text ? text : "Unknown error";
}

// Writes the line "loom-stepd: error: WHAT PATH: REASON" (no REASON when err is 0) to `fd`, if
// fd >= 0.
void WriteLine(int fd, const char* what, const char* path, int err) {
  if (fd < 0) return;
  WriteString(fd, kMessagePrefix);
  WriteString(fd, what);
  WriteString(fd, path);
  if (err != 0) {
    WriteString(fd, ": ");
    WriteString(fd, ChildErrnoText(err));
  }
  WriteString(fd, "\n");
}

// Reports the failure to `job_fd` (the job's stderr or stdout, when open) and to the parent
// (when it listens), then exits: with 1 when reporting, else with the errno (1 without one).
[[noreturn]] void ChildFail(const ChildPlan& plan, int job_fd, const char* what, const char* path,
                            int err) {
  WriteLine(job_fd, what, path, err);
  if (!plan.report_failures) _exit(err > 0 && err < 256 ? err : 1);
  WriteString(plan.report_fd, what);
  WriteString(plan.report_fd, path);
  if (err != 0) {
    WriteString(plan.report_fd, ": ");
    WriteString(plan.report_fd, ChildErrnoText(err));
  }
  _exit(1);
}

// Moves `fd` to a descriptor >= 3 (keeping it close-on-exec) so that placing stdin, stdout
// and stderr cannot overwrite it. Returns the new descriptor, or -1.
int LiftFd(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int lifted = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return lifted;
}

void FormatDecimal(char* out, long value) {
  char digits[24];
  int n = 0;
  unsigned long v = value < 0 ? 0 : static_cast<unsigned long>(value);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  out[n] = '\0';
}

// Closes every descriptor from `first` up, except `keep` and `keep2` (-1: none).
void CloseFrom(int first, int keep, int keep2) {
  int kept[2] = {keep, keep2};
  if (kept[0] > kept[1]) std::swap(kept[0], kept[1]);
  bool closed = true;
  unsigned from = static_cast<unsigned>(first);
  for (int k : kept) {
    if (k < first) continue;
    if (static_cast<unsigned>(k) > from) closed = closed && close_range(from, k - 1, 0) == 0;
    from = static_cast<unsigned>(k) + 1;
  }
  closed = closed && close_range(from, ~0U, 0) == 0;
  if (closed) return;
  struct rlimit limit;  // a kernel without close_range (before 5.9)
  long max = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                 ? static_cast<long>(limit.rlim_cur)
                 : 65536;
  for (long fd = first; fd < max; ++fd) {
    if (fd != keep && fd != keep2) close(static_cast<int>(fd));
  }
}

// An output file opened as the user, or the descriptor handed in; lifted above 2.
int OpenOutput(int given, const char* path, int flags, int* open_errno) {
  *open_errno = 0;
  if (given >= 0) return LiftFd(given);
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
  if (fd < 0) *open_errno = errno;
  return LiftFd(fd);
}

[[noreturn]] void RunChild(ChildPlan& plan) {
  // Signals: default dispositions first, then nothing blocked (the parent blocked everything
  // around fork so that none of its handlers can run here).
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  plan.report_fd = LiftFd(plan.report_fd);
  plan.stdin_fd = LiftFd(plan.stdin_fd);
  plan.stdout_fd = LiftFd(plan.stdout_fd);
  plan.stderr_fd = LiftFd(plan.stderr_fd);
  setsid();

  // Until the job's own stderr is open, a child that does not report failures tells the caller's
  // descriptor (a task's stderr pipe), if it has one.
  const int early_fd = plan.report_failures ? -1 : plan.stderr_fd;
  for (int fd : *plan.cgroup_procs_fds) {
    ssize_t n;
    do {
      n = write(fd, "0", 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) ChildFail(plan, early_fd, "cannot join the job's cgroup", "", errno);
  }
  // Best effort: a mask the kernel refuses leaves the inherited one, as an unbound task.
  if (plan.set_affinity) sched_setaffinity(0, sizeof(plan.affinity), &plan.affinity);
  if (plan.become_user) {
    if (setgroups(plan.groups->size(), plan.groups->data()) != 0) {
      ChildFail(plan, early_fd, "setgroups() for ", plan.identity, errno);
    }
    if (setgid(plan.gid) != 0) ChildFail(plan, early_fd, "setgid() for ", plan.identity, errno);
    if (setuid(plan.uid) != 0) ChildFail(plan, early_fd, "setuid() for ", plan.identity, errno);
  }

  int chdir_errno = 0;
  if (chdir(plan.work_dir) != 0) {
    chdir_errno = errno;
    if (chdir("/tmp") != 0) {
      ChildFail(plan, early_fd, "cannot enter the working directory or /tmp: ", plan.work_dir,
                chdir_errno);
    }
  }
  umask(plan.umask);

  // The I/O files, opened as the user, relative paths in the directory just entered.
  int out_errno = 0;
  int out = OpenOutput(plan.stdout_fd, plan.stdout_path, plan.output_flags, &out_errno);
  int err = out;
  int err_errno = 0;
  if (plan.stderr_fd >= 0 || plan.stderr_path != nullptr) {
    err = OpenOutput(plan.stderr_fd, plan.stderr_path, plan.output_flags, &err_errno);
  }
  const int message_fd = err >= 0 ? err : out;
  if (out < 0) {
    ChildFail(plan, message_fd, "Could not open stdout file ", plan.stdout_path, out_errno);
  }
  if (err < 0) {
    ChildFail(plan, message_fd, "Could not open stderr file ", plan.stderr_path, err_errno);
  }
  int in = plan.stdin_fd >= 0 ? plan.stdin_fd : LiftFd(open(plan.stdin_path, O_RDONLY | O_CLOEXEC));
  if (in < 0) ChildFail(plan, message_fd, "Could not open stdin file ", plan.stdin_path, errno);
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
    ChildFail(plan, message_fd, "cannot set up the standard descriptors", "", errno);
  }

  if (chdir_errno != 0) {
    WriteString(2, kMessagePrefix);
    WriteString(2, "couldn't chdir to `");
    WriteString(2, plan.work_dir);
    WriteString(2, "': ");
    WriteString(2, ChildErrnoText(chdir_errno));
    WriteString(2, ": going to /tmp instead\n");
  }

  // TMPDIR must be a directory the job can write; else the job gets /tmp.
  if (plan.tmpdir_slot >= 0) {
    int tmp_errno = 0;
    if (mkdir(plan.tmpdir, 0700) != 0 && errno != EEXIST) {
      tmp_errno = errno;
    } else if (access(plan.tmpdir, W_OK | X_OK) != 0) {
      tmp_errno = errno;
    }
    if (tmp_errno != 0) {
      WriteString(2, kMessagePrefix);
      WriteString(2, "Unable to create TMPDIR [");
      WriteString(2, plan.tmpdir);
      WriteString(2, "]: ");
      WriteString(2, ChildErrnoText(tmp_errno));
      WriteString(2, "\n");
      WriteString(2, kMessagePrefix);
      WriteString(2, "Setting TMPDIR to /tmp\n");
      plan.envp[plan.tmpdir_slot] = const_cast<char*>(plan.tmpdir_fallback);
    }
  }

  if (plan.task_pid_digits != nullptr) FormatDecimal(plan.task_pid_digits, getpid());
  if (plan.notice_head != nullptr) {
    if (plan.notice_head[0] != '\0') {
      char digits[24] = {};
      FormatDecimal(digits, getpid());
      WriteString(2, plan.notice_head);
      WriteString(2, digits);
    }
    WriteString(2, plan.notice_tail);
  }
  CloseFrom(3, plan.report_fd, plan.inherit_fd);
  if (plan.inherit_fd >= 0) fcntl(plan.inherit_fd, F_SETFD, 0);  // kept across exec

  execve(plan.program, plan.argv.data(), plan.envp.data());
  int exec_errno = errno;
  if (!plan.sh_argv.empty() && (exec_errno == ENOEXEC || exec_errno == EACCES)) {
    execve("/bin/sh", plan.sh_argv.data(), plan.envp.data());
    exec_errno = errno;
  }
  ChildFail(plan, 2, "execve(): ", plan.program_name, exec_errno);
}

}  // namespace

std::string ErrnoText(int err) {
  const char* text = strerrordesc_np(err);
  return text ? text : StrCat("error ", err);
}

namespace {

StatusOr<std::vector<gid_t>> SupplementaryGroups(const std::string& user, gid_t gid) {
  int count = 32;
  std::vector<gid_t> groups(count);
  for (int tries = 0; tries < 8; ++tries) {
    int n = count;
    if (getgrouplist(user.c_str(), gid, groups.data(), &n) >= 0) {
      groups.resize(n);
      return groups;
    }
    count = std::max(n, count * 2);
    groups.resize(count);
  }
  return absl::InternalError(StrCat("cannot list the groups of user ", user));
}

}  // namespace

StatusOr<JobIdentity> ResolveIdentity(uint32_t uid, uint32_t gid) {
  JobIdentity who;
  ASSIGN_OR_RETURN(who.user, LookupUser(uid));
  who.gid = gid;
  who.become_user = ::geteuid() == 0;
  if (!who.become_user && uid != ::geteuid()) {
    return absl::PermissionDeniedError(StrCat("loomd runs as uid ", ::geteuid(),
                                              " and cannot start a job of uid ", uid,
                                              "; run loomd as root"));
  }
  if (who.become_user) {
    ASSIGN_OR_RETURN(who.groups, SupplementaryGroups(who.user.name, gid));
  }
  return who;
}

StatusOr<JobIdentity> IdentityOf(const BatchJob& job) {
  if (!job.known_user || job.known_user->user.uid != job.uid) {
    return ResolveIdentity(job.uid, job.gid);
  }
  JobIdentity who;
  who.user = job.known_user->user;
  who.gid = job.gid;
  who.become_user = ::geteuid() == 0;
  if (!who.become_user && job.uid != ::geteuid()) {
    return ResolveIdentity(job.uid, job.gid);  // says why it cannot be done
  }
  if (who.become_user) {
    who.groups.assign(job.known_user->groups.begin(), job.known_user->groups.end());
  }
  return who;
}

mode_t UmaskOf(const std::map<std::string, std::string>& env) {
  auto it = env.find("SLURM_UMASK");
  if (it == env.end() || it->second.empty() || it->second.size() > 4) return 022;
  mode_t mask = 0;
  for (char c : it->second) {
    if (c < '0' || c > '7') return 022;
    mask = mask * 8 + static_cast<mode_t>(c - '0');
  }
  return mask & 0777;
}

StatusOr<UserInfo> LookupUser(uint32_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(size > 0 ? static_cast<size_t>(size) : 16384);
  struct passwd entry;
  struct passwd* found = nullptr;
  int rc;
  while ((rc = getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found)) == ERANGE &&
         buffer.size() < (1u << 20)) {
    buffer.resize(buffer.size() * 2);
  }
  if (rc != 0) {
    return absl::InternalError(
        StrCat("cannot read the passwd entry of uid ", uid, ": ", ErrnoText(rc)));
  }
  if (found == nullptr) {
    return absl::NotFoundError(StrCat("user id ", uid, " has no passwd entry on this node"));
  }
  UserInfo user;
  user.name = entry.pw_name;
  user.uid = entry.pw_uid;
  user.gid = entry.pw_gid;
  user.home = entry.pw_dir ? entry.pw_dir : "";
  user.shell = entry.pw_shell ? entry.pw_shell : "";
  return user;
}

std::optional<Reaped> ReapIfEnded(pid_t pid) {
  // Look without reaping first: while the process is an unreaped zombie its pid, which is
  // also its process group's id, cannot be reused, so the group can be killed safely.
  siginfo_t info;
  memset(&info, 0, sizeof info);
  int rc;
  do {
    rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (rc < 0 && errno == EINTR);
  const bool lost = rc < 0 && errno == ECHILD;
  if (!lost && (rc < 0 || info.si_pid == 0)) return std::nullopt;
  Reaped done;
  done.wait_status = SIGKILL;
  if (lost) return done;
  ::kill(-pid, SIGKILL);
  int status = 0;
  struct rusage usage;
  pid_t got;
  do {
    got = ::wait4(pid, &status, 0, &usage);
  } while (got < 0 && errno == EINTR);
  if (got > 0) {
    done.wait_status = status;
    done.user_cpu_us = int64_t{usage.ru_utime.tv_sec} * 1000000 + usage.ru_utime.tv_usec;
    done.system_cpu_us = int64_t{usage.ru_stime.tv_sec} * 1000000 + usage.ru_stime.tv_usec;
    done.max_rss_bytes = int64_t{usage.ru_maxrss} * 1024;  // Linux counts it in KiB
  }
  return done;
}

StatusOr<pid_t> SpawnProcess(const ProcessSpec& spec) {
  // Everything the child will use, as strings that outlive the fork.
  std::vector<std::string> env_strings;
  env_strings.reserve(spec.environment.size() + 1);
  int tmpdir_slot = -1;
  for (const auto& [name, value] : spec.environment) {
    if (name == "TMPDIR") tmpdir_slot = static_cast<int>(env_strings.size());
    env_strings.push_back(StrCat(name, "=", value));
  }
  const std::string task_pid_prefix = "SLURM_TASK_PID=";
  env_strings.push_back(task_pid_prefix + std::string(24, '\0'));
  static constexpr char kTmpFallback[] = "TMPDIR=/tmp";
  static const std::string kShell = "/bin/sh";
  std::vector<std::string> argv = spec.argv;
  if (argv.empty()) argv.push_back(spec.program);

  const std::string identity =
      StrCat("user ", spec.who.user.name, " (uid ", spec.who.user.uid, ", gid ", spec.who.gid, ")");
  ChildPlan plan;
  plan.identity = identity.c_str();
  plan.become_user = spec.who.become_user;
  plan.uid = spec.who.user.uid;
  plan.gid = spec.who.gid;
  plan.groups = &spec.who.groups;
  plan.work_dir = spec.work_dir.empty() ? "/" : spec.work_dir.c_str();
  plan.stdin_fd = spec.in.fd;
  plan.stdout_fd = spec.out.fd;
  plan.stderr_fd = spec.err.fd;
  plan.stdin_path = spec.in.path.empty() ? "/dev/null" : spec.in.path.c_str();
  plan.stdout_path = spec.out.path.c_str();
  const bool err_shares_out =
      spec.err.fd < 0 && (spec.err.path.empty() || spec.err.path == spec.out.path);
  plan.stderr_path = spec.err.fd >= 0 || err_shares_out ? nullptr : spec.err.path.c_str();
  plan.output_flags = spec.append ? O_APPEND : O_TRUNC;
  plan.umask = spec.umask;
  plan.program = spec.program.c_str();
  plan.program_name = argv.front().c_str();
  for (std::string& arg : argv) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  if (spec.sh_fallback) {
    plan.sh_argv.push_back(const_cast<char*>(kShell.c_str()));
    plan.sh_argv.push_back(const_cast<char*>(spec.program.c_str()));
    for (size_t i = 1; i < argv.size(); ++i) plan.sh_argv.push_back(argv[i].data());
    plan.sh_argv.push_back(nullptr);
  }
  for (std::string& s : env_strings) plan.envp.push_back(s.data());
  plan.envp.push_back(nullptr);
  plan.task_pid_digits = env_strings.back().data() + task_pid_prefix.size();
  if (tmpdir_slot >= 0) {
    plan.tmpdir_slot = tmpdir_slot;
    plan.tmpdir = spec.environment.at("TMPDIR").c_str();
    plan.tmpdir_fallback = kTmpFallback;
  }

  int pipe_fds[2] = {-1, -1};
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::InternalError(StrCat("pipe: ", ErrnoText(errno)));
  }
  plan.report_fd = pipe_fds[1];
  plan.report_failures = spec.on_failure == ProcessSpec::OnFailure::kReport;
  plan.cgroup_procs_fds = &spec.cgroup_procs_fds;
  plan.inherit_fd = spec.inherit_fd;
  if (!spec.notice_head.empty() || !spec.notice_tail.empty()) {
    plan.notice_head = spec.notice_head.c_str();
    plan.notice_tail = spec.notice_tail.c_str();
  }
  if (!spec.cpu_affinity.empty()) {
    // Only CPUs this host has (and loomd may use): an emulated node names CPUs beyond them.
    cpu_set_t here;
    CPU_ZERO(&plan.affinity);
    if (sched_getaffinity(0, sizeof(here), &here) == 0) {
      for (int32_t cpu : spec.cpu_affinity) {
        if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &here)) CPU_SET(cpu, &plan.affinity);
      }
      plan.set_affinity = CPU_COUNT(&plan.affinity) > 0;
    }
  }

  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::fork();
  if (pid == 0) RunChild(plan);
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(pipe_fds[1]);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    return absl::ResourceExhaustedError(StrCat("fork: ", ErrnoText(fork_errno)));
  }

  // The pipe closes at exec or at the child's exit (after a report, when it reports).
  std::string failure;
  char buffer[512];
  for (;;) {
    ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    failure.append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (!failure.empty()) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return absl::FailedPreconditionError(failure);
  }
  return pid;
}

}  // namespace loom::stepd
