// Device choice inside one node: which GPUs (by NVLink domain, PCIe switch and NUMA node)
// and which CPUs (near those GPUs) a job's share of the node gets. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "core/cpu_set.h"
#include "model/gpu_topology.h"
#include "sched/types.h"

namespace loom::sched {

// How good a set of GPUs is; lower compares better (lexicographic).
struct GpuPickScore {
  int32_t domains = 0;       // NVLink domains touched
  int32_t switches = 0;      // PCIe switches touched
  int32_t numa = 0;          // NUMA nodes touched
  int32_t domain_left = 0;   // GPUs left free in the touched domains (best fit: fewer)
  int32_t switch_left = 0;   // GPUs left free in the touched PCIe switches
  friend auto operator<=>(const GpuPickScore&, const GpuPickScore&) = default;
};

GpuPickScore ScoreGpus(const model::NodeTopology& topo, model::GpuMask free, model::GpuMask pick);

// `count` GPUs out of `free`. kTopology: the set with the best score (ties: lowest
// indices), searched exhaustively when few GPUs are free and greedily by domain, then
// switch, otherwise. kFirstFit: the lowest indices. nullopt when fewer are free.
std::optional<model::GpuMask> PickGpus(const model::NodeTopology& topo, model::GpuMask free,
                                       int32_t count, Placement how);

// `count` CPUs out of `free`. kTopology: first from the NUMA nodes of `gpus` (or, without
// GPUs, the NUMA node that fits them most tightly), then from the others in order.
// kFirstFit: the lowest ids. nullopt when fewer are free.
std::optional<core::CpuSet> PickCpus(const model::NodeTopology& topo, const core::CpuSet& free,
                                     model::GpuMask gpus, int32_t count, Placement how);

// The NVLink domains an allocation's GPUs span across the cluster: a domain is a node's
// own domain, or the node's topology.conf block when the node's NVLink reaches beyond
// it (GB200 NVL72). Allocations without device ids count one domain per node with GPUs.
int32_t DomainsSpanned(const Cluster& cluster, const Allocation& alloc);
// The leaf switches (or blocks) an allocation's nodes sit under; nodes topology.conf
// does not name count one each. 1 for a single node.
int32_t LeavesSpanned(const Cluster& cluster, const Allocation& alloc);

}  // namespace loom::sched
