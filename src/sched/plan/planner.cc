#include "sched/plan/planner.h"

#include <algorithm>

#include "sched/select/constraint.h"

namespace loom::sched {

void Planner::Reset(const Cluster& cluster, Time now, std::span<const RunningJob> running,
                    std::span<const Timeline::Interval> also_held) {
  if (cluster_ != &cluster || generation_ != cluster.generation ||
      node_order_.size() != cluster.nodes.size()) {
    node_order_.resize(cluster.nodes.size());
    for (size_t i = 0; i < node_order_.size(); ++i) node_order_[i] = static_cast<int32_t>(i);
    std::stable_sort(node_order_.begin(), node_order_.end(), [&](int32_t a, int32_t b) {
      return cluster.nodes[a].weight < cluster.nodes[b].weight;
    });
    eligible_cache_.clear();
    last_eligible_ = 0;
    generation_ = cluster.generation;
  }
  cluster_ = &cluster;
  now_ = now;
  caps_.clear();
  for (const model::Node& n : cluster.nodes) caps_.push_back(n.capacity);
  holdings_.clear();
  for (const RunningJob& r : running) {
    if (r.end <= now) continue;
    for (const NodeAlloc& a : r.alloc) holdings_.push_back({a.node, a.amount, now, r.end});
  }
  holdings_.insert(holdings_.end(), also_held.begin(), also_held.end());
  timeline_.Build(caps_, now, holdings_);
}

const std::vector<int32_t>& Planner::Eligible(const PendingJob& job,
                                              model::PendingReason* reason) {
  auto matches = [&](const EligibleSet& e) {
    return e.partition == job.partition && e.constraint == job.constraint &&
           e.gpu_type == job.shape.gpu_type;
  };
  if (last_eligible_ >= eligible_cache_.size() || !matches(eligible_cache_[last_eligible_])) {
    size_t i = 0;
    while (i < eligible_cache_.size() && !matches(eligible_cache_[i])) ++i;
    if (i == eligible_cache_.size()) {
      eligible_cache_.push_back(
          EligibleSet{job.partition, job.constraint, job.shape.gpu_type, {}, {}});
      Fill(eligible_cache_.back());
    }
    last_eligible_ = i;
  }
  const EligibleSet& set = eligible_cache_[last_eligible_];
  if (reason) *reason = set.reason;
  return set.nodes;
}

void Planner::Fill(EligibleSet& set) const {
  const Cluster& c = *cluster_;
  StatusOr<FeatureExpr> expr = FeatureExpr::Parse(set.constraint);
  if (set.partition < 0 || set.partition >= static_cast<int32_t>(c.partitions.size())) {
    set.reason = model::PendingReason::kPartitionDown;
    return;
  }
  if (!expr.ok()) {
    set.reason = model::PendingReason::kBadConstraints;
    return;
  }
  const model::Partition& p = c.partitions[set.partition];
  if (p.state != model::PartitionState::kUp) {
    set.reason = p.state == model::PartitionState::kInactive
                     ? model::PendingReason::kPartitionInactive
                     : model::PendingReason::kPartitionDown;
    return;
  }
  std::vector<char> member(c.nodes.size(), 0);
  for (int32_t n : p.nodes) member[n] = 1;
  bool any_feature_match = false;
  for (int32_t n : node_order_) {
    if (!member[n]) continue;
    const model::Node& node = c.nodes[n];
    if (!expr->Matches(node.features)) continue;
    any_feature_match = true;
    if (!set.gpu_type.empty() && node.gpu_type != set.gpu_type) continue;
    if (!node.Schedulable()) continue;
    set.nodes.push_back(n);
  }
  if (set.nodes.empty()) {
    set.reason = any_feature_match ? model::PendingReason::kResources
                                   : model::PendingReason::kBadConstraints;
  }
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
      if (timeline_.FitsOver(n, need, start, end)) {
        scratch_.push_back(Candidate{n, timeline_.FreeOver(n, start, end), cap});
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
