// Flat, printable records of jobs, nodes and partitions: what the query commands (`squeue`,
// `sinfo`, `scontrol show`) print, filled by the controller from one snapshot and rendered by
// the formatters beside this file without any other source of truth. Plain values;
// thread-compatible.
//
// Conventions shared by every view:
//  - Times are Unix seconds; 0 means "not set" and each command prints that the way Slurm
//    does ("Unknown", "None", "N/A"). They print in the time zone of the RenderContext.
//  - Strings hold the raw value; "" means "not set" and prints as Slurm prints an unset value
//    ("(null)", "N/A", nothing), which differs from field to field.
//  - Memory counts megabytes; durations count seconds, core::kUnlimitedSeconds for UNLIMITED.
//  - Where Slurm shows a value Loom does not produce yet (a pid in AllocNode:Sid, a load
//    average, internal job flags), the view carries it so the output stays Slurm-shaped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/time_format.h"
#include "core/tres.h"
#include "model/job_state.h"
#include "model/node.h"

namespace loom::cli::format {

// What every rendering depends on besides the views: the time "now" (RunTime of running jobs,
// the date line of `squeue -l`) and the local time zone, as a fixed offset east of UTC.
struct RenderContext {
  int64_t now = 0;
  int32_t utc_offset_s = 0;
};

// One line under JOB_GRES= in `scontrol show job -d`: the nodes that share one layout.
struct JobNodeDetail {
  std::string nodes;    // hostlist expression, "n001" or "n[001-004]"
  std::string cpu_ids;  // the CPU ids used on each of those nodes, "4-11"
  int64_t mem_mb = 0;   // memory allocated on each of those nodes
  std::string gres;     // "gpu:2(IDX:0-1)"; "" when the job has no GRES there
};

// One node of a job's allocation as `squeue --json` lists it (job_resources.allocated_nodes).
struct JobNodeAllocation {
  std::string node_name;
  // Socket index -> allocated core indices on that socket, in order.
  std::vector<std::pair<int32_t, std::vector<int32_t>>> sockets;
  int64_t cpus_used = 0;
  int64_t memory_used_mb = 0;
  int64_t memory_allocated_mb = 0;
};

struct JobView {
  // Identity. A job array appears as one record per task that has left the pending pool
  // (array_task_id set) plus one record for the tasks still pending together
  // (array_task_string "3-10%2", job_id the array's own id).
  uint32_t job_id = 0;
  uint32_t array_job_id = 0;              // 0: not part of an array
  std::optional<uint32_t> array_task_id;  // set on the record of one task
  std::string array_task_string;          // pending tasks of the array, "3-10%2"
  uint32_t array_max_tasks = 0;           // the array's throttle (%N); 0: none
  std::string name;

  std::string user_name;
  uint32_t user_id = 0;
  std::string group_name;
  uint32_t group_id = 0;
  std::string mcs_label;  // "" prints N/A
  std::string account;    // "" prints (null)
  std::string qos;        // "" prints (null)
  std::string wckey;
  std::string cluster;
  uint32_t association_id = 0;

  int64_t priority = 0;
  int32_t nice = 0;

  model::JobState state = model::JobState::kPending;
  // The reason as Slurm prints it: "None", "Resources", "JobHeldUser", "NonZeroExitCode", ...
  // (model::PendingReasonName gives most; the view holds any).
  std::string reason = "None";
  std::string state_description;  // free text that replaces the reason when set
  // "afterok:3(unfulfilled)"; "" when the job has none left.
  std::string dependency;

  bool requeue = true;
  int32_t restarts = 0;
  bool batch = true;
  bool reboot = false;
  int32_t exit_status = 0;  // ExitCode=status:signal
  int32_t exit_signal = 0;
  int32_t derived_exit_status = 0;
  int32_t derived_exit_signal = 0;

