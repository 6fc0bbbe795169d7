#include "sched/plan/planner.h"

#include <algorithm>
#include <queue>

#include "core/hostlist.h"
#include "model/constraint.h"
#include "sched/select/devices.h"

namespace loom::sched {
namespace {
// Earlier single-node answers kept per kind of job as lower bounds for later searches.
constexpr size_t kMemoEntries = 1024;
// A topology-aware choice for a single-node job scores at most this many nodes that fit.
constexpr size_t kTopologyCandidates = 256;
}  // namespace

// Walks the base and added step boundaries together, in time order.
class Planner::EventCursor {
 public:
  EventCursor(std::vector<Event>::const_iterator a, std::vector<Event>::const_iterator a_end,
              std::set<Event>::const_iterator b, std::set<Event>::const_iterator b_end)
      : a_(a), a_end_(a_end), b_(b), b_end_(b_end) {}
  bool done() const { return a_ == a_end_ && b_ == b_end_; }
  const Event& operator*() const { return TakeA() ? *a_ : *b_; }
  const Event* operator->() const { return &**this; }
  EventCursor& operator++() {
    if (TakeA()) {
      ++a_;
    } else {
      ++b_;
    }
    return *this;
  }

 private:
  bool TakeA() const { return b_ == b_end_ || (a_ != a_end_ && *a_ < *b_); }
  std::vector<Event>::const_iterator a_, a_end_;
  std::set<Event>::const_iterator b_, b_end_;
};

void Planner::EnsureEvents() {
  if (events_built_) return;
  events_built_ = true;
  events_base_.clear();
  for (int32_t n = 0; n < timeline_.num_nodes(); ++n) {
    for (size_t k = 1; k < timeline_.steps(n); ++k) {
      events_base_.emplace_back(timeline_.step_time(n, k), n);
    }
  }
  std::sort(events_base_.begin(), events_base_.end());
}

Planner::EventCursor Planner::EventsFrom(Time t) const {
  const Event key{t, INT32_MIN};
  return EventCursor(std::lower_bound(events_base_.begin(), events_base_.end(), key),
                     events_base_.end(), events_added_.lower_bound(key), events_added_.end());
}

void Planner::Reset(const Cluster& cluster, Time now, std::span<const RunningJob> running,
                    std::span<const Timeline::Interval> also_held) {
  if (cluster_ != &cluster || generation_ != cluster.generation ||
      node_order_.size() != cluster.nodes.size()) {
    node_order_.resize(cluster.nodes.size());
    for (size_t i = 0; i < node_order_.size(); ++i) node_order_[i] = static_cast<int32_t>(i);
    std::stable_sort(node_order_.begin(), node_order_.end(), [&](int32_t a, int32_t b) {
      return cluster.nodes[a].weight < cluster.nodes[b].weight;
    });
    pos_.resize(node_order_.size());
    for (size_t p = 0; p < node_order_.size(); ++p) pos_[node_order_[p]] = static_cast<int32_t>(p);
    caps_.clear();
    for (const model::Node& n : cluster.nodes) caps_.push_back(n.capacity);
    has_devices_.assign(cluster.nodes.size(), 0);
    tracks_cpus_.assign(cluster.nodes.size(), 0);
    any_devices_ = false;
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
      const model::NodeTopology* t = cluster.nodes[i].topology.get();
      if (!t) continue;
      has_devices_[i] = t->num_gpus() == cluster.nodes[i].capacity.gpus;
      tracks_cpus_[i] = has_devices_[i] && t->num_cpus() == cluster.nodes[i].capacity.cpus;
      any_devices_ = any_devices_ || has_devices_[i];
    }
    eligible_cache_.clear();
    last_eligible_ = 0;
    generation_ = cluster.generation;
  }
  cluster_ = &cluster;
  now_ = now;
  for (EligibleSet& set : eligible_cache_) {
    set.memo.clear();
    set.memo_next = 0;
  }

