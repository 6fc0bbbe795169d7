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
#include "sched/backfill/policy.h"
#include "sched/types.h"

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
  // Earliest start any reservation ever promised the job (kNever: never reserved).
  Time promised_start = sched::kNever;
  // Whether that promise was made to the first blocked job of its partition (Slurm's
  // "Resources" job) rather than to a lower-priority one.
  bool promised_as_head = false;
};

// A sample of the cluster's state, taken at each event time.
struct Sample {
  Time time = 0;
  int64_t busy_cpus = 0;
  int64_t busy_gpus = 0;
  int64_t queued = 0;
};

struct SimResult {
  std::string policy;
  std::vector<JobRecord> jobs;  // in submission order (stable)
  std::vector<Sample> samples;  // at most one per distinct event time
  int64_t passes = 0;
  int64_t total_cpus = 0;
  int64_t total_gpus = 0;
  sched::PassStats totals;  // summed over all passes
};

struct SimOptions {
  // Called now and then with the fraction of jobs finished (for progress bars).
  std::function<void(double)> progress;
};

// Replays `jobs` (sorted by submit time, ties in input order) on `cluster` with `policy`.
// Fails if the policy ever over-allocates a node or starts a job before it was submitted,
// or if jobs remain that can never start.
StatusOr<SimResult> Simulate(const sched::Cluster& cluster, std::span<const SimJob> jobs,
                             sched::Policy& policy, const SimOptions& opts);

}  // namespace loom::sim
