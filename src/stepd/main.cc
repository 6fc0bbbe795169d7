// loom-stepd: the supervisor of one batch job, or of one node's share of a step, on its
// node. loomd starts it detached (its own session; with --detach it leaves its first
// process, so init adopts it) with the launch in the supervisor's directory (records.h).
// For a batch job it makes the job's cgroup per cgroup.conf and starts the script in it
// (BatchSupervisor); for a step (--step) it connects to srun and starts the node's tasks in
// the step's cgroup (StepSupervisor) and lists them in `tasks`. It says "ok" or "error
// MESSAGE" on --ready-fd, then serves loomd's requests on its socket (control.h) until what
// it supervises has ended, writes the result and exits. It outlives loomd: a restarted
// loomd finds it by its directory. SIGTERM or SIGINT end the job or step (SIGTERM, SIGKILL
// after KillWait) and then loom-stepd itself.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "conf/log_settings.h"
#include "conf/site_config.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/strings.h"
#include "loom/v1/loom.pb.h"
#include "stepd/control.h"
#include "stepd/launch_request.h"
#include "stepd/records.h"
#include "stepd/supervisor.h"

namespace loom::stepd {
namespace {

using core::StrCat;

struct Args {
  std::string spool;
  std::string node;
  std::string slurm_conf;
  uint64_t job_id = 0;
  std::string step;  // --step: "srun" or a step id; empty for a batch script
  int ready_fd = -1;
  bool detach = false;  // --detach yes: leave the parent at once (see main)
};

int64_t NowMs() { return core::RealClock().MonotonicMs(); }

void Log(const StepRef& ref, const std::string& message) {
  core::LogInfo("[{}] {}", Describe(ref), message);
}

// Logs as loomd does: SlurmdDebug, SlurmdLogFile (%n, %h expanded) and SlurmdSyslogDebug;
// stderr (loomd's) when there is no file. Returns the configuration, read once for the
// launch too (null when it cannot be read: the launch reads it again and says why).
std::unique_ptr<conf::SiteConfig> ConfigureLogging(const Args& a) {
  std::vector<conf::Diagnostic> warnings;
  StatusOr<conf::SiteConfig> site = conf::LoadSiteConfig(a.slurm_conf, &warnings);
  if (!site.ok()) return nullptr;
  const core::LogSettings log = conf::SlurmdLogSettings(site->cluster, a.node, false);
  if (Status s = core::ConfigureLog(core::Log(), log, "loom-stepd"); !s.ok()) {
    core::Log().ToStderr(true);
    core::LogError("{}", s.message());
  }
  return std::make_unique<conf::SiteConfig>(*std::move(site));
}

void Tell(int& fd, const std::string& line) {
  if (fd < 0) return;
  const std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
  fd = -1;
}

// The request loomd left (it holds the environment): read once and removed.
template <typename Request>
StatusOr<Request> TakeRequest(const StepdPaths& paths, const StepRef& ref) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(paths.launch));
  ::unlink(paths.launch.c_str());
  Request req;
  if (!req.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(
        StrCat(paths.launch, " is not the launch request of ", Describe(ref)));
  }
  return req;
}

// What is supervised, once started.
struct Started {
  std::unique_ptr<Supervision> supervision;
  PreparedLaunch batch;     // a batch job's: owns the cgroup system its supervisor uses
  pid_t job_pid = 0;        // the batch script; 0 for a step
  std::vector<TaskRecord> tasks;  // a step's
  int64_t kill_wait_s = 30;
  std::string confinement;  // "cgroup v1", "not confined"
};

std::string Confinement(std::string_view version) {
  return version.empty() ? "no cgroup.conf: not confined" : StrCat("cgroup ", version);
}

StatusOr<Started> StartBatch(const Args& a, const StepdPaths& paths, const StepRef& ref,
                             const conf::SiteConfig* site) {
  ASSIGN_OR_RETURN(v1::LaunchBatchRequest req, TakeRequest<v1::LaunchBatchRequest>(paths, ref));
  if (req.job_id() != a.job_id) {
    return absl::InvalidArgumentError(
        StrCat(paths.launch, " is not the launch request of ", Describe(ref)));
  }
  Started s;
  ASSIGN_OR_RETURN(NodeHardware hardware, ReadNodeHardware(a.spool, a.node));
  ASSIGN_OR_RETURN(s.batch, PrepareLaunch(req, a.node, a.slurm_conf, hardware, site));
  SupervisorOptions so;
  so.job = s.batch.job;
  so.settings = s.batch.settings;
  so.spool = a.spool;
  so.cgroups = s.batch.cgroups.get();
  so.limits = s.batch.limits;
  auto supervisor = std::make_unique<BatchSupervisor>(std::move(so));
  RETURN_IF_ERROR(supervisor->Start());
  s.job_pid = supervisor->job_pid();
  s.kill_wait_s = s.batch.settings.kill_wait_s;
  s.confinement = Confinement(s.batch.cgroups ? s.batch.cgroups->version() : "");
  s.supervision = std::move(supervisor);
  return s;
}

