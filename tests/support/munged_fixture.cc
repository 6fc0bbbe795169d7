// Starts and stops a private munged; see munged_fixture.h.
#include "tests/support/munged_fixture.h"

#include <fcntl.h>
#include <munge.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "core/strings.h"

namespace loom::test_support {
namespace {

namespace fs = std::filesystem;
using core::StrCat;

// sockaddr_un's sun_path holds 108 bytes including the terminating NUL.
constexpr size_t kMaxSocketPath = 107;

std::string FindProgram(const std::string& configured, const char* name) {
  if (!configured.empty()) return configured;
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/local/sbin"}) {
    std::string path = StrCat(dir, "/", name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  if (const char* path_env = getenv("PATH")) {
    for (std::string_view dir : core::Split(path_env, ':')) {
      if (dir.empty()) continue;
      std::string path = StrCat(dir, "/", name);
      if (access(path.c_str(), X_OK) == 0) return path;
    }
  }
  return name;
}

// Starts `argv` with stdin from /dev/null and stdout/stderr appended to `output`. The child
// gets SIGTERM if the calling thread exits, so a crashed test leaves no daemon behind.
StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& output) {
  int out = open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return absl::InternalError(StrCat("cannot open ", output, ": ", strerror(errno)));
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    close(out);
    return absl::InternalError(StrCat("cannot open /dev/null: ", strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    close_range(3, ~0U, 0);
    execv(args[0], args.data());
    _exit(127);
  }
  int fork_errno = errno;
  close(in);
  close(out);
  if (pid < 0) return absl::InternalError(StrCat("fork failed: ", strerror(fork_errno)));
  return pid;
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return StrCat("exited with status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return StrCat("was killed by signal ", WTERMSIG(status));
  return "stopped";
}

std::string ReadTail(const std::string& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > static_cast<size_t>(lines) ? all.size() - lines : 0; i < all.size();
       ++i) {
    out += all[i];
    out += '\n';
  }
  return out;
}

// Runs a short-lived program to completion.
Status RunToCompletion(const std::vector<std::string>& argv, const std::string& output) {
  ASSIGN_OR_RETURN(pid_t pid, Spawn(argv, output));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(StrCat("waitpid: ", strerror(errno)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(
      StrCat(argv[0], " ", DescribeExit(status), ":\n", ReadTail(output, 20)));
}

bool SocketAnswers(const std::string& socket_path) {
  struct stat st;
  if (stat(socket_path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  munge_ctx_t ctx = munge_ctx_create();
  if (!ctx) return false;
  char* cred = nullptr;
  bool ok = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket_path.c_str()) == EMUNGE_SUCCESS &&
            munge_encode(&cred, ctx, nullptr, 0) == EMUNGE_SUCCESS;
  free(cred);
  munge_ctx_destroy(ctx);
  return ok;
}

StatusOr<std::string> MakePrivateDir() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  // The socket path must fit in sockaddr_un; fall back to /tmp under a deep TMPDIR.
  if (ec || base.string().size() + 40 > kMaxSocketPath) base = "/tmp";
  std::string templ = (base / "loom-munged-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(
        StrCat("cannot create a directory from ", templ, ": ", strerror(errno)));
  }
  // munged insists that every user may traverse its socket's directory, and that no one else
  // may write where its key lives.
  if (chmod(templ.c_str(), 0755) != 0) {
    return absl::InternalError(StrCat("chmod ", templ, ": ", strerror(errno)));
  }
  return templ;
}

}  // namespace

StatusOr<std::unique_ptr<MungedFixture>> MungedFixture::Start(MungedOptions options) {
  std::unique_ptr<MungedFixture> f(new MungedFixture());
  ASSIGN_OR_RETURN(f->dir_, MakePrivateDir());
  f->socket_path_ = StrCat(f->dir_, "/munge.socket");
  f->key_file_ = StrCat(f->dir_, "/munge.key");
  f->log_file_ = StrCat(f->dir_, "/munged.log");
  f->output_file_ = StrCat(f->dir_, "/output.log");
  f->options_ = options;

  if (options.key_file.empty()) {
    RETURN_IF_ERROR(RunToCompletion({FindProgram(options.mungekey_path, "mungekey"), "--create",
                                     StrCat("--keyfile=", f->key_file_)},
                                    f->output_file_));
  } else {
    std::error_code ec;
    fs::copy_file(options.key_file, f->key_file_, ec);
    if (ec) {
      return absl::InternalError(StrCat("cannot copy the munge key ", options.key_file, " to ",
                                        f->key_file_, ": ", ec.message()));
    }
    chmod(f->key_file_.c_str(), 0600);
  }

  RETURN_IF_ERROR(f->Launch());
  return f;
}

Status MungedFixture::Launch() {
  std::vector<std::string> argv = {
      FindProgram(options_.munged_path, "munged"),
      "--foreground",
      "--force",
      StrCat("--socket=", socket_path_),
      StrCat("--key-file=", key_file_),
      StrCat("--pid-file=", dir_, "/munged.pid"),
      StrCat("--log-file=", log_file_),
      StrCat("--seed-file=", dir_, "/munged.seed"),
      "--num-threads=2",
  };
  ASSIGN_OR_RETURN(pid_, Spawn(argv, output_file_));

  absl::Time deadline = absl::Now() + options_.start_timeout;
  while (!SocketAnswers(socket_path_)) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = 0;
      return absl::InternalError(StrCat("munged ", DescribeExit(status), " before answering on ",
                                        socket_path_, ":\n", LogTail(),
                                        ReadTail(output_file_, 10)));
    }
    if (absl::Now() > deadline) {
      std::string log = LogTail();
      (void)Stop();
      return absl::DeadlineExceededError(
          StrCat("munged did not answer on ", socket_path_, " within ",
                 absl::FormatDuration(options_.start_timeout), ":\n", log));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return absl::OkStatus();
}

Status MungedFixture::Restart() {
  // A munged that a loaded machine keeps from exiting within 5 s is killed instead: gone
  // either way, which is all a restart needs.
  if (Status s = Stop(); !s.ok() && !absl::IsDeadlineExceeded(s)) return s;
  return Launch();
}

MungedFixture::~MungedFixture() {
  (void)Stop();
  const char* keep = getenv("LOOM_KEEP_TEST_DIRS");
  if (!dir_.empty() && !(keep && *keep && std::string_view(keep) != "0")) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

Status MungedFixture::Stop() {
  if (pid_ <= 0) return absl::OkStatus();
  // The PID is our unreaped child, so it cannot have been reused by another process.
  pid_t pid = pid_;
  kill(pid, SIGTERM);
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) break;
    if (absl::Now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      pid_ = 0;
      return absl::DeadlineExceededError(
          StrCat("munged (pid ", pid, ") ignored SIGTERM for 5 s and was killed"));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  pid_ = 0;
  return absl::OkStatus();
}

std::string MungedFixture::LogTail() const { return ReadTail(log_file_, 20); }

StatusOr<uint32_t> EnsureTestUser(std::string_view name) {
  std::string user(name);
  auto lookup = [&user]() -> std::optional<uint32_t> {
    passwd pw{};
    std::vector<char> buffer(4096);
    passwd* result = nullptr;
    if (getpwnam_r(user.c_str(), &pw, buffer.data(), buffer.size(), &result) == 0 && result) {
      return static_cast<uint32_t>(pw.pw_uid);
    }
    return std::nullopt;
  };
  if (std::optional<uint32_t> uid = lookup()) return *uid;
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(
        StrCat("test user '", user, "' does not exist and only root can create it"));
  }
  std::string output = StrCat("/tmp/loom-useradd-", getpid(), ".log");
  Status added = RunToCompletion({FindProgram("", "useradd"), "--no-create-home", "--shell",
                                  "/usr/sbin/nologin", "--comment", "Loom test user", user},
                                 output);
  std::error_code ec;
  fs::remove(output, ec);
  // Another test may have created it meanwhile; the lookup decides.
  if (std::optional<uint32_t> uid = lookup()) return *uid;
  return absl::InternalError(StrCat("cannot create test user '", user, "': ", added.ToString()));
}

}  // namespace loom::test_support