  holdings_.clear();
  for (const RunningJob& r : running) {
    if (r.end <= now) continue;
    for (const NodeAlloc& a : r.alloc) holdings_.push_back({a.node, a.amount, now, r.end});
  }
  holdings_.insert(holdings_.end(), also_held.begin(), also_held.end());
  for (const AdvanceReservation& r : cluster.reservations) {
    if (r.end <= now) continue;
    for (int32_t n : r.nodes) holdings_.push_back({n, caps_[n], std::max(now, r.start), r.end});
  }
  timeline_.Build(caps_, now, holdings_);

  if (any_devices_) {
    free_gpus_.assign(cluster.nodes.size(), 0);
    free_cpus_.assign(cluster.nodes.size(), core::CpuSet());
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
      if (!has_devices_[i]) continue;
      const model::NodeTopology& t = *cluster.nodes[i].topology;
      free_gpus_[i] = t.AllGpus();
      if (tracks_cpus_[i]) {
        for (const auto& cpus : t.numa_cpus) {
          for (int32_t c : cpus) free_cpus_[i].set(c);
        }
      }
    }
    for (const RunningJob& r : running) {
      if (r.end <= now) continue;
      for (const NodeAlloc& a : r.alloc) TakeDevices(a, true);
    }
  }

  events_built_ = false;
  events_added_.clear();
  scratch_free_.resize(node_order_.size());
  for (size_t p = 0; p < node_order_.size(); ++p) {
    scratch_free_[p] = FreeNow(node_order_[p]);
  }
  free_now_.Build(scratch_free_);
  // GPUs free now under each leaf switch (block), for best fit at the leaves.
  free_now_gpus_.assign(cluster.nodes.size(), 0);
  leaf_free_gpus_.assign(cluster.topology.kind == model::ClusterTopology::Kind::kTree
                             ? cluster.topology.switches.size()
                             : cluster.topology.blocks.size(),
                         0);
  for (size_t p = 0; p < node_order_.size(); ++p) {
    const int32_t n = node_order_[p];
    free_now_gpus_[n] = scratch_free_[p].gpus;
    if (LeafOf(n) >= 0) leaf_free_gpus_[LeafOf(n)] += scratch_free_[p].gpus;
  }
}

Resources Planner::FreeNow(int32_t node) const {
  // A node an advance reservation holds whole may carry that reservation's jobs on top of
  // the holding: never less than nothing free.
  Resources free = timeline_.FreeOver(node, now_, now_ + 1);
  free.cpus = std::max(free.cpus, 0);
  free.gpus = std::max(free.gpus, 0);
  free.mem_mb = std::max<int64_t>(free.mem_mb, 0);
  return free;
}

void Planner::Touch(int32_t node, Time start, Time end) {
  if (start <= now_) {
    const Resources free = FreeNow(node);
    free_now_.Set(pos_[node], free);
    const int32_t leaf = LeafOf(node);
    if (leaf >= 0) leaf_free_gpus_[leaf] += free.gpus - free_now_gpus_[node];
    free_now_gpus_[node] = free.gpus;
  }
  if (!events_built_) return;  // the timeline has them; EnsureEvents will read them
  if (start > now_) events_added_.emplace(start, node);
  if (end < kNever) events_added_.emplace(end, node);
}

void Planner::Hold(const Allocation& alloc, Time start, int64_t duration) {
  Time end = SaturatingAdd(start, duration);
  for (const NodeAlloc& a : alloc) {
    timeline_.Add(a.node, a.amount, start, end);
    Touch(a.node, start, end);
    if (start <= now_ && any_devices_) TakeDevices(a, true);
  }
}

const AdvanceReservation* Planner::ReservationOf(const PendingJob& job) const {
  if (job.advance_reservation < 0 ||
      job.advance_reservation >= static_cast<int32_t>(cluster_->reservations.size())) {
    return nullptr;
  }
  return &cluster_->reservations[job.advance_reservation];
}

void Planner::HoldReservation(const AdvanceReservation& r, bool hold) {
  if (r.end <= now_) return;
  const Time from = std::max(now_, r.start);
  for (int32_t n : r.nodes) {
    if (hold) {
      timeline_.Add(n, caps_[n], from, r.end);
    } else {
      timeline_.Remove(n, caps_[n], from, r.end);
    }
    Touch(n, from, r.end);
  }
}

