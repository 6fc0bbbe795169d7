// The planner's placement: which of the nodes that fit a job it takes (topology-aware or
// first fit, --switches, --segment), and which GPUs and CPUs of them (device ids for jobs
// that start now). The searches over time are in planner.cc.
#include <algorithm>

#include "sched/plan/planner.h"
#include "sched/select/devices.h"

namespace loom::sched {
namespace {
// Slurm's default max_switch_wait: how long --switches=N without @time waits.
constexpr int64_t kDefaultSwitchWait = 300;
// A multi-node job that fits under one leaf switch (block) waits for one as long as it
// takes: the backfill reservation of the first waiting job keeps that wait bounded.
constexpr int64_t kImpliedLeafWait = kNever / 2;
}  // namespace

bool Planner::OneNodeJob(const PendingJob& job, const EligibleSet& set) const {
  const model::JobShape& shape = job.shape;
  return shape.min_nodes <= 1 && shape.max_nodes > 1 && shape.gpus_per_task > 0 &&
         TopologyAware() &&
         int64_t{shape.ntasks} * shape.gpus_per_task + shape.gpus_per_node <= set.max_gpus;
}

bool Planner::TopologyAware() const {
  return cluster_->placement == Placement::kTopology &&
         (any_devices_ || !cluster_->topology.empty());
}

Planner::LeafLimit Planner::LeafLimitFor(const PendingJob& job, const EligibleSet& set) const {
  // --switches=N@wait; a multi-node job that fits under one leaf switch (block) and asks
  // nothing of switches gets an implied --switches=1 without a time limit.
  const model::JobShape& shape = job.shape;
  LeafLimit l;
  if (!TopologyAware() || shape.segment > 0) return l;  // segments say where nodes go
  l.max_leaves = shape.switches;
  int64_t wait = shape.switches_wait_s > 0 ? shape.switches_wait_s : kDefaultSwitchWait;
  if (l.max_leaves == 0 && shape.min_nodes > 1 && shape.min_nodes <= set.max_leaf_nodes) {
    l.max_leaves = 1;
    wait = kImpliedLeafWait;
  }
  if (l.max_leaves > 0) l.until = SaturatingAdd(job.submit, wait);
  return l;
}

bool Planner::Choose(const PendingJob& job, const EligibleSet& set, Time start,
                     std::span<Candidate> cands, Allocation* out) {
  // A job that names nodes (-w) has every one of them, whatever else it gets.
  if (!ChooseAny(job, set, start, cands, out)) return false;
  for (int32_t n : set.required) {
    if (std::none_of(out->begin(), out->end(), [n](const NodeAlloc& a) { return a.node == n; })) {
      out->clear();
      return false;
    }
  }
  return true;
}

bool Planner::ChooseAny(const PendingJob& job, const EligibleSet& set, Time start,
                        std::span<Candidate> cands, Allocation* out) {
  const model::JobShape& shape = job.shape;
  if (shape.segment > 0 && cluster_->topology.kind == model::ClusterTopology::Kind::kBlock) {
    // Segments are the user's requirement: every placement honours them.
    if (!ChooseSegments(job, cands, out)) return false;
    if (start <= now_ && any_devices_) PickDevices(out);
    return true;
  }
  if (!TopologyAware()) {
    if (!SelectNodes(shape, cands, out)) return false;
    if (start <= now_ && any_devices_) PickDevices(out);
    return true;
  }
  const LeafLimit leaves = LeafLimitFor(job, set);
  const int32_t max_leaves = start < leaves.until ? leaves.max_leaves : 0;
  // A GPU job that one node can hold (--gpus=N) runs inside one node, and so inside as few
  // NVLink domains as the node allows: it waits for such a node rather than spread.
  if (SingleNode(shape) || OneNodeJob(job, set)) {
    if (!ChooseOneNode(job, start, cands, out)) return false;
  } else if (!(shape.min_nodes <= 1 && ChooseOneNode(job, start, cands, out)) &&
             !ChooseAcrossSwitches(job, cands, /*leaf_only=*/max_leaves == 1, out)) {
    return false;
  }
  if (max_leaves > 0 && LeavesSpanned(*cluster_, *out) > max_leaves) return false;
  if (start <= now_ && any_devices_) PickDevices(out);
  return true;
}

namespace {

// How well a job's share fits a node; lower compares better.
struct NodeScore {
  GpuPickScore gpus;
  int64_t left = 0;       // GPUs (CPUs for a CPU-only job) the node keeps free: best fit
  int64_t leaf_left = 0;  // GPUs free under the node's leaf switch: fullest leaf first
  int32_t pos = 0;        // selection order
  friend auto operator<=>(const NodeScore&, const NodeScore&) = default;
};

}  // namespace

bool Planner::ChooseOneNode(const PendingJob& job, Time start, std::span<const Candidate> cands,
                            Allocation* out) {
  const bool at_now = start <= now_;
  const Candidate* best = nullptr;
  NodeScore best_score;
  for (const Candidate& c : cands) {
    if (TasksThatFit(job.shape, c.free, c.capacity) < job.shape.ntasks) continue;
    const Resources amount = AmountFor(job.shape, job.shape.ntasks, c.capacity);
    NodeScore score{{}, 0, 0, pos_[c.node]};
    if (at_now && LeafOf(c.node) >= 0) score.leaf_left = leaf_free_gpus_[LeafOf(c.node)];
    if (amount.gpus > 0) {
      score.left = c.free.gpus - amount.gpus;
      if (at_now && has_devices_[c.node]) {
        const model::NodeTopology& t = *cluster_->nodes[c.node].topology;
        std::optional<model::GpuMask> pick =
            PickGpus(t, free_gpus_[c.node], amount.gpus, Placement::kTopology);
        if (!pick) continue;
        score.gpus = ScoreGpus(t, free_gpus_[c.node], *pick);
      }
    } else {
      // CPU-only work goes where it leaves GPUs idle least: nodes without free GPUs
      // first, then the tightest fit in CPUs.
      score.gpus.domains = c.free.gpus;
      score.left = c.free.cpus - amount.cpus;
    }
    if (!best || score < best_score) {
      best = &c;
      best_score = score;
      if (score.left == 0 && score.gpus.domains <= 1 && score.gpus.domain_left == 0) break;
    }
  }
  if (!best) return false;
  out->assign(1, NodeAlloc{best->node, AmountFor(job.shape, job.shape.ntasks, best->capacity)});
  return true;
}

bool Planner::ChooseAcrossSwitches(const PendingJob& job, std::span<Candidate> cands,
                                   bool leaf_only, Allocation* out) {
  const model::ClusterTopology& topo = cluster_->topology;
  const size_t num = cands.size();
  std::vector<int32_t> fit(num);
  std::vector<int32_t> leaf(num);
  for (size_t i = 0; i < num; ++i) {
    fit[i] = TasksThatFit(job.shape, cands[i].free, cands[i].capacity);
    const int32_t n = cands[i].node;
    leaf[i] = n < static_cast<int32_t>(topo.leaf_of.size()) ? topo.leaf_of[n] : -1;
  }
  // Within any group of nodes: leaves with the most room first (fewest leaves), and in a
  // leaf the roomiest nodes first (fewest nodes), then selection order.
  auto place = [&](std::vector<size_t>& members) {
    std::vector<int64_t> leaf_room;
    auto room_of = [&](int32_t l) -> int64_t& {
      size_t k = static_cast<size_t>(l + 1);
      if (leaf_room.size() <= k) leaf_room.resize(k + 1, 0);
      return leaf_room[k];
    };
    for (size_t i : members) room_of(leaf[i]) += fit[i];
    std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) {
      if (leaf[a] != leaf[b]) {
        int64_t ra = room_of(leaf[a]), rb = room_of(leaf[b]);
        if (ra != rb) return ra > rb;
        return leaf[a] < leaf[b];
      }
      if (fit[a] != fit[b]) return fit[a] > fit[b];
      return pos_[cands[a].node] < pos_[cands[b].node];
    });
    std::vector<Candidate> ordered;
    ordered.reserve(members.size());
    for (size_t i : members) ordered.push_back(cands[i]);
    return SelectNodes(job.shape, ordered, out);
  };

  // Groups to try, lowest level first: leaf switches (or blocks), then each switch above.
  std::vector<std::vector<size_t>> groups;
  std::vector<int32_t> group_level;
  if (topo.kind == model::ClusterTopology::Kind::kTree) {
    groups.resize(topo.switches.size());
    for (size_t i = 0; i < num; ++i) {
      for (int32_t s = leaf[i]; s >= 0; s = leaf_only ? -1 : topo.switches[s].parent) {
        groups[s].push_back(i);
      }
    }
    for (const model::Switch& sw : topo.switches) group_level.push_back(sw.level);
  } else if (topo.kind == model::ClusterTopology::Kind::kBlock) {
    groups.resize(topo.blocks.size());
    for (size_t i = 0; i < num; ++i) {
      if (leaf[i] >= 0) groups[leaf[i]].push_back(i);
    }
    group_level.assign(groups.size(), 0);
  }
  const int64_t need = job.shape.ntasks_per_node > 0
                           ? int64_t{job.shape.ntasks_per_node} * job.shape.min_nodes
                           : job.shape.ntasks;
  int32_t max_level = 0;
  for (int32_t l : group_level) max_level = std::max(max_level, l);
  for (int32_t level = 0; level <= max_level && !groups.empty(); ++level) {
    // Best fit: the group that can take the job with the least room to spare.
    int64_t best_spare = INT64_MAX;
    size_t best = SIZE_MAX;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (group_level[g] != level) continue;
      int64_t room = 0;
      size_t usable = 0;
      for (size_t i : groups[g]) {
        room += fit[i];
        usable += fit[i] > 0;
      }
      if (room < need || usable < static_cast<size_t>(job.shape.min_nodes)) continue;
      if (room - need < best_spare) {
        std::vector<size_t> members = groups[g];
        if (!place(members)) continue;
        best_spare = room - need;
        best = g;
      }
    }
    if (best != SIZE_MAX) return place(groups[best]);
    if (leaf_only) return false;
  }
  if (leaf_only && !groups.empty()) return false;
  std::vector<size_t> all(num);
  for (size_t i = 0; i < num; ++i) all[i] = i;
  return place(all);
}

