#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

GpuSummary SummarizeGpu(const SimResult& result, const std::string& placement) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  GpuSummary g;
  g.policy = result.policy;
  g.placement = placement;
  const auto& jobs = result.jobs;
  g.jobs = static_cast<int64_t>(jobs.size());
  if (jobs.empty()) return g;
  std::vector<double> queue;
  queue.reserve(jobs.size());
  double sum_jct = 0, sum_queue = 0, sum_slowdown = 0;
  int64_t one_domain = 0, one_leaf = 0, numa_jobs = 0, numa_local = 0;
  Time first_submit = jobs.front().submit, last_end = 0;
  for (const JobRecord& r : jobs) {
    const double q = static_cast<double>(r.start - r.submit);
    queue.push_back(q);
    sum_queue += q;
    sum_jct += q + static_cast<double>(r.run);
    first_submit = std::min(first_submit, r.submit);
    last_end = std::max(last_end, r.start + r.run);
    if (r.gpus > 0) {
      ++g.gpu_jobs;
      sum_slowdown += r.slowdown;
    }
    if (r.gpus > 0 && r.one_domain_possible) {
      ++g.single_domain_jobs;
      one_domain += r.domains == 1;
    }
    if (r.one_leaf_possible) {
      ++g.leaf_local_jobs;
      one_leaf += r.leaves == 1;
    }
    if (r.numa_local >= 0) {
      ++numa_jobs;
      numa_local += r.numa_local;
    }
  }
  const double n = static_cast<double>(jobs.size());
  std::sort(queue.begin(), queue.end());
  g.makespan_s = last_end - first_submit;
  // Allocated GPUs, time-averaged while jobs arrive (from the first submission to the
  // last): the sustained allocation, without the drain at the end.
  Time last_submit = first_submit;
  for (const JobRecord& r : jobs) last_submit = std::max(last_submit, r.submit);
  {
    double busy = 0;
    const auto& samples = result.samples;
    for (size_t i = 0; i + 1 < samples.size(); ++i) {
      const Time a = std::max(samples[i].time, first_submit);
      const Time b = std::min(samples[i + 1].time, last_submit);
      if (b > a) busy += static_cast<double>(b - a) * static_cast<double>(samples[i].busy_gpus);
    }
    const double window = static_cast<double>(last_submit - first_submit);
    g.gpu_allocation_rate = window > 0 && result.total_gpus > 0
                                ? busy / (window * static_cast<double>(result.total_gpus))
                                : 0.0;
  }
  auto fraction = [&](int64_t num, int64_t den) {
    return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : kNaN;
  };
  g.single_domain_fraction = fraction(one_domain, g.single_domain_jobs);
  g.leaf_local_fraction = fraction(one_leaf, g.leaf_local_jobs);
  g.numa_local_fraction = fraction(numa_local, numa_jobs);
  g.mean_jct_s = sum_jct / n;
  g.mean_queue_s = sum_queue / n;
  g.median_queue_s = Median(queue);
  g.p95_queue_s = Percentile(queue, 95);
  g.mean_comm_slowdown = g.gpu_jobs > 0 ? sum_slowdown / static_cast<double>(g.gpu_jobs) : 1.0;
  // Idle GPU time, and the part of it in partly used domains, between samples.
  double idle = 0, stranded = 0;
  const auto& samples = result.samples;
  for (size_t i = 0; i + 1 < samples.size(); ++i) {
    const double dt = static_cast<double>(samples[i + 1].time - samples[i].time);
    idle += dt * static_cast<double>(result.total_gpus - samples[i].busy_gpus);
    stranded += dt * static_cast<double>(samples[i].stranded_gpus);
  }
  g.fragmentation = idle > 0 ? stranded / idle : 0.0;
  return g;
}

Fairness SummarizeFairness(const SimResult& result) {
  const ShareHistory& h = result.shares;
  Fairness f;
  f.policy = result.policy;
  f.jain_index = MeanJainIndex(h);
  f.accounts.resize(h.accounts.size());
  std::vector<double> waits(h.accounts.size(), 0);
  for (size_t a = 0; a < h.accounts.size(); ++a) {
    f.accounts[a].account = h.accounts[a];
    f.accounts[a].share = h.shares[a];
  }
  for (const JobRecord& r : result.jobs) {
    if (r.account < 0 || static_cast<size_t>(r.account) >= f.accounts.size()) continue;
    ++f.accounts[r.account].jobs;
    waits[r.account] += static_cast<double>(r.start - r.submit);
  }
  int64_t samples = 0;
  for (const ShareSample& s : h.samples) {
    double total = 0;
    for (double u : s.usage) total += u;
    if (total <= 0) continue;
    ++samples;
    for (size_t a = 0; a < s.usage.size(); ++a) f.accounts[a].usage_share += s.usage[a] / total;
  }
  for (size_t a = 0; a < f.accounts.size(); ++a) {
    AccountFairness& row = f.accounts[a];
    if (samples > 0) row.usage_share /= static_cast<double>(samples);
    row.mean_wait_s = row.jobs > 0 ? waits[a] / static_cast<double>(row.jobs)
                                   : std::numeric_limits<double>::quiet_NaN();
  }
  return f;
}

}  // namespace loom::sim
