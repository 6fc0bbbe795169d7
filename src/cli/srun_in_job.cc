// srun inside an allocation (a batch script or a salloc shell: SLURM_JOB_ID set, or --jobid):
// asks loomctld for a step of that job on all or part of its nodes, waits while an
// --exclusive step's CPUs are held by other steps (as Slurm's srun: "Job step creation
// temporarily disabled, retrying"), then runs the command as the step's tasks, their output
// coming back here, and exits with the highest of the tasks' exit codes. The step's end
// does not end the job. docs/user/srun.md describes it. Single-threaded.
#include "cli/srun_in_job.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format/text.h"
#include "cli/srun_step.h"
#include "core/clock.h"
#include "core/strings.h"
#include "model/job_request.h"

namespace loom::cli {
namespace {

using core::StrCat;
using Clock = std::chrono::steady_clock;
using submit::IoTarget;

void Say(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

bool IsFinalStep(const std::string& state) { return !state.empty() && state != "RUNNING"; }

class StepRun {
 public:
  StepRun(submit::SrunInput input, Client client, std::string key)
      : in_(std::move(input)),
        client_(std::move(client)),
        key_(key),
        monitor_(std::move(key), in_.label, Say) {}
  int Run(const std::string& host);

 private:
  v1::StepRequest Request(const std::string& host) const;
  // Asks for the step until it is created (true) or refused, or srun is interrupted (false).
  bool Create(const v1::StepRequest& request, int signals);
  Status OpenOutputs();
  void QueryStep();      // where the step stands: ended? cancelled under the tasks?
  void Signal(int sig);  // 0: cancel the step
  void OnSignal(int sig);
  void Info(const std::string& line) const {
    if (!in_.quiet) Say(line);
  }
  std::string StepName() const { return StrCat(job_, ".", step_.step_id()); }

  submit::SrunInput in_;
  Client client_;
  std::string key_;
  StepMonitor monitor_;
  model::JobId job_ = 0;
  v1::StepInfo step_;
  std::string state_;  // the controller's word on the step
  bool final_ = false;
  Clock::time_point final_at_;
  bool cancel_sent_ = false;
  bool launch_reported_ = false;  // a node's launch failure has been printed
  Clock::time_point cancel_at_;
  bool give_up_ = false;
  bool bad_exit_handled_ = false;
  InterruptHandler interrupts_;
  std::vector<int> files_;
};

v1::StepRequest StepRun::Request(const std::string& host) const {
  const submit::StepOptions& so = *in_.step;
  const model::JobRequest& r = in_.request;
  v1::StepRequest req;
  req.set_job_id(so.job_id);
  req.set_name(r.name);
  for (const std::string& a : r.srun->argv) req.add_argv(a);
  req.set_ntasks(so.ntasks);
  req.set_nodes(so.nodes);
  req.set_ntasks_per_node(so.ntasks_per_node);
  req.set_cpus_per_task(so.cpus_per_task);
  req.set_distribution(so.distribution);
  req.set_exclusive(so.exclusive);
  req.set_cpu_bind(so.cpu_bind);
  req.set_gpu_bind(so.gpu_bind);
  if (so.threads_per_core) req.set_threads_per_core(*so.threads_per_core);
  req.set_gpus_per_task(so.gpus_per_task);
  req.set_kill_on_bad_exit(so.kill_on_bad_exit);
  req.set_io_host(host);
  req.set_io_port(monitor_.port());
  req.set_io_key(key_);
  req.set_unbuffered(r.srun->unbuffered);
  req.set_std_out(r.srun->stdout_pattern);
  req.set_std_err(r.srun->stderr_pattern);
  req.set_std_in(r.srun->stdin_pattern);
  req.mutable_environment()->insert(r.environment.begin(), r.environment.end());
  (*req.mutable_environment())["SLURM_UMASK"] = UmaskText();
  req.set_work_dir(r.work_dir);
  return req;
}

bool StepRun::Create(const v1::StepRequest& request, int signals) {
  v1::CreateStepRequest req;
  *req.mutable_step() = request;
  bool waited = false;
  while (true) {
    v1::CreateStepReply reply;
    if (Status s = client_.Call("CreateStep", req, &reply); !s.ok()) {
      Say(StrCat("srun: error: Unable to create step for job ", job_, ": ",
                 std::string(s.message())));
      return false;
    }
    if (!reply.busy()) {
      step_ = reply.step();
      if (waited) Info(StrCat("srun: Step created for job ", job_));
      return true;
    }
    if (!waited) {
      Info("srun: Job step creation temporarily disabled, retrying (Requested nodes are busy)");
      waited = true;
    }
    pollfd p{signals, POLLIN, 0};
    if (::poll(&p, 1, 1000) > 0) {
      signalfd_siginfo info;
      if (::read(signals, &info, sizeof info) == sizeof info) {
        Say(StrCat("srun: Cancelled pending job step with signal ", info.ssi_signo));
        Say(StrCat("srun: error: Unable to create step for job ", job_,
                   ": Job/step already completing or completed"));
        return false;
      }
    }
  }
}

Status StepRun::OpenOutputs() {
  ASSIGN_OR_RETURN(StepOutputs outputs, OpenStepOutputs(in_.out, in_.err, in_.request, job_,
                                                        step_.step_id(), &files_));
  monitor_.SetOutputs(outputs);
  return absl::OkStatus();
}

void StepRun::QueryStep() {
  v1::QueryStepsRequest req;
  req.add_job_ids(job_);
  v1::QueryStepsReply reply;
  if (!client_.Call("QuerySteps", req, &reply).ok()) return;  // asked again later
  std::string state;
  for (const v1::StepInfo& s : reply.steps()) {
    if (s.step_id() != step_.step_id()) continue;
    state = s.state();
    if (!s.launch_error().empty() && !launch_reported_) {
      launch_reported_ = true;
      std::fprintf(stderr, "srun: error: Task launch for StepId=%llu.%u failed on node %s: %s\n",
                   static_cast<unsigned long long>(job_), s.step_id(),
                   s.launch_failed_node().c_str(), s.launch_error().c_str());
    }
  }
  if (state.empty()) {
    // Not known: its job was purged (long over), or the controller restarted and knows no
    // steps; then the step goes on as long as its job runs.
    v1::QueryJobsRequest jreq;
    jreq.add_job_ids(job_);
    v1::QueryJobsReply jreply;
    if (!client_.Call("QueryJobs", jreq, &jreply).ok()) return;
    bool running = false;
    for (const v1::JobInfo& j : jreply.jobs()) {
      running = running || (j.job_id() == job_ && j.state() == "RUNNING");
    }
    if (running) return;
    state = "COMPLETED";
  }
  if (state == "CANCELLED" && state_ != state) monitor_.ExpectSignals();
  state_ = state;
  if (IsFinalStep(state) && !final_) {
    final_ = true;
    final_at_ = core::RealClock().Monotonic();
  }
}

void StepRun::Signal(int sig) {
  if (sig == 0) {
    if (cancel_sent_) return;
    cancel_sent_ = true;
    cancel_at_ = core::RealClock().Monotonic();
  }
  monitor_.ExpectSignals();
  v1::SignalJobRequest req;
  req.add_job_ids(StepName());
  req.set_signal(sig);
  v1::SignalJobReply reply;
  Status s = client_.Call("SignalJob", req, &reply);
  if (!s.ok() && !absl::IsFailedPrecondition(s)) {
    Say(StrCat("srun: error: cannot signal StepId=", StepName(), ": ", std::string(s.message())));
  }
}

void StepRun::OnSignal(int sig) {
  using Action = InterruptHandler::Action;
  switch (interrupts_.OnSignal(sig, in_.quit_on_interrupt, cancel_sent_, monitor_, Say)) {
    case Action::kNone:
      return;
    case Action::kLeave:
      give_up_ = true;
      return;
    case Action::kAbortByInterrupt:
      Say(StrCat("srun: sending Ctrl-C to StepId=", StepName()));
      Signal(SIGINT);
      Signal(0);
      return;
    case Action::kAbort:
      Signal(0);
      return;
  }
}

int StepRun::Run(const std::string& host) {
  job_ = in_.step->job_id;
  if (Status s = monitor_.Listen(host); !s.ok()) {
    Say(StrCat("srun: error: ", std::string(s.message())));
    return in_.error_exit;
  }
  const int signals = TakeSrunSignals();

  if (!Create(Request(host), signals)) return in_.error_exit;
  monitor_.SetJob(job_);
  monitor_.SetStep(step_.step_id());
  if (Status s = OpenOutputs(); !s.ok()) {
    Say(StrCat("srun: error: ", std::string(s.message())));
    Signal(0);
    return in_.error_exit;
  }
  monitor_.SetLayout(
      std::vector<std::string>(step_.nodes().begin(), step_.nodes().end()),
      std::vector<int32_t>(step_.tasks_per_node().begin(), step_.tasks_per_node().end()));

  const auto kill_wait = std::chrono::seconds(client_.config().kill_wait_s + 2);
  auto next_query = core::RealClock().Monotonic() + std::chrono::milliseconds(500);
  while (true) {
    const auto now = core::RealClock().Monotonic();
    if (monitor_.AllTasksEnded() && !monitor_.AnyNodeConnected()) break;
    if (final_ && !monitor_.AnyNodeConnected() && now - final_at_ > std::chrono::seconds(1)) {
      break;  // every node reported to the controller; nothing more will come
    }
    if (final_ && now - final_at_ > kill_wait) break;
    if (give_up_ || (cancel_sent_ && now - cancel_at_ > kill_wait + std::chrono::seconds(5))) {
      break;
    }
    if (now >= next_query) {
      QueryStep();
      next_query = core::RealClock().Monotonic() +
                   std::chrono::milliseconds(monitor_.AnyNodeConnected() ? 2000 : 500);
      continue;
    }
    monitor_.PollOnce(
        signals,
        std::chrono::duration_cast<std::chrono::milliseconds>(next_query - now).count(),
        [this](int sig) { OnSignal(sig); });
    // -K: a task that exited non-zero ends the step.
    if (in_.step->kill_on_bad_exit && !bad_exit_handled_ && monitor_.TaskFailedWhileOthersRun()) {
      bad_exit_handled_ = true;
      Say(StrCat("srun: Terminating StepId=", StepName()));
      Signal(0);
    }
    if (monitor_.has_pending_reports()) {
      if (!cancel_sent_) QueryStep();  // cancelled from elsewhere, or its job ended?
      monitor_.FlushReports();
    }
  }
  // Return once the controller has the step's end, so that the next command sees it.
  AwaitRecordedEnd([this] { QueryStep(); }, final_, give_up_);
  monitor_.FlushReports();
  for (int fd : files_) ::close(fd);
  return monitor_.ExitCode(in_.error_exit);
}

}  // namespace

int RunSrunInJob(submit::SrunInput input) {
  auto client = Client::Connect("srun");
  if (!client.ok()) {
    Say(StrCat("srun: error: ", std::string(client.status().message())));
    return input.error_exit;
  }
  submit::ResolveMpi(client->config().mpi_default, &input);
  StatusOr<std::string> key = RandomKey();
  if (!key.ok()) {
    Say(StrCat("srun: error: ", std::string(key.status().message())));
    return input.error_exit;
  }
  const std::string prolog = input.prolog, epilog = input.epilog;
  const std::string srun_prolog = client->config().srun_prolog;
  const std::string srun_epilog = client->config().srun_epilog;
  const std::vector<std::string> argv = input.request.srun->argv;
  const uint64_t job = input.step->job_id;
  const int error_exit = input.error_exit;
  if (!RunSrunScript("--prolog", prolog, srun_prolog, argv, job)) return error_exit;
  StepRun run(std::move(input), *std::move(client), *std::move(key));
  const int rc = run.Run(HostAddress());
  if (!RunSrunScript("--epilog", epilog, srun_epilog, argv, job)) return rc != 0 ? rc : error_exit;
  return rc;
}

}  // namespace loom::cli