StatusOr<Started> StartStep(const Args& a, const StepdPaths& paths, const StepRef& ref,
                            const conf::SiteConfig* site) {
  ASSIGN_OR_RETURN(v1::LaunchTasksRequest req, TakeRequest<v1::LaunchTasksRequest>(paths, ref));
  if (req.job_id() != a.job_id || req.has_step_id() != (ref.kind == StepRef::Kind::kStep) ||
      (req.has_step_id() && req.step_id() != ref.step_id)) {
    return absl::InvalidArgumentError(
        StrCat(paths.launch, " is not the launch request of ", Describe(ref)));
  }
  ASSIGN_OR_RETURN(NodeHardware hardware, ReadNodeHardware(a.spool, a.node));
  ASSIGN_OR_RETURN(PreparedStep prepared, PrepareStep(req, a.node, a.slurm_conf, hardware, site));
  Started s;
  s.kill_wait_s = prepared.settings.kill_wait_s;
  s.confinement = Confinement(prepared.cgroup_version);
  StepSupervisorOptions so;
  so.step = std::move(prepared.step);
  so.settings = std::move(prepared.settings);
  so.confine = std::move(prepared.confine);
  so.relay_socket = RelaySocketPath(a.spool, a.node);
  auto supervisor = std::make_unique<StepSupervisor>(std::move(so));
  RETURN_IF_ERROR(supervisor->Start());
  s.tasks = supervisor->Tasks();
  s.supervision = std::move(supervisor);
  return s;
}

// Answers one request on a connection loomd opened.
void Serve(int listen_fd, Supervision& supervisor) {
  for (;;) {
    const int conn = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (conn < 0) return;
    StatusOr<std::string> line = ReadLine(conn, 2000);
    Status answer = line.status();
    if (line.ok()) {
      StatusOr<ControlRequest> req = ParseRequest(*line);
      answer = req.status();
      if (req.ok()) {
        switch (req->kind) {
          case ControlRequest::Kind::kPing:
            break;
          case ControlRequest::Kind::kSignal:
            answer = supervisor.Signal(static_cast<int>(req->value));
            break;
          case ControlRequest::Kind::kTerminate:
            answer = supervisor.Terminate(req->value);
            break;
        }
      }
    }
    const std::string reply = FormatReply(answer) + "\n";
    (void)!::send(conn, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::close(conn);
  }
}

int Run(Args a, const StepRef& ref) {
  const StepdPaths paths = PathsOf(a.spool, a.node, ref);
  const std::unique_ptr<conf::SiteConfig> site = ConfigureLogging(a);
  (void)!::chdir("/");
  // Signals arrive on a descriptor; what the tasks inherit is reset when they start.
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGUSR2}) sigaddset(&set, sig);
  sigprocmask(SIG_SETMASK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  const int sig_fd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);

  StatusOr<int> listen_fd = ListenUnix(paths.socket);
  if (!listen_fd.ok()) {
    Tell(a.ready_fd,
         StrCat("error ", Describe(ref), ": ", std::string(listen_fd.status().message())));
    return 1;
  }
  StatusOr<Started> started =
      ref.is_batch() ? StartBatch(a, paths, ref, site.get()) : StartStep(a, paths, ref, site.get());
  if (!started.ok()) {
    ::close(*listen_fd);
    ::unlink(paths.socket.c_str());
    std::string message(started.status().message());
    // Errors from preparing the launch do not say whose they are yet.
    if (!message.starts_with("job ") && !message.starts_with("step ")) {
      message = StrCat(Describe(ref), ": ", message);
    }
    Tell(a.ready_fd, StrCat("error ", message));
    return 1;
  }
  Supervision& supervisor = *started->supervision;
  PidRecord record;
  record.stepd = RefOf(::getpid()).value_or(ProcessRef{::getpid(), 0});
  if (started->job_pid > 0) {
    record.job = RefOf(started->job_pid).value_or(ProcessRef{started->job_pid, 0});
  }
  if (!ref.is_batch()) {
    if (Status s = WriteFileAtomic(paths.tasks, FormatTaskRecords(started->tasks), 0600,
                                   Durability::kUntilReboot);
        !s.ok()) {
      Log(ref, std::string(s.message()));  // sstat will not see the tasks
    }
  }
  if (Status s =
          WriteFileAtomic(paths.pid, FormatPidRecord(record), 0600, Durability::kUntilReboot);
      !s.ok()) {
    Log(ref, std::string(s.message()));  // loomd still knows it from this run
  }
  Tell(a.ready_fd, "ok");
  Log(ref, StrCat(started->job_pid > 0 ? StrCat("script pid ", started->job_pid)
                                       : StrCat(started->tasks.size(), " tasks"),
                  ", ", started->confinement));

  for (;;) {
    if (std::optional<StepResult> result = supervisor.Poll()) {
      // The result is the last thing written here: once loomd reads it, it may remove the
      // directory, and a socket unlinked after that would race its removal.
      ::close(*listen_fd);
      ::unlink(paths.socket.c_str());
      if (Status s = WriteFileAtomic(paths.result, FormatResult(*result), 0600,
                                     Durability::kSurvivesCrash);
          !s.ok()) {
        Log(ref, std::string(s.message()));
      }
      Log(ref, StrCat("ended, wait status ", result->wait_status,
                      result->out_of_memory ? ", out of memory" : "", "; CPU ",
                      (result->user_cpu_us + result->system_cpu_us) / 1000, " ms (cgroup ",
                      result->cgroup_cpu_us / 1000, " ms), max RSS ",
                      result->max_rss_bytes >> 10, " KiB"));
      return 0;
    }
    // A step's tasks end on threads of their own, which wake this loop; without that
    // descriptor it looks every 100 ms.
    const int wake_fd = supervisor.WakeFd();
    int timeout = ref.is_batch() ? 500 : wake_fd >= 0 ? 1000 : 100;
    if (auto next = supervisor.NextDeadlineMs()) {
      timeout = static_cast<int>(std::clamp<int64_t>(*next - NowMs(), 0, timeout));
    }
    pollfd fds[3] = {{*listen_fd, POLLIN, 0}, {sig_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    ::poll(fds, 3, timeout);
    if (fds[2].revents & POLLIN) {
      uint64_t ignored;
      (void)!::read(wake_fd, &ignored, sizeof ignored);
    }
    if (fds[0].revents & POLLIN) Serve(*listen_fd, supervisor);
    signalfd_siginfo info;
    while (sig_fd >= 0 && ::read(sig_fd, &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGTERM || info.ssi_signo == SIGINT) {
        Log(ref, "asked to stop: ending it");
        (void)supervisor.Terminate(started->kill_wait_s);
      } else if (info.ssi_signo == SIGUSR2) {
        (void)core::Log().Reopen();  // the log file was moved
      }
    }
  }
}

}  // namespace
}  // namespace loom::stepd

