// loomctld: the controller daemon. Reads slurm.conf (-f, or $SLURM_CONF, or
// /etc/slurm/slurm.conf), recovers its state from StateSaveLocation and serves until
// SIGTERM or SIGINT. It logs as SlurmctldDebug, SlurmctldLogFile and SlurmctldSyslogDebug
// say (stderr too with -D, or when there is no file); SIGUSR2 reopens the file.
#include <malloc.h>
#include <pthread.h>

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "conf/log_settings.h"
#include "core/log.h"
#include "ctld/controller.h"

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
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: loomctld [-D] [-f slurm.conf] [--listen HOST:PORT] [--munge-socket PATH]\n");
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
  const loom::core::LogSettings log =
      loom::conf::SlurmctldLogSettings((*controller)->site().cluster, foreground);
  if (auto s = loom::core::ConfigureLog(loom::core::Log(), log, "loomctld"); !s.ok()) {
    loom::core::LogError("{}; logging to stderr", s.message());
    loom::core::Log().ToStderr(true);
  }
  loom::core::LogInfo("serving on {}", (*controller)->address());
  // The signals are taken here, on a thread of the daemon's own, not in a handler: SIGUSR2
  // reopens the log file (after logrotate moved it), SIGTERM and SIGINT stop the controller.
  std::thread signals([&] {
    for (;;) {
      int sig = 0;
      sigwait(&set, &sig);
      if (sig != SIGUSR2) break;
      if (auto s = loom::core::Log().Reopen(); !s.ok()) loom::core::LogError("{}", s.message());
      loom::core::LogInfo("log file reopened on SIGUSR2");
    }
    (*controller)->Shutdown();
  });
  (*controller)->Wait();
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  return 0;
}
