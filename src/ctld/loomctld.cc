// loomctld: the controller daemon. Reads slurm.conf (-f, or $SLURM_CONF, or
// /etc/slurm/slurm.conf), recovers its state from StateSaveLocation and serves until
// SIGTERM or SIGINT; running jobs go on without it. Signals as slurmctld's: SIGHUP reads
// slurm.conf again (scontrol reconfigure), SIGUSR2 reopens the log file. It logs as
// SlurmctldDebug, SlurmctldLogFile and SlurmctldSyslogDebug say (stderr too with -D, or
// when there is no file; each -v one level louder) and writes SlurmctldPidFile when set.
#include <malloc.h>
#include <pthread.h>

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "conf/log_settings.h"
#include "core/log.h"
#include "core/pid_file.h"
#include "core/version.h"
#include "ctld/controller.h"

namespace {

using namespace loom;

// The log as slurm.conf says, `louder` levels up (-v).
void ConfigureLogging(const conf::ClusterConfig& cluster, bool foreground, int louder) {
  core::LogSettings log = conf::SlurmctldLogSettings(cluster, foreground);
  log.level = core::RaiseLogLevel(log.level, louder);
  if (auto s = core::ConfigureLog(core::Log(), log, "loomctld"); !s.ok()) {
    core::LogError("{}; logging to stderr", s.message());
    core::Log().ToStderr(true);
  }
}

// SIGHUP: slurm.conf (and gres.conf, topology.conf) read again and applied, as `scontrol
// reconfigure` does; a file with errors changes nothing and is said in the log.
void Reconfigure(ctld::Controller& controller, const std::string& slurm_conf, bool foreground,
                 int louder) {
  std::vector<conf::Diagnostic> warnings;
  int64_t slurmd_timeout_s = 0;
  conf::ClusterConfig applied;
  if (Status s = controller.Reconfigure(&warnings, &slurmd_timeout_s, &applied); !s.ok()) {
    core::LogError("reconfigure on SIGHUP refused: {}; the configuration in force stays",
                   s.message());
    return;
  }
  for (const conf::Diagnostic& w : warnings) core::LogInfo("{}", w.ToString());
  ConfigureLogging(applied, foreground, louder);
  core::LogInfo("reconfigured on SIGHUP from {}", slurm_conf);
}

}  // namespace

int main(int argc, char** argv) {
  // Blocks of a megabyte and more (a query's reply for thousands of jobs) are mapped for
  // themselves and go back to the system when freed. Left to itself glibc raises this
  // threshold once such a block is freed, and the controller then keeps the memory of its
  // largest reply for good.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // One thread owns the state and makes almost everything that stays; the RPC threads
  // allocate for the request at hand. glibc gives threads arenas of their own (up to eight
  // per core), each keeping the most its threads ever used at once: with one arena for all,
  // 10,000 held jobs took 15-40 bytes less each, at the same CPU per request. A
  // MALLOC_ARENA_MAX in the environment decides instead.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
  loom::ctld::ControllerOptions opts;
  bool foreground = false;
  int louder = 0;
  if (const char* env = std::getenv("SLURM_CONF")) opts.slurm_conf = env;
  if (opts.slurm_conf.empty()) opts.slurm_conf = "/etc/slurm/slurm.conf";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "loomctld: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-f") {
      opts.slurm_conf = value("-f");
    } else if (a == "--listen") {
      opts.listen_address = value("--listen");
    } else if (a == "--munge-socket") {
      opts.munge_socket = value("--munge-socket");
    } else if (a == "-D") {
      // Always in the foreground (`loom cluster up` runs it in the background); -D also
      // keeps the log on stderr when SlurmctldLogFile names a file, as slurmctld -D does.
      foreground = true;
    } else if (a.size() > 1 && a.find_first_not_of('v', 1) == std::string::npos && a[0] == '-') {
      louder += static_cast<int>(a.size()) - 1;  // -v, -vv, ...: each v one level louder
    } else if (a == "-R") {
      // Recover the full state: what loomctld always does.
    } else if (a == "-V" || a == "--version") {
      std::printf("%s\n", std::string(loom::core::kVersionLine).c_str());
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: loomctld [-D] [-R] [-v...] [-V] [-f slurm.conf] [--listen HOST:PORT] "
          "[--munge-socket PATH]\n");
      return 0;
    } else {
      std::fprintf(stderr, "loomctld: unknown option '%s' (see loomctld --help)\n", a.c_str());
      return 2;
    }
  }
  // SIGTERM and SIGINT are taken by one thread that shuts the controller down.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR2);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // Every client, node stream and hostile peer is a descriptor: as many as the system allows
  // (slurmctld does the same), so the cap on unauthenticated connections, not EMFILE, decides.
  if (rlimit nofile{}; ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }

  auto controller = loom::ctld::Controller::Start(opts);
  if (!controller.ok()) {
    loom::core::LogAt(loom::core::LogLevel::kFatal, "{}", controller.status().message());
    return 1;
  }
  const loom::conf::ClusterConfig& cluster = (*controller)->site().cluster;
  ConfigureLogging(cluster, foreground, louder);
  std::unique_ptr<loom::core::PidFile> pid_file;
  if (!cluster.slurmctld_pid_file.empty()) {
    auto written = loom::core::PidFile::Write(cluster.slurmctld_pid_file);
    if (!written.ok()) {
      loom::core::LogAt(loom::core::LogLevel::kFatal, "{}", written.status().message());
      (*controller)->Shutdown();
      return 1;
    }
    pid_file = *std::move(written);
  }
  loom::core::LogInfo("serving on {}", (*controller)->address());
  // The signals are taken here, on a thread of the daemon's own, not in a handler: SIGHUP
  // reconfigures, SIGUSR2 reopens the log file (after logrotate moved it), SIGTERM and
  // SIGINT stop the controller.
  std::thread signals([&] {
    for (;;) {
      int sig = 0;
      sigwait(&set, &sig);
      if (sig == SIGHUP) {
        Reconfigure(**controller, opts.slurm_conf, foreground, louder);
      } else if (sig == SIGUSR2) {
        if (auto s = loom::core::Log().Reopen(); !s.ok()) loom::core::LogError("{}", s.message());
        loom::core::LogInfo("log file reopened on SIGUSR2");
      } else {
        break;
      }
    }
    (*controller)->Shutdown();
  });
  (*controller)->Wait();
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  return 0;
}
