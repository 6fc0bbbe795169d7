// ClusterConfig: the validated, typed content of a slurm.conf (nodes, partitions, scheduler,
// selection, priority and preemption settings) as produced by ParseSlurmConf/LoadSlurmConf.
// A pure value built once by the parser and then only read: share it as
// std::shared_ptr<const ClusterConfig>. Thread-compatible (const access is thread-safe).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/diagnostic.h"
#include "core/log.h"
#include "core/time_format.h"
#include "core/tres.h"

namespace loom::conf {

// Count limits written as UNLIMITED/INFINITE (MaxNodes=UNLIMITED).
inline constexpr int32_t kUnlimitedNodes = INT32_MAX;
// default_time_s when a partition sets no DefaultTime (its MaxTime applies).
inline constexpr int64_t kTimeNotSet = -1;

// ---------------------------------------------------------------------------------- nodes

// Node State= as slurm.conf allows it; UNKNOWN (the default) lets the node's daemon decide.
enum class NodeState { kUnknown, kCloud, kDown, kDrain, kFail, kFailing, kFuture };
std::string_view NodeStateName(NodeState s);  // "UNKNOWN", "CLOUD", ...

// One entry of a node's Gres= list: "gpu:a100:8" is {gpu, a100, 8}; "gpu:8" has no type.
struct GresSpec {
  std::string name;  // "gpu", "mps", "shard", ... (as in GresTypes)
  std::string type;  // "a100"; empty when untyped
  int64_t count = 0;
  bool no_consume = false;

  friend bool operator==(const GresSpec&, const GresSpec&) = default;
};

// One node, after hostlist expansion of its NodeName line and NodeName=DEFAULT merging.
struct NodeConfig {
  std::string name;
  std::string hostname;  // NodeHostname; defaults to name
  std::string addr;      // NodeAddr; defaults to hostname
  int32_t port = 0;      // slurmd port of this node (Port= or SlurmdPort)

  int32_t cpus = 1;
  int32_t boards = 1;
  int32_t sockets = 1;  // total sockets (boards * sockets_per_board)
  int32_t sockets_per_board = 1;
  int32_t cores_per_socket = 1;
  int32_t threads_per_core = 1;
  int64_t real_memory_mb = 1;  // Slurm's default RealMemory is 1 MB
  int64_t tmp_disk_mb = 0;

  std::vector<GresSpec> gres;
  std::vector<std::string> features;  // Feature= / Features=, in the order written
  uint32_t weight = 1;
  NodeState state = NodeState::kUnknown;
  std::string reason;

  // Keys Slurm knows on NodeName lines that Loom does not act on yet (canonical key -> value).
  std::map<std::string, std::string> other_keys;
  SourceLocation defined_at;

  // Sum of the counts of GRES `name`, all types ("gpu" -> all GPUs of the node).
  int64_t GresCount(std::string_view name) const;
  // Count of GRES `name` of type `type` (case-insensitive on the type).
  int64_t GresCount(std::string_view name, std::string_view type) const;
  int64_t GpuCount() const { return GresCount("gpu"); }
  // GPU counts per type, in the order the Gres list names them; untyped GPUs under "".
  std::vector<std::pair<std::string, int64_t>> GpusByType() const;
  bool HasFeature(std::string_view feature) const;
};

// ----------------------------------------------------------------------------- partitions

enum class PartitionState { kUp, kDown, kDrain, kInactive };
std::string_view PartitionStateName(PartitionState s);

// OverSubscribe=NO|YES[:N]|EXCLUSIVE|FORCE[:N] (older name: Shared=).
enum class OverSubscribe { kNo, kYes, kExclusive, kForce };
std::string_view OverSubscribeName(OverSubscribe o);

// PreemptMode, globally or per partition: one base mode plus the GANG and WITHIN flags.
struct PreemptMode {
  enum class Base { kOff, kCancel, kRequeue, kSuspend };
  Base base = Base::kOff;
  bool gang = false;
  bool within = false;

