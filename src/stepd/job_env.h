// What loomd needs to start a batch script on its node, and the environment the script starts
// with: the job's exported variables (already resolved by the controller from --export) plus
// the variables Slurm gives a batch job (SLURM_JOB_ID, SLURM_JOB_NODELIST, CUDA_VISIBLE_DEVICES,
// ...), in Slurm's formats. Pure values and pure functions; thread-compatible.
//
// The table of variables, with when each is set, is in docs/design/noded.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/binding.h"
#include "model/gpu_topology.h"
#include "model/job.h"
#include "model/job_request.h"
#include "model/step.h"

namespace loom::stepd {

// The job's user as the node's passwd database knows it.
struct UserInfo {
  std::string name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string home;
  std::string shell;
  friend bool operator==(const UserInfo&, const UserInfo&) = default;
};

// The job's user as loomd already read it (passwd entry and supplementary groups), so that
// a supervisor need not ask the name service again.
struct KnownUser {
  UserInfo user;
  std::vector<uint32_t> groups;
  friend bool operator==(const KnownUser&, const KnownUser&) = default;
};

// One batch job as the node that runs its script sees it. The controller fills it in from the
// job it keeps and the allocation it chose.
struct BatchJob {
  // Identity and accounting.
  model::JobId job_id = 0;
  std::string name;
  std::string user;  // the submitting user's name; empty: taken from the passwd entry
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::optional<KnownUser> known_user;  // unset: looked up when the job starts
  std::string partition;
  std::string account;      // empty: none
  std::string qos;          // empty: none
  std::string reservation;  // empty: none
  std::string dependency;   // --dependency as the controller prints it; empty: none
  std::string submit_dir;   // where sbatch ran
  std::string submit_host;  // the host sbatch ran on
  int64_t time_limit_s = 0;
  int32_t restart_count = 0;  // times the job was requeued

  // Array tasks: the array's master job id, this task's index and the whole --array spec
  // (for SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP). All unset outside arrays.
  std::optional<model::JobId> array_job_id;
  std::optional<int64_t> array_task_id;
  std::optional<model::ArraySpec> array;

  // The allocation. `nodes` lists every node of the job in the job's order (the order of
  // SLURM_JOB_NODELIST); `cpus_per_node` the CPUs the job holds on each, in the same order.
  // `tasks_per_node`, when not empty, is the controller's task layout (SLURM_TASKS_PER_NODE);
  // when empty it is derived from the request (TasksPerNode()).
  std::vector<std::string> nodes;
  std::vector<int32_t> cpus_per_node;
  std::vector<int32_t> tasks_per_node;
  std::string node_name;    // this node; nodes[node_index]
  int32_t node_index = 0;   // 0 for the node that runs the batch script
  int64_t mem_mb = 0;       // memory the job holds on this node (0: not limited)
  model::GpuMask gpus = 0;  // GPUs the job holds on this node, by index

  // The request's options as given (unset: not given).
  std::optional<int32_t> ntasks;  // -n
  std::optional<int32_t> ntasks_per_node;
  std::optional<int32_t> cpus_per_task;  // -c
  std::optional<int32_t> cpus_per_gpu;
  std::optional<int64_t> mem_per_node_mb;  // --mem
  std::optional<int64_t> mem_per_cpu_mb;
  std::optional<int64_t> mem_per_gpu_mb;

  // Execution.
  std::string work_dir;        // absolute
  std::string stdout_pattern;  // -o; empty: model::DefaultOutputPattern
  std::string stderr_pattern;  // -e; empty: the same file as stdout
  std::string stdin_pattern;   // -i; empty: /dev/null
  model::OpenMode open_mode = model::OpenMode::kDefault;
  std::string script;  // the script's text
  std::vector<std::string> script_args;
  std::map<std::string, std::string> environment;  // the exported variables