bool Planner::ChooseSegments(const PendingJob& job, std::span<const Candidate> cands,
                             Allocation* out) {
  const model::JobShape& shape = job.shape;
  const model::ClusterTopology& topo = cluster_->topology;
  const int32_t seg = shape.segment;
  if (shape.min_nodes % seg != 0) return false;
  // Usable nodes per block, roomiest first.
  std::vector<std::vector<const Candidate*>> by_block(topo.blocks.size());
  for (const Candidate& c : cands) {
    const int32_t b = LeafOf(c.node);
    if (b >= 0 && TasksThatFit(shape, c.free, c.capacity) > 0) by_block[b].push_back(&c);
  }
  for (auto& nodes : by_block) {
    std::stable_sort(nodes.begin(), nodes.end(), [&](const Candidate* a, const Candidate* b) {
      return TasksThatFit(shape, a->free, a->capacity) > TasksThatFit(shape, b->free, b->capacity);
    });
  }
  // The tightest block that holds every remaining segment; else the block holding the most
  // segments, whole, and again.
  std::vector<Candidate> chosen;
  std::vector<char> used(by_block.size(), 0);
  int32_t left = shape.min_nodes / seg;
  while (left > 0) {
    int32_t tight = -1, most = -1;
    for (size_t b = 0; b < by_block.size(); ++b) {
      if (used[b]) continue;
      const int32_t segments = static_cast<int32_t>(by_block[b].size()) / seg;
      if (segments == 0) continue;
      if (segments >= left &&
          (tight < 0 || segments < static_cast<int32_t>(by_block[tight].size()) / seg)) {
        tight = static_cast<int32_t>(b);
      }
      if (most < 0 || segments > static_cast<int32_t>(by_block[most].size()) / seg) {
        most = static_cast<int32_t>(b);
      }
    }
    const int32_t b = tight >= 0 ? tight : most;
    if (b < 0) return false;
    used[b] = 1;
    const int32_t take = std::min(left, static_cast<int32_t>(by_block[b].size()) / seg);
    for (int32_t i = 0; i < take * seg; ++i) chosen.push_back(*by_block[b][i]);
    left -= take;
  }
  model::JobShape exact = shape;
  exact.max_nodes = shape.min_nodes;
  if (!SelectNodes(exact, chosen, out)) return false;
  return static_cast<int32_t>(out->size()) == shape.min_nodes;
}

