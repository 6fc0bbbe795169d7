// scancel: cancels (or signals) jobs: ids ("123", "123_4"), or -u/-p/-n/-t filters.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/slurm_help.h"
#include "core/strings.h"

namespace loom::cli {
namespace {

// Slurm 22.05's scancel options; rows of one option share an id.
enum class Opt {
  kAccount,
  kBatch,
  kCtld,
  kClusters,
  kFull,
  kHelp,
  kHurry,
  kInteractive,
  kName,
  kMe,
  kNodelist,
  kPartition,
  kQos,
  kQuiet,
  kReservation,
  kSibling,
  kSignal,
  kState,
  kUsage,
  kUser,
  kVerbose,
  kVersion,
  kWckey,
};

// In scancel's order within each first letter (its "ambiguous" messages list them so).
constexpr OptionSpec<Opt> kOptions[] = {
    {"account", 'A', kArg, Opt::kAccount},
    {"batch", 'b', kNoArg, Opt::kBatch},
    {"ctld", 0, kNoArg, Opt::kCtld},
    {"cluster", 0, kArg, Opt::kClusters},
    {"clusters", 'M', kArg, Opt::kClusters},
    {"full", 'f', kNoArg, Opt::kFull},
    {"help", 0, kNoArg, Opt::kHelp},
    {"hurry", 'H', kNoArg, Opt::kHurry},
    {"interactive", 'i', kNoArg, Opt::kInteractive},
    {"jobname", 0, kArg, Opt::kName},
    {"me", 0, kNoArg, Opt::kMe},
    {"name", 'n', kArg, Opt::kName},
    {"nodelist", 'w', kArg, Opt::kNodelist},
    {"partition", 'p', kArg, Opt::kPartition},
    {"qos", 'q', kArg, Opt::kQos},
    {"quiet", 'Q', kNoArg, Opt::kQuiet},
    {"reservation", 'R', kArg, Opt::kReservation},
    {"sibling", 0, kArg, Opt::kSibling},
    {"signal", 's', kArg, Opt::kSignal},
    {"state", 't', kArg, Opt::kState},
    {"usage", 0, kNoArg, Opt::kUsage},
    {"user", 'u', kArg, Opt::kUser},
    {"verbose", 'v', kNoArg, Opt::kVerbose},
    {"version", 'V', kNoArg, Opt::kVersion},
    {"wckey", 0, kArg, Opt::kWckey},
};

constexpr CommandText kText{"scancel", kScancelHelp, kScancelUsage};

// "TERM", "SIGTERM", "15" -> 15; -1 for an unknown name.
int SignalNumber(std::string s) {
  if (auto n = core::ParseInt(s)) return static_cast<int>(*n);
  if (s.rfind("SIG", 0) == 0) s = s.substr(3);
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT},
      {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"ALRM", SIGALRM}};
  for (const auto& [name, num] : kSignals) {
    if (s == name) return num;
  }
  return -1;
}

}  // namespace

int RunScancel(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  const std::vector<std::string>& ids = scan.rest;
  std::string user, partition, name, state, signal;
  for (const ParsedOption<Opt>& o : scan.options) {
    const std::string value = o.value.value_or("");
    switch (o.id) {
      case Opt::kUser:
        user = value;
        break;
      case Opt::kMe:
        user = CurrentUserName();
        break;
      case Opt::kPartition:
        partition = value;
        break;
      case Opt::kName:
        name = value;
        break;
      case Opt::kState:
        state = value;
        break;
      case Opt::kSignal:
        signal = value;
        break;
      default:
        return NotSupported("scancel", LongName<Opt>(kOptions, o.id));
    }
  }
  if (ids.empty() && user.empty() && partition.empty() && name.empty() && state.empty()) {
    std::fprintf(stderr, "scancel: error: No job identification provided\n");
    return 1;
  }
  v1::SignalJobRequest req;
  for (const std::string& id : ids) req.add_job_ids(id);
  req.set_user(user);
  req.set_partition(partition);
  req.set_name(name);
  req.set_state(core::ToLower(state) == "pending" || state == "PD" ? "PENDING"
                : core::ToLower(state) == "running" || state == "R" ? "RUNNING"
                                                                     : state);
  if (!signal.empty()) {
    int sig = SignalNumber(signal);
    if (sig < 0) {
      std::fprintf(stderr, "scancel: error: Invalid job signal: %s\n", signal.c_str());
      return 1;
    }
    req.set_signal(sig);
  }
  auto client = Client::Connect("scancel");
  if (!client.ok()) {
    std::fprintf(stderr, "scancel: error: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  v1::SignalJobReply reply;
  Status s = client->Call("SignalJob", req, &reply);
  int rc = 0;
  for (int i = 0; i < reply.per_job_size(); ++i) {
    // Slurm 22.05's scancel says nothing about a job id it does not know, and exits 0.
    if (reply.per_job(i).code() == v1::OK || reply.per_job(i).code() == v1::INVALID_JOB_ID) continue;
    rc = 1;
    const std::string& id = i < reply.per_job_id_size()       ? reply.per_job_id(i)
                            : i < static_cast<int>(ids.size()) ? ids[i]
                                                               : std::string("?");
    std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", id.c_str(),
                 reply.per_job(i).message().c_str());
  }
  if (!s.ok() && reply.per_job_size() == 0 && reply.error().code() != v1::INVALID_JOB_ID) {
    std::fprintf(stderr, "scancel: error: %s\n", std::string(s.message()).c_str());
    rc = 1;
  }
  return rc;
}

}  // namespace loom::cli
