// `loom cluster up|status|restart|down`: a local cluster in one command. `up` writes a slurm.conf
// (a small mixed cluster on loopback, or the one --config names, made local: see
// conf/local_cluster.h), generates a MUNGE key and starts munged, loomctld and one loomd per
// node in the background, all under one directory; `down` stops exactly the processes `up`
// started (by the PIDs it recorded): the controller, then every running batch job through
// its loom-stepd (found by the pid records in the nodes' spools), then the node daemons;
// `restart` starts again, with the same arguments, the daemons that died (or those named).
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "auth/identity.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "conf/dbd_conf.h"
#include "conf/local_cluster.h"
#include "conf/site_config.h"
#include "conf/slurm_conf.h"
#include "core/status.h"
#include "core/strings.h"
#include "stepd/records.h"

namespace loom::cli {
namespace {

namespace fs = std::filesystem;

int Fail(const std::string& msg) {
  std::fprintf(stderr, "loom cluster: %s\n", msg.c_str());
  return 1;
}

std::string SelfDir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// Free ports, never the same one twice (the kernel may offer a port again once it is
// closed).
class PortPicker {
 public:
  int Next() {
    for (int tries = 0; tries < 100; ++tries) {
      const int port = FreePort();
      if (port > 0 && given_.insert(port).second) return port;
    }
    return 0;
  }