int main(int argc, char** argv) {
  loom::stepd::Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "loom-stepd: %s needs a value\n", arg.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "--spool")
      a.spool = value;
    else if (arg == "-N")
      a.node = value;
    else if (arg == "-f")
      a.slurm_conf = value;
    else if (arg == "--job")
      a.job_id = std::strtoull(value.c_str(), nullptr, 10);
    else if (arg == "--step")
      a.step = value;
    else if (arg == "--ready-fd")
      a.ready_fd = std::atoi(value.c_str());
    else if (arg == "--detach")
      a.detach = value == "yes";
    else {
      std::fprintf(stderr, "loom-stepd: unknown option '%s'\n", arg.c_str());
      a.job_id = 0;
      break;
    }
  }
  if (a.spool.empty() || a.node.empty() || a.slurm_conf.empty() || a.job_id == 0) {
    std::fprintf(stderr,
                 "usage: loom-stepd --spool DIR -N NODE -f slurm.conf --job ID [--step srun|ID] "
                 "[--ready-fd FD] [--detach yes]\n"
                 "loom-stepd is started by loomd, one per batch job and per step on a node; it "
                 "is not run by hand.\n");
    return 2;
  }
  auto ref = loom::stepd::ParseStepArg(a.job_id, a.step);
  if (!ref.ok()) {
    std::fprintf(stderr, "loom-stepd: --step %s\n", std::string(ref.status().message()).c_str());
    return 2;
  }
  if (a.detach) {
    // loomd started this process as its child (posix_spawn, in a session of its own): the
    // supervisor proper is a child of it that init adopts once this one exits, so that it is
    // nobody's child, outlives loomd and is never loomd's to reap.
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::string msg = "error loom-stepd cannot fork: " + std::string(std::strerror(errno));
      if (a.ready_fd >= 0) (void)!::write(a.ready_fd, msg.data(), msg.size());
      return 1;
    }
    if (pid != 0) ::_exit(0);
  }
  return loom::stepd::Run(std::move(a), *ref);
}
