#include "noded/stepd_launcher.h"

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

#include "core/clock.h"
#include "core/log.h"
#include "core/mutex.h"
#include "core/strings.h"
#include "stepd/launch_request.h"
#include "stepd/mpi/wire_up.h"
#include "stepd/spawn.h"

extern char** environ;

namespace loom::noded {

using core::StrCat;

namespace {

// loom-stepd starts in /: relative paths would not find their files there.
StepdLauncherOptions Absolute(StepdLauncherOptions o) {
  std::error_code ec;
  for (std::string* path : {&o.spool, &o.slurm_conf}) {
    if (!path->empty()) *path = std::filesystem::absolute(*path, ec).string();
  }
  return o;
}

}  // namespace

StepdLauncher::StepdLauncher(StepdLauncherOptions options)
    : opt_(Absolute(std::move(options))) {}

stepd::StepdPaths StepdLauncher::PathsFor(const stepd::StepRef& ref) const {
  return stepd::PathsOf(opt_.spool, opt_.node, ref);
}

namespace {

Status MakeDir(const std::string& dir, mode_t mode) {
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  ::chmod(dir.c_str(), mode);
  return absl::OkStatus();
}

std::optional<stepd::PidRecord> ReadPids(const stepd::StepdPaths& paths) {
  auto text = stepd::ReadFile(paths.pid);
  if (!text.ok()) return std::nullopt;
  auto r = stepd::ParsePidRecord(*text, paths.pid);
  if (!r.ok()) return std::nullopt;
  return *r;
}

// Reads everything `fd` delivers until its writers close it or `timeout_ms` passes.
std::string ReadUntilClosed(int fd, int timeout_ms) {
  std::string out;
  const auto deadline = core::RealClock().Monotonic() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - core::RealClock().Monotonic())
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

// The tasks a step's supervisor recorded that still run.
std::vector<stepd::TaskRecord> LiveTasks(const stepd::StepdPaths& paths) {
  auto text = stepd::ReadFile(paths.tasks);
  if (!text.ok()) return {};
  auto tasks = stepd::ParseTaskRecords(*text, paths.tasks);
  if (!tasks.ok()) return {};
  std::erase_if(*tasks, [](const stepd::TaskRecord& t) { return !stepd::IsAlive(t.process); });
  return *std::move(tasks);
}

// Kills what a supervisor that is gone (or never got going) left running: its batch
// script's session, or its step's tasks' sessions, and the supervisor itself.
void KillLeftovers(const stepd::StepdPaths& paths,
                   std::optional<stepd::PidRecord> pids = std::nullopt) {
  if (!pids) pids = ReadPids(paths);
  if (pids && pids->job.pid > 0 && stepd::IsAlive(pids->job)) ::kill(-pids->job.pid, SIGKILL);
  for (const stepd::TaskRecord& t : LiveTasks(paths)) ::kill(-t.process.pid, SIGKILL);
  if (pids && stepd::IsAlive(pids->stepd)) ::kill(pids->stepd.pid, SIGKILL);
}

// The same, and what its MPI wire-up left in /dev/shm or /tmp.
void KillLeftovers(const stepd::StepdPaths& paths, const stepd::StepRef& ref,
                   const std::string& node, std::optional<stepd::PidRecord> pids = std::nullopt) {
  KillLeftovers(paths, pids);
  if (!ref.is_batch()) stepd::RemoveWireUpDirs(ref.job_id, ref.reported_step(), node);
}

// Reads the job's user here, in the long-lived daemon, for the supervisor: a new process
// that asked the name service itself would load its modules (NSS) once per job.
template <typename Request>
void AddNodeUser(Request* req) {
  StatusOr<stepd::JobIdentity> who = stepd::ResolveIdentity(req->uid(), req->gid());
  if (!who.ok()) return;  // the supervisor asks again and reports why
  stepd::KnownUser known;
  known.user = who->user;
  known.groups.assign(who->groups.begin(), who->groups.end());
  *req->mutable_node_user() = KnownUserToWire(known);
}

}  // namespace

Status StepdLauncher::Start(const v1::LaunchBatchRequest& req) {
  v1::LaunchBatchRequest mine = req;
  AddNodeUser(&mine);
  return Spawn(stepd::StepRef::Batch(req.job_id()), mine);
}

Status StepdLauncher::StartStep(const v1::LaunchTasksRequest& req) {
  v1::LaunchTasksRequest mine = req;
  mine.clear_forward();  // loomd passes the launch on itself
  AddNodeUser(&mine);
  return Spawn(req.has_step_id() ? stepd::StepRef::Step(req.job_id(), req.step_id())
                                 : stepd::StepRef::OnlyStep(req.job_id()),
               mine);
}

Status StepdLauncher::WriteHardware(const v1::NodeHardware& hardware) {
  std::error_code ec;
  std::filesystem::create_directories(opt_.spool, ec);
  RETURN_IF_ERROR(MakeDir(stepd::StepdRoot(opt_.spool), 0700));
  return stepd::WriteFileAtomic(stepd::HardwarePath(opt_.spool, opt_.node),
                                hardware.SerializeAsString(), 0600,
                                stepd::Durability::kUntilReboot);
}

Status StepdLauncher::Spawn(const stepd::StepRef& ref,
                            const google::protobuf::MessageLite& launch) {
  const std::string what = stepd::Describe(ref);
  const stepd::StepdPaths paths = PathsFor(ref);
  std::error_code ec;
  {
    // The name is claimed (a starting entry) before the lock goes: a second launch of the
    // same script or step is refused, and Reap passes over it until it has started.
    core::MutexLock lock(&mu_);
    auto it = supervised_.find(ref);
    if (it != supervised_.end() && !it->second.reaped) {
      return absl::AlreadyExistsError(StrCat(what, " is already running here"));
    }
    if (std::filesystem::exists(paths.dir, ec)) {
      if (auto pids = ReadPids(paths); pids && stepd::IsAlive(pids->stepd)) {
        return absl::AlreadyExistsError(StrCat(what, " is already running here"));
      }
      std::filesystem::remove_all(paths.dir, ec);  // left by an earlier run of the job
    }
    Entry starting;
    starting.starting = true;
    supervised_[ref] = starting;
  }
  auto give_up = [&](const Status& why) {
    KillLeftovers(paths);
    std::filesystem::remove_all(paths.dir, ec);
    core::MutexLock lock(&mu_);
    supervised_.erase(ref);
    return why;
  };
  std::filesystem::create_directories(opt_.spool, ec);
  if (Status s = MakeDir(stepd::StepdRoot(opt_.spool), 0700); !s.ok()) return give_up(s);
  if (Status s = MakeDir(paths.dir, 0700); !s.ok()) return give_up(s);
  std::string bytes;
  if (!launch.SerializeToString(&bytes)) {
    return give_up(absl::InternalError(StrCat(what, ": cannot serialise the launch request")));
  }
  if (Status written =
          stepd::WriteFileAtomic(paths.launch, bytes, 0600, stepd::Durability::kUntilReboot);
      !written.ok()) {
    return give_up(written);
  }
  StatusOr<std::string> answer = StartAndWait(ref);
  if (!answer.ok()) return give_up(answer.status());
  if (*answer == "ok") {
    core::MutexLock lock(&mu_);
    Entry& entry = supervised_[ref];
    entry.starting = false;
    if (auto pids = ReadPids(paths)) entry.pids = *pids;
    return absl::OkStatus();
  }
  // It failed, or said nothing in time: nothing of it may stay.
  if (answer->starts_with("error ")) {
    return give_up(absl::FailedPreconditionError(answer->substr(6)));
  }
  return give_up(absl::DeadlineExceededError(
      StrCat(what, ": loom-stepd (", opt_.stepd_path, ") did not report within ",
             opt_.ready_timeout_s, " s; see loomd's log")));
}

StatusOr<std::string> StepdLauncher::StartAndWait(const stepd::StepRef& ref) {
  // Everything the children use, prepared before the spawn (loomd has other threads).
  std::vector<std::string> args = {opt_.stepd_path, "--spool",    opt_.spool, "-N",
                                   opt_.node,       "-f",         opt_.slurm_conf, "--job",
                                   StrCat(ref.job_id), "--ready-fd", "3",        "--detach",
                                   "yes"};
  if (!ref.is_batch()) {
    args.push_back("--step");
    args.push_back(stepd::StepArg(ref));
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) {
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
    return absl::FailedPreconditionError(StrCat(stepd::Describe(ref), ": cannot run ",
                                                opt_.stepd_path, ": ", std::strerror(spawned)));
  }
  int status;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::string answer =
      std::string(core::Trim(ReadUntilClosed(ready[0], opt_.ready_timeout_s * 1000)));
  ::close(ready[0]);
  return answer;
}

Status StepdLauncher::Ask(const stepd::StepRef& ref, const stepd::ControlRequest& request) {
  if (!IsRunning(ref)) {
    return absl::NotFoundError(StrCat(stepd::Describe(ref), " is not running on this node"));
  }
  const stepd::StepdPaths paths = PathsFor(ref);
  Status sent = stepd::SendRequest(paths.socket, request);  // no lock held: it may take seconds
  if (absl::IsUnavailable(sent) && stepd::ReadFile(paths.result).ok()) {
    // It ended between two Reap calls: the supervisor has closed its socket.
    return absl::NotFoundError(
        StrCat(stepd::Describe(ref), " is not running on this node (it has ended)"));
  }
  return sent;
}

Status StepdLauncher::Signal(const stepd::StepRef& ref, int sig) {
  return Ask(ref, stepd::ControlRequest{stepd::ControlRequest::Kind::kSignal, sig});
}

Status StepdLauncher::Terminate(const stepd::StepRef& ref, int64_t kill_wait_s) {
  return Ask(ref, stepd::ControlRequest{stepd::ControlRequest::Kind::kTerminate,
                                        std::max<int64_t>(0, kill_wait_s)});
}

std::vector<StepdLauncher::Ended> StepdLauncher::Reap() {
  std::vector<Ended> out;
  core::MutexLock lock(&mu_);
  for (auto& [ref, entry] : supervised_) {
    if (!entry.running()) continue;
    const stepd::StepdPaths paths = PathsFor(ref);
    if (entry.pids.stepd.pid == 0) {
      if (auto pids = ReadPids(paths)) entry.pids = *pids;
    }
    stepd::FinishedJob done;
    done.job_id = ref.job_id;
    auto text = stepd::ReadFile(paths.result);
    if (!text.ok()) {
      // No result yet: the supervisor runs, or died without writing one.
      if (entry.pids.stepd.pid == 0 || stepd::IsAlive(entry.pids.stepd)) continue;
      text = stepd::ReadFile(paths.result);  // it may have finished just now
    }
    if (text.ok()) {
      StatusOr<stepd::StepResult> r = stepd::ParseResult(*text, paths.result);
      if (r.ok()) {
        done.pid = entry.pids.job.pid;
        done.wait_status = r->wait_status;
        done.terminated = r->terminated;
        done.killed = r->killed;
        done.user_cpu_us = r->user_cpu_us;
        done.system_cpu_us = r->system_cpu_us;
        done.max_rss_bytes = r->max_rss_bytes;
        done.out_of_memory = r->out_of_memory;
        entry.reaped = true;
        out.push_back(Ended{ref, done});
        continue;
      }
      core::LogError("{}", r.status().message());
    }
    // The supervisor is gone without a usable result: whatever it left runs no longer.
    core::LogError("{}: its loom-stepd (pid {}) ended without a result", stepd::Describe(ref),
                   entry.pids.stepd.pid);
    KillLeftovers(paths, ref, opt_.node, entry.pids);
    done.pid = entry.pids.job.pid;
    done.wait_status = SIGKILL;
    done.killed = true;
    entry.reaped = true;
    out.push_back(Ended{ref, done});
  }
  return out;
}

void StepdLauncher::Forget(const stepd::StepRef& ref) {
  core::MutexLock lock(&mu_);
  auto it = supervised_.find(ref);
  if (it == supervised_.end() || !it->second.reaped) return;
  std::error_code ec;
  std::filesystem::remove_all(PathsFor(ref).dir, ec);
  supervised_.erase(it);
}

StepdLauncher::~StepdLauncher() {
  core::MutexLock lock(&mu_);
  for (const auto& [ref, fd] : watched_) ::close(fd);
}

void StepdLauncher::WaitForEnd(std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  {
    core::MutexLock lock(&mu_);
    for (auto it = watched_.begin(); it != watched_.end();) {
      auto s = supervised_.find(it->first);
      if (s != supervised_.end() && s->second.running()) {
        ++it;
        continue;
      }
      ::close(it->second);  // reaped (its pidfd reads ready for good) or forgotten
      it = watched_.erase(it);
    }
    for (const auto& [ref, entry] : supervised_) {
      if (!entry.running() || entry.pids.stepd.pid == 0 || watched_.contains(ref)) continue;
      const int fd = stepd::OpenPidFd(entry.pids.stepd.pid);
      if (fd >= 0) watched_[ref] = fd;
    }
    for (const auto& [ref, fd] : watched_) fds.push_back({fd, POLLIN, 0});
  }
  (void)::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
}

std::vector<stepd::StepRef> StepdLauncher::Recover() {
  std::vector<stepd::StepRef> adopted;
  core::MutexLock lock(&mu_);
  for (const stepd::StepRef& ref : stepd::ListSupervised(opt_.spool, opt_.node)) {
    if (supervised_.contains(ref)) continue;
    const stepd::StepdPaths paths = PathsFor(ref);
    Entry entry;
    if (auto pids = ReadPids(paths)) {
      entry.pids = *pids;
    } else if (!stepd::ReadFile(paths.result).ok()) {
      // Neither a supervisor nor a result: a launch that never got going.
      std::error_code ec;
      std::filesystem::remove_all(paths.dir, ec);
      continue;
    }
    supervised_[ref] = entry;
    adopted.push_back(ref);
  }
  return adopted;
}

bool StepdLauncher::IsRunningLocked(const stepd::StepRef& ref) const {
  auto it = supervised_.find(ref);
  return it != supervised_.end() && it->second.running();
}

bool StepdLauncher::IsRunning(const stepd::StepRef& ref) const {
  core::MutexLock lock(&mu_);
  return IsRunningLocked(ref);
}

pid_t StepdLauncher::ScriptPid(uint64_t job_id) const {
  core::MutexLock lock(&mu_);
  auto it = supervised_.find(stepd::StepRef::Batch(job_id));
  if (it == supervised_.end() || !it->second.running() || !stepd::IsAlive(it->second.pids.job))
    return 0;
  return it->second.pids.job.pid;
}

std::vector<stepd::TaskRecord> StepdLauncher::StepTasks(const stepd::StepRef& ref) const {
  if (ref.is_batch() || !IsRunning(ref)) return {};
  return LiveTasks(PathsFor(ref));
}

std::vector<stepd::StepRef> StepdLauncher::Of(uint64_t job_id) const {
  core::MutexLock lock(&mu_);
  std::vector<stepd::StepRef> out;
  for (auto it = supervised_.lower_bound(stepd::StepRef::Batch(job_id));
       it != supervised_.end() && it->first.job_id == job_id; ++it) {
    if (it->second.running()) out.push_back(it->first);
  }
  return out;
}

std::vector<stepd::StepRef> StepdLauncher::RunningLocked() const {
  std::vector<stepd::StepRef> out;
  for (const auto& [ref, entry] : supervised_) {
    if (entry.running()) out.push_back(ref);
  }
  return out;
}

std::vector<stepd::StepRef> StepdLauncher::Running() const {
  core::MutexLock lock(&mu_);
  return RunningLocked();
}

std::vector<uint64_t> StepdLauncher::RunningJobs() const {
  core::MutexLock lock(&mu_);
  std::vector<uint64_t> out;
  for (const stepd::StepRef& ref : RunningLocked()) {
    if (out.empty() || out.back() != ref.job_id) out.push_back(ref.job_id);
  }
  return out;
}

}  // namespace loom::noded
