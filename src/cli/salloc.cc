// salloc: asks loomctld for an allocation (a job that runs nothing of its own), waits until it
// is granted, runs the command (default: $SHELL) on this host with the job's SLURM_*
// variables, and releases the allocation when the command exits, exiting with its status, as
// Slurm's salloc. If the allocation ends under the command (scancel, time limit), the
// command's process group gets SIGHUP (on a terminal) or SIGTERM, then SIGKILL after KillWait. docs/user/salloc.md
// describes it. Single-threaded.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_filter.h"
#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/submit/salloc_options.h"
#include "core/clock.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "model/step.h"
#include "rpc/convert.h"

extern char** environ;

namespace loom::cli {
namespace {

using core::StrCat;
using Clock = std::chrono::steady_clock;

void Say(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }


// The variables the command starts with: salloc's own environment, less an outer job's
// SLURM_* description, plus the allocation's, as Slurm's salloc sets them.
std::vector<std::string> CommandEnvironment(const v1::JobInfo& job,
                                            const model::JobRequest& request) {
  std::map<std::string, std::string> env = ProcessEnvironment();
  for (auto it = env.begin(); it != env.end();) {
    const bool outer = it->first.starts_with("SLURM_JOB") || it->first.starts_with("SLURM_STEP") ||
                       it->first == "SLURM_JOBID" || it->first == "SLURM_NODELIST" ||
                       it->first == "SLURM_NNODES" || it->first == "SLURM_NTASKS" ||
                       it->first == "SLURM_NPROCS" || it->first == "SLURM_TASKS_PER_NODE" ||
                       it->first == "SLURM_NTASKS_PER_NODE" || it->first == "SLURM_CPUS_PER_TASK";
    it = outer ? env.erase(it) : std::next(it);
  }
  std::vector<std::string> nodes;
  std::vector<int32_t> cpus;
  for (const v1::NodeAllocation& a : job.allocation()) {
    nodes.push_back(a.node());
    cpus.push_back(a.cpus());
  }
  const std::string nodelist = core::CompressHostlist(nodes);
  env["SLURM_JOB_ID"] = std::to_string(job.job_id());
  env["SLURM_JOBID"] = std::to_string(job.job_id());
  env["SLURM_JOB_NAME"] = job.name();
  env["SLURM_JOB_NODELIST"] = nodelist;
  env["SLURM_NODELIST"] = nodelist;
  env["SLURM_JOB_NUM_NODES"] = std::to_string(nodes.size());
  env["SLURM_NNODES"] = std::to_string(nodes.size());
  env["SLURM_JOB_CPUS_PER_NODE"] = model::CompressCounts(cpus);
  env["SLURM_JOB_PARTITION"] = job.partition();
  const model::TaskRequest tasks{request.ntasks, request.ntasks_per_node, request.cpus_per_task};
  env["SLURM_TASKS_PER_NODE"] = model::CompressCounts(model::TaskCounts(tasks, cpus));
  if (request.ntasks) {
    env["SLURM_NTASKS"] = std::to_string(*request.ntasks);
    env["SLURM_NPROCS"] = std::to_string(*request.ntasks);
  }
  if (request.ntasks_per_node) {
    env["SLURM_NTASKS_PER_NODE"] = std::to_string(*request.ntasks_per_node);
  }
  if (request.cpus_per_task) env["SLURM_CPUS_PER_TASK"] = std::to_string(*request.cpus_per_task);
  if (request.mem_per_node_mb) env["SLURM_MEM_PER_NODE"] = std::to_string(*request.mem_per_node_mb);
  if (request.mem_per_cpu_mb) env["SLURM_MEM_PER_CPU"] = std::to_string(*request.mem_per_cpu_mb);
  if (!request.account.empty()) env["SLURM_JOB_ACCOUNT"] = request.account;
  if (!job.cluster_name().empty()) env["SLURM_CLUSTER_NAME"] = job.cluster_name();
  if (!request.work_dir.empty()) env["SLURM_SUBMIT_DIR"] = request.work_dir;
  env["SLURM_SUBMIT_HOST"] = ShortHostName();
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(StrCat(k, "=", v));
  return out;
}

class Salloc {
 public:
  Salloc(submit::SallocInput input, Client client, LuaCliFilter* filter)
      : in_(std::move(input)), client_(std::move(client)), filter_(filter) {}
  int Run();

