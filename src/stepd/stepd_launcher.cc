#include "stepd/stepd_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/strings.h"

extern char** environ;

namespace loom::stepd {

using core::StrCat;

StepdLauncher::StepdLauncher(StepdLauncherOptions options) : opt_(std::move(options)) {
  // loom-stepd starts in /: relative paths would not find their files there.
  std::error_code ec;
  for (std::string* path : {&opt_.spool, &opt_.slurm_conf}) {
    if (!path->empty()) *path = std::filesystem::absolute(*path, ec).string();
  }
}

StepdPaths StepdLauncher::PathsFor(uint64_t job_id) const {
  return PathsOf(opt_.spool, opt_.node, job_id);
}

namespace {

Status MakeDir(const std::string& dir, mode_t mode) {
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  ::chmod(dir.c_str(), mode);
  return absl::OkStatus();
}

std::optional<PidRecord> ReadPids(const StepdPaths& paths) {
  auto text = ReadFile(paths.pid);
  if (!text.ok()) return std::nullopt;
  auto r = ParsePidRecord(*text, paths.pid);
  if (!r.ok()) return std::nullopt;
  return *r;
}

// Reads everything `fd` delivers until its writers close it or `timeout_ms` passes.
std::string ReadUntilClosed(int fd, int timeout_ms) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

Status StepdLauncher::Start(const v1::LaunchBatchRequest& req) {
  const uint64_t id = req.job_id();
  if (IsRunning(id))
    return absl::AlreadyExistsError(StrCat("job ", id, " is already running here"));
  const StepdPaths paths = PathsFor(id);
  std::error_code ec;
  if (std::filesystem::exists(paths.dir, ec)) {
    if (auto pids = ReadPids(paths); pids && IsAlive(pids->stepd)) {
      return absl::AlreadyExistsError(StrCat("job ", id, " is already running here"));
    }
    std::filesystem::remove_all(paths.dir, ec);  // left by an earlier run of the job
  }
  std::filesystem::create_directories(opt_.spool, ec);
  RETURN_IF_ERROR(MakeDir(StepdRoot(opt_.spool), 0700));
  RETURN_IF_ERROR(MakeDir(paths.dir, 0700));
  std::string bytes;
  if (!req.SerializeToString(&bytes)) {
    return absl::InternalError(StrCat("job ", id, ": cannot serialise the launch request"));
  }
  if (Status written = WriteFileAtomic(paths.launch, bytes, 0600); !written.ok()) {
    std::filesystem::remove_all(paths.dir, ec);
    return written;
  }

  // Everything the children use, prepared before fork (loomd has other threads).
  const std::string job_arg = StrCat(id);
  std::vector<std::string> args = {opt_.stepd_path, "--spool", opt_.spool,  "-N",
                                   opt_.node,       "-f",      opt_.slurm_conf, "--job",
                                   job_arg,         "--ready-fd", "3",     "--detach", "yes"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    std::filesystem::remove_all(paths.dir, ec);
    return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
  }
  // posix_spawn (no copy of loomd's page tables) in a session of its own; loom-stepd then
  // leaves its parent (--detach), so init adopts the supervisor: it outlives loomd and loomd
  // only reaps the short-lived first process.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, ready[1], 3);  // dup2 clears close-on-exec
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_addclosefrom_np(&files, 4);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  pid_t child = -1;
  const int spawned = ::posix_spawn(&child, argv[0], &files, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  ::close(ready[1]);
  if (spawned != 0) {
    ::close(ready[0]);
    std::filesystem::remove_all(paths.dir, ec);
    return absl::FailedPreconditionError(StrCat("job ", id, ": cannot run ", opt_.stepd_path,
                                                ": ", std::strerror(spawned)));
  }
  int status;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string answer =
      std::string(core::Trim(ReadUntilClosed(ready[0], opt_.ready_timeout_s * 1000)));
  ::close(ready[0]);
  if (answer == "ok") {
    jobs_[id] = Entry{};
    if (auto pids = ReadPids(paths)) jobs_[id].pids = *pids;
    return absl::OkStatus();
  }
  // It failed, or said nothing in time: nothing of the job may stay.
  if (auto pids = ReadPids(paths)) {
    if (IsAlive(pids->job)) ::kill(-pids->job.pid, SIGKILL);
    if (IsAlive(pids->stepd)) ::kill(pids->stepd.pid, SIGKILL);
  }
  std::filesystem::remove_all(paths.dir, ec);
  if (answer.starts_with("error ")) {
    return absl::FailedPreconditionError(answer.substr(6));
  }
  return absl::DeadlineExceededError(StrCat("job ", id, ": loom-stepd (", opt_.stepd_path,
                                            ") did not report within ", opt_.ready_timeout_s,
                                            " s; see loomd's log"));
}

Status StepdLauncher::Ask(uint64_t job_id, const ControlRequest& request) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.reaped) {
    return absl::NotFoundError(StrCat("job ", job_id, " is not running on this node"));
  }
  const StepdPaths paths = PathsFor(job_id);
  Status sent = SendRequest(paths.socket, request);
  if (absl::IsUnavailable(sent) && ReadFile(paths.result).ok()) {
    // It ended between two Reap calls: the supervisor has closed its socket.
    return absl::NotFoundError(
        StrCat("job ", job_id, " is not running on this node (it has ended)"));
  }
  return sent;
}

Status StepdLauncher::Signal(uint64_t job_id, int sig) {
  return Ask(job_id, ControlRequest{ControlRequest::Kind::kSignal, sig});
}

Status StepdLauncher::Terminate(uint64_t job_id, int64_t kill_wait_s) {
  return Ask(job_id,
             ControlRequest{ControlRequest::Kind::kTerminate, std::max<int64_t>(0, kill_wait_s)});
}

std::vector<noded::FinishedJob> StepdLauncher::Reap() {
  std::vector<noded::FinishedJob> out;
  for (auto& [id, entry] : jobs_) {
    if (entry.reaped) continue;
    const StepdPaths paths = PathsFor(id);
    if (entry.pids.stepd.pid == 0) {
      if (auto pids = ReadPids(paths)) entry.pids = *pids;
    }
    noded::FinishedJob done;
    done.job_id = id;
    auto text = ReadFile(paths.result);
    if (!text.ok()) {
      // No result yet: the supervisor runs, or died without writing one.
      if (entry.pids.stepd.pid == 0 || IsAlive(entry.pids.stepd)) continue;
      text = ReadFile(paths.result);  // it may have finished just now
    }
    if (text.ok()) {
      StatusOr<StepResult> r = ParseResult(*text, paths.result);
      if (r.ok()) {
        done.pid = entry.pids.job.pid;
        done.wait_status = r->wait_status;
        done.terminated = r->terminated;
        done.killed = r->killed;
        done.user_cpu_us = r->user_cpu_us;
        done.system_cpu_us = r->system_cpu_us;
        done.out_of_memory = r->out_of_memory;
        entry.reaped = true;
        out.push_back(done);
        continue;
      }
      std::fprintf(stderr, "loomd: %s\n", std::string(r.status().message()).c_str());
    }
    // The supervisor is gone without a usable result: whatever it left of the job ends too.
    std::fprintf(stderr, "loomd: job %llu: its loom-stepd (pid %d) ended without a result\n",
                 static_cast<unsigned long long>(id), entry.pids.stepd.pid);
    if (entry.pids.job.pid > 0 && IsAlive(entry.pids.job)) ::kill(-entry.pids.job.pid, SIGKILL);
    done.pid = entry.pids.job.pid;
    done.wait_status = SIGKILL;
    done.killed = true;
    entry.reaped = true;
    out.push_back(done);
  }
  return out;
}

void StepdLauncher::Forget(uint64_t job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || !it->second.reaped) return;
  std::error_code ec;
  std::filesystem::remove_all(PathsFor(job_id).dir, ec);
  jobs_.erase(it);
}