// Takes a reservation's holding off the timeline while one of its jobs is searched for.
class Planner::OpenReservation {
 public:
  OpenReservation(Planner& p, const AdvanceReservation& r) : p_(p), r_(r) {
    p_.HoldReservation(r_, false);
  }
  ~OpenReservation() { p_.HoldReservation(r_, true); }
  OpenReservation(const OpenReservation&) = delete;
  OpenReservation& operator=(const OpenReservation&) = delete;

 private:
  Planner& p_;
  const AdvanceReservation& r_;
};

model::PendingReason Planner::ReservationReason(const PendingJob& job) {
  const AdvanceReservation* mine = ReservationOf(job);
  if (mine != nullptr && mine->start > now_) return model::PendingReason::kReservation;
  const EligibleSet& set = SetFor(job);
  const Time end = SaturatingAdd(now_, job.estimate);
  for (const AdvanceReservation& r : cluster_->reservations) {
    if (&r == mine || !r.maint || r.end <= now_ || r.start >= end) continue;
    for (int32_t n : r.nodes) {
      if (set.member[n]) return model::PendingReason::kReservedForMaintenance;
    }
  }
  return model::PendingReason::kNone;
}

void Planner::Release(const Allocation& alloc, Time start, int64_t duration) {
  Time end = SaturatingAdd(start, duration);
  for (const NodeAlloc& a : alloc) {
    timeline_.Remove(a.node, a.amount, start, end);
    Touch(a.node, start, end);
    if (start <= now_ && any_devices_) TakeDevices(a, false);
  }
  // Something became free: earlier answers are no longer lower bounds.
  for (EligibleSet& set : eligible_cache_) set.memo.clear();
}

std::optional<std::vector<int32_t>> NodesNamed(const Cluster& c, std::string_view hostlist) {
  std::vector<int32_t> out;
  if (hostlist.empty()) return out;
  StatusOr<std::vector<std::string>> names = core::ExpandHostlist(hostlist);
  if (!names.ok()) return std::nullopt;
  for (const std::string& name : *names) {
    int32_t found = -1;
    for (size_t n = 0; n < c.nodes.size() && found < 0; ++n) {
      if (c.nodes[n].name == name) found = static_cast<int32_t>(n);
    }
    if (found < 0) return std::nullopt;
    if (std::find(out.begin(), out.end(), found) == out.end()) out.push_back(found);
  }
  return out;
}

Planner::EligibleSet& Planner::SetFor(const PendingJob& job) {
  // A job that names nodes needs them all: the set differs by how many nodes it may use.
  const int32_t max_nodes = job.nodelist.empty() ? 0 : job.shape.max_nodes;
  auto matches = [&](const EligibleSet& e) {
    return e.partition == job.partition && e.constraint == job.constraint &&
           e.gpu_type == job.shape.gpu_type && e.nodelist == job.nodelist &&
           e.exclude == job.exclude && e.reservation == job.advance_reservation &&
           e.max_nodes == max_nodes;
  };
  if (last_eligible_ >= eligible_cache_.size() || !matches(eligible_cache_[last_eligible_])) {
    size_t i = 0;
    while (i < eligible_cache_.size() && !matches(eligible_cache_[i])) ++i;
    if (i == eligible_cache_.size()) {
      EligibleSet& set = eligible_cache_.emplace_back();
      set.partition = job.partition;
      set.constraint = job.constraint;
      set.gpu_type = job.shape.gpu_type;
      set.nodelist = job.nodelist;
      set.exclude = job.exclude;
      set.reservation = job.advance_reservation;
      set.max_nodes = max_nodes;
      Fill(set);
    }
    last_eligible_ = i;
  }
  return eligible_cache_[last_eligible_];
}

const std::vector<int32_t>& Planner::Eligible(const PendingJob& job, model::PendingReason* reason) {
  const EligibleSet& set = SetFor(job);
  if (reason) *reason = set.reason;
  return set.nodes;
}

