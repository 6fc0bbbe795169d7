#include "stepd/step_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/strings.h"
#include "loom/v1/loom.pb.h"
#include "model/job_request.h"
#include "model/step.h"
#include "rpc/frame.h"
#include "stepd/mpi/wire_up.h"
#include "stepd/records.h"
#include "stepd/task_scripts.h"

namespace loom::stepd {
namespace {

using core::StrCat;

int64_t NowMs() { return core::RealClock().MonotonicMs(); }

// How long a task's pipes may stay open after the task ended (held by a process that left
// its process group) before they are closed and the task counts as done.
constexpr int64_t kDrainAfterExitMs = 2000;
// How long the I/O thread sleeps when nothing happens: the latency of noticing an exit
// where the kernel offers no pidfd (before Linux 5.3) and the task's output goes to files.
constexpr int kPollMs = 100;

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

// ------------------------------------------------------------------------------ helpers

std::vector<std::string> OutputChunker::Add(std::string_view bytes) {
  std::vector<std::string> out;
  if (unbuffered_) {
    for (size_t at = 0; at < bytes.size(); at += max_chunk_) {
      out.emplace_back(bytes.substr(at, max_chunk_));
    }
    return out;
  }
  pending_.append(bytes);
  size_t start = 0;
  while (start < pending_.size()) {
    const size_t nl = pending_.find('\n', start);
    const size_t end = nl == std::string::npos ? pending_.size() : nl + 1;
    if (end - start > max_chunk_) {
      out.push_back(pending_.substr(start, max_chunk_));
      start += max_chunk_;
    } else if (nl != std::string::npos) {
      out.push_back(pending_.substr(start, end - start));
      start = end;
    } else {
      break;  // a line not yet ended
    }
  }
  pending_.erase(0, start);
  return out;
}

std::optional<std::string> OutputChunker::Flush() {
  if (pending_.empty()) return std::nullopt;
  std::string rest = std::move(pending_);
  pending_.clear();
  return rest;
}

std::string FindCommand(const std::string& name, const std::string& path,
                        const std::string& work_dir) {
  if (name.empty() || name.find('/') != std::string::npos) return name;
  for (std::string_view dir : core::Split(path, ':')) {
    std::string base = dir.empty() ? "." : std::string(dir);
    if (base[0] != '/' && !work_dir.empty()) {
      base = StrCat(work_dir, work_dir.back() == '/' ? "" : "/", base);
    }
    const std::string candidate = StrCat(base, "/", name);
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return name;
}

// -------------------------------------------------------------------------- the launcher

struct StepLauncher::Task {
  int32_t id = 0;
  pid_t pid = 0;
  // Readable once the task has ended (pidfd_open), so that its end is seen at once rather
  // than at the next poll; -1 where the kernel has no pidfds. The I/O thread's.
  int pid_fd = -1;
  // Owned by the I/O thread once it runs.
  int out_fd = -1;
  int err_fd = -1;
  OutputChunker out, err;
  bool exit_sent = false;
  // Guarded by the launcher's mu_ (Signal and Terminate read them).
  bool reaped = false;
  int wait_status = 0;
  int64_t reaped_at_ms = 0;
  int64_t user_cpu_us = 0;  // the task and the children it waited for
  int64_t system_cpu_us = 0;
  int64_t max_rss_bytes = 0;
  // Its task epilogs (task_scripts.h), run by the I/O thread once it has ended.
  std::vector<std::string> epilogs;
  core::ProgramRun epilog_run;
};

struct StepLauncher::Step {
  ~Step() {
    CloseFd(wake_read);
    CloseFd(wake_write);
    for (Task& t : tasks) {
      CloseFd(t.out_fd);
      CloseFd(t.err_fd);
      CloseFd(t.pid_fd);
    }
  }

  model::JobId job_id = 0;
  std::optional<uint32_t> step_id;           // unset: the job's only step
  std::optional<rpc::FrameConnection> srun;  // unset once srun is gone; I/O thread's
  std::vector<Task> tasks;
  int wake_read = -1, wake_write = -1;  // a pipe that wakes the I/O thread
  std::thread io;
  // Guarded by mu_.
  bool terminated = false;
  bool killed = false;
  std::optional<int64_t> kill_at_ms;
  bool finished = false;
  bool stop = false;  // the launcher is being destroyed
  int64_t cgroup_cpu_us = 0;  // from the step's cgroup, when confined
  int64_t max_rss_bytes = 0;
  model::StepStatus status;
  std::unique_ptr<StepCgroup> cgroup;  // null: not confined
  bool out_of_memory = false;          // the OOM killer ended some process in its cgroup
  std::unique_ptr<WireUp> wire_up;     // MPI wire-up; the I/O thread's once it runs
};

StepLauncher::StepLauncher(NodeSettings settings, int io_timeout_ms, ConfineStep confine)
    : settings_(std::move(settings)),
      io_timeout_ms_(io_timeout_ms),
      confine_(std::move(confine)),
      finished_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

StepLauncher::~StepLauncher() {
  std::vector<Step*> all;
  {
    core::MutexLock lock(&mu_);
    for (auto& [id, step] : steps_) {
      step->stop = true;
      all.push_back(step.get());
    }
  }
  for (Step* step : all) {
    char c = 0;
    (void)::write(step->wake_write, &c, 1);
  }
  for (Step* step : all) {
    if (step->io.joinable()) step->io.join();
  }
  if (finished_fd_ >= 0) ::close(finished_fd_);
}

bool StepLauncher::IsRunning(model::JobId job, std::optional<uint32_t> step) const {
  core::MutexLock lock(&mu_);
  for (const auto& [key, s] : steps_) {
    if (key.first == job && (!step || key.second == step)) return true;
  }
  return false;
}

std::vector<StepLauncher::Step*> StepLauncher::Matching(model::JobId job,
                                                        std::optional<uint32_t> step) const {
  std::vector<Step*> out;
  for (const auto& [key, s] : steps_) {
    if (key.first == job && (!step || key.second == step) && !s->finished) out.push_back(s.get());
  }
  return out;
}

Status StepLauncher::Start(const StepJob& step_job, const StartWireUpFn& wire_up) {
  const BatchJob& job = step_job.job;
  auto fail = [&job](const Status& status) {
    return Status(status.code(), StrCat("job ", job.job_id, ": ", std::string(status.message())));
  };
  RETURN_IF_ERROR(ValidateBatchJob(job));
  if (step_job.argv.empty()) {
    return absl::InvalidArgumentError(StrCat("job ", job.job_id, ": the step has no command"));
  }
  const std::optional<uint32_t> step_id =
      step_job.placement ? std::optional<uint32_t>(step_job.placement->step_id) : std::nullopt;
  const StepKey key{job.job_id, step_id};
  {
    core::MutexLock lock(&mu_);
    if (steps_.contains(key)) {
      return absl::AlreadyExistsError(
          step_id ? StrCat("step ", job.job_id, ".", *step_id, " is already running here")
                  : StrCat("job ", job.job_id, " is already running here"));
    }
  }
  // This node's task ids, in the order of their local ids.
  std::vector<int32_t> ids;
  if (step_job.placement) {
    ids = step_job.placement->task_ids;
    if (ids.empty()) {
      return fail(
          absl::InvalidArgumentError(StrCat("step ", *step_id, " has no task on this node")));
    }
  } else {
    ids = model::TaskIds(TasksPerNode(job), step_job.distribution)[job.node_index];
  }
  const int32_t count = static_cast<int32_t>(ids.size());

  auto step = std::make_unique<Step>();
  step->job_id = job.job_id;
  step->step_id = step_id;
  auto connected = rpc::FrameConnection::Connect(step_job.io_host, step_job.io_port, 5000);
  // Not Unavailable: this node is fine, srun is not (the controller would blame the node).
  if (!connected.ok()) {
    return fail(absl::FailedPreconditionError(
        StrCat("srun at ", step_job.io_host, ":", step_job.io_port,
               " cannot be reached: ", std::string(connected.status().message()))));
  }
  step->srun.emplace(*std::move(connected));
  v1::StepIo hello;
  hello.mutable_hello()->set_job_id(job.job_id);
  hello.mutable_hello()->set_key(step_job.io_key);
  hello.mutable_hello()->set_node(job.node_name);
  hello.mutable_hello()->set_node_index(job.node_index);
  for (int32_t t : ids) hello.mutable_hello()->add_tasks(t);
  if (Status said = step->srun->Send(hello.SerializeAsString(), io_timeout_ms_); !said.ok()) {
    return fail(
        absl::FailedPreconditionError(StrCat("srun at ", step_job.io_host, ":", step_job.io_port,
                                             " stopped answering: ", std::string(said.message()))));
  }

  // From here on, srun hears why the launch failed.
  std::vector<pid_t> started;
  auto abort = [&](const Status& why) {
    for (pid_t pid : started) {
      ::kill(-pid, SIGKILL);
      while (!ReapIfEnded(pid)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (Task& t : step->tasks) {
      CloseFd(t.out_fd);
      CloseFd(t.err_fd);
    }
    if (step->cgroup) {
      (void)step->cgroup->KillAll();
      (void)step->cgroup->Remove();
      step->cgroup.reset();
    }
    const Status failure = fail(why);
    v1::StepIo message;
    message.mutable_failure()->set_message(
        StrCat("launch failed on ", job.node_name, ": ", std::string(why.message())));
    (void)step->srun->Send(message.SerializeAsString(), io_timeout_ms_);
    return failure;
  };

  StatusOr<JobIdentity> who = IdentityOf(job);
  if (!who.ok()) return abort(who.status());
  if (wire_up) {
    StatusOr<std::unique_ptr<WireUp>> started_wire_up = wire_up();
    if (!started_wire_up.ok()) return abort(started_wire_up.status());
    step->wire_up = *std::move(started_wire_up);
  }
  // What each task may use: decided in one place (BindStep), for the step's tasks here.
  StatusOr<model::StepBinding> binding =
      BindStep(job, step_job.node_cpus, step_job.binding, ids, settings_);
  if (!binding.ok()) return abort(binding.status());
  const bool cpu_verbose = !step_job.binding.cpu_bind.empty() &&
                           model::ParseCpuBind(step_job.binding.cpu_bind).value().verbose;
  const bool gpu_verbose = !step_job.binding.gpu_bind.empty() &&
                           model::ParseGpuBind(step_job.binding.gpu_bind).value().verbose;
  const std::map<std::string, std::string> cpu_bind_env =
      CpuBindEnvironment(*binding, cpu_verbose);
  const bool bound = binding->cpu_bind != model::CpuBindType::kNone &&
                     binding->cpu_bind != model::CpuBindType::kAuto;
  // The step's cgroup, which every task joins before it takes the job's user.
  std::vector<int> procs_fds;
  auto close_procs = [&procs_fds] {
    for (int& fd : procs_fds) CloseFd(fd);
    procs_fds.clear();
  };
  if (confine_) {
    StatusOr<std::unique_ptr<StepCgroup>> cgroup =
        confine_(step_job, step_id ? std::to_string(*step_id) : std::string("srun"));
    if (!cgroup.ok()) return abort(cgroup.status());
    step->cgroup = *std::move(cgroup);
    if (step->cgroup) {
      for (const std::string& file : step->cgroup->ProcsFiles()) {
        const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
          close_procs();
          return abort(absl::InternalError(StrCat("cannot open ", file, ": ", ErrnoText(errno))));
        }
        procs_fds.push_back(fd);
      }
    }
  }
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return abort(absl::InternalError(StrCat("pipe: ", ErrnoText(errno))));
  }
  step->wake_read = wake[0];
  step->wake_write = wake[1];

  model::OutputPatternContext context;
  context.job_id = job.job_id;
  context.job_name = job.name;
  context.user = job.user.empty() ? who->user.name : job.user;
  context.node_name = job.node_name;
  context.node_index = job.node_index;
  context.step_id = step_id.value_or(0);
  const bool append = job.open_mode == model::OpenMode::kAppend ||
                      (job.open_mode == model::OpenMode::kDefault && settings_.job_file_append);
  for (int32_t local = 0; local < count; ++local) {
    Task& task = step->tasks.emplace_back();
    task.id = ids[local];
    task.out = OutputChunker(step_job.unbuffered);
    task.err = OutputChunker(step_job.unbuffered);
    ProcessSpec spec;
    spec.who = *who;
    spec.work_dir = job.work_dir;
    spec.append = append;
    spec.on_failure = ProcessSpec::OnFailure::kExitWithErrno;
    StepTask about{task.id, local, step_job.io_host, step_job.io_port};
    about.placement = step_job.placement ? &*step_job.placement : nullptr;
    const model::TaskBinding& mine = binding->tasks[static_cast<size_t>(local)];
    about.binding = &mine;
    about.cpu_bind_env = &cpu_bind_env;
    spec.environment = TaskEnvironment(job, settings_, who->user, about);
    if (step->wire_up) {
      StatusOr<std::map<std::string, std::string>> added = step->wire_up->TaskEnvironment(task.id);
      if (!added.ok()) {
        close_procs();
        return abort(added.status());
      }
      for (auto& [key, value] : *added) spec.environment[key] = std::move(value);
      spec.inherit_fd = step->wire_up->TaskDescriptor(task.id);
    }
    if (bound) spec.cpu_affinity = mine.cpus.ToVector();
    spec.cgroup_procs_fds = procs_fds;
    if (cpu_verbose) {
      // "cpu-bind-cores=MASK - n1, task  0  0 [PID]: mask 0x3 set": the child puts its pid in.
      const std::string line = model::CpuBindVerboseLine(*binding, mine, job.node_name, 0);
      const size_t pid_at = line.find("[0]");
      spec.notice_head = line.substr(0, pid_at + 1);
      spec.notice_tail = line.substr(pid_at + 2) + "\n";
    }
    if (gpu_verbose) {
      model::StepOnNode step_here;
      step_here.gpus = job.gpus;
      spec.notice_tail += model::GpuBindVerboseLine(step_here, mine) + "\n";
    }
    spec.umask = UmaskOf(spec.environment);
    spec.argv = step_job.argv;
    auto path = spec.environment.find("PATH");
    spec.program = FindCommand(step_job.argv.front(),
                               path == spec.environment.end() ? "" : path->second, job.work_dir);
    context.task_id = task.id;
    auto expand = [&context](const std::string& p) {
      return p.empty() ? p : model::ExpandOutputPattern(p, context);
    };
    spec.in.path = step_job.stdin_pattern.empty() ? "/dev/null" : expand(step_job.stdin_pattern);
    int child_out = -1, child_err = -1;
    auto make_pipe = [&](int* parent_end, int* child_end) -> Status {
      int p[2];
      if (::pipe2(p, O_CLOEXEC) != 0)
        return absl::InternalError(StrCat("pipe: ", ErrnoText(errno)));
      *parent_end = p[0];
      *child_end = p[1];
      return absl::OkStatus();
    };
    Status piped = absl::OkStatus();
    if (step_job.stdout_pattern.empty()) {
      piped = make_pipe(&task.out_fd, &child_out);
      spec.out.fd = child_out;
    } else {
      spec.out.path = expand(step_job.stdout_pattern);
    }
    if (piped.ok() && step_job.stderr_pattern.empty()) {
      piped = make_pipe(&task.err_fd, &child_err);
      spec.err.fd = child_err;
    } else {
      spec.err.path = expand(step_job.stderr_pattern);  // the same as stdout's: one file
    }
    // The task prologs, which may change its environment and print to its output first.
    const TaskScripts scripts = TaskScriptsFor(settings_, spec.environment);
    if (piped.ok() && !scripts.prologs.empty()) {
      StatusOr<std::string> printed = RunTaskPrologs(scripts.prologs, &spec);
      if (!printed.ok()) {
        piped = printed.status();
      } else if (!printed->empty() && child_out >= 0) {
        // Into the pipe before the task runs: at most what the pipe holds without a reader.
        const size_t n = std::min<size_t>(printed->size(), 4096);
        (void)!::write(child_out, printed->data(), n);
      }
    }
    if (!scripts.epilogs.empty()) {
      task.epilogs = scripts.epilogs;
      task.epilog_run = TaskProgramRun(spec);
    }
    StatusOr<pid_t> pid = piped.ok() ? SpawnProcess(spec) : StatusOr<pid_t>(piped);
    if (child_out >= 0) ::close(child_out);
    if (child_err >= 0) ::close(child_err);
    if (step->wire_up) step->wire_up->TaskStarted(task.id);
    if (!pid.ok()) {
      close_procs();
      return abort(pid.status());
    }
    task.pid = *pid;
    task.pid_fd = OpenPidFd(*pid);
    started.push_back(*pid);
  }
  close_procs();
  for (Task& t : step->tasks) {
    if (t.out_fd >= 0) ::fcntl(t.out_fd, F_SETFL, O_NONBLOCK);
    if (t.err_fd >= 0) ::fcntl(t.err_fd, F_SETFL, O_NONBLOCK);
  }

  core::MutexLock lock(&mu_);
  Step* raw = step.get();
  steps_.emplace(key, std::move(step));
  raw->io = std::thread([this, raw] { RunIo(raw); });
  return absl::OkStatus();
}

Status StepLauncher::Signal(model::JobId job, int sig, std::optional<uint32_t> step) {
  core::MutexLock lock(&mu_);
  const std::vector<Step*> found = Matching(job, step);
  if (found.empty()) {
    return absl::NotFoundError(
        step ? StrCat("step ", job, ".", *step, " is not running on this node")
             : StrCat("job ", job, " is not running on this node"));
  }
  for (Step* s : found) {
    for (const Task& t : s->tasks) {
      if (!t.reaped) ::kill(-t.pid, sig);
    }
  }
  return absl::OkStatus();
}

Status StepLauncher::Terminate(model::JobId job, int64_t kill_wait_s,
                               std::optional<uint32_t> step) {
  core::MutexLock lock(&mu_);
  const std::vector<Step*> found = Matching(job, step);
  if (found.empty()) {
    return absl::NotFoundError(
        step ? StrCat("step ", job, ".", *step, " is not running on this node")
             : StrCat("job ", job, " is not running on this node"));
  }
  for (Step* s : found) RETURN_IF_ERROR(TerminateLocked(*s, kill_wait_s));
  return absl::OkStatus();
}

Status StepLauncher::TerminateLocked(Step& step, int64_t kill_wait_s) {
  step.terminated = true;
  for (const Task& t : step.tasks) {
    if (t.reaped) continue;
    ::kill(-t.pid, SIGCONT);
    ::kill(-t.pid, SIGTERM);
    if (kill_wait_s <= 0) ::kill(-t.pid, SIGKILL);
  }
  if (kill_wait_s <= 0) {
    step.killed = true;
    step.kill_at_ms.reset();
  } else if (!step.killed) {
    const int64_t deadline = NowMs() + kill_wait_s * 1000;
    if (!step.kill_at_ms || deadline < *step.kill_at_ms) step.kill_at_ms = deadline;
  }
  return absl::OkStatus();
}

std::vector<StepLauncher::TaskPid> StepLauncher::TaskPids(model::JobId job) const {
  std::vector<TaskPid> out;
  core::MutexLock lock(&mu_);
  for (const auto& [key, step] : steps_) {
    if ((job != 0 && key.first != job) || step->finished) continue;
    for (const Task& t : step->tasks) {
      if (!t.reaped && t.pid > 0) out.push_back(TaskPid{key.first, step->step_id, t.id, t.pid});
    }
  }
  return out;
}

std::vector<FinishedStep> StepLauncher::Reap() {
  std::vector<std::unique_ptr<Step>> done;
  {
    core::MutexLock lock(&mu_);
    for (auto it = steps_.begin(); it != steps_.end();) {
      if (!it->second->finished) {
        ++it;
        continue;
      }
      done.push_back(std::move(it->second));
      it = steps_.erase(it);
    }
  }
  std::vector<FinishedStep> out;
  for (auto& step : done) {
    if (step->io.joinable()) step->io.join();
    FinishedStep f;
    f.job_id = step->job_id;
    f.step_id = step->step_id;
    f.wait_status = step->status.wait_status();
    f.terminated = step->terminated;
    f.killed = step->killed;
    f.out_of_memory = step->out_of_memory;
    f.max_rss_bytes = step->max_rss_bytes;  // the cgroup's peak, when confined
    for (const Task& t : step->tasks) {
      f.user_cpu_us += t.user_cpu_us;
      f.system_cpu_us += t.system_cpu_us;
      // Without a cgroup, the largest task's own (rusage); tasks are counted alone.
      if (t.max_rss_bytes > f.max_rss_bytes) f.max_rss_bytes = t.max_rss_bytes;
    }
    f.cgroup_cpu_us = step->cgroup_cpu_us;
    out.push_back(f);
  }
  return out;
}

void StepLauncher::RunIo(Step* step) {
  // Sends one message to srun; a failure means srun is gone: the tasks are ended.
  auto send = [&](const v1::StepIo& message) {
    if (!step->srun) return;
    if (step->srun->Send(message.SerializeAsString(), io_timeout_ms_).ok()) return;
    step->srun.reset();
    core::MutexLock lock(&mu_);
    if (!step->terminated) (void)TerminateLocked(*step, settings_.kill_wait_s);
  };
  auto send_output = [&](const Task& task, bool is_stderr, std::string data) {
    v1::StepIo message;
    v1::StepIo::Output* o = message.mutable_output();
    o->set_task(task.id);
    o->set_is_stderr(is_stderr);
    o->set_data(std::move(data));
    send(message);
  };
  // Reads what a pipe holds; closes it at its end (flushing a last unended line).
  auto drain = [&](Task& task, bool is_stderr) {
    int& fd = is_stderr ? task.err_fd : task.out_fd;
    OutputChunker& chunker = is_stderr ? task.err : task.out;
    char buffer[64 << 10];
    while (fd >= 0) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) {
        if (auto rest = chunker.Flush()) send_output(task, is_stderr, *std::move(rest));
        CloseFd(fd);
        return;
      }
      for (std::string& chunk : chunker.Add(std::string_view(buffer, static_cast<size_t>(n)))) {
        send_output(task, is_stderr, std::move(chunk));
      }
    }
  };

