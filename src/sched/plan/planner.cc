#include "sched/plan/planner.h"

#include <algorithm>

#include "core/strings.h"
#include "sched/select/constraint.h"

namespace loom::sched {

void Planner::Reset(const Cluster& cluster, Time now, std::span<const RunningJob> running) {
  if (cluster_ != &cluster || node_order_.size() != cluster.nodes.size()) {
    node_order_.resize(cluster.nodes.size());
    for (size_t i = 0; i < node_order_.size(); ++i) node_order_[i] = static_cast<int32_t>(i);
    std::stable_sort(node_order_.begin(), node_order_.end(), [&](int32_t a, int32_t b) {
      return cluster.nodes[a].weight < cluster.nodes[b].weight;
    });
  }
  cluster_ = &cluster;
  now_ = now;
  eligible_cache_.clear();
  caps_.clear();
  for (const model::Node& n : cluster.nodes) caps_.push_back(n.capacity);
  holdings_.clear();
  for (const RunningJob& r : running) {
    if (r.end <= now) continue;
    for (const NodeAlloc& a : r.alloc) holdings_.push_back({a.node, a.amount, r.end});
  }
  timeline_.Build(caps_, now, holdings_);
}

const std::vector<int32_t>& Planner::Eligible(const PendingJob& job,
                                              model::PendingReason* reason) {
  std::string key = core::StrCat(job.partition, '\x1f', job.constraint, '\x1f',
                                 job.shape.gpu_type);
  auto [it, inserted] = eligible_cache_.try_emplace(key);
  EligibleSet& set = it->second;
  if (inserted) {
    const Cluster& c = *cluster_;
    StatusOr<FeatureExpr> expr = FeatureExpr::Parse(job.constraint);
    if (job.partition < 0 || job.partition >= static_cast<int32_t>(c.partitions.size())) {
      set.reason = model::PendingReason::kPartitionDown;
    } else if (!expr.ok()) {
      set.reason = model::PendingReason::kBadConstraints;
    } else {
      const model::Partition& p = c.partitions[job.partition];
      std::vector<char> member(c.nodes.size(), 0);
      for (int32_t n : p.nodes) member[n] = 1;
      bool any_feature_match = false;
      for (int32_t n : node_order_) {
        if (!member[n]) continue;
        const model::Node& node = c.nodes[n];
        if (!expr->Matches(node.features)) continue;
        any_feature_match = true;
        if (!job.shape.gpu_type.empty() && node.gpu_type != job.shape.gpu_type) continue;
        if (!node.Schedulable()) continue;
        set.nodes.push_back(n);
      }
      if (set.nodes.empty()) {
        set.reason = any_feature_match ? model::PendingReason::kResources
                                       : model::PendingReason::kBadConstraints;
      }
      if (p.state != model::PartitionState::kUp) {
        set.nodes.clear();
        set.reason = p.state == model::PartitionState::kInactive
                         ? model::PendingReason::kPartitionInactive
                         : model::PendingReason::kPartitionDown;
      }
    }
  }
  if (reason) *reason = set.reason;
  return set.nodes;
}

bool Planner::FitsAt(const PendingJob& job, Time start, Allocation* out) {
  const std::vector<int32_t>& nodes = Eligible(job, nullptr);
  Time end = SaturatingAdd(start, job.estimate);
  scratch_.clear();
  if (SingleNode(job.shape)) {
    for (int32_t n : nodes) {
      const Resources& cap = timeline_.capacity(n);
      Resources need = MinNodeNeed(job.shape, cap);
      if (!cap.Covers(need)) continue;
      Resources free = timeline_.FreeOver(n, start, end);
      if (free.Covers(need)) {
        scratch_.push_back(Candidate{n, free, cap});
        return SelectNodes(job.shape, scratch_, out);
      }
    }
    return false;
  }
  for (int32_t n : nodes) {
    scratch_.push_back(Candidate{n, timeline_.FreeOver(n, start, end), timeline_.capacity(n)});
  }
  return SelectNodes(job.shape, scratch_, out);
}

Time Planner::EarliestStart(const PendingJob& job, Time from, Time limit, int64_t resolution,
                            Allocation* out) {
  const std::vector<int32_t>& nodes = Eligible(job, nullptr);
  if (nodes.empty() || from >= limit) return kNever;
  if (SingleNode(job.shape)) return EarliestSingleNode(job, nodes, from, limit, resolution, out);
  return EarliestMultiNode(job, nodes, from, limit, resolution, out);
}

Time Planner::EarliestSingleNode(const PendingJob& job, const std::vector<int32_t>& nodes,
                                 Time from, Time limit, int64_t resolution, Allocation* out) {
  Time best = kNever;
  int32_t best_node = -1;
  for (int32_t n : nodes) {
    const Resources& cap = timeline_.capacity(n);
    Resources need = MinNodeNeed(job.shape, cap);
    // Only a strictly earlier start can beat the best node so far (nodes come in order).
    Time t = timeline_.EarliestFit(n, need, from, job.estimate, std::min(best, limit),
                                   resolution);
    if (t < best) {
      best = t;
      best_node = n;
      if (best <= from) break;
    }
  }
  if (best_node < 0) return kNever;
  out->assign(1, NodeAlloc{best_node, AmountFor(job.shape, job.shape.ntasks,
                                                timeline_.capacity(best_node))});
  return best;
}

Time Planner::EarliestMultiNode(const PendingJob& job, const std::vector<int32_t>& nodes,
                                Time from, Time limit, int64_t resolution, Allocation* out) {
  const size_t k = static_cast<size_t>(std::max(1, job.shape.min_nodes));
  if (nodes.size() < k) return kNever;
  Time s = from;
  while (s < limit) {
    // No start is possible before at least k nodes can each host a part of the job.
    scratch_times_.clear();
    for (int32_t n : nodes) {
      const Resources& cap = timeline_.capacity(n);
      scratch_times_.push_back(timeline_.EarliestFit(n, MinNodeNeed(job.shape, cap), s,
                                                     job.estimate, limit, resolution));
    }
    std::nth_element(scratch_times_.begin(), scratch_times_.begin() + (k - 1),
                     scratch_times_.end());
    Time bound = scratch_times_[k - 1];
    if (bound >= limit) return kNever;
    s = std::max(s, bound);
    if (FitsAt(job, s, out)) return s;
    // Try again when something is next released on one of the nodes.
    Time next = kNever;
    for (int32_t n : nodes) next = std::min(next, timeline_.NextRelease(n, s));
    if (next >= kNever) return kNever;
    if (resolution > 1) next = (next + resolution - 1) / resolution * resolution;
    s = std::max(next, s + 1);
  }
  return kNever;
}

}  // namespace loom::sched