void Planner::Fill(EligibleSet& set) const {
  const Cluster& c = *cluster_;
  set.member.assign(c.nodes.size(), 0);
  StatusOr<model::FeatureExpr> expr = model::FeatureExpr::Parse(set.constraint);
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
  std::vector<char> in_partition(c.nodes.size(), 0);
  for (int32_t n : p.nodes) in_partition[n] = 1;
  // -x: never these. -w: these first, and only these when the job may use no more nodes.
  std::vector<char> required(c.nodes.size(), 0);
  const std::optional<std::vector<int32_t>> named = NodesNamed(c, set.nodelist);
  const std::optional<std::vector<int32_t>> excluded = NodesNamed(c, set.exclude);
  if (!named || !excluded) {
    set.reason = model::PendingReason::kReqNodeNotAvail;  // a node the cluster no longer has
    return;
  }
  for (int32_t n : *excluded) in_partition[n] = 0;
  if (set.reservation >= 0) {
    // A job of a reservation runs on its nodes only.
    if (set.reservation >= static_cast<int32_t>(c.reservations.size())) {
      set.reason = model::PendingReason::kReservationDeleted;
      return;
    }
    std::vector<char> reserved(c.nodes.size(), 0);
    for (int32_t n : c.reservations[set.reservation].nodes) reserved[n] = 1;
    for (size_t n = 0; n < c.nodes.size(); ++n) in_partition[n] &= reserved[n];
  }
  for (int32_t n : *named) required[n] = 1;
  const bool only_named = !named->empty() && set.max_nodes <= static_cast<int32_t>(named->size());
  std::vector<int32_t> order;
  order.reserve(node_order_.size());
  for (int32_t n : node_order_) {
    if (required[n]) order.push_back(n);
  }
  for (int32_t n : node_order_) {
    if (!required[n] && !only_named) order.push_back(n);
  }
  bool any_feature_match = false;
  for (int32_t n : order) {
    if (!in_partition[n]) continue;
    const model::Node& node = c.nodes[n];
    if (!expr->Matches(node.features)) continue;
    any_feature_match = true;
    if (!set.gpu_type.empty() && node.gpu_type != set.gpu_type) continue;
    if (!node.Schedulable()) continue;
    set.nodes.push_back(n);
    set.member[n] = 1;
    set.max_gpus = std::max(set.max_gpus, node.capacity.gpus);
  }
  // Nodes per leaf switch (block) among them: what a multi-node job could keep local to.
  std::vector<int32_t> per_leaf;
  for (int32_t n : set.nodes) {
    const auto& leaf_of = c.topology.leaf_of;
    const int32_t leaf = n < static_cast<int32_t>(leaf_of.size()) ? leaf_of[n] : -1;
    if (leaf < 0) continue;
    if (per_leaf.size() <= static_cast<size_t>(leaf)) per_leaf.resize(leaf + 1, 0);
    set.max_leaf_nodes = std::max(set.max_leaf_nodes, ++per_leaf[leaf]);
  }
  set.required = *named;
  for (int32_t n : set.required) {
    if (set.member[n]) continue;
    // A node it must have is down, drained, or not what it asks for: it cannot run now.
    set.nodes.clear();
    set.member.assign(c.nodes.size(), 0);
    set.reason = model::PendingReason::kReqNodeNotAvail;
    return;
  }
  if (set.nodes.empty()) {
    set.reason = any_feature_match ? model::PendingReason::kResources
                                   : model::PendingReason::kBadConstraints;
  }
}

Resources Planner::Probe(const model::JobShape& shape) {
  // A whole-node request needs all of a node, whatever its size: look for any free CPU
  // and check the node itself.
  if (shape.exclusive) return Resources{.cpus = 1};
  return MinNodeNeed(shape, Resources{});
}

bool Planner::FitsAt(const PendingJob& job, Time start, Allocation* out) {
  const AdvanceReservation* r = ReservationOf(job);
  if (r == nullptr) return FitsAtOpen(job, start, out);
  if (start < r->start || start >= r->end) return false;
  OpenReservation open(*this, *r);
  return FitsAtOpen(job, start, out);
}

