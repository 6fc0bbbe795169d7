#include "conf/internal/key_table.h"

#include <algorithm>
#include <array>
#include <vector>

#include "core/strings.h"

namespace loom::conf::internal {
namespace {

using core::StrCat;

// Global keys of Slurm 22.05's slurm.conf (its man page), plus the keys later releases
// added so that files written for them load too, plus the record keys.
constexpr std::string_view kGlobalKeys[] = {
    "AccountingStorageBackupHost",
    "AccountingStorageEnforce",
    "AccountingStorageExternalHost",
    "AccountingStorageHost",
    "AccountingStorageLoc",
    "AccountingStorageParameters",
    "AccountingStoragePass",
    "AccountingStoragePort",
    "AccountingStorageTRES",
    "AccountingStorageType",
    "AccountingStorageUser",
    "AccountingStoreFlags",
    "AccountingStoreJobComment",
    "AcctGatherEnergyType",
    "AcctGatherFilesystemType",
    "AcctGatherInfinibandType",
    "AcctGatherInterconnectType",
    "AcctGatherNodeFreq",
    "AcctGatherProfileType",
    "AllowSpecResourcesUsage",
    "AuthAltParameters",
    "AuthAltTypes",
    "AuthInfo",
    "AuthType",
    "BackupAddr",
    "BackupController",
    "BatchStartTimeout",
    "BcastExclude",
    "BcastParameters",
    "BurstBufferParameters",
    "BurstBufferType",
    "CertgenParameters",
    "CertgenType",
    "CertmgrParameters",
    "CertmgrType",
    "CliFilterParameters",
    "CliFilterPlugins",
    "ClusterName",
    "CommunicationParameters",
    "CompleteWait",
    "ControlAddr",
    "ControlMachine",
    "CoreSpecPlugin",
    "CpuFreqDef",
    "CpuFreqGovernors",
    "CredType",
    "CryptoType",
    "DataParserParameters",
    "DebugFlags",
    "DefCPUPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "DependencyParameters",
    "DisableRootJobs",
    "EioTimeout",
    "EnforcePartLimits",
    "Epilog",
    "EpilogMsgTime",
    "EpilogSlurmctld",
    "EpilogTimeout",
    "ExtSensorsFreq",
    "ExtSensorsType",
    "FairShareDampeningFactor",
    "FastSchedule",
    "FederationParameters",
    "FirstJobId",
    "GetEnvTimeout",
    "GpuFreqDef",
    "GresTypes",
    "GroupUpdateForce",
    "GroupUpdateTime",
    "HashPlugin",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "HealthCheckProgram",
    "HttpParserType",
    "InactiveLimit",
    "InteractiveStepOptions",
    "JobAcctGatherFrequency",
    "JobAcctGatherParams",
    "JobAcctGatherType",
    "JobCompHost",
    "JobCompLoc",
    "JobCompParams",
    "JobCompPass",
    "JobCompPassScript",
    "JobCompPort",
    "JobCompType",
    "JobCompUser",
    "JobContainerType",
    "JobCredentialPrivateKey",
    "JobCredentialPublicCertificate",
    "JobFileAppend",
    "JobRequeue",
    "JobSubmitPlugins",
    "KeepAliveTime",
    "KillOnBadExit",
    "KillWait",
    "LaunchParameters",
    "LaunchType",
    "Licenses",
    "LogTimeFormat",
    "LoomJobSubmitHelpers",  // Loom's own: docs/admin/job-submit.md
    "LoomJobSubmitTimeout",
    "MailDomain",
    "MailProg",
    "MaxArraySize",
    "MaxBatchRequeue",
    "MaxDBDMsgs",
    "MaxJobCount",
    "MaxJobId",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxNodeCount",
    "MaxStepCount",
    "MaxTasksPerNode",
    "MCSParameters",
    "MCSPlugin",
    "MessageTimeout",
    "MetricsType",
    "MinJobAge",
    "MpiDefault",
    "MpiParams",
    "NamespaceType",
    "NodeFeaturesPlugins",
    "OverTimeLimit",
    "PluginDir",
    "PlugStackConfig",
    "PowerParameters",
    "PowerPlugin",
    "PreemptExemptTime",
    "PreemptMode",
    "PreemptParameters",
    "PreemptType",
    "PrEpParameters",
    "PrEpPlugins",
    "PriorityCalcPeriod",
    "PriorityDecayHalfLife",
    "PriorityFavorSmall",
    "PriorityFlags",
    "PriorityMaxAge",
    "PriorityParameters",
    "PrioritySiteFactorParameters",
    "PrioritySiteFactorPlugin",
    "PriorityType",
    "PriorityUsageResetPeriod",
    "PriorityWeightAge",
    "PriorityWeightAssoc",
    "PriorityWeightFairshare",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "PriorityWeightTRES",
    "PrivateData",
    "ProctrackType",
    "Prolog",
    "PrologEpilogTimeout",
    "PrologFlags",
    "PrologSlurmctld",
    "PrologTimeout",
    "PropagatePrioProcess",
    "PropagateResourceLimits",
    "PropagateResourceLimitsExcept",
    "RebootProgram",
    "ReconfigFlags",
    "RequeueExit",
    "RequeueExitHold",
    "ResumeFailProgram",
    "ResumeProgram",
    "ResumeRate",
    "ResumeTimeout",
    "ResvEpilog",
    "ResvOverRun",
    "ResvProlog",
    "ReturnToService",
    "RoutePlugin",
    "SallocDefaultCommand",
    "SbcastParameters",
    "SchedulerAuth",
    "SchedulerParameters",
    "SchedulerTimeSlice",
    "SchedulerType",
    "ScronParameters",
    "SelectType",
    "SelectTypeParameters",
    "SlurmctldAddr",
    "SlurmctldDebug",
    "SlurmctldHost",
    "SlurmctldLogFile",
    "SlurmctldParameters",
    "SlurmctldPidFile",
    "SlurmctldPlugstack",
    "SlurmctldPort",
    "SlurmctldPrimaryOffProg",
    "SlurmctldPrimaryOnProg",
    "SlurmctldSyslogDebug",
    "SlurmctldTimeout",
    "SlurmdDebug",
    "SlurmdLogFile",
    "SlurmdParameters",
    "SlurmdPidFile",
    "SlurmdPort",
    "SlurmdSpoolDir",
    "SlurmdSyslogDebug",
    "SlurmdTimeout",
    "SlurmdUser",
    "SlurmSchedLogFile",
    "SlurmSchedLogLevel",
    "SlurmUser",
    "SrunEpilog",
    "SrunPortRange",
    "SrunProlog",
    "StateSaveLocation",
    "SuspendExcNodes",
    "SuspendExcParts",
    "SuspendExcStates",
    "SuspendProgram",
    "SuspendRate",
    "SuspendTime",
    "SuspendTimeout",
    "SwitchParameters",
    "SwitchType",
    "TaskEpilog",
    "TaskPlugin",
    "TaskPluginParam",
    "TaskProlog",
    "TCPTimeout",
    "TLSParameters",
    "TLSType",
    "TmpFS",
    "TopologyParam",
    "TopologyPlugin",
    "TRESBillingWeights",  // Loom extension: cluster-wide default of the partition option
    "TrackWCKey",
    "TreeWidth",
    "UnkillableStepProgram",
    "UnkillableStepTimeout",
    "UrlParserType",
    "UsePAM",
    "VSizeFactor",
    "WaitTime",
    "X11Parameters",
    // record keys: the rest of their line holds the record's options
    "DownNodes",
    "FrontendName",
    "NodeName",
    "NodeSet",
    "PartitionName",
};

constexpr std::string_view kNodeKeys[] = {
    "NodeName",
    "BcastAddr",
    "Boards",
    "CoreSpecCount",
    "CoresPerSocket",
    "CPUs",
    "CPUSpecList",
    "CpuBind",
    "Feature",
    "Features",
    "Gres",
    "GresConf",
    "MemSpecLimit",
    "NodeAddr",
    "NodeHostname",
    "Parameters",
    "Port",
    "Procs",
    "RealMemory",
    "Reason",
    "RestrictedCoresPerGPU",
    "Sockets",
    "SocketsPerBoard",
    "State",
    "ThreadsPerCore",
    "TmpDisk",
    "Topology",
    "TRESWeights",
    "Weight",
};

constexpr std::string_view kPartitionKeys[] = {
    "PartitionName",
    "AllocNodes",
    "AllowAccounts",
    "AllowGroups",
    "AllowQos",
    "Alternate",
    "CpuBind",
    "Default",
    "DefaultTime",
    "DefCPUPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "DenyAccounts",
    "DenyQos",
    "DisableRootJobs",
    "ExclusiveTopo",
    "ExclusiveUser",
    "GraceTime",
    "Hidden",
    "LLN",
    "MaxCPUsPerNode",
    "MaxCPUsPerSocket",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxNodes",
    "MaxTime",
    "MinNodes",
    "Nodes",
    "OverSubscribe",
    "OverTimeLimit",
    "PowerDownOnIdle",
    "PreemptMode",
    "Priority",
    "PriorityJobFactor",
    "PriorityTier",
    "QOS",
    "ReqResv",
    "ResumeTimeout",
    "RootOnly",
    "SelectTypeParameters",
    "Shared",
    "State",
    "SuspendTime",
    "SuspendTimeout",
    "Topology",
    "TRESBillingWeights",
};

constexpr std::string_view kDownNodesKeys[] = {"DownNodes", "Reason", "State"};
constexpr std::string_view kNodeSetKeys[] = {"NodeSet", "Feature", "Nodes"};
constexpr std::string_view kFrontendKeys[] = {
    "FrontendName", "AllowGroups", "AllowUsers", "DenyGroups", "DenyUsers",
    "FrontendAddr", "Port",        "Reason",     "State",
};

// Keys that belong to Slurm's other configuration files, for "belongs in X" hints.
struct ForeignKey {
  std::string_view key;
  std::string_view file;
};
constexpr ForeignKey kForeignKeys[] = {
    {"AllowedDevicesFile", "cgroup.conf"},
    {"AllowedRAMSpace", "cgroup.conf"},
    {"AllowedSwapSpace", "cgroup.conf"},
    {"CgroupAutomount", "cgroup.conf"},
    {"CgroupMountpoint", "cgroup.conf"},
    {"CgroupPlugin", "cgroup.conf"},
    {"CgroupReleaseAgentDir", "cgroup.conf"},
    {"ConstrainCores", "cgroup.conf"},
    {"ConstrainDevices", "cgroup.conf"},
    {"ConstrainKmemSpace", "cgroup.conf"},
    {"ConstrainRAMSpace", "cgroup.conf"},
    {"ConstrainSwapSpace", "cgroup.conf"},
    {"IgnoreSystemd", "cgroup.conf"},
    {"MaxRAMPercent", "cgroup.conf"},
    {"MaxSwapPercent", "cgroup.conf"},
    {"MinRAMSpace", "cgroup.conf"},
    {"ArchiveDir", "slurmdbd.conf"},
    {"ArchiveJobs", "slurmdbd.conf"},
    {"DbdAddr", "slurmdbd.conf"},
    {"DbdBackupHost", "slurmdbd.conf"},
    {"DbdHost", "slurmdbd.conf"},
    {"DbdPort", "slurmdbd.conf"},
    {"DebugLevel", "slurmdbd.conf"},
    {"LogFile", "slurmdbd.conf"},
    {"PidFile", "slurmdbd.conf"},
    {"PurgeJobAfter", "slurmdbd.conf"},
    {"PurgeStepAfter", "slurmdbd.conf"},
    {"StorageHost", "slurmdbd.conf"},
    {"StorageLoc", "slurmdbd.conf"},
    {"StoragePass", "slurmdbd.conf"},
    {"StoragePort", "slurmdbd.conf"},
    {"StorageType", "slurmdbd.conf"},
    {"StorageUser", "slurmdbd.conf"},
    {"AutoDetect", "gres.conf"},
    {"Count", "gres.conf"},
    {"Cores", "gres.conf"},
    {"File", "gres.conf"},
    {"Flags", "gres.conf"},
    {"Links", "gres.conf"},
    {"MultipleFiles", "gres.conf"},
    {"Name", "gres.conf"},
    {"Type", "gres.conf"},
    {"BlockName", "topology.conf"},
    {"BlockSizes", "topology.conf"},
    {"SwitchName", "topology.conf"},
    {"Switches", "topology.conf"},
};

// Keys earlier Slurm releases accepted and 22.05 rejects.
constexpr std::string_view kRemovedKeys[] = {
    "CacheGroups",        "CheckpointType",      "ChosLoc",
    "DefaultStorageHost", "DefaultStorageLoc",   "DefaultStoragePass",
    "DefaultStoragePort", "DefaultStorageType",  "DefaultStorageUser",
    "JobCheckpointDir",   "MemLimitEnforce",     "MsgAggregationParams",
    "SchedulerPort",      "SchedulerRootFilter",
};

constexpr std::string_view kSchedulerOptions[] = {
    "allow_zero_lic",
    "assoc_limit_stop",
    "batch_sched_delay",
    "bb_array_stage_cnt",
    "bf_allow_magnetic_slot",
    "bf_busy_nodes",
    "bf_continue",
    "bf_hetjob_immediate",
    "bf_hetjob_prio",
    "bf_ignore_newly_avail_nodes",
    "bf_interval",
    "bf_job_part_count_reserve",
    "bf_licenses",
    "bf_max_job_array_resv",
    "bf_max_job_assoc",
    "bf_max_job_part",
    "bf_max_job_start",
    "bf_max_job_test",
    "bf_max_job_user",
    "bf_max_job_user_part",
    "bf_max_time",
    "bf_min_age_reserve",
    "bf_min_prio_reserve",
    "bf_node_space_size",
    "bf_one_resv_per_job",
    "bf_resolution",
    "bf_running_job_reserve",
    "bf_topopt_enable",
    "bf_topopt_iterations",
    "bf_window",
    "bf_window_linear",
    "bf_yield_interval",
    "bf_yield_sleep",
    "build_queue_timeout",
    "correspond_after_task_cnt",
    "default_gbytes",
    "default_queue_depth",
    "defer",
    "defer_batch",
    "delay_boot",
    "disable_hetjob_steps",
    "disable_job_shrink",
    "disable_user_top",
    "enable_hetjob_steps",
    "enable_job_state_cache",
    "enable_user_top",
    "extra_constraints",
    "ignore_constraint_validation",
    "ignore_numa",
    "ignore_prefer_validation",
    "inventory_interval",
    "kill_invalid_depend",
    "max_array_tasks",
    "max_depend_depth",
    "max_rpc_cnt",
    "max_sched_time",
    "max_script_size",
    "max_submit_line_size",
    "max_switch_wait",
    "no_backup_scheduling",
    "no_env_cache",
    "nohold_on_prolog_fail",
    "pack_serial_at_end",
    "partition_job_depth",
    "permit_job_expansion",
    "preempt_reorder_count",
    "preempt_strict_order",
    "preempt_youngest_first",
    "reduce_completing_frag",
    "requeue_setup_env_fail",
    "salloc_wait_nodes",
    "sbatch_wait_nodes",
    "sched_interval",
    "sched_max_job_start",
    "sched_min_interval",
    "spec_cores_first",
    "step_retry_count",
    "step_retry_time",
    "time_min_as_soft_limit",
    "whole_hetjob",
    "whole_pack",
};

std::optional<std::string_view> FindIn(std::span<const std::string_view> keys,
                                       std::string_view key) {
  for (std::string_view k : keys) {
    if (core::EqualsIgnoreCase(k, key)) return k;
  }
  return std::nullopt;
}

}  // namespace

std::span<const std::string_view> KnownKeys(Scope scope) {
  switch (scope) {
    case Scope::kGlobal:
      return kGlobalKeys;
    case Scope::kNode:
      return kNodeKeys;
    case Scope::kPartition:
      return kPartitionKeys;
    case Scope::kDownNodes:
      return kDownNodesKeys;
    case Scope::kNodeSet:
      return kNodeSetKeys;
    case Scope::kFrontend:
      return kFrontendKeys;
  }
  return {};
}

std::span<const std::string_view> KnownSchedulerOptions() { return kSchedulerOptions; }

std::string_view ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kGlobal:
      return "global";
    case Scope::kNode:
      return "NodeName";
    case Scope::kPartition:
      return "PartitionName";
    case Scope::kDownNodes:
      return "DownNodes";
    case Scope::kNodeSet:
      return "NodeSet";
    case Scope::kFrontend:
      return "FrontendName";
  }
  return "";
}