  int64_t time_limit_s = core::kUnlimitedSeconds;
  int64_t time_min_s = 0;  // 0 prints N/A
  int64_t submit_time = 0;
  int64_t eligible_time = 0;
  int64_t accrue_time = 0;
  int64_t start_time = 0;  // the expected start while pending, when known
  int64_t end_time = 0;    // the expected end while running
  int64_t deadline = 0;
  int64_t suspend_time = 0;
  int64_t secs_pre_suspend = 0;
  int64_t last_sched_eval = 0;
  int64_t preempt_time = 0;
  int64_t resize_time = 0;
  std::string scheduler = "Main";  // "Main", "Backfill", "Backfill:*"

  std::string partition;
  std::string reservation;
  std::string alloc_node;  // AllocNode:Sid
  uint32_t alloc_sid = 0;
  std::string req_nodes;    // ReqNodeList; "" prints (null)
  std::string exc_nodes;    // ExcNodeList; "" prints (null)
  std::string nodes;        // NodeList of the allocation; "" while pending
  std::string sched_nodes;  // nodes the backfill planned for a pending job
  std::string batch_host;

  int32_t num_nodes = 1;
  int32_t max_nodes = 0;  // a pending job's maximum; 0: not set
  int32_t num_cpus = 1;
  int32_t max_cpus = 0;
  int32_t num_tasks = 1;
  int32_t cpus_per_task = 1;
  // ReqB:S:C:T, Socks/Node, NtasksPerN:B:S:C and CoreSpec; -1 prints '*'.
  int32_t req_boards = 0;
  int32_t req_sockets = 0;
  int32_t req_cores = -1;
  int32_t req_threads = -1;
  int32_t sockets_per_node = -1;
  int32_t ntasks_per_node = 0;
  int32_t ntasks_per_board = 0;
  int32_t ntasks_per_socket = -1;
  int32_t ntasks_per_core = -1;
  int32_t core_spec = -1;

  core::TresVector tres_req;
  core::TresVector tres_alloc;  // empty until the job has an allocation
  std::optional<double> billable_tres;

  int32_t min_cpus_node = 1;
  int64_t min_memory_mb = 0;
  bool memory_per_cpu = false;  // MinMemoryCPU rather than MinMemoryNode
  int64_t min_tmp_disk_mb = 0;
  std::string features;
  std::string prefer;
  int64_t delay_boot_s = 0;
  // OverSubscribe=: "OK" (the partition decides), "NO" (--exclusive), "YES", "USER", "MCS".
  std::string oversubscribe = "OK";
  bool contiguous = false;
  std::string licenses;
  std::string network;
  std::string command;  // the script path; "" for --wrap jobs
  std::string work_dir;
  std::string comment;
  std::string admin_comment;
  std::string system_comment;
  // As submitted; "" when not given. scontrol prints the resolved paths (default
  // slurm-%j.out in WorkDir, %-patterns expanded); squeue --json the raw ones.
  std::string std_err;
  std::string std_in;
  std::string std_out;
  std::string power;

  std::string tres_per_node;  // "gres:gpu:2"
  std::string tres_per_job;
  std::string tres_per_socket;
  std::string tres_per_task;
  std::string cpus_per_tres;
  std::string mem_per_tres;
  std::string tres_bind;
  std::string tres_freq;
  std::string mail_user;
  std::string mail_type;

  // `scontrol show job -d`: JOB_GRES= ("gpu:2"; "" prints (null)) and one line per group of
  // nodes. Also the source of squeue --json's gres_detail and job_resources.
  std::string job_gres;
  std::vector<JobNodeDetail> node_details;
  std::vector<JobNodeAllocation> allocation;

  // Slurm's internal job flags as squeue --json lists them ("JOB_CPUS_SET", ...).
  std::vector<std::string> json_flags;
};

// Node state flags (model/node.h), stacked on the base state as Slurm stacks them.
using model::kNodeFlagReserved;
using model::kNodeFlagCloud;
using model::kNodeFlagDrain;
using model::kNodeFlagCompleting;
using model::kNodeFlagNotResponding;
using model::kNodeFlagPoweredDown;
using model::kNodeFlagFail;
using model::kNodeFlagPoweringUp;
using model::kNodeFlagMaintenance;
using model::kNodeFlagRebootRequested;
using model::kNodeFlagPoweringDown;
using model::kNodeFlagRebootIssued;
using model::kNodeFlagPlanned;
using model::kNodeFlagInvalidReg;
using model::kNodeFlagPowerDown;

struct NodeView {
  std::string name;
  model::NodeState state = model::NodeState::kIdle;
  uint32_t flags = 0;  // kNodeFlag*