bool Planner::FitsAtOpen(const PendingJob& job, Time start, Allocation* out) {
  EligibleSet& set = SetFor(job);
  if (OneNodeJob(job, set)) {
    one_node_job_ = job;
    one_node_job_.shape.max_nodes = 1;
    return FitsAtOpen(one_node_job_, start, out);
  }
  if (set.nodes.empty()) return false;
  if (start <= now_) return FitsNow(job, set, out);
  return FitsByScan(job, set, start, out);
}

bool Planner::FitsNow(const PendingJob& job, EligibleSet& set, Allocation* out) {
  const Time end = SaturatingAdd(now_, job.estimate);
  const Resources probe = Probe(job.shape);
  // A topology-aware choice compares several nodes even for a single-node job.
  const size_t enough = !SingleNode(job.shape) ? SIZE_MAX
                        : TopologyAware()      ? kTopologyCandidates
                                               : 1;
  scratch_.clear();
  for (int32_t p = free_now_.FirstCovering(probe, 0); p >= 0;
       p = free_now_.FirstCovering(probe, p + 1)) {
    const int32_t n = node_order_[p];
    if (!set.member[n]) continue;
    const Resources& cap = timeline_.capacity(n);
    const Resources need = MinNodeNeed(job.shape, cap);
    if (!timeline_.FitsOver(n, need, now_, end)) continue;
    scratch_.push_back(Candidate{n, timeline_.FreeOver(n, now_, end), cap});
    if (scratch_.size() >= enough) break;
  }
  return Choose(job, set, now_, scratch_, out);
}

bool Planner::FitsByScan(const PendingJob& job, const EligibleSet& set, Time start,
                         Allocation* out) {
  const Time end = SaturatingAdd(start, job.estimate);
  scratch_.clear();
  for (int32_t n : set.nodes) {
    const Resources& cap = timeline_.capacity(n);
    if (!timeline_.FitsOver(n, MinNodeNeed(job.shape, cap), start, end)) continue;
    scratch_.push_back(Candidate{n, timeline_.FreeOver(n, start, end), cap});
    if (SingleNode(job.shape)) break;
  }
  return Choose(job, set, start, scratch_, out);
}


Time Planner::EarliestStart(const PendingJob& job, Time from, Time limit, int64_t resolution,
                            Allocation* out) {
  const AdvanceReservation* r = ReservationOf(job);
  if (r == nullptr) return EarliestStartOpen(job, from, limit, resolution, out);
  // A start while the reservation is active; the job may run on past its end.
  from = std::max(from, r->start);
  limit = std::min(limit, r->end);
  if (from >= limit) return kNever;
  OpenReservation open(*this, *r);
  return EarliestStartOpen(job, from, limit, resolution, out);
}

Time Planner::EarliestStartOpen(const PendingJob& job, Time from, Time limit, int64_t resolution,
                                Allocation* out) {
  EligibleSet& set = SetFor(job);
  if (OneNodeJob(job, set)) {
    // Held to one node (Choose): searched as the single-node job it is.
    one_node_job_ = job;
    one_node_job_.shape.max_nodes = 1;
    return EarliestStartOpen(one_node_job_, from, limit, resolution, out);
  }
  resolution = std::max<int64_t>(1, resolution);
  if (set.nodes.empty() || from >= limit) return kNever;
  if (from > now_) return EarliestByScan(job, set, from, limit, resolution, out);
  if (SingleNode(job.shape) && !job.shape.exclusive) {
    return EarliestSingleNode(job, set, limit, resolution, out);
  }
  Time t = EarliestMultiNode(job, set, limit, resolution, out);
  const LeafLimit leaves = LeafLimitFor(job, set);
  if (leaves.max_leaves > 0) {
    // Past its --switches wait the job takes any leaves, whether or not a step of the
    // timeline falls there.
    Time expiry = leaves.until;
    expiry = (expiry + resolution - 1) / resolution * resolution;
    if (expiry > now_ && expiry < std::min(t, limit)) {
      Allocation other;
      Time u = EarliestByScan(job, set, expiry, std::min(t, limit), resolution, &other);
      if (u < t) {
        *out = std::move(other);
        t = u;
      }
    }
  }
  return t;
}

