// The inside of a GPU node as placement sees it: each GPU's NVLink/NVSwitch domain, PCIe
// switch, NUMA node and closest NIC, and the CPUs of each NUMA node. Built from gres.conf
// (Links=, Cores=), from Loom's topology matrix (the table `nvidia-smi topo -m` prints), or
// from the catalog of common machines below. Pure value; thread-compatible.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::model {

// A set of GPUs of one node: bit i is the GPU with index i (its place in
// CUDA_VISIBLE_DEVICES order). A node has at most 64 GPUs.
using GpuMask = uint64_t;
inline constexpr int kMaxGpusPerNode = 64;
inline int GpuCount(GpuMask m) { return std::popcount(m); }

struct Gpu {
  int32_t index = 0;        // 0-based, as CUDA_VISIBLE_DEVICES counts them
  std::string type;         // "a100", "h100"; empty when untyped
  std::string file;         // "/dev/nvidia0"; empty when unknown
  int32_t domain = 0;       // NVLink/NVSwitch domain inside the node; a GPU without NVLink
                            // peers is a domain of its own
  int32_t pcie_switch = 0;  // PCIe switch (or root port) the GPU sits under
  int32_t numa = 0;         // NUMA node the GPU is attached to
  int32_t nic = -1;         // closest NIC (sharing its PCIe switch), -1 when none
  friend bool operator==(const Gpu&, const Gpu&) = default;
};

struct NodeTopology {
  std::string name;                          // "dgx-a100", or where it was read from
  std::vector<Gpu> gpus;                     // by index: gpus[i].index == i
  std::vector<std::vector<int32_t>> numa_cpus;  // per NUMA node: its CPU ids, ascending
  int32_t sockets = 1;
  // The GPUs' NVLink fabric reaches beyond the node (GB200 NVL72 trays): the domain that
  // counts is the topology.conf block the node is in, not the node.
  bool nvlink_spans_nodes = false;
  friend bool operator==(const NodeTopology&, const NodeTopology&) = default;

  int32_t num_gpus() const { return static_cast<int32_t>(gpus.size()); }
  int32_t num_cpus() const {
    int32_t n = 0;
    for (const auto& c : numa_cpus) n += static_cast<int32_t>(c.size());
    return n;
  }
  int32_t num_numa() const { return static_cast<int32_t>(numa_cpus.size()); }
  GpuMask AllGpus() const {
    return gpus.size() >= 64 ? ~GpuMask{0} : ((GpuMask{1} << gpus.size()) - 1);
  }
  int32_t num_domains() const { return MaxOf(&Gpu::domain) + 1; }
  int32_t num_pcie_switches() const { return MaxOf(&Gpu::pcie_switch) + 1; }
  GpuMask DomainMask(int32_t d) const { return MaskWhere(&Gpu::domain, d); }
  GpuMask SwitchMask(int32_t s) const { return MaskWhere(&Gpu::pcie_switch, s); }
  GpuMask NumaMask(int32_t n) const { return MaskWhere(&Gpu::numa, n); }
  // NUMA node of each CPU id, -1 for an id no NUMA node lists.
  int32_t NumaOfCpu(int32_t cpu) const {
    for (size_t n = 0; n < numa_cpus.size(); ++n) {
      for (int32_t c : numa_cpus[n]) {
        if (c == cpu) return static_cast<int32_t>(n);
      }
    }
    return -1;
  }

 private:
  int32_t MaxOf(int32_t Gpu::*field) const {
    int32_t m = -1;
    for (const Gpu& g : gpus) m = g.*field > m ? g.*field : m;
    return m;
  }
  GpuMask MaskWhere(int32_t Gpu::*field, int32_t value) const {
    GpuMask m = 0;
    for (const Gpu& g : gpus) {
      if (g.*field == value) m |= GpuMask{1} << g.index;
    }
    return m;
  }
};

// The catalog of machines Loom ships descriptions of (examples/gpu-topology/ holds the
// same machines as topology matrices). Names: "dgx-a100", "dgx-h100", "pcie-8gpu-nvlink-pairs",
// "4gpu", "gb200-nvl72-tray". Returns nullptr for an unknown name.
const NodeTopology* CatalogTopology(std::string_view name);
std::vector<std::string_view> CatalogNames();

// A plain node: `gpus` GPUs of `type`, none linked by NVLink, one PCIe switch per GPU,
// spread evenly over `numa` NUMA nodes that split `cpus` CPUs in contiguous ranges.
NodeTopology PlainTopology(int32_t gpus, std::string_view type, int32_t cpus, int32_t numa);

}  // namespace loom::model
