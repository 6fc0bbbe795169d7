// Conversions between Loom's values and the wire API (proto/loom/v1/loom.proto):
//  - a submission, model::JobRequest <-> v1::JobSpec, lossless both ways;
//  - the controller's records (ctld::JobEntry, sched::Cluster nodes and partitions) to the
//    v1::JobInfo / v1::NodeInfo / v1::PartitionInfo that queries answer with;
//  - those wire records to the views `squeue`, `sinfo` and `scontrol show` render
//    (cli/format/views.h);
//  - errors, Status <-> v1::Error, with Slurm's texts for the codes Slurm has.
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/format/views.h"
#include "core/cpu_set.h"
#include "core/status.h"
#include "ctld/core.h"
#include "loom/v1/loom.pb.h"
#include "model/gpu_topology.h"
#include "model/job_request.h"
#include "model/resources.h"
#include "sched/types.h"

namespace loom::rpc {

// ------------------------------------------------------------------------------ submissions

// Every field of `request` has a place in the JobSpec: the shape in JobSpec's shape fields,
// the options as given in JobSpec.given, the rest beside them. FromWire(ToWire(r)) == r.
v1::JobSpec ToWire(const model::JobRequest& request);

// The request a JobSpec carries. Fails (InvalidArgument, naming the field) on what no
// JobRequest can hold: an unknown enum value, an array given only as text that does not
// parse. Fields another writer left unset read as JobRequest's defaults. JobSpec.command
// is not part of a JobRequest and is ignored.
StatusOr<model::JobRequest> FromWire(const v1::JobSpec& spec);

// --------------------------------------------------------------------- controller -> wire

struct JobInfoOptions {
  std::string cluster_name;        // ClusterName
  bool requeue_by_default = true;  // JobRequeue: Requeue= for jobs that did not say
  // The group name for a gid (Slurm prints "GroupId=name(gid)"); unset or "": the record
  // carries no name.
  std::function<std::string(uint32_t gid)> group_name;
  // Whether TRES strings count GPUs (gres/gpu=N): Slurm tracks them only when
  // AccountingStorageTRES lists gres/gpu (TracksGpuTres).
  bool gpu_tres = true;
  // The batch script and environment are large and only `scontrol write batch_script` and
  // loomd need them; left out of JobInfo.spec unless asked for.
  bool with_script = false;
  bool with_environment = false;
};

// One job (or one task of an array) as queries report it: ids, state and reason names as
// Slurm prints them, every time, the allocation (compressed node list, batch host, CPU and GPU
// ids per node, sockets and cores), TRES requested and allocated, the dependency as Slurm
// prints it while the job waits ("afterok:3(unfulfilled)"), and the submission. A job that
// ended while its processes are still being killed reports COMPLETING.
v1::JobInfo FromEntry(const ctld::JobEntry& entry, const sched::Cluster& cluster,
                      const JobInfoOptions& options = {});

// Every job of a table, in table order, the way squeue lists them: the pending tasks of an
// array that never started fold into one record with the array's id as its job id
// (array_task_string "3-10%2", array_task_id -1), placed where the first of them is.
std::vector<v1::JobInfo> FromEntries(const std::map<uint64_t, ctld::JobEntry>& jobs,
                                     const sched::Cluster& cluster,
                                     const JobInfoOptions& options = {});

// What running jobs hold on one node.
struct NodeUsage {
  model::Resources alloc;
  model::GpuMask gpu_ids = 0;
  core::CpuSet cpu_ids;
  int32_t jobs = 0;
};

// The usage of every node of the cluster (`node_count` entries), summed over the jobs that
// hold an allocation.
std::vector<NodeUsage> NodeUsageOf(const std::map<uint64_t, ctld::JobEntry>& jobs,
                                   size_t node_count);

// What the controller knows of a node's daemon.
struct NodeStatus {
  bool alive = true;           // registered and reporting within SlurmdTimeout
  int64_t last_heartbeat = 0;  // Unix seconds; 0: never
  uint32_t reason_uid = 0;     // who set the node's reason, and when (0: nobody)
  std::string reason_user;
  int64_t reason_time = 0;
};

// One node: IDLE, MIXED or ALLOCATED from its usage (DOWN, FUTURE as configured or marked),
// DRAIN and NOT_RESPONDING (a daemon that is not alive) as flags, configured and allocated
// TRES (with gres/gpu when `gpu_tres`), the partitions it is in.
v1::NodeInfo FromNode(const sched::Cluster& cluster, int32_t node, const NodeUsage& usage,
                      const NodeStatus& status, bool gpu_tres = true);
// Every node in node-table order; `status` by node index (missing entries: alive).
std::vector<v1::NodeInfo> FromNodes(const sched::Cluster& cluster,
                                    const std::map<uint64_t, ctld::JobEntry>& jobs,
                                    const std::vector<NodeStatus>& status, bool gpu_tres = true);

v1::PartitionInfo FromPartition(const sched::Cluster& cluster, int32_t partition);
std::vector<v1::PartitionInfo> FromPartitions(const sched::Cluster& cluster);

// The same over a controller core: its jobs, its nodes with liveness from NodeUp(), its
// partitions.
std::vector<v1::JobInfo> JobsOf(const ctld::ControllerCore& core,
                                const JobInfoOptions& options = {});
std::vector<v1::NodeInfo> NodesOf(const ctld::ControllerCore& core, bool gpu_tres = true);

// Whether Slurm would count GPUs in TRES strings for `config`: AccountingStorageTRES lists
// gres/gpu.
bool TracksGpuTres(const conf::ClusterConfig& config);
std::vector<v1::PartitionInfo> PartitionsOf(const ctld::ControllerCore& core);

// --------------------------------------------------------------------------- wire -> views

// Every view field the wire carries; the rest keep the view's defaults. Unknown state names
// read as PENDING (jobs) and UNKNOWN (nodes).
cli::format::JobView ToJobView(const v1::JobInfo& job);
cli::format::NodeView ToNodeView(const v1::NodeInfo& node);
cli::format::PartitionView ToPartitionView(const v1::PartitionInfo& partition);

// ---------------------------------------------------------------------------------- errors

// The absl::StatusCode a wire code stands for (several wire codes share one).
absl::StatusCode StatusCodeFor(v1::ErrorCode code);

// What Slurm 22.05 says for the code (slurm_strerror): "Invalid job id specified",
// "Access/permission denied", ...; for codes Slurm has no text for, Loom's own short text.
std::string_view SlurmErrorText(v1::ErrorCode code);

// The wire code for a status: the one FromWire attached, else the code whose Slurm text the
// message starts with (when that code means the same StatusCode), else for Unauthenticated
// the credential problem the message names, else the general code of the StatusCode.
// StatusCodeFor(ErrorCodeFor(s)) == s.code() always.
v1::ErrorCode ErrorCodeFor(const Status& status);

// A wire error as a Status: the code's StatusCode, the message (SlurmErrorText when the
// error has none), and the wire code attached so that ToWire gives it back.
Status FromWire(const v1::Error& error);
// A Status as a wire error: ErrorCodeFor and the message as it is.
v1::Error ToWire(const Status& status);

}  // namespace loom::rpc
