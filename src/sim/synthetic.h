// Synthetic GPU workloads: a cluster of one catalog machine under a switch tree (DGX A100)
// or in NVLink blocks (GB200 NVL72), and GPU jobs whose sizes, run times and arrivals are
// calibrated to the Helios traces (docs/sim.md, "GPU traces"). The same options give the
// same workload on every platform: the random numbers come from std::mt19937_64 through
// the transformations below, not from std:: distributions. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "sim/gpu_workload.h"

namespace loom::sim {

struct SyntheticOptions {
  // "dgx": DGX A100 nodes (8 GPUs) under leaf switches and one spine.
  // "nvl72": GB200 NVL72 compute trays (4 GPUs) in NVLink blocks (racks) of 18 trays.
  std::string kind = "dgx";
  uint64_t seed = 1;
  int32_t nodes = 0;           // 0: the kind's default (dgx 128, nvl72 72)
  int32_t nodes_per_leaf = 0;  // nodes per leaf switch or block; 0: the kind's (8, 18)
  int32_t jobs = 20000;
  double load = 0.85;  // offered load: GPU-seconds asked per second / total GPUs
};

// Generates the workload. Errors for an unknown kind, non-positive sizes or load, and an
// nvl72 node count that is not a whole number of blocks.
StatusOr<GpuWorkload> SyntheticWorkload(const SyntheticOptions& opts);

// The run-time model, shared by every kind: log-normal with Helios's median and mean
// GPU-job run time (helios_cluster_summary.csv, "total"), capped at 7 days; sigma is the
// one that gives the capped distribution that mean.
inline constexpr double kSyntheticRunMedianS = 206;
inline constexpr double kSyntheticRunMeanS = 6651.681;
inline constexpr int64_t kSyntheticRunCapS = 7 * 86400;
inline constexpr double kSyntheticRunSigma = 2.793737744007464;

// The standard normal quantile (Wichura's algorithm AS 241, relative error below 1e-15),
// for 0 < p < 1. Exposed for tests.
double InverseNormalCdf(double p);

}  // namespace loom::sim