 private:
  std::set<int> given_;
};

// Starts `argv` in a session of its own with stdout and stderr to `log`; returns its pid.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setsid();
  int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  int in = ::open("/dev/null", O_RDONLY);
  if (out >= 0) {
    ::dup2(out, 1);
    ::dup2(out, 2);
  }
  if (in >= 0) ::dup2(in, 0);
  // Nothing of the caller's reaches the daemon: not the pids file, not a log kept open.
  ::close_range(3, ~0U, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  std::fprintf(stderr, "cannot run %s\n", args[0]);
  ::_exit(127);
}

bool Alive(pid_t pid) { return pid > 0 && ::kill(pid, 0) == 0; }

struct Recorded {
  std::string name;
  pid_t pid;
};

std::vector<Recorded> ReadPids(const std::string& dir) {
  std::vector<Recorded> out;
  std::ifstream in(dir + "/run/pids");
  std::string name;
  pid_t pid;
  while (in >> name >> pid) out.push_back({name, pid});
  return out;
}

// How `up` starts the daemon recorded as `name` ("munged", "loomctld", "loomd:NODE"), and
// the file its output goes to.
struct DaemonCommand {
  std::vector<std::string> argv;
  std::string log;
};

DaemonCommand CommandOf(const std::string& name, const std::string& dir) {
  const std::string bin = SelfDir();
  const std::string conf = dir + "/etc/slurm.conf";
  if (name == "munged") {
    return {{"/usr/sbin/munged", "--foreground", "--force", "--socket=" + dir + "/munge/munge.socket",
             "--key-file=" + dir + "/munge/munge.key", "--pid-file=" + dir + "/munge/munged.pid",
             "--log-file=" + dir + "/log/munged.log", "--seed-file=" + dir + "/munge/seed"},
            dir + "/log/munged.out"};
  }
  if (name == "loomctld") return {{bin + "/loomctld", "-D", "-f", conf}, dir + "/log/loomctld.log"};
  if (name == "loomdbd") {
    return {{bin + "/loomdbd", "-D", "-f", dir + "/etc/slurmdbd.conf"}, dir + "/log/loomdbd.log"};
  }
  const std::string node = name.substr(std::string("loomd:").size());
  return {{bin + "/loomd", "-D", "-f", conf, "-N", node, "--spool", dir + "/spool/" + node},
          dir + "/log/loomd-" + node + ".log"};
}

pid_t Start(const std::string& name, const std::string& dir) {
  const DaemonCommand c = CommandOf(name, dir);
  return Spawn(c.argv, c.log);
}

void WritePids(const std::string& dir, const std::vector<Recorded>& all) {
  std::ofstream pids(dir + "/run/pids", std::ios::trunc);
  for (const Recorded& r : all) pids << r.name << " " << r.pid << "\n";
}

// DIR/etc/slurmdbd.conf: loomdbd on 127.0.0.1:`port` with the cluster's munged. From the
// site's file `site` when there is one (its storage kept, except that an embedded SQLite
// store moves into the cluster's directory), else the embedded SQLite store.
Status WriteDbdConf(const std::string& dir, int port, const std::string& site) {
  std::string kept;
  bool pgsql = false;
  if (!site.empty()) {
    std::vector<conf::Diagnostic> warnings;
    auto parsed = conf::LoadDbdConf(site, &warnings);
    if (!parsed.ok()) return parsed.status();
    pgsql = parsed->storage_type == conf::AcctStorageType::kPgsql;
    std::ifstream in(site);
    std::string line;
    while (std::getline(in, line)) {
      std::string_view t = core::Trim(line);
      const std::string key = core::ToLower(t.substr(0, t.find('=')));
      if (key == "dbdhost" || key == "dbdaddr" || key == "dbdport" || key == "authinfo" ||
          key == "pidfile" || key == "logfile" || key == "slurmuser" ||
          (!pgsql && key == "storageloc")) {
        continue;
      }
      kept += line + "\n";
    }
  }
  auto me = auth::LookupUserById(::getuid());
  std::ofstream out(dir + "/etc/slurmdbd.conf", std::ios::trunc);
  out << "# Written by `loom cluster up`" << (site.empty() ? "" : " from " + site)
      << ": loomdbd on 127.0.0.1 with the cluster's munged.\n"
      << "DbdHost=localhost\nDbdAddr=127.0.0.1\nDbdPort=" << port << "\n"
      << "AuthInfo=socket=" << dir << "/munge/munge.socket\n"
      << "SlurmUser=" << (me.ok() ? me->name : "root") << "\n";
  if (!pgsql) {
    out << "StorageType=accounting_storage/sqlite\nStorageLoc=" << dir << "/state/loom_acct.db\n";
  }
  out << kept;
  if (!out) return absl::InternalError(core::StrCat("cannot write ", dir, "/etc/slurmdbd.conf"));
  return absl::OkStatus();
}

std::string DefaultConfig(const std::string& dir, int nodes, PortPicker& ports, int dbd_port) {
  std::ostringstream c;
  c << "# Written by `loom cluster up`: a local cluster on loopback.\n"
    << "ClusterName=local\n"
    << "SlurmctldHost=localhost(127.0.0.1)\n"
    << "SlurmctldPort=" << ports.Next() << "\n"
    << "AuthType=auth/munge\n"
    << "AuthInfo=socket=" << dir << "/munge/munge.socket\n"
    << "StateSaveLocation=" << dir << "/state\n"
    << "# Accounting: loomdbd keeps job records (sacct) and the association tree (sacctmgr).\n"
    << "AccountingStorageType=accounting_storage/slurmdbd\n"
    << "AccountingStorageHost=127.0.0.1\nAccountingStoragePort=" << dbd_port << "\n"
    << "AccountingStorageTRES=gres/gpu\n"
    << "SlurmdTimeout=60\nKillWait=5\nMinJobAge=600\n"
    << "# Every node is emulated on this host: take each to have what this file says.\n"
    << "SlurmdParameters=config_overrides\n"
    << "SchedulerType=sched/backfill\nSelectType=select/cons_tres\n"
    << "# Fair share over the accounts sacctmgr makes (sshare, sprio).\n"
    << "PriorityType=priority/multifactor\nPriorityWeightFairshare=10000\n"
    << "PriorityWeightAge=1000\nPriorityWeightPartition=1000\nPriorityWeightQOS=1000\n"
    << "GresTypes=gpu\n";
  // The first half DGX-like GPU nodes (8 A100s; GPUs 0-3 on socket 0's NUMA node, 4-7 on
  // socket 1's), the rest CPU nodes.
  const int gpu_nodes = (nodes + 1) / 2;
  for (int i = 1; i <= nodes; ++i) {
    const bool gpu = i <= gpu_nodes;
    char name[32];
    std::snprintf(name, sizeof(name), gpu ? "gpu%02d" : "cpu%02d", gpu ? i : i - gpu_nodes);
    c << "NodeName=" << name << " NodeAddr=127.0.0.1 Port=" << ports.Next()
      << (gpu ? " CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=128000"
                " Gres=gpu:a100:8 Features=gpu,a100"
              : " CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=64000"
                " Features=cpu")
      << "\n";
  }
  c << "PartitionName=batch Nodes=ALL Default=YES MaxTime=1-00:00:00 DefaultTime=01:00:00\n";
  return c.str();
}

// The files Slurm reads beside slurm.conf. Loom acts on the first five; the others are
// carried all the same (a cluster made from a site's files keeps them together) and named
// in a warning, so that nobody believes a plugstack.conf or an mpi.conf is in force.
constexpr const char* kActedOnBeside[] = {"gres.conf", "topology.conf", "cgroup.conf",
                                          "job_submit.lua", "cli_filter.lua"};
constexpr const char* kNotActedOnBeside[] = {
    "acct_gather.conf", "burst_buffer.conf", "helpers.conf", "job_container.conf", "knl_cray.conf",
    "knl_generic.conf", "mpi.conf",          "oci.conf",     "plugstack.conf"};

// Writes DIR/etc/slurm.conf: the default cluster, or `config` made local (with the
// files Slurm reads beside it). `config` is checked as it is first, so that its errors name
// its own lines.
Status WriteConfig(const std::string& dir, const std::string& config, int nodes) {
  const std::string etc = dir + "/etc";
  PortPicker ports;
  std::error_code ec;
  for (const char* beside : kActedOnBeside) fs::remove(etc + "/" + beside, ec);
  for (const char* beside : kNotActedOnBeside) fs::remove(etc + "/" + beside, ec);
  fs::remove(etc + "/slurmdbd.conf", ec);
  if (config.empty()) {
    const int dbd_port = ports.Next();
    std::ofstream(etc + "/slurm.conf") << DefaultConfig(dir, nodes, ports, dbd_port);
    return WriteDbdConf(dir, dbd_port, "");
  }
  std::ifstream in(config);
  if (!in)
    return absl::NotFoundError(core::StrCat("cannot read ", config, ": ", std::strerror(errno)));
  const std::string text(std::istreambuf_iterator<char>(in), {});
  std::vector<conf::Diagnostic> warnings;
  auto original = conf::LoadSiteConfig(config, &warnings);
  if (!original.ok()) return original.status();
  conf::LocalPlacement place;
  place.controller_port = ports.Next();
  place.state_dir = dir + "/state";
  place.munge_socket = dir + "/munge/munge.socket";
  place.node_port = [&ports] { return ports.Next(); };
  if (original->cluster.AccountingEnabled()) place.dbd_port = ports.Next();
  auto local = conf::LocalizeSlurmConf(text, config, conf::FileIncludeResolver(), place);
  if (!local.ok()) return local.status();
  std::ofstream(etc + "/slurm.conf") << *local;
  const fs::path from = fs::path(config).parent_path();
  if (place.dbd_port > 0) {
    const fs::path site_dbd = from / "slurmdbd.conf";
    RETURN_IF_ERROR(
        WriteDbdConf(dir, place.dbd_port, fs::exists(site_dbd) ? site_dbd.string() : ""));
  }
  auto carry = [&](const char* beside) -> Status {
    fs::copy_file(from / beside, etc + "/" + beside, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return absl::InternalError(core::StrCat("cannot copy ", (from / beside).string(), ": ",
                                              ec.message(), "; nothing was started"));
    }
    return absl::OkStatus();
  };
  for (const char* beside : kActedOnBeside) {
    if (fs::exists(from / beside)) RETURN_IF_ERROR(carry(beside));
  }
  for (const char* beside : kNotActedOnBeside) {
    if (!fs::exists(from / beside)) continue;
    RETURN_IF_ERROR(carry(beside));
    std::fprintf(stderr, "loom cluster: warning: %s is carried over but not acted on by Loom yet\n",
                 (from / beside).string().c_str());
  }
  return absl::OkStatus();
}

int Up(const std::string& dir, const std::string& config, int nodes) {
  for (const Recorded& r : ReadPids(dir)) {
    if (Alive(r.pid)) {
      return Fail(core::StrCat(dir, " already runs a cluster (", r.name, " is pid ", r.pid,
                               "); `loom cluster down --dir ", dir, "` first"));
    }
  }
  std::error_code ec;
  for (const char* sub : {"etc", "munge", "state", "spool", "log", "run"}) {
    fs::create_directories(fs::path(dir) / sub, ec);
    if (ec) return Fail(core::StrCat("cannot create ", dir, "/", sub, ": ", ec.message()));
  }
  ::chmod(dir.c_str(), 0755);
  ::chmod((dir + "/munge").c_str(), 0755);
  const std::string conf = dir + "/etc/slurm.conf";
  if (Status s = WriteConfig(dir, config, nodes); !s.ok()) return Fail(std::string(s.message()));
  std::vector<conf::Diagnostic> warnings;
  auto site = conf::LoadSiteConfig(conf, &warnings);
  if (!site.ok()) return Fail(std::string(site.status().message()));
  const conf::ClusterConfig* cfg = &site->cluster;

  const std::string key = dir + "/munge/munge.key";
  if (!fs::exists(key)) {
    pid_t k = Spawn({"/usr/sbin/mungekey", "--create", "--keyfile=" + key}, dir + "/log/mungekey.log");
    int st = 0;
    ::waitpid(k, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      return Fail("mungekey could not create a key (is the munge package installed?)");
    }
  }
  std::vector<Recorded> started;
  auto record = [&](const std::string& name) {
    started.push_back({name, Start(name, dir)});
    WritePids(dir, started);  // as each starts: `down` finds them even if `up` dies here
  };
  record("munged");
  for (int i = 0; i < 50 && !fs::exists(dir + "/munge/munge.socket"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // loomdbd first, so that the controller's first records find it.
  if (fs::exists(dir + "/etc/slurmdbd.conf")) record("loomdbd");
  record("loomctld");
  for (const conf::NodeConfig& n : cfg->nodes) record("loomd:" + n.name);
  // Wait for every node to report in.
  ::setenv("SLURM_CONF", conf.c_str(), 1);
  auto client = Client::Connect("loom cluster");
  if (!client.ok()) return Fail(std::string(client.status().message()));
  size_t up = 0;
  for (int i = 0; i < 200 && up < cfg->nodes.size(); ++i) {
    v1::QueryNodesRequest req;
    v1::QueryNodesReply reply;
    up = 0;
    if (client->Call("QueryNodes", req, &reply).ok()) {
      for (const v1::NodeInfo& n : reply.nodes()) up += n.state().find("DOWN") == std::string::npos;
    }
    if (up < cfg->nodes.size()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (up < cfg->nodes.size()) {
    return Fail(core::StrCat(up, " of ", cfg->nodes.size(), " nodes came up; see ", dir, "/log"));
  }
  std::printf("loom cluster: %zu nodes up under %s\nexport SLURM_CONF=%s\n", cfg->nodes.size(),
              dir.c_str(), conf.c_str());
  return 0;
}

int ShowStatus(const std::string& dir) {
  std::vector<Recorded> all = ReadPids(dir);
  if (all.empty()) {
    std::printf("no cluster under %s\n", dir.c_str());
    return 1;
  }
  int dead = 0;
  for (const Recorded& r : all) {
    const bool alive = Alive(r.pid);
    dead += !alive;
    std::printf("%-16s pid %-8d %s\n", r.name.c_str(), r.pid, alive ? "running" : "stopped");
  }
  return dead == 0 ? 0 : 1;
}

// Waits up to `seconds` for every process in `refs` to end; returns those still running.
std::vector<stepd::ProcessRef> AwaitEnd(std::vector<stepd::ProcessRef> refs, int seconds) {
  for (int i = 0; i < seconds * 10; ++i) {
    std::erase_if(refs, [](const stepd::ProcessRef& r) { return !stepd::IsAlive(r); });
    if (refs.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return refs;
}

// A supervisor of a batch script or of a step's tasks, and the sessions it leads them in.
struct Supervisor {
  stepd::ProcessRef stepd;
  std::vector<stepd::ProcessRef> sessions;
};

// The supervisors of the cluster's nodes, from the records in their spools.
std::vector<Supervisor> Supervisors(const std::string& dir, const std::vector<Recorded>& all) {
  std::vector<Supervisor> out;
  for (const Recorded& r : all) {
    if (!r.name.starts_with("loomd:")) continue;
    const std::string node = r.name.substr(6);
    const std::string spool = dir + "/spool/" + node;
    for (const stepd::StepRef& ref : stepd::ListSupervised(spool, node)) {
      const stepd::StepdPaths paths = stepd::PathsOf(spool, node, ref);
      auto text = stepd::ReadFile(paths.pid);
      if (!text.ok()) continue;
      auto rec = stepd::ParsePidRecord(*text, paths.pid);
      if (!rec.ok()) continue;
      Supervisor s{rec->stepd, {}};
      if (rec->job.pid > 0) s.sessions.push_back(rec->job);
      if (auto tasks = stepd::ReadFile(paths.tasks); tasks.ok()) {
        if (auto list = stepd::ParseTaskRecords(*tasks, paths.tasks); list.ok()) {
          for (const stepd::TaskRecord& t : *list) s.sessions.push_back(t.process);
        }
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

// Starts again the daemons of the cluster under `dir` that have stopped, or those named
// ("loomctld", "munged", "loomd:NODE" or just NODE), stopping each named one that still
// runs first. Ports, state and jobs stay: a restarted daemon takes up where it left off.
int Restart(const std::string& dir, const std::vector<std::string>& names) {
  std::vector<Recorded> all = ReadPids(dir);
  if (all.empty()) {
    return Fail(core::StrCat("no cluster under ", dir, "; `loom cluster up --dir ", dir,
                             "` starts one"));
  }
  std::set<std::string> wanted;
  for (const std::string& n : names) {
    auto known = [&](const std::string& name) {
      return std::any_of(all.begin(), all.end(), [&](const Recorded& r) { return r.name == name; });
    };
    if (known(n)) {
      wanted.insert(n);
    } else if (known("loomd:" + n)) {
      wanted.insert("loomd:" + n);
    } else {
      std::string list;
      for (const Recorded& r : all) list += (list.empty() ? "" : ", ") + r.name;
      return Fail(core::StrCat("the cluster under ", dir, " has no daemon '", n, "' (it has ",
                               list, ")"));
    }
  }
  int restarted = 0;
  for (Recorded& r : all) {
    const bool named = wanted.count(r.name) > 0;
    if (!named && (!names.empty() || Alive(r.pid))) continue;
    if (Alive(r.pid)) {
      ::kill(r.pid, SIGTERM);
      for (int i = 0; i < 50 && Alive(r.pid); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (Alive(r.pid)) ::kill(r.pid, SIGKILL);
    }
    r.pid = Start(r.name, dir);
    std::printf("loom cluster: %s restarted (pid %d)\n", r.name.c_str(), r.pid);
    ++restarted;
  }
  WritePids(dir, all);
  if (restarted == 0) std::printf("loom cluster: every daemon under %s runs\n", dir.c_str());
  return 0;
}

int Down(const std::string& dir) {
  std::vector<Recorded> all = ReadPids(dir);
  std::vector<stepd::ProcessRef> controller;
  for (const Recorded& r : all) {
    if (r.name != "loomctld" || !Alive(r.pid)) continue;
    ::kill(r.pid, SIGTERM);  // first, so that it starts no job while the others end
    if (auto ref = stepd::RefOf(r.pid)) controller.push_back(*ref);
  }
  (void)AwaitEnd(controller, 5);
  // Then the jobs: SIGTERM makes each loom-stepd end its job (SIGTERM, SIGKILL after
  // KillWait) and then itself. Whatever outlives that is killed by its recorded pid.
  const std::vector<Supervisor> supervisors = Supervisors(dir, all);
  std::vector<stepd::ProcessRef> waiting;
  for (const Supervisor& s : supervisors) {
    if (stepd::IsAlive(s.stepd)) {
      ::kill(s.stepd.pid, SIGTERM);
      waiting.push_back(s.stepd);
    }
  }
  for (const stepd::ProcessRef& left : AwaitEnd(waiting, 40)) ::kill(left.pid, SIGKILL);
  for (const Supervisor& s : supervisors) {
    for (const stepd::ProcessRef& session : s.sessions) {
      if (session.pid > 0 && stepd::IsAlive(session)) ::kill(-session.pid, SIGKILL);
    }
  }
  // Then the daemons, munged last.
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (Alive(it->pid)) ::kill(it->pid, SIGTERM);
  }
  for (int i = 0; i < 50; ++i) {
    bool any = false;
    for (const Recorded& r : all) any = any || Alive(r.pid);
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const Recorded& r : all) {
    if (Alive(r.pid)) ::kill(r.pid, SIGKILL);
  }
  std::error_code ec;
  fs::remove(dir + "/run/pids", ec);
  std::printf("loom cluster: stopped %zu processes and %zu supervisors of jobs and steps under %s\n", all.size(),
              supervisors.size(), dir.c_str());
  return 0;
}

}  // namespace

int RunCluster(int argc, char** argv) {
  CLI::App app{"a local Loom cluster: munged, loomctld and loomd under one directory", "cluster"};
  app.require_subcommand(1);
  const char* home = std::getenv("HOME");
  std::string dir = std::string(home ? home : "/tmp") + "/.loom/cluster";
  std::string config;
  int nodes = 4;
  CLI::App* up = app.add_subcommand("up", "start a cluster in the background");
  up->add_option("--dir", dir, "where its configuration, state and logs live")->capture_default_str();
  CLI::Option* config_opt = up->add_option(
      "--config", config,
      "a slurm.conf to run instead of the default mixed cluster (with the files Slurm reads "
      "beside it: gres.conf, topology.conf, cgroup.conf, ...), on loopback with ports and "
      "state of its own");
  up->add_option("--nodes", nodes, "nodes of the default cluster: half 8-GPU, half CPU")
      ->check(CLI::Range(1, 64))
      ->capture_default_str()
      ->excludes(config_opt);
  CLI::App* status = app.add_subcommand("status", "show whether its processes run");
  status->add_option("--dir", dir)->capture_default_str();
  CLI::App* down = app.add_subcommand("down", "stop exactly the processes `up` started");
  down->add_option("--dir", dir)->capture_default_str();
  std::vector<std::string> restart_names;
  CLI::App* restart = app.add_subcommand(
      "restart",
      "start again the daemons that stopped, or those named (loomctld, loomdbd, munged, NODE)");
  restart->add_option("--dir", dir)->capture_default_str();
  restart->add_option("daemons", restart_names, "loomctld, loomdbd, munged, or a node's name");
  std::string examples;
  CLI::App* demo = app.add_subcommand(
      "demo", "up (unless running), then the example job scripts, squeue and sinfo");
  demo->add_option("--dir", dir)->capture_default_str();
  demo->add_option("--examples", examples, "the directory of the example job scripts");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  if (!ec) dir = abs.lexically_normal().string();
  if (!config.empty()) {
    fs::path cabs = fs::absolute(config, ec);
    if (!ec) config = cabs.lexically_normal().string();
  }
  if (*up) return Up(dir, config, nodes);
  if (*status) return ShowStatus(dir);
  if (*restart) return Restart(dir, restart_names);
  if (*demo) return RunDemo(dir, examples, SelfDir() + "/loom");
  return Down(dir);
}

}  // namespace loom::cli
