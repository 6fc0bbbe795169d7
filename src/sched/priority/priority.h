// Job priority: Slurm's priority/basic (submission order) and priority/multifactor (age,
// fair share, job size, partition and QOS factors, each in [0, 1], times its weight), and
// the queue order every policy walks. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/tres.h"
#include "sched/types.h"

namespace loom::sched {

struct MultifactorWeights {
  int64_t age = 0;
  int64_t assoc = 0;  // PriorityWeightAssoc
  int64_t fairshare = 0;
  int64_t job_size = 0;
  int64_t partition = 0;
  int64_t qos = 0;
  int64_t max_age_s = 7 * 86400;  // PriorityMaxAge
  bool favor_small = false;       // PriorityFavorSmall
  core::TresBillingWeights tres;  // PriorityWeightTRES: a weight per TRES
};

// Per-job inputs of the multifactor formula that do not come from the job's shape.
struct PriorityInputs {
  Time eligible_since = 0;         // age counts from here
  int32_t nodes = 1;               // requested nodes
  int64_t cpus = 1;                // requested CPUs
  int32_t partition_job_factor = 1;
  double qos_factor = 0.0;         // the QOS's priority / the highest QOS priority
  // Fair share arrives with accounting; until then a source may supply the factor.
  double fairshare_factor = 0.0;
  // The association's Priority over the highest of any association (PriorityWeightAssoc).
  double assoc_factor = 0.0;
  // PriorityWeightTRES: what the job asks for of each TRES, over its partition's total.
  std::vector<std::pair<std::string, double>> tres_factors;
  int64_t nice = 0;
};

struct ClusterTotals {
  int32_t nodes = 1;
  int64_t cpus = 1;
  int32_t max_partition_job_factor = 1;
};

double AgeFactor(Time now, Time eligible_since, int64_t max_age_s);
double JobSizeFactor(const PriorityInputs& in, const ClusterTotals& totals, bool favor_small);
double PartitionFactor(const PriorityInputs& in, const ClusterTotals& totals);
// For each TRES `weights` names, the job's `requested` count over the partition's `total`
// (at most 1; 0 where the partition has none).
std::vector<std::pair<std::string, double>> TresFactors(const core::TresBillingWeights& weights,
                                                        const core::TresVector& requested,
                                                        const core::TresVector& total);

// Slurm's priority/multifactor sum, truncated to an integer as Slurm does.
int64_t MultifactorPriority(const MultifactorWeights& w, const PriorityInputs& in,
                            const ClusterTotals& totals, Time now);

// The order a pass considers pending jobs in: partition PriorityTier (higher first), then
// priority (higher first), then submission time, then job id. Returns indices into `jobs`.
std::vector<int32_t> QueueOrder(const Cluster& cluster, std::span<const PendingJob> jobs);

}  // namespace loom::sched
