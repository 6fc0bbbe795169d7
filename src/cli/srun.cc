// srun outside an allocation: asks loomctld for a job with the options given, then runs the
// command as the job's tasks on its nodes, their output coming back here as it is written,
// and exits as Slurm's srun does, with the highest of the tasks' exit codes. Ctrl-C twice
// within a second, or SIGTERM, cancels the job. docs/user/srun.md describes it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_filter.h"
#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/text.h"
#include "cli/srun_in_job.h"
#include "cli/srun_step.h"
#include "cli/submit/srun_options.h"
#include "core/clock.h"
#include "core/strings.h"
#include "model/job_request.h"
#include "model/step.h"
#include "rpc/convert.h"

namespace loom::cli {
namespace {

using core::StrCat;
using Clock = std::chrono::steady_clock;
using submit::IoTarget;

void Say(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

bool IsFinal(std::string_view state) {
  return state != "PENDING" && state != "RUNNING" && state != "COMPLETING" &&
         state != "SUSPENDED" && state != "CONFIGURING" && state != "REQUEUED";
}

class Srun {
 public:
  Srun(submit::SrunInput input, Client client, std::string key, LuaCliFilter* filter)
      : in_(std::move(input)),
        client_(std::move(client)),
        monitor_(key, in_.label, Say),
        filter_(filter) {
    in_.request.srun->io_key = std::move(key);
  }

  int Run(const std::string& host);
  uint64_t job() const { return job_; }  // the job asked for; 0 before
  int TestOnly();

 private:
  Status OpenOutputs(model::JobId job);
  // Asks where the job stands; prints what changed.
  void Query();
  void Cancel();
  // `sig` to the job's tasks, the job going on.
  void SignalTasks(int sig);
  void OnSignal(int sig);
  void Info(const std::string& line) const {
    if (!in_.quiet) Say(line);
  }

  submit::SrunInput in_;
  Client client_;
  StepMonitor monitor_;
  LuaCliFilter* filter_;  // cli_filter.lua, or null
  model::JobId job_ = 0;
  bool queued_ = false;
  bool aborted_ = false;  // the job is being ended under the tasks (cancel, time limit)
  bool launch_reported_ = false;  // a node's launch failure was said
  bool final_ = false;
  Clock::time_point final_at_;
  bool cancel_sent_ = false;
  Clock::time_point cancel_at_;
  bool give_up_ = false;  // asked twice to end: leave without waiting for the tasks
  bool bad_exit_handled_ = false;  // -K: the other tasks have been told to end
  Clock::time_point bad_exit_at_;
  InterruptHandler interrupts_;
  std::vector<int> files_;
};

Status Srun::OpenOutputs(model::JobId job) {
  ASSIGN_OR_RETURN(StepOutputs outputs,
                   OpenStepOutputs(in_.out, in_.err, in_.request, job, 0, &files_));
  monitor_.SetOutputs(outputs);
  return absl::OkStatus();
}

int Srun::TestOnly() {
  v1::SubmitRequest req;
  *req.mutable_spec() = rpc::ToWire(in_.request);
  req.set_test_only(true);
  v1::SubmitReply reply;
  Status s = client_.Call("Submit", req, &reply);
  SayUserMsg("srun", reply.user_msg(), s.ok());
  if (!s.ok()) {
    Say(StrCat("srun: error: Unable to allocate resources: ", std::string(s.message())));
    return in_.error_exit;
  }
  const time_t start = static_cast<time_t>(reply.expected_start());
  std::tm tm{};
  localtime_r(&start, &tm);
  Say(StrCat("srun: Job ", reply.job_id(), " to start at ",
             format::FormatIsoTime(reply.expected_start(), static_cast<int32_t>(tm.tm_gmtoff)),
             " using ", reply.expected_cpus(), " processors on nodes ", reply.expected_nodes(),
             " in partition ", reply.expected_partition()));
  return 0;
}

void Srun::Query() {
  v1::QueryJobsRequest req;
  req.add_job_ids(job_);
  v1::QueryJobsReply reply;
  if (!client_.Call("QueryJobs", req, &reply).ok()) return;  // asked again later
  const v1::JobInfo* info = nullptr;
  for (const v1::JobInfo& j : reply.jobs()) {
    if (j.job_id() == job_) info = &j;
  }
  if (info == nullptr) {
    // Purged already (MinJobAge): it ended long ago.
    if (!final_) final_at_ = core::RealClock().Monotonic();
    final_ = true;
    return;
  }
  const std::string& state = info->state();
  // A node that could not launch before its tasks' supervisor could say so itself (its
  // prolog failed, its daemon refused): the controller says why.
  if (!info->launch_error().empty() && !launch_reported_ && !monitor_.launch_failed()) {
    launch_reported_ = true;
    Say(StrCat("srun: error: Task launch for StepId=", job_, ".0 failed on node ",
               info->launch_error()));
  }
  if (state == "PENDING" && !queued_ && !monitor_.has_layout()) {
    queued_ = true;
    Info(StrCat("srun: job ", job_, " queued and waiting for resources"));
  }
  if (!monitor_.has_layout() && info->allocation_size() > 0) {
    std::vector<std::string> nodes;
    std::vector<int32_t> cpus;
    for (const v1::NodeAllocation& a : info->allocation()) {
      nodes.push_back(a.node());
      cpus.push_back(a.cpus());
    }
    // Said before SetLayout writes the output that came early.
    if (queued_) Info(StrCat("srun: job ", job_, " has been allocated resources"));
    const model::JobRequest& r = in_.request;
    monitor_.SetLayout(nodes,
                       model::TaskCounts({r.ntasks, r.ntasks_per_node, r.cpus_per_task}, cpus));
  }
  const bool ending =
      state == "COMPLETING" || (IsFinal(state) && state != "COMPLETED" && state != "FAILED");
  if (ending && monitor_.has_layout() && !aborted_) {
    aborted_ = true;
    monitor_.ExpectSignals();
    if (!monitor_.AllTasksEnded()) {
      Say(StrCat("srun: Job step aborted: Waiting up to ", client_.config().kill_wait_s + 2,
                 " seconds for job step to finish."));
    }
    const bool time_limit = info->time_limit_s() > 0 && info->start_time() > 0 &&
                            info->end_time() - info->start_time() >= info->time_limit_s();
    if (time_limit && !cancel_sent_) {
      const time_t end = static_cast<time_t>(info->end_time());
      std::tm tm{};
      localtime_r(&end, &tm);
      Say(StrCat("srun: error: *** STEP ", job_, ".0 CANCELLED AT ",
                 format::FormatIsoTime(info->end_time(), static_cast<int32_t>(tm.tm_gmtoff)),
                 " DUE TO TIME LIMIT ***"));
    }
  }
  if (IsFinal(state) && !final_) {
    final_ = true;
    final_at_ = core::RealClock().Monotonic();
    if (!monitor_.has_layout()) Say(StrCat("srun: Job allocation ", job_, " has been revoked."));
  }
}

void Srun::Cancel() {
  if (cancel_sent_) return;
  cancel_sent_ = true;
  cancel_at_ = core::RealClock().Monotonic();
  monitor_.ExpectSignals();
  v1::SignalJobRequest req;
  req.add_job_ids(std::to_string(job_));
  req.set_signal(0);
  v1::SignalJobReply reply;
  Status s = client_.Call("SignalJob", req, &reply);
  if (!s.ok() && !absl::IsFailedPrecondition(s)) {  // already ending: nothing to cancel
    Say(StrCat("srun: error: cannot cancel job ", job_, ": ", std::string(s.message())));
  }
}

void Srun::SignalTasks(int sig) {
  v1::SignalJobRequest req;
  req.add_job_ids(std::to_string(job_));
  req.set_signal(sig);
  v1::SignalJobReply reply;
  if (Status s = client_.Call("SignalJob", req, &reply);
      !s.ok() && !absl::IsFailedPrecondition(s)) {
    Say(StrCat("srun: error: cannot signal job ", job_, "'s tasks: ", std::string(s.message())));
  }
}

void Srun::OnSignal(int sig) {
  using Action = InterruptHandler::Action;
  switch (interrupts_.OnSignal(sig, in_.quit_on_interrupt, cancel_sent_, monitor_, Say)) {
    case Action::kNone:
      return;
    case Action::kLeave:
      give_up_ = true;
      return;
    case Action::kAbortByInterrupt:
      if (!cancel_sent_) Say(StrCat("srun: cancelling job ", job_));
      Cancel();
      return;
    case Action::kAbort:
      Cancel();
      return;
  }
}

int Srun::Run(const std::string& host) {
  if (Status s = monitor_.Listen(host); !s.ok()) {
    Say(StrCat("srun: error: ", std::string(s.message())));
    return in_.error_exit;
  }
  model::SrunStep& step = *in_.request.srun;
  step.io_host = host;
  step.io_port = monitor_.port();
  in_.request.environment["SLURM_UMASK"] = UmaskText();

  // The signals that end or interrupt srun arrive on a descriptor the loop polls.
  const int signals = TakeSrunSignals();

  for (const std::string& a : step.argv) {
    in_.request.command += in_.request.command.empty() ? a : " " + a;
  }
  in_.request.alloc_node = ShortHostName();
  in_.request.alloc_sid = static_cast<uint32_t>(std::max<pid_t>(0, ::getsid(0)));
  v1::SubmitRequest req;
  *req.mutable_spec() = rpc::ToWire(in_.request);
  v1::SubmitReply reply;
  Status s = client_.Call("Submit", req, &reply);
  SayUserMsg("srun", reply.user_msg(), s.ok());
  if (!s.ok()) {
    Say(StrCat("srun: error: Unable to allocate resources: ", std::string(s.message())));
    return in_.error_exit;
  }
  job_ = reply.job_id();
  if (filter_ != nullptr) filter_->PostSubmit("srun", job_, 0);  // the job's one step
  monitor_.SetJob(job_);
  if (Status s = OpenOutputs(job_); !s.ok()) {
    Say(StrCat("srun: error: ", std::string(s.message())));
    Cancel();
    return in_.error_exit;
  }
  Query();

  auto next_query = core::RealClock().Monotonic();
  while (true) {
    const auto now = core::RealClock().Monotonic();
    if (monitor_.AllTasksEnded() && !monitor_.AnyNodeConnected()) break;
    if (final_ && !monitor_.AnyNodeConnected() &&
        (!monitor_.has_layout() || now - final_at_ > std::chrono::seconds(1))) {
      break;  // nothing more will come
    }
    const auto kill_wait = std::chrono::seconds(client_.config().kill_wait_s + 2);
    if (final_ && now - final_at_ > kill_wait) break;  // nodes that never said how tasks ended
    // Cancelled, and neither the tasks nor the controller said the end within the time the
    // job's tasks have to go (a controller that went away): nothing more will come.
    if (give_up_ || (cancel_sent_ && now - cancel_at_ > kill_wait + std::chrono::seconds(5))) {
      break;
    }
    if (now >= next_query) {
      Query();
      const bool settled = monitor_.has_layout() && monitor_.AnyNodeConnected();
      next_query = core::RealClock().Monotonic() + std::chrono::milliseconds(settled ? 2000 : 500);
      continue;
    }
    monitor_.PollOnce(
        signals,
        std::chrono::duration_cast<std::chrono::milliseconds>(next_query - now).count(),
        [this](int sig) { OnSignal(sig); });
    // -K: a task that exited non-zero ends the others (SIGTERM; SIGKILL, which cancels the
    // job, only for tasks still there after KillWait); the job ends with their statuses.
    if (in_.kill_on_bad_exit && !bad_exit_handled_ && monitor_.TaskFailedWhileOthersRun()) {
      bad_exit_handled_ = true;
      bad_exit_at_ = core::RealClock().Monotonic();
      Say(StrCat("srun: Terminating StepId=", job_, ".0"));
      SignalTasks(SIGTERM);
    } else if (bad_exit_handled_ && !cancel_sent_ && !monitor_.AllTasksEnded() &&
               core::RealClock().Monotonic() - bad_exit_at_ >
                   std::chrono::seconds(client_.config().kill_wait_s)) {
      Cancel();
    }
    if (monitor_.has_pending_reports()) {
      if (!aborted_ && !cancel_sent_) Query();  // killed by a time limit or a cancel?
      monitor_.FlushReports();
    }
  }
  // Like Slurm's srun, return once the job's record says it ended, so that the next command
  // sees it done.
  AwaitRecordedEnd([this] { Query(); }, final_, give_up_);
  monitor_.FlushReports();
  for (int fd : files_) ::close(fd);
  return monitor_.ExitCode(in_.error_exit);
}

}  // namespace

int RunSrun(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  submit::SbatchSettings settings;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd)) settings.submit_dir = cwd;
  std::unique_ptr<LuaCliFilter> filter;
  if (!LoadCliFilterFor("srun", &filter)) return 1;
  settings.cli_filter = filter.get();
  auto input = submit::ParseSrun(args, ProcessEnvironment(),
                                 core::RealClock().UnixSeconds(), settings);
  if (!input.ok()) {
    Say(std::string(input.status().message()));
    return submit::SbatchExitCode(input.status());
  }
  switch (input->action) {
    case submit::SrunInput::Action::kRun:
      break;
    case submit::SrunInput::Action::kVersion:
      return PrintText(kSlurmVersion);
    case submit::SrunInput::Action::kCpuBindHelp:
      std::printf("%s", submit::CpuBindHelpText().c_str());
      return 0;
    case submit::SrunInput::Action::kMpiList:
      std::printf("%s", submit::MpiListText().c_str());
      return 0;
    case submit::SrunInput::Action::kHelp:
    case submit::SrunInput::Action::kUsage:
      std::printf("%s", submit::SrunHelpText().c_str());
      return 0;
  }
  for (const std::string& w : input->warnings) Say(w);
  if (input->step && !input->test_only) return RunSrunInJob(*std::move(input));
  auto client = Client::Connect("srun");
  if (!client.ok()) {
    Say(StrCat("srun: error: ", std::string(client.status().message())));
    return input->error_exit;
  }
  submit::ResolveMpi(client->config().mpi_default, &*input);
  StatusOr<std::string> key = RandomKey();
  if (!key.ok()) {
    Say(StrCat("srun: error: ", std::string(key.status().message())));
    return input->error_exit;
  }
  const bool test_only = input->test_only;
  if (test_only) {
    Srun srun(*std::move(input), *std::move(client), *std::move(key), filter.get());
    return srun.TestOnly();
  }
  // --prolog runs before the job is asked for (its id is not known yet), --epilog after it.
  const std::string prolog = input->prolog, epilog = input->epilog;
  const std::string srun_prolog = client->config().srun_prolog;
  const std::string srun_epilog = client->config().srun_epilog;
  const std::vector<std::string> step_argv = input->request.srun->argv;
  const int error_exit = input->error_exit;
  if (!RunSrunScript("--prolog", prolog, srun_prolog, step_argv, 0)) return error_exit;
  Srun srun(*std::move(input), *std::move(client), *std::move(key), filter.get());
  const int rc = srun.Run(HostAddress());
  if (!RunSrunScript("--epilog", epilog, srun_epilog, step_argv, srun.job())) {
    return rc != 0 ? rc : error_exit;
  }
  return rc;
}

}  // namespace loom::cli