  std::string ToString() const;  // "OFF", "REQUEUE", "SUSPEND,GANG", ...
  friend bool operator==(const PreemptMode&, const PreemptMode&) = default;
};

struct PartitionConfig {
  std::string name;
  std::vector<std::string> nodes;  // in node definition order, no duplicates
  bool is_default = false;
  int64_t max_time_s = core::kUnlimitedSeconds;
  int64_t default_time_s = kTimeNotSet;  // kTimeNotSet: MaxTime applies
  int32_t min_nodes = 0;
  int32_t max_nodes = kUnlimitedNodes;
  int32_t priority_tier = 1;
  int32_t priority_job_factor = 1;
  PartitionState state = PartitionState::kUp;
  OverSubscribe oversubscribe = OverSubscribe::kNo;
  int32_t oversubscribe_count = 1;  // jobs per resource for YES/FORCE (default 4)
  std::string qos;
  // Who may use the partition: the job's account and QOS. An Allow list, when set, is the
  // rule and its Deny list is not read (slurm.conf(5)); empty Allow lists allow all.
  std::vector<std::string> allow_accounts;
  std::vector<std::string> deny_accounts;
  std::vector<std::string> allow_qos;
  std::vector<std::string> deny_qos;
  std::vector<std::string> allow_groups;  // empty: all groups
  bool exclusive_user = false;
  core::TresBillingWeights billing_weights;  // TRESBillingWeights; empty: none set
  std::string billing_weights_text;          // the value as written, for display
  std::optional<PreemptMode> preempt_mode;   // unset: the global PreemptMode applies
  int64_t grace_time_s = 0;
  // Memory defaults/limits in MB; 0 means "not set here" (the global value applies).
  int64_t def_mem_per_cpu_mb = 0;
  int64_t def_mem_per_node_mb = 0;
  int64_t max_mem_per_cpu_mb = 0;
  int64_t max_mem_per_node_mb = 0;
  int64_t def_mem_per_gpu_mb = 0;

  std::map<std::string, std::string> other_keys;  // known to Slurm, not acted on yet
  SourceLocation defined_at;

  bool HasNode(std::string_view node) const;
};

// ------------------------------------------------------------------------------ scheduler

enum class SchedulerType { kBackfill, kBuiltin };
std::string_view SchedulerTypeName(SchedulerType t);  // "sched/backfill", "sched/builtin"

// SchedulerParameters, with Slurm's documented defaults.
struct SchedulerParams {
  int32_t bf_interval_s = 30;    // -1 disables the backfill loop
  int32_t bf_window_min = 1440;  // minutes
  int32_t bf_resolution_s = 60;
  int32_t bf_max_job_test = 500;
  int32_t bf_max_job_start = 0;  // 0: no limit
  int32_t bf_max_job_part = 0;   // 0: no limit
  int32_t bf_max_job_user = 0;   // 0: no limit
  int32_t bf_max_time_s = -1;    // -1: not set (bf_interval applies)
  bool bf_continue = false;
  // A job whose prolog failed goes back to the queue without a hold (Slurm's default holds it).
  bool nohold_on_prolog_fail = false;
  int32_t bf_min_age_reserve_s = 0;
  int32_t default_queue_depth = 100;
  int32_t partition_job_depth = 0;  // 0: no limit
  int32_t sched_interval_s = 60;    // -1 disables the main loop
  int32_t sched_max_job_start = 0;  // 0: no limit
  int32_t sched_min_interval_us = 2;  // microseconds between two event-driven main passes

  // Options Slurm knows that Loom does not act on yet, in file order ("defer", "").
  std::vector<std::pair<std::string, std::string>> other_options;