  while (true) {
    std::vector<pollfd> fds;
    fds.push_back({step->wake_read, POLLIN, 0});
    for (const Task& t : step->tasks) {
      if (t.out_fd >= 0) fds.push_back({t.out_fd, POLLIN, 0});
      if (t.err_fd >= 0) fds.push_back({t.err_fd, POLLIN, 0});
      if (t.pid_fd >= 0) fds.push_back({t.pid_fd, POLLIN, 0});
    }
    (void)::poll(fds.data(), fds.size(), kPollMs);
    char sink[64];
    while (::read(step->wake_read, sink, sizeof sink) > 0) {
    }
    for (Task& t : step->tasks) {
      drain(t, false);
      drain(t, true);
    }

    const int64_t now = NowMs();
    {
      core::MutexLock lock(&mu_);
      if (step->stop) return;
      if (step->kill_at_ms && *step->kill_at_ms <= now) {
        for (const Task& t : step->tasks) {
          if (!t.reaped) ::kill(-t.pid, SIGKILL);
        }
        step->killed = true;
        step->kill_at_ms.reset();
      }
      for (Task& t : step->tasks) {
        if (t.reaped) continue;
        if (std::optional<Reaped> r = ReapIfEnded(t.pid)) {
          CloseFd(t.pid_fd);  // readable from now on: polled no more
          t.reaped = true;
          t.wait_status = r->wait_status;
          t.reaped_at_ms = now;
          t.user_cpu_us = r->user_cpu_us;
          t.system_cpu_us = r->system_cpu_us;
          t.max_rss_bytes = r->max_rss_bytes;
        }
      }
    }

    // A task is done once it has been reaped and its output is all read; tasks done together
    // with the same status go to srun in one Exit message.
    std::map<int, v1::StepIo> exits;
    for (Task& t : step->tasks) {
      if (t.exit_sent) continue;
      bool reaped;
      int status;
      int64_t reaped_at;
      {
        core::MutexLock lock(&mu_);
        reaped = t.reaped;
        status = t.wait_status;
        reaped_at = t.reaped_at_ms;
      }
      if (!reaped) continue;
      if (t.out_fd >= 0 || t.err_fd >= 0) {
        if (now - reaped_at < kDrainAfterExitMs) continue;
        drain(t, false);
        drain(t, true);
        if (auto rest = t.out.Flush()) send_output(t, false, *std::move(rest));
        if (auto rest = t.err.Flush()) send_output(t, true, *std::move(rest));
        CloseFd(t.out_fd);
        CloseFd(t.err_fd);
      }
      if (!t.epilogs.empty()) RunTaskEpilogs(t.epilogs, t.epilog_run);
      v1::StepIo& message = exits[status];
      message.mutable_exit()->set_status(status);
      message.mutable_exit()->add_tasks(t.id);
      t.exit_sent = true;
    }
    for (const auto& [status, message] : exits) send(message);

    if (std::all_of(step->tasks.begin(), step->tasks.end(),
                    [](const Task& t) { return t.exit_sent; })) {
      break;
    }
  }
  step->srun.reset();  // closing the connection tells srun this node is done
  // The tasks are gone: so is their wire-up server (it may call Terminate meanwhile, so
  // not under mu_).
  step->wire_up.reset();
  if (step->cgroup) {
    // Whatever the tasks left behind goes with the step; an OOM kill marks it.
    auto usage = step->cgroup->Usage();
    (void)step->cgroup->KillAll();
    for (int i = 0; i < 100 && !step->cgroup->Pids().empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    (void)step->cgroup->Remove();
    step->cgroup.reset();
    core::MutexLock lock(&mu_);
    step->out_of_memory = usage.ok() && usage->oom_kills > 0;
    if (usage.ok()) {
      step->cgroup_cpu_us = usage->cpu_usec;
      step->max_rss_bytes = usage->memory_peak_bytes;
    }
  }
  core::MutexLock lock(&mu_);
  for (const Task& t : step->tasks) step->status.Add(t.wait_status);
  step->finished = true;
  if (finished_fd_ >= 0) (void)!::eventfd_write(finished_fd_, 1);
}

int StepLauncher::finished_fd() const { return finished_fd_; }

}  // namespace loom::stepd
