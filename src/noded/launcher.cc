#include "noded/launcher.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/strings.h"

namespace loom::noded {
namespace {

using core::StrCat;

std::string ErrnoText(int err) {
  const char* text = strerrordesc_np(err);
  return text ? text : StrCat("error ", err);
}

// ---------------------------------------------------------------------------------------
// Between fork and exec the child may only make async-signal-safe calls (the daemon has other
// threads, whose locks a forked child inherits in whatever state they were), so everything
// it needs is prepared in the parent, and it reports with write(2) alone.

struct ChildPlan {
  bool become_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  const char* identity = nullptr;  // "user alice (uid 1001, gid 1001)", for messages
  const char* work_dir = nullptr;
  const char* stdin_path = nullptr;
  const char* stdout_path = nullptr;
  const char* stderr_path = nullptr;  // nullptr: stderr shares stdout's file
  int output_flags = 0;               // O_APPEND or O_TRUNC
  mode_t umask = 022;
  const char* script_path = nullptr;
  std::vector<char*> argv;     // the script, its arguments
  std::vector<char*> sh_argv;  // /bin/sh, the script, its arguments
  std::vector<char*> envp;
  int tmpdir_slot = -1;                   // envp index of TMPDIR, or -1
  const char* tmpdir = nullptr;           // its value
  const char* tmpdir_fallback = nullptr;  // "TMPDIR=/tmp"
  char* task_pid_digits = nullptr;        // where SLURM_TASK_PID's value goes (room for 20 digits)
  int report_fd = -1;                     // write end of the launch report pipe (close-on-exec)
};

constexpr char kMessagePrefix[] = "loomd: error: ";

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

// Writes the line "loomd: error: WHAT PATH: REASON" (no REASON when err is 0) to `fd`, if
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

// Reports the failure to the parent (and to `job_fd`, the job's stderr or stdout when open),
// then exits.
[[noreturn]] void ChildFail(const ChildPlan& plan, int job_fd, const char* what, const char* path,
                            int err) {
  WriteLine(job_fd, what, path, err);
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

// Closes every descriptor from `first` up, except `keep`.
void CloseFrom(int first, int keep) {
  const bool closed = keep >= first ? (keep == first || close_range(first, keep - 1, 0) == 0) &&
                                          close_range(keep + 1, ~0U, 0) == 0
                                    : close_range(first, ~0U, 0) == 0;
  if (closed) return;
  struct rlimit limit;  // a kernel without close_range (before 5.9)
  long max = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                 ? static_cast<long>(limit.rlim_cur)
                 : 65536;
  for (long fd = first; fd < max; ++fd) {
    if (fd != keep) close(static_cast<int>(fd));
  }
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
  setsid();

  if (plan.become_user) {
    if (setgroups(plan.groups.size(), plan.groups.data()) != 0) {
      ChildFail(plan, -1, "setgroups() for ", plan.identity, errno);
    }
    if (setgid(plan.gid) != 0) ChildFail(plan, -1, "setgid() for ", plan.identity, errno);
    if (setuid(plan.uid) != 0) ChildFail(plan, -1, "setuid() for ", plan.identity, errno);
  }

  int chdir_errno = 0;
  if (chdir(plan.work_dir) != 0) {
    chdir_errno = errno;
    if (chdir("/tmp") != 0) {
      ChildFail(plan, -1, "cannot enter the working directory or /tmp: ", plan.work_dir,
                chdir_errno);
    }
  }
  umask(plan.umask);

  // The I/O files, opened as the user, relative paths in the directory just entered.
  int out = open(plan.stdout_path, O_WRONLY | O_CREAT | O_CLOEXEC | plan.output_flags, 0644);
  int out_errno = out < 0 ? errno : 0;
  out = LiftFd(out);
  int err = out;
  int err_errno = 0;
  if (plan.stderr_path != nullptr) {
    err = open(plan.stderr_path, O_WRONLY | O_CREAT | O_CLOEXEC | plan.output_flags, 0644);
    err_errno = err < 0 ? errno : 0;
    err = LiftFd(err);
  }
  const int message_fd = err >= 0 ? err : out;
  if (out < 0) {
    ChildFail(plan, message_fd, "Could not open stdout file ", plan.stdout_path, out_errno);
  }
  if (err < 0) {
    ChildFail(plan, message_fd, "Could not open stderr file ", plan.stderr_path, err_errno);
  }
  int in = LiftFd(open(plan.stdin_path, O_RDONLY | O_CLOEXEC));
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
  CloseFrom(3, plan.report_fd);

  execve(plan.script_path, plan.argv.data(), plan.envp.data());
  int exec_errno = errno;
  if (exec_errno == ENOEXEC || exec_errno == EACCES) {
    execve("/bin/sh", plan.sh_argv.data(), plan.envp.data());
    exec_errno = errno;
  }
  ChildFail(plan, 2, "execve(): ", plan.script_path, exec_errno);
}

// ---------------------------------------------------------------------------------------
// Parent side.

StatusOr<std::vector<gid_t>> GroupsOf(const std::string& user, gid_t gid) {
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

Status MakeSpool(const BatchJob& job, const std::string& spool_dir, bool as_root,
                 std::string* job_dir, std::string* script_path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(spool_dir, ec)) {
    std::filesystem::create_directories(spool_dir, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          StrCat("cannot create spool directory ", spool_dir, ": ", ec.message()));
    }
    ::chmod(spool_dir.c_str(), 0755);
  }
  char name[32];
  snprintf(name, sizeof name, "job%05llu", static_cast<unsigned long long>(job.job_id));
  *job_dir = StrCat(spool_dir, "/", name);
  *script_path = StrCat(*job_dir, "/slurm_script");
  std::filesystem::remove_all(*job_dir, ec);  // left over from an earlier run of loomd
  if (::mkdir(job_dir->c_str(), 0700) != 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot create spool directory ", *job_dir, ": ", ErrnoText(errno)));
  }
  if (as_root && ::chown(job_dir->c_str(), job.uid, job.gid) != 0) {
    return absl::FailedPreconditionError(StrCat("cannot give spool directory ", *job_dir,
                                                " to uid ", job.uid, ": ", ErrnoText(errno)));
  }
  int fd = ::open(script_path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot write batch script ", *script_path, ": ", ErrnoText(errno)));
  }
  const char* data = job.script.data();
  size_t left = job.script.size();
  int write_errno = 0;
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      write_errno = n < 0 ? errno : EIO;
      break;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (write_errno == 0 && ::fchmod(fd, 0700) != 0) write_errno = errno;
  if (write_errno == 0 && as_root && ::fchown(fd, job.uid, job.gid) != 0) write_errno = errno;
  ::close(fd);
  if (write_errno != 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot write batch script ", *script_path, ": ", ErrnoText(write_errno)));
  }
  return absl::OkStatus();
}

mode_t JobUmask(const std::map<std::string, std::string>& env) {
  auto it = env.find("SLURM_UMASK");
  if (it == env.end() || it->second.empty() || it->second.size() > 4) return 022;
  mode_t mask = 0;
  for (char c : it->second) {
    if (c < '0' || c > '7') return 022;
    mask = mask * 8 + static_cast<mode_t>(c - '0');
  }
  return mask & 0777;
}

}  // namespace

JobFiles ExpandJobFiles(const BatchJob& job, const std::string& user) {
  model::OutputPatternContext context;
  context.job_id = job.job_id;
  context.array_job_id = job.array_job_id;
  context.array_task_id = job.array_task_id;
  context.job_name = job.name;
  context.user = job.user.empty() ? user : job.user;
  context.node_name = job.node_name;
  context.node_index = job.node_index;
  JobFiles files;
  std::string out_pattern =
      job.stdout_pattern.empty()
          ? std::string(model::DefaultOutputPattern(job.array_job_id.has_value()))
          : job.stdout_pattern;
  files.stdout_path = model::ExpandOutputPattern(out_pattern, context);
  files.stderr_path = job.stderr_pattern.empty()
                          ? files.stdout_path
                          : model::ExpandOutputPattern(job.stderr_pattern, context);
  files.stdin_path = job.stdin_pattern.empty()
                         ? std::string("/dev/null")
                         : model::ExpandOutputPattern(job.stdin_pattern, context);
  return files;
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

BatchLauncher::BatchLauncher(NodeSettings settings, std::function<int64_t()> monotonic_ms)
    : settings_(std::move(settings)), monotonic_ms_(std::move(monotonic_ms)) {}

int64_t BatchLauncher::NowMs() const {
  if (monotonic_ms_) return monotonic_ms_();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

StatusOr<pid_t> BatchLauncher::Start(const BatchJob& job, const std::string& spool_dir) {
  auto fail = [&job](const Status& status) {
    return Status(status.code(), StrCat("job ", job.job_id, ": ", std::string(status.message())));
  };
  if (Status valid = ValidateBatchJob(job); !valid.ok()) return valid;
  if (running_.contains(job.job_id)) {
    return absl::AlreadyExistsError(StrCat("job ", job.job_id, " is already running here"));
  }
  StatusOr<UserInfo> user = LookupUser(job.uid);
  if (!user.ok()) return fail(user.status());
  const bool as_root = ::geteuid() == 0;
  if (!as_root && job.uid != ::geteuid()) {
    return absl::PermissionDeniedError(StrCat("job ", job.job_id, ": loomd runs as uid ",
                                              ::geteuid(), " and cannot start a job of uid ",
                                              job.uid, "; run loomd as root"));
  }
  std::vector<gid_t> groups;
  if (as_root) {
    StatusOr<std::vector<gid_t>> listed = GroupsOf(user->name, job.gid);
    if (!listed.ok()) return fail(listed.status());
    groups = *std::move(listed);
  }

  // Everything the child will use, as strings that outlive the fork.
  std::map<std::string, std::string> env_map = BatchEnvironment(job, settings_, *user);
  const JobFiles files = ExpandJobFiles(job, user->name);
  std::string job_dir, script_path;
  if (Status spool = MakeSpool(job, spool_dir, as_root, &job_dir, &script_path); !spool.ok()) {
    return fail(spool);
  }
  auto remove_spool = [&job_dir] {
    std::error_code ec;
    std::filesystem::remove_all(job_dir, ec);
  };

  std::vector<std::string> env_strings;
  env_strings.reserve(env_map.size() + 1);
  int tmpdir_slot = -1;
  for (const auto& [name, value] : env_map) {
    if (name == "TMPDIR") tmpdir_slot = static_cast<int>(env_strings.size());
    env_strings.push_back(StrCat(name, "=", value));
  }
  const std::string task_pid_prefix = "SLURM_TASK_PID=";
  env_strings.push_back(task_pid_prefix + std::string(24, '\0'));
  static constexpr char kTmpFallback[] = "TMPDIR=/tmp";
  const std::string shell = "/bin/sh";

  const std::string identity =
      StrCat("user ", user->name, " (uid ", job.uid, ", gid ", job.gid, ")");
  ChildPlan plan;
  plan.identity = identity.c_str();
  plan.become_user = as_root;
  plan.uid = job.uid;
  plan.gid = job.gid;
  plan.groups = std::move(groups);
  plan.work_dir = job.work_dir.empty() ? "/" : job.work_dir.c_str();
  plan.stdin_path = files.stdin_path.c_str();
  plan.stdout_path = files.stdout_path.c_str();
  plan.stderr_path = files.stderr_path == files.stdout_path ? nullptr : files.stderr_path.c_str();
  const bool append = job.open_mode == model::OpenMode::kAppend ||
                      (job.open_mode == model::OpenMode::kDefault &&
                       (settings_.job_file_append || job.restart_count > 0));
  plan.output_flags = append ? O_APPEND : O_TRUNC;
  plan.umask = JobUmask(env_map);
  plan.script_path = script_path.c_str();
  plan.argv.push_back(const_cast<char*>(script_path.c_str()));
  plan.sh_argv.push_back(const_cast<char*>(shell.c_str()));
  plan.sh_argv.push_back(const_cast<char*>(script_path.c_str()));
  for (const std::string& arg : job.script_args) {
    plan.argv.push_back(const_cast<char*>(arg.c_str()));
    plan.sh_argv.push_back(const_cast<char*>(arg.c_str()));
  }
  plan.argv.push_back(nullptr);
  plan.sh_argv.push_back(nullptr);
  for (std::string& s : env_strings) plan.envp.push_back(s.data());
  plan.envp.push_back(nullptr);
  plan.task_pid_digits = env_strings.back().data() + task_pid_prefix.size();
  if (tmpdir_slot >= 0) {
    plan.tmpdir_slot = tmpdir_slot;
    plan.tmpdir = env_map.at("TMPDIR").c_str();
    plan.tmpdir_fallback = kTmpFallback;
  }

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    int e = errno;
    remove_spool();
    return absl::InternalError(StrCat("job ", job.job_id, ": pipe: ", ErrnoText(e)));
  }
  plan.report_fd = report[1];

  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::fork();
  if (pid == 0) RunChild(plan);
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    remove_spool();
    return absl::ResourceExhaustedError(
        StrCat("job ", job.job_id, ": fork: ", ErrnoText(fork_errno)));
  }

  // The pipe closes at exec (success) or at the child's exit after a report (failure).
  std::string failure;
  char buffer[512];
  for (;;) {
    ssize_t n = ::read(report[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    failure.append(buffer, static_cast<size_t>(n));
  }
  ::close(report[0]);
  if (!failure.empty()) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    remove_spool();
    return absl::FailedPreconditionError(
        StrCat("job ", job.job_id, ": launch failed on ", job.node_name, ": ", failure));
  }

  Running entry;
  entry.pid = pid;
  entry.spool_job_dir = job_dir;
  running_.emplace(job.job_id, std::move(entry));
  return pid;
}

Status BatchLauncher::Signal(model::JobId job, int sig) {
  auto it = running_.find(job);
  if (it == running_.end()) {
    return absl::NotFoundError(StrCat("job ", job, " is not running on this node"));
  }
  if (::kill(-it->second.pid, sig) != 0 && errno != ESRCH) {
    return absl::InternalError(StrCat("cannot signal job ", job, " (process group ", it->second.pid,
                                      "): ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

Status BatchLauncher::Terminate(model::JobId job, int64_t kill_wait_s) {
  auto it = running_.find(job);
  if (it == running_.end()) {
    return absl::NotFoundError(StrCat("job ", job, " is not running on this node"));
  }
  Running& r = it->second;
  r.terminated = true;
  ::kill(-r.pid, SIGCONT);
  ::kill(-r.pid, SIGTERM);
  if (kill_wait_s <= 0) {
    ::kill(-r.pid, SIGKILL);
    r.killed = true;
    r.kill_at_ms.reset();
    return absl::OkStatus();
  }
  if (!r.killed) {
    int64_t deadline = NowMs() + kill_wait_s * 1000;
    if (!r.kill_at_ms || deadline < *r.kill_at_ms) r.kill_at_ms = deadline;
  }
  return absl::OkStatus();
}

std::optional<int64_t> BatchLauncher::NextDeadlineMs() const {
  std::optional<int64_t> next;
  for (const auto& [id, r] : running_) {
    if (r.kill_at_ms && (!next || *r.kill_at_ms < *next)) next = r.kill_at_ms;
  }
  return next;
}

std::vector<FinishedJob> BatchLauncher::Reap() {
  const int64_t now = NowMs();
  std::vector<FinishedJob> finished;
  for (auto it = running_.begin(); it != running_.end();) {
    Running& r = it->second;
    if (r.kill_at_ms && *r.kill_at_ms <= now) {
      ::kill(-r.pid, SIGKILL);
      r.killed = true;
      r.kill_at_ms.reset();
    }
    // Look without reaping first: while the script is an unreaped zombie its pid, which is
    // also its process group's id, cannot be reused, so the group can be killed safely.
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int rc;
    do {
      rc = ::waitid(P_PID, static_cast<id_t>(r.pid), &info, WEXITED | WNOHANG | WNOWAIT);
    } while (rc < 0 && errno == EINTR);
    const bool lost = rc < 0 && errno == ECHILD;
    if (!lost && (rc < 0 || info.si_pid == 0)) {
      ++it;
      continue;
    }
    // Whatever the script left running in its process group ends with it.
    if (!lost) ::kill(-r.pid, SIGKILL);
    FinishedJob done;
    done.job_id = it->first;
    done.pid = r.pid;
    int status = 0;
    struct rusage usage;
    pid_t got = -1;
    if (!lost) {
      do {
        got = ::wait4(r.pid, &status, 0, &usage);
      } while (got < 0 && errno == EINTR);
    }
    if (got > 0) {
      done.wait_status = status;
      done.user_cpu_us = int64_t{usage.ru_utime.tv_sec} * 1000000 + usage.ru_utime.tv_usec;
      done.system_cpu_us = int64_t{usage.ru_stime.tv_sec} * 1000000 + usage.ru_stime.tv_usec;
    } else {
      // Reaped by someone else (SIGCHLD ignored, or a stray wait(-1)): the status is lost.
      done.wait_status = SIGKILL;
    }
    done.terminated = r.terminated;
    done.killed = r.killed;
    std::error_code ec;
    std::filesystem::remove_all(r.spool_job_dir, ec);
    finished.push_back(done);
    it = running_.erase(it);
  }
  return finished;
}

}  // namespace loom::noded
