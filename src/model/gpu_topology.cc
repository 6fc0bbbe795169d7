#include "model/gpu_topology.h"

#include <algorithm>
#include <array>

namespace loom::model {
namespace {

// CPU ids lo..hi (inclusive) followed by lo2..hi2: the two halves of a NUMA node's threads.
std::vector<int32_t> Cpus(int32_t lo, int32_t hi, int32_t lo2 = 0, int32_t hi2 = -1) {
  std::vector<int32_t> v;
  for (int32_t c = lo; c <= hi; ++c) v.push_back(c);
  for (int32_t c = lo2; c <= hi2; ++c) v.push_back(c);
  return v;
}

struct GpuLayout {
  int32_t domain, pcie_switch, numa, nic;
};

NodeTopology Build(std::string_view name, std::string_view type, int32_t sockets,
                   std::vector<std::vector<int32_t>> numa_cpus,
                   const std::vector<GpuLayout>& layout) {
  NodeTopology t;
  t.name = std::string(name);
  t.sockets = sockets;
  t.numa_cpus = std::move(numa_cpus);
  for (size_t i = 0; i < layout.size(); ++i) {
    const GpuLayout& l = layout[i];
    t.gpus.push_back(Gpu{static_cast<int32_t>(i), std::string(type),
                         "/dev/nvidia" + std::to_string(i), l.domain, l.pcie_switch, l.numa,
                         l.nic});
  }
  return t;
}

// An HGX baseboard: 8 GPUs on one NVSwitch fabric, two per PCIe switch (with the NIC of
// that switch), four per CPU socket.
std::vector<GpuLayout> Hgx8() {
  std::vector<GpuLayout> l;
  for (int32_t i = 0; i < 8; ++i) l.push_back({0, i / 2, i / 4, i / 2});
  return l;
}

std::vector<NodeTopology> MakeCatalog() {
  std::vector<NodeTopology> c;
  c.push_back(Build("dgx-a100", "a100", 2, {Cpus(0, 63, 128, 191), Cpus(64, 127, 192, 255)},
                    Hgx8()));
  c.push_back(Build("dgx-h100", "h100", 2, {Cpus(0, 55, 112, 167), Cpus(56, 111, 168, 223)},
                    Hgx8()));
  {
    // Eight PCIe cards with NVLink bridges joining neighbours in pairs; four cards behind
    // each socket's PCIe switch.
    std::vector<GpuLayout> l;
    for (int32_t i = 0; i < 8; ++i) l.push_back({i / 2, i / 4, i / 4, -1});
    c.push_back(Build("pcie-8gpu-nvlink-pairs", "a6000", 2, {Cpus(0, 31), Cpus(32, 63)}, l));
  }
  {
    std::vector<GpuLayout> l;
    for (int32_t i = 0; i < 4; ++i) l.push_back({0, i / 2, 0, i / 2});
    c.push_back(Build("4gpu", "a100", 1, {Cpus(0, 63)}, l));
  }
  {
    // One compute tray of a GB200 NVL72 rack: two Grace CPUs, two Blackwell GPUs on each;
    // the NVLink fabric spans the whole rack.
    std::vector<GpuLayout> l;
    for (int32_t i = 0; i < 4; ++i) l.push_back({0, i, i / 2, -1});
    NodeTopology t = Build("gb200-nvl72-tray", "gb200", 2, {Cpus(0, 71), Cpus(72, 143)}, l);
    t.nvlink_spans_nodes = true;
    c.push_back(std::move(t));
  }
  return c;
}

const std::vector<NodeTopology>& Catalog() {
  static const std::vector<NodeTopology>* catalog = new std::vector<NodeTopology>(MakeCatalog());
  return *catalog;
}

}  // namespace

const NodeTopology* CatalogTopology(std::string_view name) {
  for (const NodeTopology& t : Catalog()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::vector<std::string_view> CatalogNames() {
  std::vector<std::string_view> names;
  for (const NodeTopology& t : Catalog()) names.push_back(t.name);
  return names;
}

NodeTopology PlainTopology(int32_t gpus, std::string_view type, int32_t cpus, int32_t numa) {
  numa = std::max(1, numa);
  NodeTopology t;
  t.name = "plain";
  t.sockets = numa;
  t.numa_cpus.resize(numa);
  for (int32_t c = 0; c < cpus; ++c) t.numa_cpus[static_cast<size_t>(c) * numa / cpus].push_back(c);
  for (int32_t i = 0; i < gpus; ++i) {
    t.gpus.push_back(Gpu{i, std::string(type), "/dev/nvidia" + std::to_string(i), i, i,
                         static_cast<int32_t>(static_cast<int64_t>(i) * numa / gpus), -1});
  }
  return t;
}

}  // namespace loom::model
