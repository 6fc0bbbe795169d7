// DiscoverCpus through hwloc: the one part of the hardware discovery that links a library,
// kept apart so that what only describes a node (loom-stepd's binding) does not load it.
#include <hwloc.h>

#include <algorithm>
#include <numeric>

#include "hw/hardware.h"

namespace loom::hw {

StatusOr<CpuLayout> DiscoverCpus() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return absl::InternalError("hwloc_topology_init failed");
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return absl::InternalError("hwloc_topology_load failed");
  }
  CpuLayout l;
  const int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  l.sockets = std::max(1, packages);
  l.cpus = std::max(1, pus);
  const int all_cores = std::max(1, cores);
  l.cores_per_socket = std::max(1, all_cores / l.sockets);
  l.threads_per_core = std::max(1, l.cpus / all_cores);
  const int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int n = 0; n < numa; ++n) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
    std::vector<int32_t> cpus;
    for (int i = hwloc_bitmap_first(node->cpuset); i >= 0;
         i = hwloc_bitmap_next(node->cpuset, i)) {
      cpus.push_back(i);
    }
    l.numa_cpus.push_back(std::move(cpus));
  }
  // Cores in hwloc's logical order, which goes socket by socket; a core outside any package
  // (some virtual machines) counts as socket 0.
  for (int c = 0; c < cores; ++c) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
    model::CpuCore cc;
    hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, core);
    cc.socket = package != nullptr ? static_cast<int32_t>(package->logical_index) : 0;
    for (int i = hwloc_bitmap_first(core->cpuset); i >= 0;
         i = hwloc_bitmap_next(core->cpuset, i)) {
      cc.threads.push_back(i);
    }
    if (!cc.threads.empty()) l.cores.push_back(std::move(cc));
  }
  std::stable_sort(l.cores.begin(), l.cores.end(),
                   [](const model::CpuCore& a, const model::CpuCore& b) { return a.socket < b.socket; });
  if (l.numa_cpus.empty()) {
    std::vector<int32_t> all(static_cast<size_t>(l.cpus));
    std::iota(all.begin(), all.end(), 0);
    l.numa_cpus.push_back(std::move(all));
  }
  l.memory_mb = static_cast<int64_t>(hwloc_get_root_obj(topo)->total_memory >> 20);
  hwloc_topology_destroy(topo);
  return l;
}

}  // namespace loom::hw