  int32_t cpus = 1;            // CPUTot
  int32_t cpus_effective = 1;  // CPUEfctv (CPUs less specialized cores)
  int32_t cpus_alloc = 0;
  std::optional<double> cpu_load;  // load average; N/A when unknown
  int32_t boards = 1;
  int32_t sockets = 1;
  int32_t cores_per_socket = 1;
  int32_t threads_per_core = 1;
  int64_t real_memory_mb = 1;
  int64_t alloc_memory_mb = 0;
  std::optional<int64_t> free_memory_mb;
  int64_t tmp_disk_mb = 0;
  uint32_t weight = 1;
  std::string features_available;  // "" prints (null)
  std::string features_active;
  std::string gres;       // "gpu:8"; "" prints (null)
  std::string gres_used;  // "gpu:2(IDX:0-1)", shown by scontrol -d
  std::string node_addr;
  std::string node_hostname;
  uint32_t port = 0;
  std::string version;
  std::string arch;
  std::string os;
  std::string owner;      // "" prints N/A
  std::string mcs_label;  // "" prints N/A
  std::vector<std::string> partitions;
  int64_t boot_time = 0;
  int64_t slurmd_start_time = 0;
  int64_t last_busy_time = 0;
  core::TresVector cfg_tres;
  core::TresVector alloc_tres;
  std::optional<uint32_t> cap_watts;  // n/a when unset
  uint32_t current_watts = 0;
  uint32_t ave_watts = 0;

  std::string reason;  // why it is down or drained; "" when none
  std::string reason_user;
  uint32_t reason_uid = 0;
  int64_t reason_time = 0;
};

enum class PartitionState : uint8_t { kUp, kDown, kDrain, kInactive };

struct PartitionView {
  std::string name;
  bool is_default = false;
  PartitionState state = PartitionState::kUp;
  std::vector<std::string> node_names;  // in the order of the node table
  std::string allow_groups = "ALL";
  std::string allow_accounts = "ALL";  // ignored when deny_accounts is set
  std::string deny_accounts;
  std::string allow_qos = "ALL";  // ignored when deny_qos is set
  std::string deny_qos;
  std::string alloc_nodes = "ALL";
  std::string qos;              // the partition's QOS; "" prints N/A
  int64_t default_time_s = -1;  // -1: NONE
  bool disable_root_jobs = false;
  bool exclusive_user = false;
  int64_t grace_time_s = 0;
  bool hidden = false;
  int32_t max_nodes = -1;  // -1: UNLIMITED
  int64_t max_time_s = core::kUnlimitedSeconds;
  int32_t min_nodes = 0;
  bool lln = false;
  int32_t max_cpus_per_node = -1;  // -1: UNLIMITED
  uint32_t priority_job_factor = 1;
  uint32_t priority_tier = 1;
  bool root_only = false;
  bool req_resv = false;
  std::string oversubscribe = "NO";  // "NO", "EXCLUSIVE", "YES:4", "FORCE:4"
  int64_t over_time_limit_min = -1;  // -1: NONE
  std::string preempt_mode = "OFF";
  int32_t total_cpus = 0;
  int32_t total_nodes = 0;
  std::string select_type_parameters = "NONE";
  std::string job_defaults;  // "" prints (null)
  // Memory defaults and limits: -1 is UNLIMITED; per-CPU values take precedence when set.
  int64_t def_mem_per_node_mb = -1;
  int64_t def_mem_per_cpu_mb = -1;
  int64_t max_mem_per_node_mb = -1;
  int64_t max_mem_per_cpu_mb = -1;
  core::TresVector tres;
  std::string tres_billing_weights;
};

}  // namespace loom::cli::format