Time Planner::EarliestSingleNode(const PendingJob& job, EligibleSet& set, Time limit,
                                 int64_t resolution, Allocation* out) {
  const Resources need = MinNodeNeed(job.shape, Resources{});
  const int64_t d = job.estimate;
  // The best a smaller, shorter request could do is a lower bound for this one.
  Time lower = now_;
  for (const Memo& m : set.memo) {
    if (m.resolution != resolution || !need.Covers(m.need) || d < m.duration) continue;
    if (m.result >= kNever) {
      if (m.limit >= limit) return kNever;
      continue;
    }
    lower = std::max(lower, m.result);
  }
  auto remember = [&](Time result) {
    Memo m{need, d, limit, resolution, result};
    if (set.memo.size() < kMemoEntries) {
      set.memo.push_back(m);
    } else {
      set.memo[set.memo_next++ % set.memo.size()] = m;
    }
    return result;
  };
  if (lower <= now_ && FitsNow(job, set, out)) return remember(now_);

  if (set.nodes.size() <= small_set_) {
    // Few nodes: each node's own search (which jumps past blocking steps) is cheapest.
    Time best = kNever;
    int32_t best_node = -1;
    for (int32_t n : set.nodes) {
      Time t = timeline_.EarliestFit(n, need, lower, d, std::min(best, limit), resolution);
      if (t < best) {
        best = t;
        best_node = n;
        if (best <= lower) break;
      }
    }
    if (best_node < 0) return remember(kNever);
    out->assign(1, NodeAlloc{best_node, AmountFor(job.shape, job.shape.ntasks,
                                                  timeline_.capacity(best_node))});
    return remember(best);
  }

  // A node first fits at now or where one of its steps begins (rounded up to the
  // resolution), so sweeping step boundaries in time order and trying each node at each of
  // its boundaries finds the earliest start; later boundaries can only tie with it.
  Time best = kNever;
  int32_t best_node = -1;
  Time sweep_from = std::max(now_ + 1, lower - resolution + 1);
  EnsureEvents();
  for (EventCursor it = EventsFrom(sweep_from);
       !it.done() && it->first < limit && it->first <= best; ++it) {
    const int32_t n = it->second;
    if (!set.member[n]) continue;
    Time t = std::max(it->first, lower);
    t = (t + resolution - 1) / resolution * resolution;
    if (t > best || t >= limit) continue;
    if (t == best && pos_[n] > pos_[best_node]) continue;
    if (!timeline_.FitsOver(n, need, t, SaturatingAdd(t, d))) continue;
    best = t;
    best_node = n;
  }
  if (best >= limit) return remember(kNever);
  out->assign(1, NodeAlloc{best_node,
                           AmountFor(job.shape, job.shape.ntasks, timeline_.capacity(best_node))});
  return remember(best);
}

