// loomdbd: the accounting daemon (Slurm's slurmdbd). Reads slurmdbd.conf (-f, else the file
// beside $SLURM_CONF, else /etc/slurm/slurmdbd.conf), opens its store (SQLite by default,
// PostgreSQL with StorageType=accounting_storage/pgsql) and serves loomctld's job records
// and sacct/sacctmgr's questions on DbdHost:DbdPort until SIGTERM or SIGINT.
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "auth/munge_auth.h"
#include "conf/dbd_conf.h"
#include "core/log.h"
#include "core/mutex.h"
#include "core/pid_file.h"
#include "core/strings.h"
#include "core/version.h"
#include "dbd/service.h"
#include "rpc/convert.h"
#include "rpc/frame_server.h"
#include "store/acct_pgsql.h"
#include "store/acct_sqlite.h"

namespace {

using namespace loom;

StatusOr<std::unique_ptr<store::AcctStore>> OpenStore(const conf::DbdConfig& c,
                                                      const std::string& conf_path) {
  if (c.storage_type == conf::AcctStorageType::kPgsql) {
    store::PgsqlAcctOptions o;
    o.host = c.storage_host;
    o.port = c.storage_port > 0 ? c.storage_port : 5432;
    o.user = c.storage_user;
    o.password = c.storage_pass;
    o.database = c.storage_loc.empty() ? "slurm_acct_db" : c.storage_loc;
    return store::OpenPgsqlAcctStore(o);
  }
  store::SqliteAcctOptions o;
  o.path = c.storage_loc;
  if (o.path.empty()) {
    // Beside the configuration by default: a `loom cluster up` directory keeps everything.
    o.path = (std::filesystem::path(conf_path).parent_path() / "loom_acct.db").string();
  }
  return store::OpenSqliteAcctStore(o);
}

}  // namespace

int main(int argc, char** argv) {
  std::string conf_path;
  std::string listen;
  bool foreground = false;
  int louder = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "loomdbd: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-f") {
      conf_path = value("-f");
    } else if (a == "--listen") {
      listen = value("--listen");
    } else if (a == "-D") {
      foreground = true;
    } else if (a.size() > 1 && a[0] == '-' && a.find_first_not_of('v', 1) == std::string::npos) {
      louder += static_cast<int>(a.size()) - 1;
    } else if (a == "-V" || a == "--version") {
      std::printf("%s\n", std::string(core::kVersionLine).c_str());
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: loomdbd [-D] [-v...] [-V] [-f slurmdbd.conf] [--listen HOST:PORT]\n");
      return 0;
    } else {
      std::fprintf(stderr, "loomdbd: unknown option '%s' (see loomdbd --help)\n", a.c_str());
      return 2;
    }
  }
  if (conf_path.empty()) {
    const char* slurm_conf = std::getenv("SLURM_CONF");
    conf_path = slurm_conf != nullptr
                    ? (std::filesystem::path(slurm_conf).parent_path() / "slurmdbd.conf").string()
                    : "/etc/slurm/slurmdbd.conf";
  }
  std::vector<conf::Diagnostic> warnings;
  auto config = conf::LoadDbdConf(conf_path, &warnings);
  if (!config.ok()) {
    core::LogAt(core::LogLevel::kFatal, "{}", config.status().message());
    return 1;
  }
  core::LogSettings log;
  log.level = core::RaiseLogLevel(config->debug_level, louder);
  log.file = config->log_file;
  log.foreground = foreground;
  if (auto s = core::ConfigureLog(core::Log(), log, "loomdbd"); !s.ok()) {
    core::LogError("{}; logging to stderr", s.message());
    core::Log().ToStderr(true);
  }
  for (const conf::Diagnostic& w : warnings) core::LogInfo("{}", w.ToString());

  // A query's reply holds its records (tens of MB for a month of a large cluster): keep the
  // freed heap for the next one instead of returning it to the kernel after each and
  // faulting it in again, which the profile of sacct over 20,000 jobs showed as the largest
  // cost.
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  auto store = OpenStore(*config, conf_path);
  if (!store.ok()) {
    core::LogAt(core::LogLevel::kFatal, "{}", store.status().message());
    return 1;
  }
  core::LogInfo("accounting store: {}", (*store)->Location());
  auth::MungeOptions mo;
  mo.socket_path = config->munge_socket;
  auth::MungeCredentials munge(mo);
  dbd::DbdService service(*config, *std::move(store), &munge, &core::RealClock());
  if (Status s = service.Bootstrap(); !s.ok()) {
    core::LogAt(core::LogLevel::kFatal, "{}", s.message());
    return 1;
  }
  std::unique_ptr<core::PidFile> pid_file;
  if (!config->pid_file.empty()) {
    auto written = core::PidFile::Write(config->pid_file);
    if (!written.ok()) {
      core::LogAt(core::LogLevel::kFatal, "{}", written.status().message());
      return 1;
    }
    pid_file = *std::move(written);
  }
  rpc::FrameServerOptions fo;
  fo.address = !listen.empty()
                   ? listen
                   : core::StrCat(config->dbd_addr.empty() ? config->dbd_host : config->dbd_addr,
                                  ":", config->dbd_port);
  fo.threads = 4;
  auto server = rpc::FrameServer::Start(
      fo,
      [&service](std::string_view frame, const std::any& admitted) {
        return service.Answer(frame, admitted);
      },
      [](const Status& why) {
        v1::AcctRecordReply reply;
        *reply.mutable_error() = rpc::ToWire(why);
        return reply.SerializeAsString();
      },
      [](int fd) { ::close(fd); },
      [&service](std::string_view prefix) { return service.Admit(prefix); });
  if (!server.ok()) {
    core::LogAt(core::LogLevel::kFatal, "cannot listen on {}: {}", fo.address,
                server.status().message());
    return 1;
  }
  core::LogInfo("serving on {}", fo.address);
  // Usage is rolled up as hours end, off the reports' path.
  core::Mutex rollup_mu;
  bool stopping = false;
  std::thread rollups([&] {
    for (;;) {
      {
        core::MutexLock lock(&rollup_mu);
        if (rollup_mu.AwaitFor([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping; },
                               std::chrono::seconds(60))) {
          return;
        }
      }
      if (Status s = service.RollUpAll(); !s.ok()) {
        core::LogError("rolling usage up: {}", s.message());
        continue;  // nothing is purged before its usage is rolled up
      }
      if (auto purged = service.PurgeJobs(); !purged.ok()) {
        core::LogError("purging job records (PurgeJobAfter): {}", purged.status().message());
      } else if (*purged > 0) {
        core::LogInfo("purged {} job records that ended over PurgeJobAfter ago", *purged);
      }
    }
  });
  for (;;) {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGUSR2) {
      if (auto s = core::Log().Reopen(); !s.ok()) core::LogError("{}", s.message());
      continue;
    }
    break;
  }
  core::LogInfo("stopping on signal");
  {
    core::MutexLock lock(&rollup_mu);
    stopping = true;
  }
  rollups.join();
  (*server)->Shutdown();
  return 0;
}
