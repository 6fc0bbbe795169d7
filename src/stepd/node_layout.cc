#include "stepd/node_layout.h"

#include <algorithm>

#include "core/strings.h"

namespace loom::stepd {

model::BindNode NodeLayout(const conf::SiteConfig& site, const conf::NodeConfig& node,
                           const std::optional<hw::CpuLayout>& hardware) {
  model::BindNode out;
  out.name = node.name;
  std::shared_ptr<const model::NodeTopology> topology;
  for (size_t i = 0; i < site.cluster.nodes.size() && i < site.node_topologies.size(); ++i) {
    if (site.cluster.nodes[i].name == node.name) topology = site.node_topologies[i];
  }
  const int32_t gpus = static_cast<int32_t>(node.GpuCount());
  if (!topology && gpus > 0 && gpus <= model::kMaxGpusPerNode) {
    const auto by_type = node.GpusByType();
    topology = std::make_shared<const model::NodeTopology>(model::PlainTopology(
        gpus, by_type.empty() ? "" : by_type.front().first, node.cpus, std::max(1, node.sockets)));
  }
  if (topology) out.gpus = topology->gpus;

  if (hardware && !site.cluster.ConfigOverrides() && hardware->cpus == node.cpus &&
      !hardware->cores.empty()) {
    if (auto found = hw::CpuTopologyOf(*hardware); found.ok()) {
      out.cpus = *std::move(found);
      return out;
    }
  }
  if (topology) {
    if (auto t = model::CpuTopologyFor(*topology, node.sockets, node.cores_per_socket,
                                       node.threads_per_core);
        t.ok()) {
      out.cpus = *std::move(t);
      return out;
    }
  }
  if (node.sockets * node.cores_per_socket * node.threads_per_core == node.cpus) {
    out.cpus = model::CpuTopology::Uniform(node.sockets, node.cores_per_socket,
                                           node.threads_per_core);
  }
  // Else (CPUs= alone disagreeing with the socket layout): no layout, nothing is bound.
  return out;
}

void ApplyTaskPlugin(const conf::ClusterConfig& config, NodeSettings* settings) {
  settings->auto_cpu_bind =
      std::any_of(config.task_plugins.begin(), config.task_plugins.end(),
                  [](const std::string& p) { return core::EqualsIgnoreCase(p, "task/affinity"); });
  settings->default_cpu_bind = model::CpuBindType::kNone;
  for (std::string_view word : core::Split(config.task_plugin_param, ',')) {
    word = core::Trim(word);
    if (core::EqualsIgnoreCase(word, "Cores")) settings->default_cpu_bind = model::CpuBindType::kCores;
    if (core::EqualsIgnoreCase(word, "Sockets")) settings->default_cpu_bind = model::CpuBindType::kSockets;
    if (core::EqualsIgnoreCase(word, "Threads")) settings->default_cpu_bind = model::CpuBindType::kThreads;
    if (core::EqualsIgnoreCase(word, "Ldoms")) settings->default_cpu_bind = model::CpuBindType::kLdoms;
    if (core::EqualsIgnoreCase(word, "None")) settings->default_cpu_bind = model::CpuBindType::kNone;
  }
}

}  // namespace loom::stepd
