// `loom sim` on GPU workloads (the Alibaba GPU trace, synthetic DGX or NVL72 clusters):
// runs each placement (first-fit, topo) under each policy on the same workload and reports
// the GPU placement metrics side by side.
#pragma once

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
  sim::PriorityStudy priority;  // --priority, --shares, --config
};

int RunGpuSim(const GpuSimArgs& args);

}  // namespace loom::cli