  // bf_max_time_s when set, else bf_interval_s.
  int32_t EffectiveBfMaxTime() const { return bf_max_time_s >= 0 ? bf_max_time_s : bf_interval_s; }
};

// ------------------------------------------------------------------------------ selection

enum class SelectType { kConsTres, kConsRes, kLinear };
std::string_view SelectTypeName(SelectType t);  // "select/cons_tres", ...

// SelectTypeParameters.
struct SelectParams {
  // The consumable unit: CR_CPU, CR_Core, CR_Socket, or CR_Memory (memory only).
  enum class Unit { kCpu, kCore, kSocket, kMemory };
  Unit unit = Unit::kCore;
  bool memory = true;                    // memory is consumable (*_Memory and CR_Memory)
  bool lln = false;                      // CR_LLN
  bool pack_nodes = false;               // CR_Pack_Nodes
  bool one_task_per_core = false;        // CR_ONE_TASK_PER_CORE
  bool core_default_dist_block = false;  // CR_CORE_DEFAULT_DIST_BLOCK
  std::vector<std::string> other_flags;  // known to Slurm, not acted on yet

  std::string ToString() const;  // e.g. "CR_Core_Memory,CR_LLN"
};

// ------------------------------------------------------------------------------- priority

enum class PriorityType { kBasic, kMultifactor };
std::string_view PriorityTypeName(PriorityType t);

// PriorityUsageResetPeriod: when fair share's usage starts again from zero.
enum class UsageReset { kNone, kNow, kDaily, kWeekly, kMonthly, kQuarterly, kYearly };
std::string_view UsageResetName(UsageReset r);  // "NONE", "NOW", "DAILY", ...

struct PriorityParams {
  PriorityType type = PriorityType::kBasic;
  int64_t weight_age = 0;
  int64_t weight_assoc = 0;
  int64_t weight_fairshare = 0;
  int64_t weight_job_size = 0;
  int64_t weight_partition = 0;
  int64_t weight_qos = 0;
  // PriorityWeightTRES ("CPU=1000,Mem=2000,GRES/gpu=3000"): a weight per TRES, read with the
  // same rules as TRESBillingWeights.
  core::TresBillingWeights weight_tres;
  std::string weight_tres_text;
  int64_t max_age_s = 7 * 86400;          // PriorityMaxAge (default 7-0)
  int64_t decay_half_life_s = 7 * 86400;  // PriorityDecayHalfLife; 0 disables decay
  bool favor_small = false;
  int64_t calc_period_s = 300;                 // PriorityCalcPeriod (minutes, default 5)
  UsageReset usage_reset = UsageReset::kNone;  // PriorityUsageResetPeriod
  // PriorityFlags: the ones Loom acts on, and the rest as written (known to Slurm).
  bool no_fair_tree = false;  // NO_FAIR_TREE: the classic algorithm
  bool max_tres = false;      // MAX_TRES: billing by the largest per-node TRES
  std::vector<std::string> other_flags;
  std::string FlagsString() const;  // as scontrol show config prints them
};

// ----------------------------------------------------------------------------- preemption

enum class PreemptType { kNone, kPartitionPrio, kQos };
std::string_view PreemptTypeName(PreemptType t);  // "preempt/none", ...

// ------------------------------------------------------------------------------- cluster

struct ControllerHost {
  std::string name;  // SlurmctldHost=name(addr): the name part
  std::string addr;  // the address part; defaults to name

  friend bool operator==(const ControllerHost&, const ControllerHost&) = default;
};

// The MPI wire-up types (MpiDefault, srun --mpi, SLURM_MPI_TYPE): none, PMI-2 for
// MPICH-family libraries, and PMIx ("pmix_v4" names the same server, as Slurm's plugin
// versions do).
inline constexpr std::string_view kMpiTypes[] = {"none", "pmi2", "pmix", "pmix_v4"};

struct ClusterConfig {
  std::string cluster_name;
  std::vector<ControllerHost> controllers;  // primary first, then backups
  int32_t slurmctld_port = 6817;
  int32_t slurmctld_port_count = 1;  // SlurmctldPort=6817-6818 gives 2
  int32_t slurmd_port = 6818;
  std::string slurm_user = "root";
  std::string state_save_location = "/var/spool/slurmctld";

