#include "stepd/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/strings.h"
#include "stepd/task_scripts.h"

namespace loom::stepd {
namespace {

using core::StrCat;

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

BatchLauncher::BatchLauncher(NodeSettings settings, const core::Clock& clock)
    : settings_(std::move(settings)), clock_(clock) {}

StatusOr<pid_t> BatchLauncher::Start(const BatchJob& job, const std::string& spool_dir) {
  return Start(job, spool_dir, {});
}

StatusOr<pid_t> BatchLauncher::Start(const BatchJob& job, const std::string& spool_dir,
                                     const std::vector<int>& cgroup_procs_fds) {
  auto fail = [&job](const Status& status) {
    return Status(status.code(), StrCat("job ", job.job_id, ": ", std::string(status.message())));
  };
  if (Status valid = ValidateBatchJob(job); !valid.ok()) return valid;
  if (running_.contains(job.job_id)) {
    return absl::AlreadyExistsError(StrCat("job ", job.job_id, " is already running here"));
  }
  StatusOr<JobIdentity> who = IdentityOf(job);
  if (!who.ok()) return fail(who.status());
  const JobFiles files = ExpandJobFiles(job, who->user.name);
  std::string job_dir, script_path;
  if (Status spool = MakeSpool(job, spool_dir, who->become_user, &job_dir, &script_path);
      !spool.ok()) {
    return fail(spool);
  }

  ProcessSpec spec;
  spec.who = *std::move(who);
  spec.work_dir = job.work_dir;
  spec.in.path = files.stdin_path;
  spec.out.path = files.stdout_path;
  spec.err.path = files.stderr_path;
  spec.append = job.open_mode == model::OpenMode::kAppend ||
                (job.open_mode == model::OpenMode::kDefault &&
                 (settings_.job_file_append || job.restart_count > 0));
  spec.environment = BatchEnvironment(job, settings_, spec.who.user);
  spec.umask = UmaskOf(spec.environment);
  spec.program = script_path;
  spec.argv.push_back(script_path);
  spec.argv.insert(spec.argv.end(), job.script_args.begin(), job.script_args.end());
  spec.sh_fallback = true;
  spec.cgroup_procs_fds = cgroup_procs_fds;
  // The site's TaskProlog and TaskEpilog around the script, as around every task (srun's
  // --task-prolog is for a step's tasks). What a prolog prints is not written: the script's
  // output file is opened by the script's own process.
  const TaskScripts scripts = TaskScriptsFor(settings_, {});
  StatusOr<pid_t> pid = pid_t{0};
  if (!scripts.prologs.empty()) {
    if (StatusOr<std::string> printed = RunTaskPrologs(scripts.prologs, &spec); !printed.ok()) {
      pid = printed.status();
    }
  }
  if (pid.ok()) pid = SpawnProcess(spec);
  if (!pid.ok()) {
    std::error_code ec;
    std::filesystem::remove_all(job_dir, ec);
    if (absl::IsFailedPrecondition(pid.status())) {
      return absl::FailedPreconditionError(StrCat("job ", job.job_id, ": launch failed on ",
                                                  job.node_name, ": ",
                                                  std::string(pid.status().message())));
    }
    return fail(pid.status());
  }

  Running entry;
  entry.pid = *pid;
  entry.spool_job_dir = job_dir;
  if (!scripts.epilogs.empty()) {
    entry.epilogs = scripts.epilogs;
    entry.epilog_run = TaskProgramRun(spec);
  }
  running_.emplace(job.job_id, std::move(entry));
  return *pid;
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
    std::optional<Reaped> ended = ReapIfEnded(r.pid);
    if (!ended) {
      ++it;
      continue;
    }
    if (!r.epilogs.empty()) RunTaskEpilogs(r.epilogs, r.epilog_run);
    FinishedJob done;
    done.job_id = it->first;
    done.pid = r.pid;
    done.wait_status = ended->wait_status;
    done.user_cpu_us = ended->user_cpu_us;
    done.system_cpu_us = ended->system_cpu_us;
    done.max_rss_bytes = ended->max_rss_bytes;
    done.terminated = r.terminated;
    done.killed = r.killed;
    std::error_code ec;
    std::filesystem::remove_all(r.spool_job_dir, ec);
    finished.push_back(done);
    it = running_.erase(it);
  }
  return finished;
}

}  // namespace loom::stepd
