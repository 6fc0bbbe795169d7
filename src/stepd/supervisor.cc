#include "stepd/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/log.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "stepd/mpi/wire_up.h"

namespace loom::stepd {
namespace {

// After an abort, the ranks left get SIGTERM and, this much later, SIGKILL: they are stuck
// in a collective that will never complete.
constexpr int64_t kAbortKillWaitS = 1;

}  // namespace

using core::StrCat;

BatchSupervisor::BatchSupervisor(SupervisorOptions options)
    : opt_(std::move(options)), launcher_(opt_.settings, *opt_.clock) {}

int64_t BatchSupervisor::NowMs() const { return opt_.clock->MonotonicMs(); }

Status BatchSupervisor::Start() {
  if (pid_ != 0)
    return absl::AlreadyExistsError(StrCat("job ", opt_.job.job_id, " already started"));
  std::vector<int> fds;
  auto close_fds = [&fds] {
    for (int fd : fds) ::close(fd);
    fds.clear();
  };
  if (opt_.cgroups != nullptr) {
    StatusOr<std::unique_ptr<stepd::StepCgroup>> made =
        opt_.cgroups->Create(opt_.job.job_id, "batch", opt_.limits);
    if (!made.ok()) {
      return Status(made.status().code(),
                    StrCat("job ", opt_.job.job_id,
                           ": cannot make its cgroup: ", std::string(made.status().message())));
    }
    cgroup_ = *std::move(made);
    for (const std::string& file : cgroup_->ProcsFiles()) {
      const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) {
        const int err = errno;
        close_fds();
        (void)cgroup_->Remove();
        cgroup_.reset();
        return absl::InternalError(
            StrCat("job ", opt_.job.job_id, ": cannot open ", file, ": ", std::strerror(err)));
      }
      fds.push_back(fd);
    }
  }
  StatusOr<pid_t> pid = launcher_.Start(opt_.job, opt_.spool, fds);
  close_fds();
  if (!pid.ok()) {
    if (cgroup_) {
      (void)cgroup_->KillAll();
      (void)cgroup_->Remove();
      cgroup_.reset();
    }
    return pid.status();
  }
  pid_ = *pid;
  const int64_t limit = opt_.job.time_limit_s;
  if (limit > 0 && limit < core::kUnlimitedSeconds / 2000) {
    backstop_at_ms_ = NowMs() + (limit + std::max<int64_t>(0, opt_.backstop_grace_s)) * 1000;
  }
  return absl::OkStatus();
}

Status BatchSupervisor::Signal(int sig) {
  if (pid_ == 0 || done_) {
    return absl::FailedPreconditionError(StrCat("job ", opt_.job.job_id, " is not running"));
  }
  return launcher_.Signal(opt_.job.job_id, sig);
}

Status BatchSupervisor::Terminate(int64_t kill_wait_s) {
  if (pid_ == 0 || done_) {
    return absl::FailedPreconditionError(StrCat("job ", opt_.job.job_id, " is not running"));
  }
  return launcher_.Terminate(opt_.job.job_id, kill_wait_s);
}

std::optional<int64_t> BatchSupervisor::NextDeadlineMs() const {
  if (done_) return std::nullopt;
  std::optional<int64_t> next = launcher_.NextDeadlineMs();
  if (backstop_at_ms_ && (!next || *backstop_at_ms_ < *next)) next = backstop_at_ms_;
  return next;
}

std::optional<StepResult> BatchSupervisor::Poll() {
  if (pid_ == 0 || done_) return std::nullopt;
  if (backstop_at_ms_ && NowMs() >= *backstop_at_ms_) {
    backstop_at_ms_.reset();
    timed_out_ = true;
    (void)launcher_.Terminate(opt_.job.job_id, opt_.settings.kill_wait_s);
  }
  std::vector<stepd::FinishedJob> ended = launcher_.Reap();
  if (ended.empty()) return std::nullopt;
  done_ = true;
  return Finish(ended.front());
}

StepResult BatchSupervisor::Finish(const stepd::FinishedJob& ended) {
  StepResult r;
  r.job_id = opt_.job.job_id;
  r.wait_status = ended.wait_status;
  r.terminated = ended.terminated;
  r.killed = ended.killed;
  r.timed_out = timed_out_;
  r.user_cpu_us = ended.user_cpu_us;
  r.system_cpu_us = ended.system_cpu_us;
  r.max_rss_bytes = ended.max_rss_bytes;
  if (!cgroup_) return r;
  // Processes that left the script's process group (setsid, daemons) end with the job.
  for (int i = 0; i < 20 && !cgroup_->Pids().empty(); ++i) {
    (void)cgroup_->KillAll();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (StatusOr<stepd::CgroupUsage> usage = cgroup_->Usage(); usage.ok()) {
    r.out_of_memory = usage->oom_kills > 0;
    r.cgroup_cpu_us = usage->cpu_usec;
    r.max_rss_bytes = std::max(r.max_rss_bytes, usage->memory_peak_bytes);
  }
  if (Status removed = cgroup_->Remove(); !removed.ok()) {
    core::LogError("{} {}", core::JobId{r.job_id}, removed.message());
  }
  cgroup_.reset();
  return r;
}

StepSupervisor::StepSupervisor(StepSupervisorOptions options)
    : opt_(std::move(options)),
      launcher_(opt_.settings, opt_.io_timeout_ms, opt_.confine) {}

std::optional<uint32_t> StepSupervisor::step_id() const {
  if (!opt_.step.placement) return std::nullopt;
  return opt_.step.placement->step_id;
}

Status StepSupervisor::Start() {
  // StartWireUp starts nothing for a step without MPI.
  return launcher_.Start(opt_.step, [this] {
    return StartWireUp(opt_.step, opt_.relay_socket, [this](const std::string& why) {
      core::LogInfo("job {}: {}; ending the step's tasks here", opt_.step.job.job_id, why);
      // Called on the wire-up's threads, which Terminate leaves alone.
      (void)launcher_.Terminate(opt_.step.job.job_id, kAbortKillWaitS, step_id());
    });
  });
}

std::vector<TaskRecord> StepSupervisor::Tasks() const {
  std::vector<TaskRecord> out;
  for (const stepd::StepLauncher::TaskPid& t : launcher_.TaskPids(opt_.step.job.job_id)) {
    if (auto ref = RefOf(t.pid)) out.push_back(TaskRecord{t.task, *ref});
  }
  return out;
}

Status StepSupervisor::Signal(int sig) {
  if (done_) return absl::FailedPreconditionError("the step's tasks have ended");
  return launcher_.Signal(opt_.step.job.job_id, sig, step_id());
}

Status StepSupervisor::Terminate(int64_t kill_wait_s) {
  if (done_) return absl::FailedPreconditionError("the step's tasks have ended");
  terminated_ = true;
  return launcher_.Terminate(opt_.step.job.job_id, kill_wait_s, step_id());
}

std::optional<StepResult> StepSupervisor::Poll() {
  if (done_) return std::nullopt;
  for (const stepd::FinishedStep& f : launcher_.Reap()) {
    done_ = true;
    StepResult r;
    r.job_id = f.job_id;
    r.wait_status = f.wait_status;
    r.out_of_memory = f.out_of_memory;
    r.terminated = f.terminated || terminated_;
    r.killed = f.killed;
    r.user_cpu_us = f.user_cpu_us;
    r.system_cpu_us = f.system_cpu_us;
    r.cgroup_cpu_us = f.cgroup_cpu_us;
    r.max_rss_bytes = f.max_rss_bytes;
    return r;
  }
  return std::nullopt;
}

}  // namespace loom::stepd
