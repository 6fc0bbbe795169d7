// loom-stepd: the supervisor of one batch job on its node. loomd starts it detached (its
// own session; with --detach it leaves its first process, so init adopts it) with the job's launch request in the job's supervisor
// directory (records.h); it makes the job's cgroup per cgroup.conf, starts the script in it
// (BatchSupervisor), says "ok" or "error MESSAGE" on --ready-fd, then serves loomd's
// requests on its socket (control.h) until the script ends, writes the result and exits.
// It outlives loomd: a restarted loomd finds it by its directory. SIGTERM or SIGINT end the
// job (SIGTERM, SIGKILL after KillWait) and then loom-stepd itself.
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
  int ready_fd = -1;
  bool detach = false;  // --detach yes: leave the parent at once (see main)
};

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Log(uint64_t job, const std::string& message) {
  std::fprintf(stderr, "loom-stepd[job %llu]: %s\n", static_cast<unsigned long long>(job),
               message.c_str());
}

void Tell(int& fd, const std::string& line) {
  if (fd < 0) return;
  const std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
  fd = -1;
}

// The request loomd left for this job, read once and removed (it holds the environment).
StatusOr<v1::LaunchBatchRequest> TakeRequest(const Args& a, const StepdPaths& paths) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(paths.launch));
  ::unlink(paths.launch.c_str());
  v1::LaunchBatchRequest req;
  if (!req.ParseFromString(bytes) || req.job_id() != a.job_id) {
    return absl::InvalidArgumentError(
        StrCat(paths.launch, " is not the launch request of job ", a.job_id));
  }
  return req;
}

// Answers one request on a connection loomd opened.
void Serve(int listen_fd, BatchSupervisor& supervisor) {
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

int Run(Args a) {
  const StepdPaths paths = PathsOf(a.spool, a.node, a.job_id);
  (void)!::chdir("/");
  // Signals arrive on a descriptor; what the script inherits is reset when it starts.
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGCHLD, SIGHUP}) sigaddset(&set, sig);
  sigprocmask(SIG_SETMASK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  const int sig_fd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);

  StatusOr<v1::LaunchBatchRequest> req = TakeRequest(a, paths);
  StatusOr<PreparedLaunch> prepared =
      req.ok() ? PrepareLaunch(*req, a.node, a.slurm_conf) : StatusOr<PreparedLaunch>(req.status());
  if (!prepared.ok()) {
    Tell(a.ready_fd,
         StrCat("error job ", a.job_id, ": ", std::string(prepared.status().message())));
    return 1;
  }
  StatusOr<int> listen_fd = ListenUnix(paths.socket);
  if (!listen_fd.ok()) {
    Tell(a.ready_fd,
         StrCat("error job ", a.job_id, ": ", std::string(listen_fd.status().message())));
    return 1;
  }
  SupervisorOptions so;
  so.job = prepared->job;
  so.settings = prepared->settings;
  so.spool = a.spool;
  so.cgroups = prepared->cgroups.get();
  so.limits = prepared->limits;
  BatchSupervisor supervisor(std::move(so));
  if (Status started = supervisor.Start(); !started.ok()) {
    ::unlink(paths.socket.c_str());
    Tell(a.ready_fd, StrCat("error ", std::string(started.message())));
    return 1;
  }
  PidRecord record;
  record.stepd = RefOf(::getpid()).value_or(ProcessRef{::getpid(), 0});
  record.job = RefOf(supervisor.job_pid()).value_or(ProcessRef{supervisor.job_pid(), 0});
  if (Status s = WriteFileAtomic(paths.pid, FormatPidRecord(record), 0600); !s.ok()) {
    Log(a.job_id, std::string(s.message()));  // loomd still knows it from this run
  }
  Tell(a.ready_fd, "ok");
  Log(a.job_id, StrCat("script pid ", supervisor.job_pid(),
                       prepared->cgroups ? StrCat(", cgroup ", prepared->cgroups->version())
                                         : ", no cgroup.conf: not confined"));

  for (;;) {
    if (std::optional<StepResult> result = supervisor.Poll()) {
      if (Status s = WriteFileAtomic(paths.result, FormatResult(*result), 0600); !s.ok()) {
        Log(a.job_id, std::string(s.message()));
      }
      ::close(*listen_fd);
      ::unlink(paths.socket.c_str());
      Log(a.job_id, StrCat("ended, wait status ", result->wait_status,
                           result->out_of_memory ? ", out of memory" : "", "; CPU ",
                           (result->user_cpu_us + result->system_cpu_us) / 1000, " ms (cgroup ",
                           result->cgroup_cpu_us / 1000, " ms), max RSS ",
                           result->max_rss_bytes >> 10, " KiB"));
      return 0;
    }
    int timeout = 500;
    if (auto next = supervisor.NextDeadlineMs()) {
      timeout = static_cast<int>(std::clamp<int64_t>(*next - NowMs(), 0, 500));
    }
    pollfd fds[2] = {{*listen_fd, POLLIN, 0}, {sig_fd, POLLIN, 0}};
    ::poll(fds, sig_fd >= 0 ? 2 : 1, timeout);
    if (fds[0].revents & POLLIN) Serve(*listen_fd, supervisor);
    signalfd_siginfo info;
    while (sig_fd >= 0 && ::read(sig_fd, &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGTERM || info.ssi_signo == SIGINT) {
        Log(a.job_id, "asked to stop: ending the job");
        (void)supervisor.Terminate(prepared->settings.kill_wait_s);
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
                 "usage: loom-stepd --spool DIR -N NODE -f slurm.conf --job ID [--ready-fd FD] "
                 "[--detach yes]\n"
                 "loom-stepd is started by loomd, one per batch job; it is not run by hand.\n");
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
  return loom::stepd::Run(std::move(a));
}
