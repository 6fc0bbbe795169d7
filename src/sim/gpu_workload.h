// GPU workloads for the simulator: a cluster of GPU nodes (with their inside topology,
// partitions and switch tree) and the jobs to replay on it. This file reads the Alibaba
// "openb" GPU trace (cluster-trace-gpu-v2023); synthetic.h generates workloads. The rules
// that turn a trace into nodes and jobs are in docs/sim.md, "GPU traces". Pure functions
// apart from reading files; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "model/association.h"
#include "sched/types.h"
#include "sim/simulator.h"

namespace loom::sim {

// A GPU workload ready to simulate: the cluster (nodes with topology, partitions, switch
// tree) and the jobs (sorted by submit time, ties in input order).
struct GpuWorkload {
  std::string name;  // "alibaba-gpu-v2023/openb_pod_list_default", "synthetic-dgx-seed1"
  sched::Cluster cluster;
  std::vector<SimJob> jobs;
  // What was assumed or dropped on the way, one sentence each, for the report
  // ("3,078 fractional-GPU tasks given one whole GPU").
  std::vector<std::string> notes;
  // The accounts the jobs are charged to, with their shares, when the workload knows them
  // (the synthetic workloads' virtual clusters); fair share uses them unless told otherwise.
  model::AssociationTable accounts;
};

// Reads the Alibaba openb trace. `path` is the trace directory (its
// openb_pod_list_default.csv is read) or one of its openb_pod_list_*.csv files; the nodes
// come from openb_node_list_gpu_node.csv in the same directory. Errors name the file and,
// for a bad row, its line. A pod list without times (openb_pod_list_multigpu50.csv) is an
// error: it cannot be replayed.
StatusOr<GpuWorkload> ReadAlibabaGpuTrace(const std::string& path);

}  // namespace loom::sim