std::optional<std::string_view> CanonicalKey(Scope scope, std::string_view key) {
  return FindIn(KnownKeys(scope), key);
}

int EditDistance(std::string_view a_in, std::string_view b_in) {
  std::string a = core::ToLower(a_in), b = core::ToLower(b_in);
  const size_t n = a.size(), m = b.size();
  // Three rolling rows of the DP table: i-2, i-1 and i.
  std::vector<int> rows(3 * (m + 1));
  int* prev2 = rows.data();
  int* prev = prev2 + (m + 1);
  int* cur = prev + (m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int v = std::min(std::min(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        v = std::min(v, prev2[j - 2] + 1);
      }
      cur[j] = v;
    }
    int* recycled = prev2;
    prev2 = prev;
    prev = cur;
    cur = recycled;
  }
  return prev[m];
}

std::optional<std::string_view> ClosestMatch(std::string_view word,
                                             std::span<const std::string_view> candidates) {
  if (word.empty() || word.size() > 64) return std::nullopt;
  const int limit = word.size() <= 4 ? 1 : (word.size() <= 9 ? 2 : 3);
  std::optional<std::string_view> best;
  int best_d = limit + 1;
  for (std::string_view c : candidates) {
    const size_t lim = static_cast<size_t>(limit);
    if (c.size() > word.size() + lim || c.size() + lim < word.size()) continue;
    int d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string UnknownKeyMessage(Scope scope, std::string_view key) {
  std::string head = scope == Scope::kGlobal
                         ? StrCat("unknown key '", key, "'")
                         : StrCat("unknown ", ScopeName(scope), " option '", key, "'");
  for (std::string_view removed : kRemovedKeys) {
    if (core::EqualsIgnoreCase(removed, key)) {
      return StrCat(head, ": ", removed,
                    " was removed from Slurm before 22.05 and has no effect; delete the line");
    }
  }
  // An option of another kind of line.
  constexpr Scope kRecordScopes[] = {Scope::kNode, Scope::kPartition, Scope::kGlobal};
  for (Scope other : kRecordScopes) {
    if (other == scope) continue;
    std::optional<std::string_view> k = CanonicalKey(other, key);
    if (!k) continue;
    if (other == Scope::kGlobal) {
      return StrCat(head, ": ", *k, " is a global key; write it on a line of its own");
    }
    return StrCat(head, ": ", *k, " is an option of ", ScopeName(other), " lines; write it on a ",
                  ScopeName(other), "= line");
  }
  for (const ForeignKey& f : kForeignKeys) {
    if (core::EqualsIgnoreCase(f.key, key)) {
      return StrCat(head, ": ", f.key, " belongs in ", f.file, ", not slurm.conf");
    }
  }
  if (std::optional<std::string_view> near = ClosestMatch(key, KnownKeys(scope))) {
    return StrCat(head, "; did you mean '", *near, "'?");
  }
  return StrCat(head, " (not a slurm.conf ",
                scope == Scope::kGlobal ? "key" : "option of this line", ")");
}

}  // namespace loom::conf::internal
