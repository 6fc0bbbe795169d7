// The controller's records (JobEntry, sched::Cluster nodes and partitions) as the wire
// records queries answer with: v1::JobInfo, v1::NodeInfo, v1::PartitionInfo
// (proto/loom/v1/loom.proto). Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "conf/cluster_config.h"
#include "core/cpu_set.h"
#include "ctld/controller_core.h"
#include "ctld/reservations.h"
#include "loom/v1/loom.pb.h"
#include "model/gpu_topology.h"
#include "model/resources.h"
#include "sched/types.h"

namespace loom::ctld {

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
v1::JobInfo FromEntry(const JobEntry& entry, const sched::Cluster& cluster,
                      const JobInfoOptions& options = {});
// FromEntry in two parts that do not share a field. The fields a job shares with the jobs
// submitted alike, which the jobs listing keeps once for all of them: those its request
// decides (name, the submission in JobInfo.spec, tres_req, num_tasks, max_nodes,
// min_cpus_node, requeue, array_max_tasks), its owner's (uid, gid, user, group_name), its
// partition's name and the cluster's, its state and reason as listed (a long queue is mostly
// jobs in a few of them), and array_task_id -1 where it is no array task.
void AddSharedFields(const JobEntry& entry, const JobInfoOptions& options, v1::JobInfo* info);
// And all the others.
v1::JobInfo JobFieldsOf(const JobEntry& entry, const sched::Cluster& cluster,
                        const JobInfoOptions& options = {});

// Every job of a table, in table order, the way squeue lists them: the pending tasks of an
// array that never started fold into one record with the array's id as its job id
// (array_task_string "3-10%2", array_task_id -1), placed where the first of them is.
std::vector<v1::JobInfo> FromEntries(const JobTable& jobs, const sched::Cluster& cluster,
                                     const JobInfoOptions& options = {});

// What running jobs hold on one node.
struct NodeUsage {
  model::Resources alloc;
  model::GpuMask gpu_ids = 0;
  core::CpuSet cpu_ids;
  int32_t jobs = 0;
  int32_t completing = 0;  // of them, jobs that ended and wait for their processes or epilogs
  uint32_t resv_flags = 0;  // RESERVED, MAINTENANCE: in an advance reservation active now
  friend bool operator==(const NodeUsage&, const NodeUsage&) = default;
};

// Marks the nodes of the advance reservations active at `now` (MarkReservations).
void MarkReservations(const sched::Cluster& cluster, Time now, std::vector<NodeUsage>* usage);

// The usage of every node of the cluster (`node_count` entries), summed over the jobs of
// `jobs` that hold an allocation (ControllerCore::LiveEntries has all of them).
std::vector<NodeUsage> NodeUsageOf(const std::vector<const JobEntry*>& jobs, size_t node_count);

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

// A partition as `scontrol show partition` and sinfo describe it: its TRES with gres/gpu
// when `gpu_tres`, as for nodes.
v1::PartitionInfo FromPartition(const sched::Cluster& cluster, int32_t partition,
                                bool gpu_tres = true);
std::vector<v1::PartitionInfo> FromPartitions(const sched::Cluster& cluster,
                                              bool gpu_tres = true);

// The same over a controller core: its jobs, its nodes with liveness from NodeUp(), its
// partitions.
std::vector<v1::JobInfo> JobsOf(const ControllerCore& core,
                                const JobInfoOptions& options = {});
std::vector<v1::NodeInfo> NodesOf(const ControllerCore& core, bool gpu_tres = true);
// Node `node` of `core` holding `usage` (its entry of NodeUsageOf(core.LiveEntries(), ...)).
v1::NodeInfo NodeOf(const ControllerCore& core, int32_t node, const NodeUsage& usage,
                    bool gpu_tres = true);

// Nodes as queries read them, each shared by every published list in which it is unchanged.
using NodeInfos = std::vector<std::shared_ptr<const v1::NodeInfo>>;
// Every node of `core` with `usage` (by node): the node of `before` where its usage is
// `before_usage`'s (a job that starts or ends changes only the nodes it holds), NodeOf
// passed through `finish` for the others. `before` null or of another size: all built.
NodeInfos RefreshNodes(const ControllerCore& core, const std::vector<NodeUsage>& usage,
                       const NodeInfos* before, const std::vector<NodeUsage>& before_usage,
                       bool gpu_tres,
                       const std::function<void(int32_t node, v1::NodeInfo*)>& finish);

// Whether Slurm would count GPUs in TRES strings for `config`: AccountingStorageTRES lists
// gres/gpu.
bool TracksGpuTres(const conf::ClusterConfig& config);
// The core's partitions, their TRES with gres/gpu when its configuration tracks it.
std::vector<v1::PartitionInfo> PartitionsOf(const ControllerCore& core);

// A step as `scontrol show step` and `squeue -s` describe it; `partition` is its job's.
v1::StepInfo StepInfoOf(const JobEntry& e, const StepRecord& step, const sched::Cluster& cluster,
                        const std::string& partition);
// The name of the partition job `e` runs or waits in; empty when it has none.
std::string PartitionOf(const JobEntry& e, const sched::Cluster& cluster);

// An advance reservation as scontrol show reservation and the store see it, and back.
v1::ReservationInfo ReservationToInfo(const ReservationRecord& r, Time now);
StatusOr<ReservationRecord> ReservationFromInfo(const v1::ReservationInfo& info);

}  // namespace loom::ctld
