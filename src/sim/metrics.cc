#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace loom::sim {

double BoundedSlowdown(const JobRecord& r) {
  double flow = static_cast<double>(r.start - r.submit + r.run);
  return std::max(1.0, flow / std::max<double>(10.0, static_cast<double>(r.run)));
}

double Percentile(const std::vector<double>& sorted, double p) {
  size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}

double Median(const std::vector<double>& sorted) {
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

Summary Summarize(const SimResult& result) {
  Summary s;
  s.policy = result.policy;
  s.passes = result.passes;
  s.reservations = result.totals.reservations;
  const auto& jobs = result.jobs;
  s.jobs = static_cast<int64_t>(jobs.size());
  if (jobs.empty()) return s;
  std::vector<double> waits;
  waits.reserve(jobs.size());
  double sum_wait = 0, sum_flow = 0, sum_bsld = 0, area = 0;
  Time first_submit = jobs.front().submit, last_end = 0;
  for (const JobRecord& r : jobs) {
    double wait = static_cast<double>(r.start - r.submit);
    waits.push_back(wait);
    sum_wait += wait;
    sum_flow += wait + static_cast<double>(r.run);
    double b = BoundedSlowdown(r);
    sum_bsld += b;
    s.max_bounded_slowdown = std::max(s.max_bounded_slowdown, b);
    area += static_cast<double>(r.run) * static_cast<double>(r.cpus);
    first_submit = std::min(first_submit, r.submit);
    last_end = std::max(last_end, r.start + r.run);
    s.backfilled += r.backfilled;
  }
  double n = static_cast<double>(jobs.size());
  std::sort(waits.begin(), waits.end());
  s.makespan_s = last_end - first_submit;
  s.utilization = s.makespan_s > 0 && result.total_cpus > 0
                      ? area / (static_cast<double>(s.makespan_s) *
                                static_cast<double>(result.total_cpus))
                      : 0.0;
  s.mean_wait_s = sum_wait / n;
  s.median_wait_s = Median(waits);
  s.p95_wait_s = Percentile(waits, 95);
  s.max_wait_s = waits.back();
  s.mean_flow_time_s = sum_flow / n;
  s.mean_bounded_slowdown = sum_bsld / n;
  return s;
}

}  // namespace loom::sim