void Planner::TakeDevices(const NodeAlloc& a, bool take) {
  if (!has_devices_[a.node]) return;
  model::GpuMask& gpus = free_gpus_[a.node];
  core::CpuSet& cpus = free_cpus_[a.node];
  if (!take) {
    gpus |= a.gpu_ids;
    cpus |= a.cpu_ids;
    return;
  }
  if (a.gpu_ids != 0 || a.amount.gpus == 0) {
    gpus &= ~a.gpu_ids;
  } else {
    // Held without ids (started elsewhere): the lowest free GPUs stand for them.
    for (int32_t k = 0; k < a.amount.gpus && gpus; ++k) gpus &= gpus - 1;
  }
  if (!tracks_cpus_[a.node]) return;
  if (!a.cpu_ids.empty() || a.amount.cpus == 0) {
    cpus.Subtract(a.cpu_ids);
  } else {
    std::vector<int32_t> ids = cpus.ToVector();
    for (int32_t k = 0; k < a.amount.cpus && k < static_cast<int32_t>(ids.size()); ++k) {
      cpus.reset(ids[k]);
    }
  }
}

void Planner::PickDevices(Allocation* alloc) const {
  const Placement how = cluster_->placement;
  for (NodeAlloc& a : *alloc) {
    if (!has_devices_[a.node]) continue;
    const model::NodeTopology& t = *cluster_->nodes[a.node].topology;
    if (a.gpu_ids == 0 && a.amount.gpus > 0) {
      a.gpu_ids = PickGpus(t, free_gpus_[a.node], a.amount.gpus, how).value_or(0);
    }
    if (tracks_cpus_[a.node] && a.cpu_ids.empty() && a.amount.cpus > 0) {
      a.cpu_ids = PickCpus(t, free_cpus_[a.node], a.gpu_ids, a.amount.cpus, how)
                      .value_or(core::CpuSet());
    }
  }
}

void Planner::AssignDevices(Allocation* alloc) {
  if (!any_devices_) return;
  PickDevices(alloc);
  for (const NodeAlloc& a : *alloc) TakeDevices(a, true);
}

}  // namespace loom::sched
