#include "core/run_program.h"

#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "core/strings.h"

namespace loom::core {
namespace {

constexpr size_t kMaxCaptured = 64 * 1024;

// The child's side: only async-signal-safe calls between fork and exec. Reports a failure
// to start as its errno on `report` (close-on-exec, so an exec closes it unwritten).
[[noreturn]] void Child(const ProgramRun& run, char* const* argv, char* const* envp, int out_fd,
                        int report) {
  auto fail = [report]() {
    const int e = errno;
    (void)!::write(report, &e, sizeof e);
    ::_exit(127);
  };
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  if (::setsid() < 0) fail();
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd < 0) fail();
  if (::dup2(null_fd, 0) < 0 || ::dup2(out_fd >= 0 ? out_fd : null_fd, 1) < 0 ||
      ::dup2(null_fd, 2) < 0) {
    fail();
  }
  if (run.as_user) {
    const ProgramRun::User& u = *run.as_user;
    const size_t n = u.groups.size();
    // The raw system calls: this process has one thread, and glibc's wrappers would signal
    // threads it no longer has.
    if (::syscall(SYS_setgroups, n, n == 0 ? nullptr : u.groups.data()) != 0) fail();
    if (::syscall(SYS_setresgid, u.gid, u.gid, u.gid) != 0) fail();
    if (::syscall(SYS_setresuid, u.uid, u.uid, u.uid) != 0) fail();
  }
  if (!run.work_dir.empty() && ::chdir(run.work_dir.c_str()) != 0) fail();
  ::execve(run.path.c_str(), argv, envp);
  fail();
  ::_exit(127);
}

}  // namespace

std::string ProgramResult::Describe(int64_t timeout_ms) const {
  if (timed_out) return StrCat("timed out after ", (timeout_ms + 999) / 1000, " s");
  if (WIFSIGNALED(wait_status)) return StrCat("killed by signal ", WTERMSIG(wait_status));
  return StrCat("exit status ", WEXITSTATUS(wait_status));
}

StatusOr<ProgramResult> RunProgram(const ProgramRun& run) {
  static_assert(sizeof(gid_t) == sizeof(uint32_t));
  std::vector<std::string> arg_text = {run.path};
  arg_text.insert(arg_text.end(), run.args.begin(), run.args.end());
  std::vector<char*> argv, envp;
  for (std::string& a : arg_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = run.env;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    return absl::ResourceExhaustedError(StrCat("pipe: ", std::strerror(errno)));
  }
  int out[2] = {-1, -1};
  if (run.capture_stdout && ::pipe2(out, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    return absl::ResourceExhaustedError(StrCat("pipe: ", std::strerror(e)));
  }
  const pid_t pid = ::fork();
  if (pid == 0) Child(run, argv.data(), envp.data(), out[1], report[1]);
  const int fork_errno = errno;
  ::close(report[1]);
  if (out[1] >= 0) ::close(out[1]);
  if (pid < 0) {
    ::close(report[0]);
    if (out[0] >= 0) ::close(out[0]);
    return absl::ResourceExhaustedError(StrCat("fork: ", std::strerror(fork_errno)));
  }
  int child_errno = 0;
  ssize_t n;
  while ((n = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    if (out[0] >= 0) ::close(out[0]);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return absl::FailedPreconditionError(
        StrCat("cannot run ", run.path, ": ", std::strerror(child_errno)));
  }

  // Wait for its end (and read what it writes) until the deadline.
  ProgramResult result;
  const int pid_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  const Clock& clock = RealClock();
  const int64_t deadline = run.timeout_ms > 0 ? clock.MonotonicMs() + run.timeout_ms : 0;
  bool ended = false;
  while (!ended) {
    int wait_ms = -1;
    if (deadline > 0) {
      wait_ms = static_cast<int>(std::max<int64_t>(0, deadline - clock.MonotonicMs()));
    }
    if (pid_fd < 0) wait_ms = wait_ms < 0 ? 20 : std::min(wait_ms, 20);  // no pidfd: poll
    pollfd fds[2];
    nfds_t count = 0;
    if (pid_fd >= 0) fds[count++] = {pid_fd, POLLIN, 0};
    if (out[0] >= 0) fds[count++] = {out[0], POLLIN, 0};
    const int ready = ::poll(fds, count, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (out[0] >= 0) {
      char buffer[4096];
      const pollfd& o = fds[count - 1];
      if (o.revents & (POLLIN | POLLHUP)) {
        const ssize_t got = ::read(out[0], buffer, sizeof buffer);
        if (got > 0) {
          result.out.append(
              buffer,
              std::min<size_t>(got, kMaxCaptured - std::min(kMaxCaptured, result.out.size())));
        } else if (got == 0) {
          ::close(out[0]);
          out[0] = -1;
        }
      }
    }
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      result.wait_status = status;
      ended = true;
    } else if (deadline > 0 && clock.MonotonicMs() >= deadline) {
      ::kill(-pid, SIGKILL);  // its session: what it started goes too
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      result.wait_status = status;
      result.timed_out = true;
      ended = true;
    }
  }
  if (out[0] >= 0) {
    // What it wrote before it ended, unless a child it left holds the pipe open.
    ::fcntl(out[0], F_SETFL, O_NONBLOCK);
    char buffer[4096];
    ssize_t got;
    while (result.out.size() < kMaxCaptured && (got = ::read(out[0], buffer, sizeof buffer)) > 0) {
      result.out.append(buffer, std::min<size_t>(got, kMaxCaptured - result.out.size()));
    }
    ::close(out[0]);
  }
  if (pid_fd >= 0) ::close(pid_fd);
  return result;
}

std::vector<std::string> ExpandProgramPattern(const std::string& setting) {
  const std::string path(Trim(setting));
  if (path.empty()) return {};
  if (path.find_first_of("*?[") == std::string::npos) return {path};
  glob_t g;
  std::vector<std::string> out;
  if (::glob(path.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> RunPrograms(const std::string& setting, ProgramRun run) {
  for (const std::string& program : ExpandProgramPattern(setting)) {
    run.path = program;
    StatusOr<ProgramResult> r = RunProgram(run);
    if (!r.ok()) return std::string(r.status().message());
    if (!r->ok()) return StrCat(program, ": ", r->Describe(run.timeout_ms));
  }
  return std::nullopt;
}

}  // namespace loom::core
