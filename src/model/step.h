// A job step as srun runs it: the layout of its tasks over the job's nodes and the rule by
// which its tasks' ends make one exit status. Pure values and functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::model {

// The request's task options as given, and the CPUs the job holds on each of its nodes.
struct TaskRequest {
  std::optional<int32_t> ntasks;           // -n
  std::optional<int32_t> ntasks_per_node;  // --ntasks-per-node
  std::optional<int32_t> cpus_per_task;    // -c
};

// The tasks each node runs, as Slurm lays them out: --ntasks-per-node on every node; else -n
// tasks dealt round robin over the nodes, each node taking tasks while it has CPUs for them at
// -c CPUs a task (-N2 -n3 on 4-CPU nodes -> {2, 1}), the rest round robin once all are full;
// else one task per node. `cpus_per_node` has one entry per node (0: unknown, no limit).
std::vector<int32_t> TaskCounts(const TaskRequest& request,
                                const std::vector<int32_t>& cpus_per_node);

// The id of the first task on node `node` under block distribution: tasks fill node 0's share
// first, then node 1's, ... (counts {2, 1}: node 0 runs tasks 0 and 1, node 1 runs task 2).
int32_t FirstTask(const std::vector<int32_t>& counts, size_t node);

// Slurm's run-length form of per-node counts, as in SLURM_JOB_CPUS_PER_NODE and
// SLURM_TASKS_PER_NODE: {72, 72, 36} -> "72(x2),36"; {} -> "".
std::string CompressCounts(const std::vector<int32_t>& counts);

// The total of `counts`.
int32_t TaskTotal(const std::vector<int32_t>& counts);

// How a step's task ids map onto its nodes (srun -m/--distribution, first part).
enum class Distribution { kBlock, kCyclic };
// "block" or "cyclic" (Slurm also writes "block:cyclic" etc.: the part before ':' is the node
// level, the only one Loom acts on); nullopt for anything else.
std::optional<Distribution> ParseDistribution(std::string_view text);
const char* DistributionName(Distribution d);  // "block", "cyclic"

// The task ids each node runs, given the count per node: block fills node 0's share first
// (counts {2, 2}: {0, 1}, {2, 3}); cyclic deals ids round robin over the nodes that still
// have room ({0, 2}, {1, 3}).
std::vector<std::vector<int32_t>> TaskIds(const std::vector<int32_t>& counts, Distribution d);

// How the ends of a step's tasks add up to one status, by srun's rule: a task that exited
// counts over one killed by a signal, and among exited tasks the highest exit code wins;
// killed tasks alone give the first signal seen. The result is a wait(2) status, so that it
// can be added up again (per node, then over the nodes, gives the same answer).
class StepStatus {
 public:
  // Adds one task's (or one node's) wait status.
  void Add(int32_t wait_status);
  bool empty() const { return !status_.has_value(); }
  // The combined wait status; 0 when nothing was added.
  int32_t wait_status() const { return status_.value_or(0); }
  // What srun exits with: the exit code, or 128 + the signal number for a killed task.
  int ExitCode() const;

 private:
  std::optional<int32_t> status_;
};

// How srun reports one task's end on stderr, as Slurm words it: "Exited with exit code 3",
// "Killed", "Segmentation fault (core dumped)"; empty for a clean exit (code 0).
std::string DescribeTaskEnd(int32_t wait_status);

}  // namespace loom::model
