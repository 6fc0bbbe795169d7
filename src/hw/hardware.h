// What a node really has, found at run time: CPUs, cores, sockets and NUMA nodes through
// hwloc; GPUs through NVML, loaded with dlopen when present (never linked, so loomd runs on
// nodes without the NVIDIA driver). Turned into the node topology placement uses and into
// what the node reports when it registers (see model::CapacityShortfall).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/binding.h"
#include "model/gpu_topology.h"

namespace loom::hw {

struct CpuLayout {
  int32_t sockets = 0;
  int32_t cores_per_socket = 0;
  int32_t threads_per_core = 0;
  int32_t cpus = 0;                               // logical CPUs (PUs)
  std::vector<std::vector<int32_t>> numa_cpus;    // per NUMA node (by OS index order): CPU ids
  int64_t memory_mb = 0;                          // total RAM
  // Each core's socket and hardware threads (OS ids), socket by socket: what task binding
  // deals CPUs by (model::BindTasks).
  std::vector<model::CpuCore> cores;
};

// The node's CPUs for task binding: `cpus.cores`, with each CPU's NUMA node from
// `cpus.numa_cpus`. Errors (ValidateCpuTopology's) when the two disagree.
StatusOr<model::CpuTopology> CpuTopologyOf(const CpuLayout& cpus);

// This machine's CPUs and memory, through hwloc.
StatusOr<CpuLayout> DiscoverCpus();

struct GpuInfo {
  int32_t index = 0;          // NVML's index (CUDA_VISIBLE_DEVICES order with the default order)
  std::string name;           // "NVIDIA H100 80GB HBM3"
  std::string uuid;           // "GPU-..."
  int64_t memory_mb = 0;
  std::string pci_bus_id;     // as the kernel names it: "0000:3b:00.0"
  int32_t minor = -1;         // /dev/nvidia<minor>
  int32_t numa = -1;          // NUMA node the GPU hangs off, -1 when unknown
  std::vector<std::string> nvlink_peers;  // PCI bus ids at the far end of active NVLinks
  std::vector<int32_t> pcie_close;        // indices of GPUs under the same PCIe switch
};

// The GPUs NVML reports. NotFound when `library` cannot be loaded (no driver: a node without
// GPUs, or an emulated one); other errors name the NVML call that failed.
StatusOr<std::vector<GpuInfo>> DiscoverGpus(const std::string& library = "libnvidia-ml.so.1");

// The NUMA node sysfs gives a PCI device ("0000:3b:00.0"), -1 when unknown. `sysfs` is the
// root to read under (tests use a fake tree).
int32_t NumaOfPciDevice(std::string_view bus_id, const std::string& sysfs = "/sys");

// The inside of the node as placement sees it: GPUs joined by NVLink (directly, or through
// NVSwitches: links whose far end is not a GPU) form a domain; GPUs under one PCIe switch
// share a switch id; each GPU's NUMA node; the CPUs of each NUMA node.
model::NodeTopology TopologyFromHardware(const std::vector<GpuInfo>& gpus, const CpuLayout& cpus,
                                         std::string_view gpu_type);

// Slurm's GPU type for an NVML name: lower case, spaces as underscores
// ("NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3").
std::string GpuTypeFromName(std::string_view name);

// `slurmd -C`: the node's line for slurm.conf, then its uptime line.
//   NodeName=n1 CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:h100:8
//   UpTime=3-04:05:06
std::string NodeConfigLine(std::string_view node, const CpuLayout& cpus,
                           const std::vector<GpuInfo>& gpus, int64_t uptime_s);

}  // namespace loom::hw
