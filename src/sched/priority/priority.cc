#include "sched/priority/priority.h"

#include <algorithm>
#include <numeric>

namespace loom::sched {

double AgeFactor(Time now, Time eligible_since, int64_t max_age_s) {
  if (max_age_s <= 0) return 1.0;
  double age = static_cast<double>(std::max<Time>(0, now - eligible_since));
  return std::min(1.0, age / static_cast<double>(max_age_s));
}

double JobSizeFactor(const PriorityInputs& in, const ClusterTotals& t, bool favor_small) {
  // The mean of the node and CPU shares of the cluster the job asks for, as Slurm 22.05
  // computes it (a 1,024-CPU job on one of 16 nodes: (1/16 + 1) / 2).
  double by_nodes = t.nodes > 0 ? static_cast<double>(in.nodes) / t.nodes : 0.0;
  double by_cpus = t.cpus > 0 ? static_cast<double>(in.cpus) / static_cast<double>(t.cpus) : 0;
  double size = std::clamp((by_nodes + by_cpus) / 2, 0.0, 1.0);
  return favor_small ? 1.0 - size : size;
}

double PartitionFactor(const PriorityInputs& in, const ClusterTotals& t) {
  if (t.max_partition_job_factor <= 0) return 0.0;
  return std::clamp(static_cast<double>(in.partition_job_factor) / t.max_partition_job_factor,
                    0.0, 1.0);
}

std::vector<std::pair<std::string, double>> TresFactors(const core::TresBillingWeights& weights,
                                                        const core::TresVector& requested,
                                                        const core::TresVector& total) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, weight] : weights.entries()) {
    const int64_t all = total.Get(name);
    const double f =
        all > 0 ? std::min(1.0, static_cast<double>(requested.Get(name)) / static_cast<double>(all))
                : 0.0;
    out.emplace_back(name, f);
  }
  return out;
}

int64_t MultifactorPriority(const MultifactorWeights& w, const PriorityInputs& in,
                            const ClusterTotals& totals, Time now) {
  double p = static_cast<double>(w.age) * AgeFactor(now, in.eligible_since, w.max_age_s) +
             static_cast<double>(w.fairshare) * std::clamp(in.fairshare_factor, 0.0, 1.0) +
             static_cast<double>(w.job_size) * JobSizeFactor(in, totals, w.favor_small) +
             static_cast<double>(w.partition) * PartitionFactor(in, totals) +
             static_cast<double>(w.qos) * std::clamp(in.qos_factor, 0.0, 1.0) +
             static_cast<double>(w.assoc) * std::clamp(in.assoc_factor, 0.0, 1.0);
  for (const auto& [name, f] : in.tres_factors) p += w.tres.WeightFor(name) * f;
  int64_t v = static_cast<int64_t>(p) - in.nice;
  return std::max<int64_t>(v, 1);  // Slurm keeps eligible jobs at priority >= 1
}

std::vector<int32_t> QueueOrder(const Cluster& cluster, std::span<const PendingJob> jobs) {
  std::vector<int32_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  auto tier = [&](const PendingJob& j) -> int {
    if (j.partition < 0 || j.partition >= static_cast<int32_t>(cluster.partitions.size())) {
      return 0;
    }
    return cluster.partitions[j.partition].priority_tier;
  };
  auto before = [&](int32_t a, int32_t b) {
    const PendingJob& x = jobs[a];
    const PendingJob& y = jobs[b];
    int tx = tier(x), ty = tier(y);
    if (tx != ty) return tx > ty;
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.submit != y.submit) return x.submit < y.submit;
    return x.id < y.id;
  };
  // Drivers usually keep the queue in order already; checking is cheaper than sorting.
  if (!std::is_sorted(order.begin(), order.end(), before)) {
    std::sort(order.begin(), order.end(), before);
  }
  return order;
}

}  // namespace loom::sched
