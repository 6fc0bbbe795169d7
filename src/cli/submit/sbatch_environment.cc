#include "cli/submit/internal/sbatch_environment.h"

#include <optional>
#include <string_view>

#include "cli/submit/internal/sbatch_values.h"
#include "core/strings.h"

namespace loom::cli::submit::internal {
namespace {

using core::StrCat;

// SBATCH_* input variables and the options they stand for.
enum class EnvKind { kValue, kFlag, kOptional };
struct EnvVar {
  std::string_view name;
  Opt id;
  EnvKind kind;
};
constexpr EnvVar kEnvVars[] = {
    {"SBATCH_ACCOUNT", Opt::kAccount, EnvKind::kValue},
    {"SBATCH_ACCTG_FREQ", Opt::kAcctgFreq, EnvKind::kValue},
    {"SBATCH_ARRAY_INX", Opt::kArray, EnvKind::kValue},
    {"SBATCH_BATCH", Opt::kBatch, EnvKind::kValue},
    {"SBATCH_CLUSTERS", Opt::kClusters, EnvKind::kValue},
    {"SLURM_CLUSTERS", Opt::kClusters, EnvKind::kValue},
    {"SBATCH_CONSTRAINT", Opt::kConstraint, EnvKind::kValue},
    {"SBATCH_CONTAINER", Opt::kContainer, EnvKind::kValue},
    {"SBATCH_CORE_SPEC", Opt::kCoreSpec, EnvKind::kValue},
    {"SBATCH_CPUS_PER_GPU", Opt::kCpusPerGpu, EnvKind::kValue},
    {"SBATCH_DELAY_BOOT", Opt::kDelayBoot, EnvKind::kValue},
    {"SBATCH_DISTRIBUTION", Opt::kDistribution, EnvKind::kValue},
    {"SBATCH_ERROR", Opt::kError, EnvKind::kValue},
    {"SBATCH_EXCLUSIVE", Opt::kExclusive, EnvKind::kOptional},
    {"SBATCH_EXPORT", Opt::kExport, EnvKind::kValue},
    {"SBATCH_GET_USER_ENV", Opt::kGetUserEnv, EnvKind::kOptional},
    {"SBATCH_GPU_BIND", Opt::kGpuBind, EnvKind::kValue},
    {"SBATCH_GPU_FREQ", Opt::kGpuFreq, EnvKind::kValue},
    {"SBATCH_GPUS", Opt::kGpus, EnvKind::kValue},
    {"SBATCH_GPUS_PER_NODE", Opt::kGpusPerNode, EnvKind::kValue},
    {"SBATCH_GPUS_PER_TASK", Opt::kGpusPerTask, EnvKind::kValue},
    {"SBATCH_GRES", Opt::kGres, EnvKind::kValue},
    {"SBATCH_GRES_FLAGS", Opt::kGresFlags, EnvKind::kValue},
    {"SBATCH_HINT", Opt::kHint, EnvKind::kValue},
    {"SLURM_HINT", Opt::kHint, EnvKind::kValue},
    {"SBATCH_IGNORE_PBS", Opt::kIgnorePbs, EnvKind::kFlag},
    {"SBATCH_INPUT", Opt::kInput, EnvKind::kValue},
    {"SBATCH_JOB_NAME", Opt::kJobName, EnvKind::kValue},
    {"SBATCH_MEM_BIND", Opt::kMemBind, EnvKind::kValue},
    {"SBATCH_MEM_PER_CPU", Opt::kMemPerCpu, EnvKind::kValue},
    {"SBATCH_MEM_PER_GPU", Opt::kMemPerGpu, EnvKind::kValue},
    {"SBATCH_MEM_PER_NODE", Opt::kMem, EnvKind::kValue},
    {"SBATCH_NETWORK", Opt::kNetwork, EnvKind::kValue},
    {"SBATCH_NO_KILL", Opt::kNoKill, EnvKind::kFlag},
    {"SBATCH_NO_REQUEUE", Opt::kNoRequeue, EnvKind::kFlag},
    {"SBATCH_OPEN_MODE", Opt::kOpenMode, EnvKind::kValue},
    {"SBATCH_OUTPUT", Opt::kOutput, EnvKind::kValue},
    {"SBATCH_OVERCOMMIT", Opt::kOvercommit, EnvKind::kFlag},
    {"SBATCH_PARTITION", Opt::kPartition, EnvKind::kValue},
    {"SBATCH_POWER", Opt::kPower, EnvKind::kValue},
    {"SBATCH_PROFILE", Opt::kProfile, EnvKind::kValue},
    {"SBATCH_QOS", Opt::kQos, EnvKind::kValue},
    {"SBATCH_REQUEUE", Opt::kRequeue, EnvKind::kFlag},
    {"SBATCH_RESERVATION", Opt::kReservation, EnvKind::kValue},
    {"SBATCH_SIGNAL", Opt::kSignal, EnvKind::kValue},
    {"SBATCH_SPREAD_JOB", Opt::kSpreadJob, EnvKind::kFlag},
    {"SBATCH_THREAD_SPEC", Opt::kThreadSpec, EnvKind::kValue},
    {"SBATCH_THREADS_PER_CORE", Opt::kThreadsPerCore, EnvKind::kValue},
    {"SBATCH_TIMELIMIT", Opt::kTime, EnvKind::kValue},
    {"SBATCH_USE_MIN_NODES", Opt::kUseMinNodes, EnvKind::kFlag},
    {"SBATCH_WAIT", Opt::kWait, EnvKind::kFlag},
    {"SBATCH_WAIT_ALL_NODES", Opt::kWaitAllNodes, EnvKind::kValue},
    {"SBATCH_WCKEY", Opt::kWckey, EnvKind::kValue},
};

}  // namespace

std::vector<EnvOption> EnvironmentOptions(const std::map<std::string, std::string>& env) {
  std::vector<EnvOption> out;
  for (const EnvVar& e : kEnvVars) {
    auto it = env.find(std::string(e.name));
    if (it == env.end()) continue;
    const std::string& v = it->second;
    switch (e.kind) {
      case EnvKind::kValue:
        out.push_back({{e.id, v}});
        break;
      case EnvKind::kFlag:
        out.push_back({{e.id, std::nullopt}, !EnvFlagSet(v)});
        break;
      case EnvKind::kOptional:
        out.push_back({{e.id, v.empty() ? std::nullopt : std::optional<std::string>(v)}});
        break;
    }
  }
  // SBATCH_DEBUG=1 is -v.
  auto debug = env.find("SBATCH_DEBUG");
  if (debug != env.end() && debug->second == "1") out.push_back({{Opt::kVerbose, std::nullopt}});
  // SBATCH_REQ_SWITCH and SBATCH_WAIT4SWITCH together make one --switches value.
  auto sw = env.find("SBATCH_REQ_SWITCH");
  if (sw != env.end()) {
    std::string value = sw->second;
    auto wait = env.find("SBATCH_WAIT4SWITCH");
    if (wait != env.end()) value += StrCat("@", wait->second);
    out.push_back({{Opt::kSwitches, value}});
  }
  return out;
}

void ResetFlag(Opt id, State* st) {
  switch (id) {
    case Opt::kRequeue:
    case Opt::kNoRequeue:
      st->r.requeue.reset();
      break;
    case Opt::kNoKill:
      st->r.no_kill = false;
      break;
    case Opt::kOvercommit:
      st->r.overcommit = false;
      break;
    case Opt::kSpreadJob:
      st->r.spread_job = false;
      break;
    case Opt::kUseMinNodes:
      st->r.use_min_nodes = false;
      break;
    case Opt::kWait:
      st->wait = false;
      break;
    default:
      break;
  }
}

}  // namespace loom::cli::submit::internal