std::vector<uint64_t> StepdLauncher::Recover() {
  std::vector<uint64_t> adopted;
  for (uint64_t id : ListJobs(opt_.spool, opt_.node)) {
    if (jobs_.contains(id)) continue;
    const StepdPaths paths = PathsFor(id);
    Entry entry;
    if (auto pids = ReadPids(paths)) {
      entry.pids = *pids;
    } else if (!ReadFile(paths.result).ok()) {
      // Neither a supervisor nor a result: a launch that never got going.
      std::error_code ec;
      std::filesystem::remove_all(paths.dir, ec);
      continue;
    }
    jobs_[id] = entry;
    adopted.push_back(id);
  }
  return adopted;
}

bool StepdLauncher::IsRunning(uint64_t job_id) const {
  auto it = jobs_.find(job_id);
  return it != jobs_.end() && !it->second.reaped;
}

pid_t StepdLauncher::ScriptPid(uint64_t job_id) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.reaped || !IsAlive(it->second.pids.job)) return 0;
  return it->second.pids.job.pid;
}

std::vector<uint64_t> StepdLauncher::Running() const {
  std::vector<uint64_t> out;
  for (const auto& [id, entry] : jobs_) {
    if (!entry.reaped) out.push_back(id);
  }
  return out;
}

}  // namespace loom::stepd
