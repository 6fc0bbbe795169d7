#include "cli/submit/internal/sbatch_getopt.h"

#include "core/strings.h"

namespace loom::cli::submit::internal {
namespace {

using core::StrCat;
constexpr ArgKind kNo = ArgKind::kNone;
constexpr ArgKind kReq = ArgKind::kRequired;
constexpr ArgKind kOpt = ArgKind::kOptional;

// Order within each first letter follows sbatch's own table (as its "ambiguous" messages
// list them).
constexpr OptionSpec kTable[] = {
    {"account", 'A', kReq, Opt::kAccount},
    {"acctg-freq", 0, kReq, Opt::kAcctgFreq},
    {"array", 'a', kReq, Opt::kArray},
    {"batch", 0, kReq, Opt::kBatch},
    {"begin", 'b', kReq, Opt::kBegin},
    {"bb", 0, kReq, Opt::kBb},
    {"bbf", 0, kReq, Opt::kBbf},
    {"cluster-constraint", 0, kReq, Opt::kClusterConstraint},
    {"chdir", 'D', kReq, Opt::kChdir},
    {"cluster", 0, kReq, Opt::kClusters},
    {"clusters", 'M', kReq, Opt::kClusters},
    {"comment", 0, kReq, Opt::kComment},
    {"container", 0, kReq, Opt::kContainer},
    {"context", 0, kReq, Opt::kContext},
    {"contiguous", 0, kNo, Opt::kContiguous},
    {"constraint", 'C', kReq, Opt::kConstraint},
    {"core-spec", 'S', kReq, Opt::kCoreSpec},
    {"cores-per-socket", 0, kReq, Opt::kCoresPerSocket},
    {"cpu-freq", 0, kReq, Opt::kCpuFreq},
    {"cpus-per-gpu", 0, kReq, Opt::kCpusPerGpu},
    {"cpus-per-task", 'c', kReq, Opt::kCpusPerTask},
    {"deadline", 0, kReq, Opt::kDeadline},
    {"delay-boot", 0, kReq, Opt::kDelayBoot},
    {"dependency", 'd', kReq, Opt::kDependency},
    {"distribution", 'm', kReq, Opt::kDistribution},
    {"error", 'e', kReq, Opt::kError},
    {"exclude", 'x', kReq, Opt::kExclude},
    {"exclusive", 0, kOpt, Opt::kExclusive},
    {"export", 0, kReq, Opt::kExport},
    {"export-file", 0, kReq, Opt::kExportFile},
    {"extra-node-info", 'B', kReq, Opt::kExtraNodeInfo},
    {"get-user-env", 0, kOpt, Opt::kGetUserEnv},
    {"gid", 0, kReq, Opt::kGid},
    {"gpu-bind", 0, kReq, Opt::kGpuBind},
    {"gpu-freq", 0, kReq, Opt::kGpuFreq},
    {"gpus", 'G', kReq, Opt::kGpus},
    {"gpus-per-node", 0, kReq, Opt::kGpusPerNode},
    {"gpus-per-socket", 0, kReq, Opt::kGpusPerSocket},
    {"gpus-per-task", 0, kReq, Opt::kGpusPerTask},
    {"gres", 0, kReq, Opt::kGres},
    {"gres-flags", 0, kReq, Opt::kGresFlags},
    {"help", 'h', kNo, Opt::kHelp},
    {"hint", 0, kReq, Opt::kHint},
    {"hold", 'H', kNo, Opt::kHold},
    {"ignore-pbs", 0, kNo, Opt::kIgnorePbs},
    {"input", 'i', kReq, Opt::kInput},
    {"job-name", 'J', kReq, Opt::kJobName},
    {"kill-on-invalid-dep", 0, kReq, Opt::kKillOnInvalidDep},
    {"licenses", 'L', kReq, Opt::kLicenses},
    {"mail-type", 0, kReq, Opt::kMailType},
    {"mail-user", 0, kReq, Opt::kMailUser},
    {"mcs-label", 0, kReq, Opt::kMcsLabel},
    {"mem", 0, kReq, Opt::kMem},
    {"mem-bind", 0, kReq, Opt::kMemBind},
    {"mem-per-cpu", 0, kReq, Opt::kMemPerCpu},
    {"mem-per-gpu", 0, kReq, Opt::kMemPerGpu},
    {"mincpus", 0, kReq, Opt::kMincpus},
    {"network", 0, kReq, Opt::kNetwork},
    {"nice", 0, kOpt, Opt::kNice},
    {"no-kill", 'k', kOpt, Opt::kNoKill},
    {"no-requeue", 0, kNo, Opt::kNoRequeue},
    {"nodefile", 'F', kReq, Opt::kNodefile},
    {"nodelist", 'w', kReq, Opt::kNodelist},
    {"nodes", 'N', kReq, Opt::kNodes},
    {"ntasks", 'n', kReq, Opt::kNtasks},
    {"ntasks-per-core", 0, kReq, Opt::kNtasksPerCore},
    {"ntasks-per-gpu", 0, kReq, Opt::kNtasksPerGpu},
    {"ntasks-per-node", 0, kReq, Opt::kNtasksPerNode},
    {"ntasks-per-socket", 0, kReq, Opt::kNtasksPerSocket},
    {"ntasks-per-tres", 0, kReq, Opt::kNtasksPerTres},
    {"open-mode", 0, kReq, Opt::kOpenMode},
    {"output", 'o', kReq, Opt::kOutput},
    {"overcommit", 'O', kNo, Opt::kOvercommit},
    {"oversubscribe", 's', kNo, Opt::kOversubscribe},
    {"parsable", 0, kNo, Opt::kParsable},
    {"partition", 'p', kReq, Opt::kPartition},
    {"power", 0, kReq, Opt::kPower},
    {"prefer", 0, kReq, Opt::kPrefer},
    {"priority", 0, kReq, Opt::kPriority},
    {"profile", 0, kReq, Opt::kProfile},
    {"propagate", 0, kOpt, Opt::kPropagate},
    {"qos", 'q', kReq, Opt::kQos},
    {"quiet", 'Q', kNo, Opt::kQuiet},
    {"reboot", 0, kNo, Opt::kReboot},
    {"requeue", 0, kNo, Opt::kRequeue},
    {"reservation", 0, kReq, Opt::kReservation},
    {"segment", 0, kReq, Opt::kSegment},
    {"signal", 0, kReq, Opt::kSignal},
    {"sockets-per-node", 0, kReq, Opt::kSocketsPerNode},
    {"spread-job", 0, kNo, Opt::kSpreadJob},
    {"switches", 0, kReq, Opt::kSwitches},
    {"tasks-per-node", 0, kReq, Opt::kNtasksPerNode},
    {"test-only", 0, kNo, Opt::kTestOnly},
    {"thread-spec", 0, kReq, Opt::kThreadSpec},
    {"threads-per-core", 0, kReq, Opt::kThreadsPerCore},
    {"time", 't', kReq, Opt::kTime},
    {"time-min", 0, kReq, Opt::kTimeMin},
    {"tmp", 0, kReq, Opt::kTmp},
    {"uid", 0, kReq, Opt::kUid},
    {"use-min-nodes", 0, kNo, Opt::kUseMinNodes},
    {"usage", 0, kNo, Opt::kUsage},
    {"verbose", 'v', kNo, Opt::kVerbose},
    {"version", 'V', kNo, Opt::kVersion},
    {"wait", 'W', kNo, Opt::kWait},
    {"wait-all-nodes", 0, kReq, Opt::kWaitAllNodes},
    {"wckey", 0, kReq, Opt::kWckey},
    {"wrap", 0, kReq, Opt::kWrap},
};

// srun 22.05's options, by first letter in srun's order.
constexpr OptionSpec kSrunTable[] = {
    {"account", 'A', kReq, Opt::kAccount},
    {"acctg-freq", 0, kReq, Opt::kAcctgFreq},
    {"bb", 0, kReq, Opt::kBb},
    {"bbf", 0, kReq, Opt::kBbf},
    {"bcast", 0, kOpt, Opt::kBcast},
    {"begin", 'b', kReq, Opt::kBegin},
    {"chdir", 'D', kReq, Opt::kChdir},
    {"cluster-constraint", 0, kReq, Opt::kClusterConstraint},
    {"cluster", 0, kReq, Opt::kClusters},
    {"clusters", 'M', kReq, Opt::kClusters},
    {"comment", 0, kReq, Opt::kComment},
    {"compress", 0, kOpt, Opt::kCompress},
    {"constraint", 'C', kReq, Opt::kConstraint},
    {"container", 0, kReq, Opt::kContainer},
    {"context", 0, kReq, Opt::kContext},
    {"contiguous", 0, kNo, Opt::kContiguous},
    {"core-spec", 'S', kReq, Opt::kCoreSpec},
    {"cores-per-socket", 0, kReq, Opt::kCoresPerSocket},
    {"cpu-bind", 0, kReq, Opt::kCpuBind},
    {"cpu-freq", 0, kReq, Opt::kCpuFreq},
    {"cpus-per-gpu", 0, kReq, Opt::kCpusPerGpu},
    {"cpus-per-task", 'c', kReq, Opt::kCpusPerTask},
    {"deadline", 0, kReq, Opt::kDeadline},
    {"delay-boot", 0, kReq, Opt::kDelayBoot},
    {"dependency", 'd', kReq, Opt::kDependency},
    {"disable-status", 'X', kNo, Opt::kDisableStatus},
    {"distribution", 'm', kReq, Opt::kDistribution},
    {"epilog", 0, kReq, Opt::kEpilog},
    {"error", 'e', kReq, Opt::kError},
    {"exact", 0, kNo, Opt::kExact},
    {"exclude", 'x', kReq, Opt::kExclude},
    {"exclusive", 0, kOpt, Opt::kExclusive},
    {"export", 0, kReq, Opt::kExport},
    {"extra-node-info", 'B', kReq, Opt::kExtraNodeInfo},
    {"gid", 0, kReq, Opt::kGid},
    {"gpu-bind", 0, kReq, Opt::kGpuBind},
    {"gpu-freq", 0, kReq, Opt::kGpuFreq},
    {"gpus", 'G', kReq, Opt::kGpus},
    {"gpus-per-node", 0, kReq, Opt::kGpusPerNode},
    {"gpus-per-socket", 0, kReq, Opt::kGpusPerSocket},
    {"gpus-per-task", 0, kReq, Opt::kGpusPerTask},
    {"gres", 0, kReq, Opt::kGres},
    {"gres-flags", 0, kReq, Opt::kGresFlags},
    {"help", 'h', kNo, Opt::kHelp},
    {"hint", 0, kReq, Opt::kHint},
    {"hold", 'H', kNo, Opt::kHold},
    {"immediate", 'I', kOpt, Opt::kImmediate},
    {"input", 'i', kReq, Opt::kInput},
    {"jobid", 0, kReq, Opt::kJobid},
    {"job-name", 'J', kReq, Opt::kJobName},
    {"kill-on-bad-exit", 'K', kOpt, Opt::kKillOnBadExit},
    {"label", 'l', kNo, Opt::kLabel},
    {"licenses", 'L', kReq, Opt::kLicenses},
    {"mail-type", 0, kReq, Opt::kMailType},
    {"mail-user", 0, kReq, Opt::kMailUser},
    {"mcs-label", 0, kReq, Opt::kMcsLabel},
    {"mem", 0, kReq, Opt::kMem},
    {"mem-bind", 0, kReq, Opt::kMemBind},
    {"mem-per-cpu", 0, kReq, Opt::kMemPerCpu},
    {"mem-per-gpu", 0, kReq, Opt::kMemPerGpu},
    {"mincpus", 0, kReq, Opt::kMincpus},
    {"mpi", 0, kReq, Opt::kMpi},
    {"multi-prog", 0, kNo, Opt::kMultiProg},
    {"network", 0, kReq, Opt::kNetwork},
    {"nice", 0, kOpt, Opt::kNice},
    {"no-allocate", 'Z', kNo, Opt::kNoAllocate},
    {"no-kill", 'k', kOpt, Opt::kNoKill},
    {"nodefile", 'F', kReq, Opt::kNodefile},
    {"nodelist", 'w', kReq, Opt::kNodelist},
    {"nodes", 'N', kReq, Opt::kNodes},
    {"ntasks", 'n', kReq, Opt::kNtasks},
    {"ntasks-per-core", 0, kReq, Opt::kNtasksPerCore},
    {"ntasks-per-gpu", 0, kReq, Opt::kNtasksPerGpu},
    {"ntasks-per-node", 0, kReq, Opt::kNtasksPerNode},
    {"ntasks-per-socket", 0, kReq, Opt::kNtasksPerSocket},
    {"open-mode", 0, kReq, Opt::kOpenMode},
    {"output", 'o', kReq, Opt::kOutput},
    {"overcommit", 'O', kNo, Opt::kOvercommit},
    {"overlap", 0, kNo, Opt::kOverlap},
    {"oversubscribe", 's', kNo, Opt::kOversubscribe},
    {"partition", 'p', kReq, Opt::kPartition},
    {"power", 0, kReq, Opt::kPower},
    {"prefer", 0, kReq, Opt::kPrefer},
    {"priority", 0, kReq, Opt::kPriority},
    {"profile", 0, kReq, Opt::kProfile},
    {"prolog", 0, kReq, Opt::kProlog},
    {"propagate", 0, kOpt, Opt::kPropagate},
    {"pty", 0, kNo, Opt::kPty},
    {"qos", 'q', kReq, Opt::kQos},
    {"quiet", 'Q', kNo, Opt::kQuiet},
    {"quit-on-interrupt", 0, kNo, Opt::kQuitOnInterrupt},
    {"reboot", 0, kNo, Opt::kReboot},
    {"relative", 'r', kReq, Opt::kRelative},
    {"reservation", 0, kReq, Opt::kReservation},
    {"resv-ports", 0, kOpt, Opt::kResvPorts},
    {"send-libs", 0, kOpt, Opt::kSendLibs},
    {"signal", 0, kReq, Opt::kSignal},
    {"slurmd-debug", 0, kReq, Opt::kSlurmdDebug},
    {"sockets-per-node", 0, kReq, Opt::kSocketsPerNode},
    {"spread-job", 0, kNo, Opt::kSpreadJob},
    {"switches", 0, kReq, Opt::kSwitches},
    {"task-epilog", 0, kReq, Opt::kTaskEpilog},
    {"task-prolog", 0, kReq, Opt::kTaskProlog},
    {"tasks-per-node", 0, kReq, Opt::kNtasksPerNode},
    {"test-only", 0, kNo, Opt::kTestOnly},
    {"thread-spec", 0, kReq, Opt::kThreadSpec},
    {"threads", 'T', kReq, Opt::kThreads},
    {"threads-per-core", 0, kReq, Opt::kThreadsPerCore},
    {"time", 't', kReq, Opt::kTime},
    {"time-min", 0, kReq, Opt::kTimeMin},
    {"tmp", 0, kReq, Opt::kTmp},
    {"uid", 0, kReq, Opt::kUid},
    {"unbuffered", 'u', kNo, Opt::kUnbuffered},
    {"usage", 0, kNo, Opt::kUsage},
    {"use-min-nodes", 0, kNo, Opt::kUseMinNodes},
    {"verbose", 'v', kNo, Opt::kVerbose},
    {"version", 'V', kNo, Opt::kVersion},
    {"wait", 'W', kReq, Opt::kWaitSeconds},
    {"wckey", 0, kReq, Opt::kWckey},
};

Status Error(std::string_view line) { return absl::InvalidArgumentError(std::string(line)); }

// Resolves "--name[=value]" (without the dashes) to its table entry. Exact names win; then a
// unique prefix, where entries for the same option with the same argument kind count once.
StatusOr<const OptionSpec*> FindLong(std::string_view text, std::span<const OptionSpec> table,
                                     std::string_view program) {
  std::string_view name = text.substr(0, text.find('='));
  const OptionSpec* found = nullptr;
  std::vector<const OptionSpec*> listed;
  for (const OptionSpec& o : table) {
    if (o.name == name) return &o;
  }
  for (const OptionSpec& o : table) {
    if (o.name.substr(0, name.size()) != name) continue;
    if (found == nullptr) {
      found = &o;
    } else if (found->id != o.id || found->arg != o.arg) {
      if (listed.empty()) listed.push_back(found);
      listed.push_back(&o);
    }
  }
  if (!listed.empty()) {
    std::string line = StrCat(program, ": option '--", text, "' is ambiguous; possibilities:");
    for (const OptionSpec* o : listed) line += StrCat(" '--", o->name, "'");
    return Error(line);
  }
  if (found == nullptr) return Error(StrCat(program, ": unrecognized option '--", text, "'"));
  return found;
}

const OptionSpec* FindShort(char c, std::span<const OptionSpec> table) {
  for (const OptionSpec& o : table) {
    if (o.short_name == c && c != 0) return &o;
  }
  return nullptr;
}

}  // namespace

std::span<const OptionSpec> OptionTable() { return kTable; }
std::span<const OptionSpec> SrunOptionTable() { return kSrunTable; }

std::string_view LongName(Opt id) {
  for (const OptionSpec& o : kTable) {
    if (o.id == id) return o.name;
  }
  for (const OptionSpec& o : kSrunTable) {
    if (o.id == id) return o.name;
  }
  return "";
}

ScanResult ScanOptions(std::span<const std::string> words) {
  return ScanOptions(words, kTable, "sbatch");
}

ScanResult ScanOptions(std::span<const std::string> words, std::span<const OptionSpec> table,
                       std::string_view program) {
  ScanResult out;
  size_t i = 0;
  auto fail = [&out](Status s) {
    out.error = std::move(s);
    return std::move(out);
  };
  auto ends_scan = [](Opt id) {
    return id == Opt::kHelp || id == Opt::kUsage || id == Opt::kVersion;
  };
  for (; i < words.size(); ++i) {
    if (!out.options.empty() && ends_scan(out.options.back().id)) return out;
    const std::string& w = words[i];
    if (w == "--") {
      ++i;
      break;
    }
    if (w.size() < 2 || w[0] != '-') break;  // the script (or "-")
    if (w[1] == '-') {
      std::string_view text = std::string_view(w).substr(2);
      StatusOr<const OptionSpec*> found = FindLong(text, table, program);
      if (!found.ok()) return fail(found.status());
      const OptionSpec* o = *found;
      size_t eq = text.find('=');
      ParsedOption p{o->id, std::nullopt};
      if (eq != std::string_view::npos) {
        if (o->arg == ArgKind::kNone) {
          return fail(
              Error(StrCat(program, ": option '--", o->name, "' doesn't allow an argument")));
        }
        p.value = std::string(text.substr(eq + 1));
      } else if (o->arg == ArgKind::kRequired) {
        if (i + 1 >= words.size()) {
          return fail(Error(StrCat(program, ": option '--", o->name, "' requires an argument")));
        }
        p.value = words[++i];
      }
      out.options.push_back(std::move(p));
      continue;
    }
    // A bundle of short options: "-Hv", "-N2", "-J name".
    for (size_t k = 1; k < w.size(); ++k) {
      const OptionSpec* o = FindShort(w[k], table);
      if (o == nullptr) return fail(Error(StrCat(program, ": invalid option -- '", w[k], "'")));
      ParsedOption p{o->id, std::nullopt};
      if (o->arg == ArgKind::kNone) {
        out.options.push_back(std::move(p));
        if (ends_scan(o->id)) return out;
        continue;
      }
      if (k + 1 < w.size()) {
        p.value = w.substr(k + 1);
      } else if (o->arg == ArgKind::kRequired) {
        if (i + 1 >= words.size()) {
          return fail(Error(StrCat(program, ": option requires an argument -- '", w[k], "'")));
        }
        p.value = words[++i];
      }
      out.options.push_back(std::move(p));
      break;
    }
  }
  if (!out.options.empty() && ends_scan(out.options.back().id)) return out;
  out.rest.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  return out;
}

}  // namespace loom::cli::submit::internal
