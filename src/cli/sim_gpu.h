// `loom sim` on GPU workloads (the Alibaba GPU trace, synthetic DGX or NVL72 clusters):
// runs each placement (first-fit, topo) under each policy on the same workload and reports
// the GPU placement metrics side by side.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/study.h"

namespace loom::cli {

struct GpuSimArgs {
  std::string trace;        // Alibaba trace directory or pod CSV; empty with synthetic
  std::string synthetic;    // "dgx", "nvl72"; empty with trace
  uint64_t seed = 1;
  int32_t synthetic_jobs = 0;   // 0: the generator's default
  int32_t synthetic_nodes = 0;
  double load = 0;              // 0: the generator's default
  std::vector<std::string> policies;
  std::vector<std::string> placements;  // "first-fit", "topo"
  sim::PolicyOptions popts;
  double comm_fraction = 0.3;
  double arrival_scale = 1.0;   // submit times pulled toward the first by this factor
  bool json = false;
  std::string jobs_out;
  std::string plot_dir;         // --plot
  std::string accounting_out;   // --accounting-out
  sim::MaintenanceSpec maint;   // --maint
  std::optional<int64_t> accounting_start;  // --accounting-start
  sim::PriorityStudy priority;  // --priority, --shares, --config
};

int RunGpuSim(const GpuSimArgs& args);

// --accounting-out: every run's job records into `path`, one cluster per run (named after
// it), with simulated time 0 at `epoch`. Fails naming the file when it cannot be written.
Status WriteSimAccounting(const std::string& path, const sched::Cluster& cluster,
                          std::span<const sim::SimJob> jobs,
                          const std::vector<sim::SimResult>& results, int64_t epoch);

}  // namespace loom::cli
