#include "ctld/job_defaults.h"

namespace loom::ctld {

void ApplyMemoryDefault(const conf::ClusterConfig& cluster, const conf::PartitionConfig& partition,
                        model::JobRequest* request) {
  if (request->mem_per_node_mb || request->mem_per_cpu_mb || request->mem_per_gpu_mb) return;
  // A partition that sets either one decides; otherwise the cluster's settings do.
  const bool own = partition.def_mem_per_cpu_mb > 0 || partition.def_mem_per_node_mb > 0;
  const int64_t per_cpu = own ? partition.def_mem_per_cpu_mb : cluster.def_mem_per_cpu_mb;
  const int64_t per_node = own ? partition.def_mem_per_node_mb : cluster.def_mem_per_node_mb;
  if (per_cpu > 0) {
    request->mem_per_cpu_mb = per_cpu;
    request->shape.mem_per_cpu_mb = per_cpu;
  } else if (per_node > 0) {
    request->mem_per_node_mb = per_node;
    request->shape.mem_per_node_mb = per_node;
  }
}

}  // namespace loom::ctld