 private:
  void Info(const std::string& line) const {
    if (!in_.quiet) Say(line);
  }
  // The job's record; nullopt when it cannot be read now (or it is gone: `gone_`).
  std::optional<v1::JobInfo> Query();
  // Waits for the allocation; false when it was refused, revoked or given up.
  bool WaitForGrant(int signals);
  // Runs the command in its own process group and waits for it; returns its wait status.
  int RunCommand(const v1::JobInfo& job, int signals);
  void Cancel();

  submit::SallocInput in_;
  Client client_;
  LuaCliFilter* filter_;  // cli_filter.lua, or null
  model::JobId job_ = 0;
  bool gone_ = false;
  bool revoked_ = false;
};

std::optional<v1::JobInfo> Salloc::Query() {
  v1::QueryJobsRequest req;
  req.add_job_ids(job_);
  v1::QueryJobsReply reply;
  if (!client_.Call("QueryJobs", req, &reply).ok()) return std::nullopt;
  for (const v1::JobInfo& j : reply.jobs()) {
    if (j.job_id() == job_) return j;
  }
  gone_ = true;
  return std::nullopt;
}

void Salloc::Cancel() {
  v1::SignalJobRequest req;
  req.add_job_ids(std::to_string(job_));
  req.set_signal(0);
  v1::SignalJobReply reply;
  (void)client_.Call("SignalJob", req, &reply);
}

bool Salloc::WaitForGrant(int signals) {
  bool queued = false;
  while (true) {
    std::optional<v1::JobInfo> job = Query();
    if (job && job->state() == "RUNNING") {
      if (queued) Info(StrCat("salloc: job ", job_, " has been allocated resources"));
      return true;
    }
    if (gone_ || (job && job->state() != "PENDING")) {
      Say(StrCat("salloc: Job allocation ", job_, " has been revoked."));
      return false;
    }
    if (job && !queued) {
      queued = true;
      Info(StrCat("salloc: job ", job_, " queued and waiting for resources"));
    }
    pollfd p{signals, POLLIN, 0};
    if (::poll(&p, 1, 500) > 0) {
      signalfd_siginfo info;
      if (::read(signals, &info, sizeof info) == sizeof info) {
        Cancel();
        Say(StrCat("salloc: Job allocation ", job_, " has been revoked."));
        return false;
      }
    }
  }
}

int Salloc::RunCommand(const v1::JobInfo& job, int signals) {
  std::vector<std::string> argv = in_.command;
  if (argv.empty()) {
    const char* shell = std::getenv("SHELL");
    argv.push_back(shell != nullptr && *shell ? shell : "/bin/sh");
  }
  std::vector<std::string> env = CommandEnvironment(job, in_.request);
  const bool tty = ::isatty(STDIN_FILENO) != 0;
  const pid_t pid = ::fork();
  if (pid < 0) {
    Say(StrCat("salloc: error: fork: ", std::strerror(errno)));
    return 1 << 8;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    if (tty) ::tcsetpgrp(STDIN_FILENO, ::getpgrp());  // the command owns the terminal
    sigset_t none;
    sigemptyset(&none);
    for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTTOU, SIGTSTP, SIGCHLD, SIGPIPE}) {
      ::signal(sig, SIG_DFL);
    }
    sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> args, envp;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    environ = envp.data();
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "salloc: error: %s: %s\n", args[0], std::strerror(errno));
    ::_exit(errno == ENOENT ? 127 : 126);
  }
  ::setpgid(pid, pid);
  auto next_query = core::RealClock().Monotonic() + std::chrono::seconds(1);
  std::optional<Clock::time_point> kill_at;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    const auto now = core::RealClock().Monotonic();
    if (kill_at && now >= *kill_at) {
      ::kill(-pid, SIGKILL);
      kill_at.reset();
    }
    if (now >= next_query && !revoked_) {
      next_query = now + std::chrono::seconds(1);
      std::optional<v1::JobInfo> info = Query();
      if (gone_ || (info && info->state() != "RUNNING")) {
        revoked_ = true;
        const bool timeout = info && info->state() == "TIMEOUT";
        Say(timeout ? StrCat("salloc: Job ", job_,
                             " has exceeded its time limit and its allocation has been revoked.")
                    : StrCat("salloc: Job allocation ", job_, " has been revoked."));
        // As Slurm's salloc: SIGHUP to an interactive command (and to a pipeline it runs in
        // the foreground), SIGTERM otherwise.
        if (tty) {
          const pid_t foreground = ::tcgetpgrp(STDIN_FILENO);
          if (foreground > 0 && foreground != pid && foreground != ::getpgrp()) {
            ::kill(-foreground, SIGHUP);
          }
        }
        ::kill(-pid, SIGCONT);
        ::kill(-pid, tty ? SIGHUP : SIGTERM);
        kill_at = now + std::chrono::seconds(client_.config().kill_wait_s);
      }
    }
    pollfd p{signals, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      signalfd_siginfo info;
      while (::read(signals, &info, sizeof info) == sizeof info) {
        const int sig = static_cast<int>(info.ssi_signo);
        // Ctrl-C and Ctrl-\ are the command's (it has the terminal); others go to it too.
        if (sig == SIGTERM || sig == SIGHUP) ::kill(-pid, sig);
      }
    }
  }
  if (tty) ::tcsetpgrp(STDIN_FILENO, ::getpgrp());  // the terminal back to salloc
  return status;
}