  friend bool operator==(const BatchJob&, const BatchJob&) = default;
};

// Settings of the node daemon that reach a job's environment and launch.
struct NodeSettings {
  std::string cluster_name;        // SLURM_CLUSTER_NAME; empty: not set
  std::string slurm_conf;          // SLURM_CONF: the configuration file loomd read
  std::string tmp_dir = "/tmp";    // TMPDIR when the job does not export one
  bool constrain_devices = false;  // cgroup.conf ConstrainDevices: the job sees only its
                                   // GPUs, so CUDA_VISIBLE_DEVICES counts them from 0
  bool job_file_append = false;    // slurm.conf JobFileAppend: the default --open-mode
  int64_t kill_wait_s = 30;        // slurm.conf KillWait: SIGTERM to SIGKILL when loomd ends
                                   // tasks on its own (srun went away)
  // The node as task binding sees it: its CPU layout (sockets, cores, threads, NUMA) and its
  // GPUs; an empty layout (no cores) binds nothing.
  model::BindNode layout;
  // TaskPlugin names task/affinity: tasks are bound without --cpu-bind too (auto binding),
  // with TaskPluginParam's type when auto binding finds no fit.
  bool auto_cpu_bind = false;
  model::CpuBindType default_cpu_bind = model::CpuBindType::kNone;
  // slurm.conf TaskProlog and TaskEpilog, as written (task_scripts.h); empty: none.
  std::string task_prolog, task_epilog;
};

// Checks that the allocation fields agree with each other (a node list, this node in it at
// node_index, one CPU count per node, a task count per node when given). Errors name the field.
Status ValidateBatchJob(const BatchJob& job);

// The environment the batch script starts with. Starts from job.environment, drops the
// job-describing SLURM_* variables the submitting shell may have carried in from another job
// (SLURM_NTASKS, SLURM_ARRAY_*, SLURM_MEM_PER_*, ...), then sets Slurm's variables for a batch
// job, which win over exported values. HOME, USER, LOGNAME and SHELL come from `user` only when
// the job does not export them; TMPDIR from settings.tmp_dir likewise. SLURM_TASK_PID is left
// to the launcher (only the started process knows its pid). `job` must pass ValidateBatchJob.
std::map<std::string, std::string> BatchEnvironment(const BatchJob& job,
                                                    const NodeSettings& settings,
                                                    const UserInfo& user);

// Where a step inside a job's allocation (srun from a batch script or a salloc shell) runs:
// all or part of the job's nodes, in the step's own order, and its tasks on each.
struct StepPlacement {
  uint32_t step_id = 0;
  std::vector<std::string> nodes;       // the step's nodes (SLURM_STEP_NODELIST)
  std::vector<int32_t> tasks_per_node;  // per step node
  int32_t node_index = 0;               // this node's place in `nodes` (SLURM_NODEID)
  std::vector<int32_t> task_ids;        // the tasks this node runs (SLURM_GTIDS)
  model::Distribution distribution = model::Distribution::kBlock;
  friend bool operator==(const StepPlacement&, const StepPlacement&) = default;
};

// srun's binding options for a step, as given (validated by srun).
struct BindingOptions {
  std::string cpu_bind;       // --cpu-bind
  std::string gpu_bind;       // --gpu-bind
  std::string gpus_per_task;  // --gpus-per-task: "N" or "TYPE:N"
  int32_t cpus_per_task = 0;  // the step's -c; 0: the job's
  int32_t threads_per_core = 0;  // threads of each core the tasks use (--hint); 0: all
};

// THE place where the GPUs and CPUs of each task of a step are decided, once for all the
// step's tasks on this node: model::BindTasks over the node's layout (settings.layout) with
// what the job holds here (`job.gpus`, `node_cpus` as a CPU list "0-7"), for the tasks
// `task_ids` (global ids, by local id). Auto binding (no --cpu-bind) applies when
// settings.auto_cpu_bind (TaskPlugin=task/affinity), falling back to
// settings.default_cpu_bind. A node whose CPU layout is unknown gives every task all of the
// job's CPUs and GPUs. Errors are the options' parse errors and BindTasks' (worded for srun's
// user).
StatusOr<model::StepBinding> BindStep(const BatchJob& job, const std::string& node_cpus,
                                      const BindingOptions& options,
                                      const std::vector<int32_t>& task_ids,
                                      const NodeSettings& settings);

// The variables srun's tasks get for a CPU binding (for `local`'s whole step on this node):
// SLURM_CPU_BIND_VERBOSE, SLURM_CPU_BIND_TYPE ("mask_cpu:"), SLURM_CPU_BIND_LIST (every
// local task's mask, "0x3,0xC") and SLURM_CPU_BIND (their sum, "quiet,mask_cpu:0x3,0xC");
// none when the step is not bound.
std::map<std::string, std::string> CpuBindEnvironment(const model::StepBinding& binding,
                                                      bool verbose);

// One task of a step srun runs, as its environment describes it. Without `placement` the
// step is the job's only one (a job srun submitted): its layout is the job's
// (BatchJob::tasks_per_node, or TasksPerNode()) and this node's tasks are a block of it.
struct StepTask {
  int32_t task_id = 0;    // SLURM_PROCID: the task's rank in the step
  int32_t local_id = 0;   // SLURM_LOCALID: its place among this node's tasks
  std::string srun_host;  // where srun runs (SLURM_SRUN_COMM_HOST, SLURM_LAUNCH_NODE_IPADDR)
  int32_t srun_port = 0;  // SLURM_SRUN_COMM_PORT
  const StepPlacement* placement = nullptr;           // a step inside the allocation
  // BindStep's answer for this task; unset: every GPU the job holds here.
  const model::TaskBinding* binding = nullptr;
  // The step's CPU binding variables (CpuBindEnvironment), the same for its tasks here.
  const std::map<std::string, std::string>* cpu_bind_env = nullptr;
};

// The environment of one task of srun's step: BatchEnvironment() without ENVIRONMENT=BATCH,
// then the step's variables, as slurmstepd sets them: SLURM_STEP_ID (0, or the placement's),
// SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID (this node's place in the step), SLURM_GTIDS
// (this node's tasks), SLURM_NTASKS/SLURM_NPROCS, SLURM_NNODES, SLURM_NODELIST and
// SLURM_TASKS_PER_NODE (the step's, as srun sets them; SLURM_JOB_* keep the job's),
// SLURM_STEP_*, SLURM_DISTRIBUTION, srun's address, CUDA_VISIBLE_DEVICES from the task's
// binding, SLURM_STEP_GPUS (the step's GPUs here) and the step's SLURM_CPU_BIND* variables.
std::map<std::string, std::string> TaskEnvironment(const BatchJob& job,
                                                   const NodeSettings& settings,
                                                   const UserInfo& user, const StepTask& task);

// Slurm's run-length form of per-node counts (model/step.h).
using model::CompressCounts;

// The tasks on each node: job.tasks_per_node when given; else --ntasks-per-node on every
// node; else -n tasks dealt round robin over the nodes, skipping a node once its CPUs are used
// up at -c CPUs a task (-N2 -n3 -> {2, 1}); else one task per node.
std::vector<int32_t> TasksPerNode(const BatchJob& job);

// The GPU indices of `gpus` in ascending order, comma separated ("0,2,3"), or, when
// `relative`, their positions counted from 0 ("0,1,2"): what CUDA_VISIBLE_DEVICES holds
// without and with device confinement.
std::string GpuIndexList(model::GpuMask gpus, bool relative = false);

// SLURM_ARRAY_TASK_STEP for the tasks of `spec`: the common difference when the indices are
// evenly spaced, otherwise 1 (a single task: 1).
int64_t ArrayTaskStep(const model::ArraySpec& spec);

}  // namespace loom::stepd