  std::vector<std::string> gres_types;  // GresTypes, lower-cased
  std::vector<NodeConfig> nodes;        // definition order
  std::vector<PartitionConfig> partitions;

  SchedulerType scheduler_type = SchedulerType::kBackfill;
  SchedulerParams scheduler;
  SelectType select_type = SelectType::kLinear;  // Slurm 22.05's default
  SelectParams select;
  PriorityParams priority;
  PreemptType preempt_type = PreemptType::kNone;
  PreemptMode preempt_mode;
  std::string topology_plugin = "topology/none";
  // AccountingStorageType (lower-cased): accounting_storage/slurmdbd sends job records to
  // loomdbd at AccountingStorageHost:AccountingStoragePort (the host defaults to the
  // controller's).
  std::string accounting_storage_type = "accounting_storage/none";
  std::string accounting_storage_host;
  int32_t accounting_storage_port = 6819;
  // AccountingStorageEnforce's flags, lower-cased (associations, limits, qos, safe, ...).
  std::vector<std::string> accounting_storage_enforce;
  // PrivateData's kinds, lower-cased (jobs, usage, accounts, users, ...).
  std::vector<std::string> private_data;
  bool AccountingEnabled() const {
    return accounting_storage_type == "accounting_storage/slurmdbd";
  }
  bool Enforces(std::string_view flag) const;
  bool Private(std::string_view kind) const;
  // AccountingStorageTRES, each name in core::CanonicalTresName's form ("gres/gpu:a100").
  std::vector<std::string> accounting_storage_tres;
  // Cluster-wide TRESBillingWeights (a Loom extension; Slurm sets them per partition):
  // used by partitions that set none of their own.
  core::TresBillingWeights billing_weights;
  std::string billing_weights_text;

  int32_t max_job_count = 10000;
  int32_t max_array_size = 1001;
  // JobSubmitPlugins=lua: job_submit.lua beside slurm.conf sees every submission, run in
  // LoomJobSubmitHelpers helper processes with LoomJobSubmitTimeout per call (Loom's keys,
  // docs/admin/job-submit.md).
  bool job_submit_lua = false;
  // CliFilterPlugins=lua: sbatch, srun and salloc run cli_filter.lua beside slurm.conf.
  bool cli_filter_lua = false;
  int32_t job_submit_helpers = 2;
  int64_t job_submit_timeout_ms = 1000;
  // Memory defaults/limits in MB; 0 means unlimited/not set, as in Slurm.
  int64_t def_mem_per_cpu_mb = 0;
  int64_t def_mem_per_node_mb = 0;
  int64_t max_mem_per_cpu_mb = 0;
  int64_t max_mem_per_node_mb = 0;
  int64_t def_mem_per_gpu_mb = 0;
  int32_t slurmd_timeout_s = 300;
  int32_t kill_wait_s = 30;
  // TreeWidth: how many node daemons one daemon (or the controller) passes a step launch on
  // to; the rest go through them (core::FanoutTree).
  int32_t tree_width = 50;
  // MpiDefault: the MPI wire-up of steps whose srun gives no --mpi (one of kMpiTypes).
  std::string mpi_default = "none";
  // MpiParams=ports=LOW-HIGH: each step gets ports of this range reserved on its nodes
  // (SLURM_STEP_RESV_PORTS), none shared with another running step there. 0, 0: none.
  int32_t mpi_ports_low = 0, mpi_ports_high = 0;
  // Programs run around jobs (docs/admin/prolog-epilog.md), as written: a path or a glob
  // pattern. Prolog and Epilog: by each node's loomd, as root, before the job's first
  // process there (or at allocation with PrologFlags=Alloc) and after its last;
  // PrologSlurmctld and EpilogSlurmctld: by the controller; TaskProlog and TaskEpilog: by
  // loom-stepd as the job's user around each task; SrunProlog and SrunEpilog: by srun.
  std::string prolog, epilog, prolog_slurmctld, epilog_slurmctld;
  std::string task_prolog, task_epilog, srun_prolog, srun_epilog;
  struct PrologFlags {
    bool alloc = false;  // the prolog runs on every node at allocation (Contain implies it)
    bool contain = false;
    bool nohold = false;             // salloc does not wait for the prologs
    bool serial = false;             // a node runs one prolog or epilog at a time
    std::vector<std::string> other;  // known to Slurm, not acted on (X11, RunInJob, ...)
    std::string ToString() const;    // "Alloc,Serial"; empty: none
  };
  PrologFlags prolog_flags;
  // PrologEpilogTimeout: seconds a prolog or epilog may run before it is killed and counts
  // as failed; kNoPrologEpilogTimeout (Slurm's default): as long as it runs.
  static constexpr int32_t kNoPrologEpilogTimeout = 65534;
  int32_t prolog_epilog_timeout_s = kNoPrologEpilogTimeout;
  // TaskPlugin (e.g. task/affinity,task/cgroup) and TaskPluginParam as written: with
  // task/affinity the node daemons bind tasks to CPUs even without --cpu-bind.
  std::vector<std::string> task_plugins;
  std::string task_plugin_param;
  // JobAcctGatherFrequency's task interval: how often the node daemons sample the running
  // tasks' memory for sstat's and the accounting's maxima (0: at the step's end only).
  int32_t acct_gather_task_s = 30;
  int32_t min_job_age_s = 300;
  int32_t return_to_service = 0;
  // ResvOverRun (minutes in slurm.conf): how long a job may run on past the end of the
  // reservation it runs in; core::kUnlimitedSeconds for UNLIMITED.
  int64_t resv_over_run_s = 0;

