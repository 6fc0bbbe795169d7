// Summary metrics of a simulation, as the published backfilling studies define them
// (SIM-CONVENTIONS.md, "Metrics"): over all jobs, no warm-up cut; wait = start - submit;
// flow = wait + run; bounded slowdown = max(1, flow / max(10 s, run)); utilization =
// sum(run * cpus) / (makespan * machine cpus), makespan = max(start + run) - min(submit).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace loom::sim {

struct Summary {
  std::string policy;
  int64_t jobs = 0;
  int64_t makespan_s = 0;
  double utilization = 0;
  double mean_wait_s = 0;
  double median_wait_s = 0;
  double p95_wait_s = 0;
  double max_wait_s = 0;
  double mean_flow_time_s = 0;
  double mean_bounded_slowdown = 0;
  double max_bounded_slowdown = 0;
  int64_t backfilled = 0;
  int64_t passes = 0;        // scheduling passes run
  int64_t reservations = 0;  // reservations made over all passes
};

double BoundedSlowdown(const JobRecord& r);
// Percentile by nearest rank (the smallest value with at least p% of values at or below
// it); `sorted` must be ascending and non-empty.
double Percentile(const std::vector<double>& sorted, double p);
// Median: the middle value, or the mean of the two middle values.
double Median(const std::vector<double>& sorted);

Summary Summarize(const SimResult& result);

// GPU placement metrics (docs/sim.md, "GPU placement metrics"). Fractions whose
// denominator is empty are NaN (reported as null).
struct GpuSummary {
  std::string policy;
  std::string placement;
  int64_t jobs = 0;
  int64_t gpu_jobs = 0;
  double gpu_allocation_rate = 0;     // allocated GPUs / all GPUs, time-averaged while jobs arrive
  double single_domain_fraction = 0;  // of GPU jobs that fit one NVLink domain: placed in one
  int64_t single_domain_jobs = 0;     // its denominator
  double leaf_local_fraction = 0;     // of multi-node jobs that fit under one leaf: under one
  int64_t leaf_local_jobs = 0;        // its denominator
  double numa_local_fraction = 0;     // of GPU jobs with enough free CPUs near their GPUs: CPUs there
  double fragmentation = 0;           // idle GPU time in partly used domains / all idle GPU time
  double mean_jct_s = 0;              // completion - submission
  double mean_queue_s = 0;
  double median_queue_s = 0;
  double p95_queue_s = 0;
  double mean_comm_slowdown = 1;      // run time factor of the communication model, GPU jobs
  int64_t makespan_s = 0;
};

GpuSummary SummarizeGpu(const SimResult& result, const std::string& placement);

// Fair share over a run (docs/sim.md, "Fair share"), from SimResult::shares.
struct AccountFairness {
  std::string account;
  double share = 0;        // configured, normalised among the top-level accounts
  double usage_share = 0;  // its part of all decayed usage, averaged over the samples
  int64_t jobs = 0;
  double mean_wait_s = 0;  // NaN without jobs
};

struct Fairness {
  std::string policy;
  double jain_index = 0;  // MeanJainIndex; NaN when never two accounts waited at once
  std::vector<AccountFairness> accounts;  // SimResult::shares's order
};

Fairness SummarizeFairness(const SimResult& result);

}  // namespace loom::sim