int Salloc::Run() {
  // Signals arrive on a descriptor; SIGINT and SIGQUIT stay with the command once it runs.
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD}) sigaddset(&handled, sig);
  sigprocmask(SIG_BLOCK, &handled, nullptr);
  ::signal(SIGTTOU, SIG_IGN);  // taking the terminal back from the command's group
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t waited = handled;
  sigdelset(&waited, SIGCHLD);
  const int signals = ::signalfd(-1, &waited, SFD_CLOEXEC | SFD_NONBLOCK);

  model::JobRequest& r = in_.request;
  for (const std::string& a : in_.command) r.command += r.command.empty() ? a : " " + a;
  r.alloc_node = ShortHostName();
  r.alloc_sid = static_cast<uint32_t>(std::max<pid_t>(0, ::getsid(0)));
  v1::SubmitRequest req;
  *req.mutable_spec() = rpc::ToWire(r);
  v1::SubmitReply reply;
  Status s = client_.Call("Submit", req, &reply);
  SayUserMsg("salloc", reply.user_msg(), s.ok());
  if (!s.ok()) {
    Say(StrCat("salloc: error: Job submit/allocate failed: ", std::string(s.message())));
    return in_.error_exit;
  }
  job_ = reply.job_id();
  if (filter_ != nullptr) filter_->PostSubmit("salloc", job_, 0xfffffffe);
  Info(StrCat("salloc: Pending job allocation ", job_));
  if (!WaitForGrant(signals)) return in_.error_exit;
  Info(StrCat("salloc: Granted job allocation ", job_));
  std::optional<v1::JobInfo> job = Query();
  for (int i = 0; i < 10 && !job && !gone_; ++i) job = Query();
  if (!job) {
    Say(StrCat("salloc: Job allocation ", job_, " has been revoked."));
    return in_.error_exit;
  }
  const int status = RunCommand(*job, signals);
  if (!revoked_) {
    Info(StrCat("salloc: Relinquishing job allocation ", job_));
    v1::ReleaseAllocationRequest release;
    release.set_job_id(job_);
    release.set_exit_code(status);
    v1::ReleaseAllocationReply released;
    if (Status s = client_.Call("ReleaseAllocation", release, &released); !s.ok()) {
      Say(StrCat("salloc: error: Unable to release job allocation ", job_, ": ",
                 std::string(s.message())));
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int RunSalloc(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  submit::SbatchSettings settings;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd)) settings.submit_dir = cwd;
  std::unique_ptr<LuaCliFilter> filter;
  if (!LoadCliFilterFor("salloc", &filter)) return 1;
  settings.cli_filter = filter.get();
  auto input = submit::ParseSalloc(args, ProcessEnvironment(),
                                   core::RealClock().UnixSeconds(), settings);
  if (!input.ok()) {
    Say(std::string(input.status().message()));
    return submit::SbatchExitCode(input.status());
  }
  switch (input->action) {
    case submit::SallocInput::Action::kAllocate:
      break;
    case submit::SallocInput::Action::kVersion:
      return PrintText(kSlurmVersion);
    case submit::SallocInput::Action::kHelp:
    case submit::SallocInput::Action::kUsage:
      std::printf("%s", submit::SallocHelpText().c_str());
      return 0;
  }
  if (!input->quiet) {
    for (const std::string& w : input->warnings) Say(w);
  }
  auto client = Client::Connect("salloc");
  if (!client.ok()) {
    Say(StrCat("salloc: error: ", std::string(client.status().message())));
    return input->error_exit;
  }
  Salloc salloc(*std::move(input), *std::move(client), filter.get());
  return salloc.Run();
}

}  // namespace loom::cli