  // SlurmdParameters, as written (config_overrides is acted on: nodes are taken to have
  // what slurm.conf says, whatever the hardware reports).
  std::vector<std::string> slurmd_parameters;
  bool ConfigOverrides() const;
  // SlurmctldParameters options Loom acts on: the defenses of the controller's port
  // (docs/admin/slurm-conf.md). max_unauthenticated_connections=N: open connections that
  // have not yet sent a valid credential, the oldest closed beyond it; unauthenticated_deadline
  // =SECONDS: how long such a connection has to deliver its first whole frame.
  int32_t max_unauthenticated_connections = 4096;
  int32_t unauthenticated_deadline_s = 5;

  // The daemons' logs: SlurmctldDebug and SlurmdDebug, the *SyslogDebug levels (unset: no
  // syslog), the LogFile keys as written (the daemon expands %n and %h; empty: stderr) and
  // DebugFlags (core::DebugFlag bits).
  core::LogLevel slurmctld_debug = core::LogLevel::kInfo;
  core::LogLevel slurmd_debug = core::LogLevel::kInfo;
  std::optional<core::LogLevel> slurmctld_syslog_debug;
  std::optional<core::LogLevel> slurmd_syslog_debug;
  std::string slurmctld_log_file;
  std::string slurmd_log_file;
  uint32_t debug_flags = 0;
  // SlurmctldPidFile, SlurmdPidFile (the daemon expands %n and %h); empty: none is written.
  std::string slurmctld_pid_file;
  std::string slurmd_pid_file;

  // Keys Slurm accepts that Loom does not act on yet: canonical key -> raw value, for
  // `scontrol show config`.
  std::map<std::string, std::string> other_keys;
  // Every file read, the main file first, then includes in the order they were read.
  std::vector<std::string> source_files;

  const NodeConfig* FindNode(std::string_view name) const;
  const PartitionConfig* FindPartition(std::string_view name) const;
  // The partition with Default=YES, or nullptr when none is marked.
  const PartitionConfig* DefaultPartition() const;
  // Billing weights that apply to jobs in `partition`: its own, else the cluster-wide ones.
  const core::TresBillingWeights& BillingWeightsFor(const PartitionConfig& partition) const;
};

}  // namespace loom::conf
