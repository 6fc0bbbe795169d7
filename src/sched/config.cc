#include "sched/config.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>

namespace loom::sched {

Cluster ClusterFromConfig(const conf::ClusterConfig& config) {
  Cluster c;
  std::unordered_map<std::string, int32_t> index;
  for (const conf::NodeConfig& nc : config.nodes) {
    model::Node n;
    n.name = nc.name;
    n.capacity.cpus = nc.cpus;
    n.capacity.mem_mb = nc.real_memory_mb;
    n.capacity.gpus = static_cast<int32_t>(nc.GpuCount());
    for (const conf::GresSpec& g : nc.gres) {
      if (g.name == "gpu" && !g.type.empty()) {
        n.gpu_type = g.type;
        break;
      }
    }
    n.sockets = nc.sockets;
    n.cores_per_socket = nc.cores_per_socket;
    n.threads_per_core = nc.threads_per_core;
    n.features = nc.features;
    n.weight = nc.weight;
    switch (nc.state) {
      case conf::NodeState::kDown:
      case conf::NodeState::kFail:
        n.state = model::NodeState::kDown;
        break;
      case conf::NodeState::kFuture:
      case conf::NodeState::kCloud:
        n.state = model::NodeState::kFuture;
        break;
      case conf::NodeState::kDrain:
      case conf::NodeState::kFailing:
        n.state = model::NodeState::kIdle;
        n.drain = true;
        break;
      case conf::NodeState::kUnknown:
        n.state = model::NodeState::kIdle;
        break;
    }
    n.reason = nc.reason;
    index.emplace(n.name, static_cast<int32_t>(c.nodes.size()));
    c.nodes.push_back(std::move(n));
  }
  for (const conf::PartitionConfig& pc : config.partitions) {
    model::Partition p;
    p.name = pc.name;
    for (const std::string& name : pc.nodes) {
      if (auto it = index.find(name); it != index.end()) p.nodes.push_back(it->second);
    }
    p.is_default = pc.is_default;
    p.max_time_s = pc.max_time_s;
    p.default_time_s = pc.default_time_s;
    p.min_nodes = pc.min_nodes;
    p.max_nodes = pc.max_nodes;
    p.priority_tier = static_cast<uint16_t>(pc.priority_tier);
    p.priority_job_factor = static_cast<uint16_t>(pc.priority_job_factor);
    switch (pc.state) {
      case conf::PartitionState::kUp: p.state = model::PartitionState::kUp; break;
      case conf::PartitionState::kDown: p.state = model::PartitionState::kDown; break;
      case conf::PartitionState::kDrain: p.state = model::PartitionState::kDrain; break;
      case conf::PartitionState::kInactive: p.state = model::PartitionState::kInactive; break;
    }
    p.exclusive = pc.oversubscribe == conf::OverSubscribe::kExclusive;
    c.partitions.push_back(std::move(p));
  }
  return c;
}

Cluster ClusterFromSite(const conf::SiteConfig& site) {
  Cluster c = ClusterFromConfig(site.cluster);
  for (size_t i = 0; i < c.nodes.size() && i < site.node_topologies.size(); ++i) {
    c.nodes[i].topology = site.node_topologies[i];
  }
  // A node gres.conf says nothing about still has numbered GPUs and CPUs: a plain inside
  // (no NVLink, CPUs split over its sockets) lets jobs get exact device and CPU ids, which
  // `scontrol show job -d` prints and ConstrainCores confines a job to. Nodes of one shape
  // share one.
  std::map<std::tuple<int32_t, std::string, int32_t, int32_t>,
           std::shared_ptr<const model::NodeTopology>>
      plain;
  for (model::Node& n : c.nodes) {
    if (n.topology || n.capacity.gpus < 0 || n.capacity.gpus > model::kMaxGpusPerNode ||
        n.capacity.cpus <= 0) {
      continue;
    }
    const int32_t sockets = std::max(1, n.sockets);
    const std::string type = n.capacity.gpus > 0 ? n.gpu_type : "";
    std::shared_ptr<const model::NodeTopology>& t =
        plain[{n.capacity.gpus, type, n.capacity.cpus, sockets}];
    if (!t) {
      t = std::make_shared<const model::NodeTopology>(
          model::PlainTopology(n.capacity.gpus, type, n.capacity.cpus, sockets));
    }
    n.topology = t;
  }
  c.topology = site.network;
  return c;
}

PolicyOptions PolicyOptionsFromConfig(const conf::ClusterConfig& config) {
  const conf::SchedulerParams& s = config.scheduler;
  PolicyOptions o;
  o.bf_interval_s = s.bf_interval_s;
  o.bf_window_s = int64_t{s.bf_window_min} * 60;
  o.bf_resolution_s = s.bf_resolution_s;
  o.bf_max_job_test = s.bf_max_job_test;
  o.bf_max_job_start = s.bf_max_job_start;
  o.bf_max_job_part = s.bf_max_job_part;
  o.bf_min_age_reserve_s = s.bf_min_age_reserve_s;
  o.default_queue_depth = s.default_queue_depth;
  o.sched_interval_s = s.sched_interval_s;
  o.sched_min_interval_us = s.sched_min_interval_us;
  return o;
}

std::string_view PolicyNameFromConfig(const conf::ClusterConfig& config) {
  return config.scheduler_type == conf::SchedulerType::kBuiltin ? "fcfs" : "slurm";
}

MultifactorWeights WeightsFromConfig(const conf::PriorityParams& p) {
  MultifactorWeights w;
  w.age = p.weight_age;
  w.assoc = p.weight_assoc;
  w.tres = p.weight_tres;
  w.fairshare = p.weight_fairshare;
  w.job_size = p.weight_job_size;
  w.partition = p.weight_partition;
  w.qos = p.weight_qos;
  w.max_age_s = p.max_age_s;
  w.favor_small = p.favor_small;
  return w;
}

}  // namespace loom::sched
