// sdiag: the controller's counters and scheduling cycle times, in Slurm's layout.
#include <cstdio>
#include <ctime>
#include <string>

#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/slurm_help.h"

namespace loom::cli {
namespace {

// Slurm 22.05's sdiag options; rows of one option share an id.
enum class Opt {
  kAll,
  kClusters,
  kHelp,
  kReset,
  kSortById,
  kSortByTime,
  kSortByTime2,
  kUsage,
  kVersion,
};

// In sdiag's order within each first letter (its "ambiguous" messages list them so).
constexpr OptionSpec<Opt> kOptions[] = {
    {"all", 'a', kNoArg, Opt::kAll},
    {"cluster", 0, kArg, Opt::kClusters},
    {"clusters", 'M', kArg, Opt::kClusters},
    {"help", 'h', kNoArg, Opt::kHelp},
    {"reset", 'r', kNoArg, Opt::kReset},
    {"sort-by-id", 'i', kNoArg, Opt::kSortById},
    {"sort-by-time", 't', kNoArg, Opt::kSortByTime},
    {"sort-by-time2", 'T', kNoArg, Opt::kSortByTime2},
    {"usage", 0, kNoArg, Opt::kUsage},
    {"version", 'V', kNoArg, Opt::kVersion},
};

constexpr CommandText kText{"sdiag", kSdiagHelp, kSdiagUsage};

// "Sun Nov 29 18:57:20 2026 (1795978640)", in local time as Slurm prints it.
std::string When(int64_t t) {
  char buf[64];
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  localtime_r(&tt, &tm);
  std::strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S %Y", &tm);
  return std::string(buf) + " (" + std::to_string(t) + ")";
}

}  // namespace

int RunSdiag(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  // Operands are ignored, as Slurm's sdiag ignores them. -a asks for what sdiag prints anyway.
  for (const ParsedOption<Opt>& o : scan.options) {
    if (o.id != Opt::kAll) return NotSupported("sdiag", LongName<Opt>(kOptions, o.id));
  }
  auto client = Client::Connect("sdiag");
  if (!client.ok()) {
    std::fprintf(stderr, "sdiag: error: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  v1::DiagRequest req;
  v1::DiagReply r;
  Status s = client->Call("Diag", req, &r);
  if (!s.ok()) {
    std::fprintf(stderr, "slurm_get_statistics: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  const char* rule = "*******************************************************\n";
  std::printf("%ssdiag output at %s\nData since      %s\n%s", rule, When(r.server_time()).c_str(),
              When(r.start_time()).c_str(), rule);
  if (r.has_dbd_agent_queue_size()) {
    std::printf("DBD Agent queue size: %lld\n", static_cast<long long>(r.dbd_agent_queue_size()));
  }
  std::printf("\nJobs submitted: %lld\nJobs started:   %lld\nJobs completed: %lld\n"
              "Jobs canceled:  %lld\nJobs failed:    %lld\n",
              static_cast<long long>(r.jobs_submitted()), static_cast<long long>(r.jobs_started()),
              static_cast<long long>(r.jobs_completed()), static_cast<long long>(r.jobs_canceled()),
              static_cast<long long>(r.jobs_failed()));
  std::printf("\nJob states ts:  %s\nJobs pending:   %lld\nJobs running:   %lld\n",
              When(r.server_time()).c_str(), static_cast<long long>(r.jobs_pending()),
              static_cast<long long>(r.jobs_running()));
  // Loom runs one pass (main and backfill together) per batch: its figures are the main
  // cycle's; backfilled jobs count the starts that pass made out of priority order.
  std::printf("\nMain schedule statistics (microseconds):\n\tLast cycle:   %lld\n\tMax cycle:    %lld\n"
              "\tTotal cycles: %lld\n\tMean cycle:   %lld\n",
              static_cast<long long>(r.main_cycle_last_us()), static_cast<long long>(r.main_cycle_max_us()),
              static_cast<long long>(r.main_cycles()), static_cast<long long>(r.main_cycle_mean_us()));
  std::printf("\nBackfilling stats\n\tTotal backfilled jobs (since last slurm start): %lld\n",
              static_cast<long long>(r.backfilled_jobs()));
  return 0;
}

}  // namespace loom::cli
