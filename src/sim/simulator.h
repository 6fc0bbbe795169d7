// The discrete-event simulator: replays a workload in virtual time through a scheduling
// policy of src/sched, the same code the controller runs. Event order follows the
// published backfilling studies (SIM-CONVENTIONS.md, rules 6-9 and C4): at one timestamp
// all submissions (in input order), then all terminations (in the order the jobs started),
// each followed by a scheduling pass; then periodic passes (the `slurm` policy's backfill
// cycle) and reservation wake-ups. Single-threaded; a Simulator is used once.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/job_request.h"
#include "sched/backfill/policy.h"
#include "sched/types.h"
#include "sim/fair_share.h"

namespace loom::sim {

using sched::Time;

// One job of a workload, as the simulator replays it.
struct SimJob {
  sched::JobId id = 0;
  Time submit = 0;
  int64_t run = 1;        // the real run time
  int64_t estimate = 1;   // what the scheduler is told (time limit or user estimate)
  int32_t partition = 0;
  std::string constraint;
  model::JobShape shape;
  int64_t priority = 0;

  // What may keep it waiting besides resources, judged as the controller judges it
  // (sched/deps): its user and name (singleton), its dependencies on other jobs of the
  // workload (by id; SWF's preceding job becomes afterany), a begin time (--begin), a hold
  // from its submission until `release_at` (sbatch -H, then scontrol release; 0: not
  // held), and its array's `%N` throttle (array_id: the array's id, 0 for none).
  uint32_t uid = 0;
  std::string name;
  model::Dependency dependency;
  Time begin = 0;
  Time release_at = 0;
  sched::JobId array_id = 0;
  int64_t array_task = 0;
  int64_t array_max_running = 0;
  // How it ends: its wait(2) status (0: COMPLETED, else FAILED), for afterok/afternotok.
  int32_t exit_status = 0;
  // Whose it is, for fair share (SimOptions::priority): its association is (account, user).
  std::string account;
  std::string user;

  // Whether anything but resources may keep it waiting.
  bool gated() const {
    return !dependency.empty() || begin > submit || release_at > submit ||
           (array_id != 0 && array_max_running > 0);
  }
};

// What happened to one job.
struct JobRecord {
  sched::JobId id = 0;
  Time submit = 0;
  Time start = -1;
  Time end = -1;
  int64_t run = 0;
  int64_t estimate = 0;
  int64_t cpus = 0;          // CPUs held
  int32_t gpus = 0;          // GPUs held
  int32_t nodes = 0;
  bool backfilled = false;
  int32_t account = -1;  // its top-level account in SimResult::shares, when fair share runs
  // Earliest start any reservation ever promised the job (kNever: never reserved).
  Time promised_start = sched::kNever;
  // Whether that promise was made to the first blocked job of its partition (Slurm's
  // "Resources" job) rather than to a lower-priority one.
  bool promised_as_head = false;

  // Where it ran (GPU jobs on nodes with a known topology; see docs/sim.md, "GPU
  // placement metrics").
  int32_t domains = 0;               // NVLink domains its GPUs span
  int32_t leaves = 0;                // leaf switches (blocks) its nodes span
  bool one_domain_possible = false;  // its GPUs fit in the cluster's largest domain
  bool multi_node = false;           // it asked for more than one node
  bool one_leaf_possible = false;    // multi-node, and fits under the largest leaf
  int8_t numa_local = -1;            // CPUs all in its GPUs' NUMA nodes: 1 yes, 0 no,
                                     // -1 not applicable (no GPUs, or too few free there)
  double slowdown = 1.0;             // run time factor of the communication model
  std::string node_list = {};        // with SimOptions::record_nodes: its nodes, a hostlist
};

// A sample of the cluster's state, taken at each event time.
struct Sample {
  Time time = 0;
  int64_t busy_cpus = 0;
  int64_t busy_gpus = 0;
  int64_t queued = 0;
  // Free GPUs in NVLink domains that are partly in use: capacity that a job needing a
  // whole domain cannot use (the fragmentation figure; docs/sim.md).
  int64_t stranded_gpus = 0;
};

struct SimResult {
  std::string policy;
  std::vector<JobRecord> jobs;  // in submission order (stable)
  std::vector<Sample> samples;  // at most one per distinct event time
  int64_t passes = 0;
  int64_t total_cpus = 0;
  int64_t total_gpus = 0;
  sched::PassStats totals;  // summed over all passes
  ShareHistory shares;      // with SimOptions::priority: the top-level accounts' usage
};

struct SimOptions {
  // Called now and then with the fraction of jobs finished (for progress bars).
  std::function<void(double)> progress;
  // Communication model for GPU jobs: the fraction of a multi-GPU job's run time spent
  // in collectives. A job placed across more NVLink domains than it needed runs that part
  // at half speed, and across more leaf switches than it needed at two thirds of that
  // again; the run is capped at the job's time limit. 0 turns the model off.
  double comm_fraction = 0;
  // Called as each job starts, with its record (start, run) and its allocation.
  std::function<void(const JobRecord&, const sched::Allocation&)> on_start;
  // Priorities recalculated as the controller does (multifactor, fair share), and usage
  // charged to each job's association; null: every job keeps its workload's priority.
  // Every job's (account, user) must be an association of the setup.
  const PrioritySetup* priority = nullptr;
  // Keep each job's node list in its record (JobRecord::node_list), for the accounting.
  bool record_nodes = false;
};

// Replays `jobs` (sorted by submit time, ties in input order) on `cluster` with `policy`.
// Fails if the policy ever over-allocates a node, gives a GPU or CPU to two jobs at once,
// starts a GPU job on a node of known topology without device ids, or starts a job before
// it was submitted, or if jobs remain that can never start.
StatusOr<SimResult> Simulate(const sched::Cluster& cluster, std::span<const SimJob> jobs,
                             sched::Policy& policy, const SimOptions& opts);

}  // namespace loom::sim