Time Planner::EarliestMultiNode(const PendingJob& job, EligibleSet& set, Time limit,
                                int64_t resolution, Allocation* out) {
  if (FitsNow(job, set, out)) return now_;
  const size_t k = static_cast<size_t>(std::max(1, job.shape.min_nodes));
  if (set.nodes.size() < k) return kNever;
  const int64_t d = job.estimate;
  // Nodes become usable at the times their own earliest fit says; a start needs k of them
  // usable at once. Sweep step boundaries and fits together in time order.
  using Fit = std::pair<Time, int32_t>;
  std::priority_queue<Fit, std::vector<Fit>, std::greater<>> fits;
  std::vector<int32_t>& usable = scratch_nodes_;
  usable.clear();
  std::vector<char> in_usable(cluster_->nodes.size(), 0);
  // While the job may use one leaf switch only, a step is worth trying only when some
  // leaf has k usable nodes: count them per leaf.
  const LeafLimit leaves = LeafLimitFor(job, set);
  const bool gate = leaves.max_leaves == 1 && !cluster_->topology.empty();
  std::vector<int32_t> per_leaf(gate ? leaf_free_gpus_.size() : 0, 0);
  int64_t leaves_ready = 0;
  auto count = [&](int32_t n, int delta) {
    if (!gate || LeafOf(n) < 0) return;
    int32_t& c = per_leaf[LeafOf(n)];
    leaves_ready -= c >= static_cast<int32_t>(k);
    c += delta;
    leaves_ready += c >= static_cast<int32_t>(k);
  };
  // Nodes that can host a part now stay usable until one of their steps says otherwise.
  const Resources probe = Probe(job.shape);
  for (int32_t p = free_now_.FirstCovering(probe, 0); p >= 0;
       p = free_now_.FirstCovering(probe, p + 1)) {
    const int32_t n = node_order_[p];
    if (set.member[n] && timeline_.FitsOver(n, MinNodeNeed(job.shape, timeline_.capacity(n)), now_,
                                            SaturatingAdd(now_, d))) {
      in_usable[n] = 1;
      usable.push_back(n);
      count(n, +1);
    }
  }
  EnsureEvents();
  EventCursor it = EventsFrom(now_ + 1);
  while (true) {
    Time next_event = !it.done() ? it->first : kNever;
    Time next_fit = fits.empty() ? kNever : fits.top().first;
    if (std::min(next_event, next_fit) >= limit) return kNever;
    if (next_event <= next_fit) {
      const int32_t n = it->second;
      ++it;
      if (!set.member[n]) continue;
      Time t = timeline_.EarliestFit(n, MinNodeNeed(job.shape, timeline_.capacity(n)), next_event,
                                     d, limit, resolution);
      if (t < limit) fits.emplace(t, n);
      continue;
    }
    const Time s = next_fit;
    while (!fits.empty() && fits.top().first == s) {
      const int32_t n = fits.top().second;
      fits.pop();
      if (!in_usable[n]) {
        in_usable[n] = 1;
        usable.push_back(n);
        count(n, +1);
      }
    }
    if (usable.size() < k) continue;
    if (gate && s < leaves.until && leaves_ready == 0) continue;
    // Keep the nodes that still fit at s (others come back through a later step), and
    // try to place the job on them in selection order.
    const Time end = SaturatingAdd(s, d);
    scratch_.clear();
    int64_t tasks = 0;
    size_t w = 0;
    for (int32_t n : usable) {
      const Resources& cap = timeline_.capacity(n);
      Resources free = timeline_.FreeOver(n, s, end);
      int32_t t = TasksThatFit(job.shape, free, cap);
      if (t > 0) {
        usable[w++] = n;
        tasks += t;
        scratch_.push_back(Candidate{n, free, cap});
      } else {
        in_usable[n] = 0;
        count(n, -1);
      }
    }
    usable.resize(w);
    // Too few nodes or too few task slots among them: no need to try placing the job.
    if (usable.size() < k || (job.shape.ntasks_per_node == 0 && tasks < job.shape.ntasks)) {
      continue;
    }
    std::sort(scratch_.begin(), scratch_.end(),
              [&](const Candidate& a, const Candidate& b) { return pos_[a.node] < pos_[b.node]; });
    if (Choose(job, set, s, scratch_, out)) return s;
  }
}

Time Planner::EarliestByScan(const PendingJob& job, EligibleSet& set, Time from, Time limit,
                             int64_t resolution, Allocation* out) {
  const size_t k = static_cast<size_t>(std::max(1, job.shape.min_nodes));
  if (set.nodes.size() < k) return kNever;
  std::vector<Time> times;
  Time s = from;
  while (s < limit) {
    times.clear();
    for (int32_t n : set.nodes) {
      times.push_back(timeline_.EarliestFit(n, MinNodeNeed(job.shape, timeline_.capacity(n)), s,
                                            job.estimate, limit, resolution));
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(k - 1),
                     times.end());
    Time bound = times[k - 1];
    if (bound >= limit) return kNever;
    s = std::max(s, bound);
    if (FitsByScan(job, set, s, out)) return s;
    Time next = kNever;
    for (int32_t n : set.nodes) next = std::min(next, timeline_.NextRelease(n, s));
    if (next >= kNever) return kNever;
    next = (next + resolution - 1) / resolution * resolution;
    s = std::max(next, s + 1);
  }
  return kNever;
}

}  // namespace loom::sched
