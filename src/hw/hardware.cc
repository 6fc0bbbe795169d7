#include "hw/hardware.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>

#include "core/strings.h"

namespace loom::hw {

using core::StrCat;

StatusOr<model::CpuTopology> CpuTopologyOf(const CpuLayout& cpus) {
  model::CpuTopology t;
  t.cores = cpus.cores;
  int32_t max_cpu = -1;
  for (const model::CpuCore& c : t.cores) {
    for (int32_t id : c.threads) max_cpu = std::max(max_cpu, id);
  }
  t.cpu_numa.assign(static_cast<size_t>(max_cpu + 1), -1);
  for (size_t n = 0; n < cpus.numa_cpus.size(); ++n) {
    for (int32_t id : cpus.numa_cpus[n]) {
      if (id >= 0 && id <= max_cpu) t.cpu_numa[id] = static_cast<int32_t>(n);
    }
  }
  RETURN_IF_ERROR(model::ValidateCpuTopology(t));
  return t;
}

int32_t NumaOfPciDevice(std::string_view bus_id, const std::string& sysfs) {
  std::ifstream in(StrCat(sysfs, "/bus/pci/devices/", bus_id, "/numa_node"));
  int32_t numa = -1;
  if (!(in >> numa)) return -1;
  return numa;  // the kernel writes -1 on machines without NUMA information
}

model::NodeTopology TopologyFromHardware(const std::vector<GpuInfo>& gpus, const CpuLayout& cpus,
                                         std::string_view gpu_type) {
  model::NodeTopology t;
  t.name = "discovered";
  t.sockets = cpus.sockets;
  t.numa_cpus = cpus.numa_cpus;
  const int32_t n = static_cast<int32_t>(gpus.size());
  std::map<std::string, int32_t> gpu_of_bus;
  for (const GpuInfo& g : gpus) gpu_of_bus[g.pci_bus_id] = g.index;
  // Union-find over NVLink: direct GPU-GPU links, and all GPUs that reach NVSwitches.
  std::vector<int32_t> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto join = [&](int32_t a, int32_t b) { parent[find(a)] = find(b); };
  int32_t first_on_switch = -1;
  for (const GpuInfo& g : gpus) {
    for (const std::string& peer : g.nvlink_peers) {
      auto it = gpu_of_bus.find(peer);
      if (it != gpu_of_bus.end()) {
        join(g.index, it->second);
      } else if (first_on_switch < 0) {
        first_on_switch = g.index;  // the far end is an NVSwitch
      } else {
        join(g.index, first_on_switch);
      }
    }
  }
  // Same for PCIe switches.
  std::vector<int32_t> pcie(static_cast<size_t>(n));
  std::iota(pcie.begin(), pcie.end(), 0);
  auto find_pcie = [&](int32_t x) {
    while (pcie[x] != x) x = pcie[x] = pcie[pcie[x]];
    return x;
  };
  for (const GpuInfo& g : gpus) {
    for (int32_t other : g.pcie_close) {
      if (other >= 0 && other < n) pcie[find_pcie(g.index)] = find_pcie(other);
    }
  }
  // Dense ids in GPU order.
  std::map<int32_t, int32_t> domain_id, switch_id;
  for (int32_t i = 0; i < n; ++i) {
    const GpuInfo& g = gpus[i];
    model::Gpu m;
    m.index = i;
    m.type = std::string(gpu_type);
    m.file = g.minor >= 0 ? StrCat("/dev/nvidia", g.minor) : "";
    m.domain = domain_id.try_emplace(find(i), static_cast<int32_t>(domain_id.size())).first->second;
    m.pcie_switch =
        switch_id.try_emplace(find_pcie(i), static_cast<int32_t>(switch_id.size())).first->second;
    m.numa = g.numa >= 0 && g.numa < static_cast<int32_t>(cpus.numa_cpus.size()) ? g.numa : 0;
    t.gpus.push_back(m);
  }
  return t;
}

std::string GpuTypeFromName(std::string_view name) {
  std::string out;
  for (char c : core::Trim(name)) {
    out.push_back(c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

std::string NodeConfigLine(std::string_view node, const CpuLayout& cpus,
                           const std::vector<GpuInfo>& gpus, int64_t uptime_s) {
  std::string line = StrCat("NodeName=", node, " CPUs=", cpus.cpus, " Boards=1 SocketsPerBoard=",
                            cpus.sockets, " CoresPerSocket=", cpus.cores_per_socket,
                            " ThreadsPerCore=", cpus.threads_per_core, " RealMemory=", cpus.memory_mb);
  // GPUs by type, in the order NVML lists them.
  std::vector<std::pair<std::string, int>> types;
  for (const GpuInfo& g : gpus) {
    const std::string t = GpuTypeFromName(g.name);
    auto it = std::find_if(types.begin(), types.end(), [&](const auto& p) { return p.first == t; });
    if (it == types.end()) types.emplace_back(t, 1); else ++it->second;
  }
  for (size_t i = 0; i < types.size(); ++i) {
    line += StrCat(i == 0 ? " Gres=" : ",", "gpu:", types[i].first, ":", types[i].second);
  }
  const int64_t d = uptime_s / 86400, h = uptime_s / 3600 % 24, m = uptime_s / 60 % 60, s = uptime_s % 60;
  char up[48];
  std::snprintf(up, sizeof up, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(d),
                static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(s));
  return StrCat(line, "\nUpTime=", up, "\n");
}

}  // namespace loom::hw
