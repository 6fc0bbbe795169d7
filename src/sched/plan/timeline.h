// The availability timeline: per node, how much of each resource is in use over time, from
// the pass's `now` on. Answers "how much is free on node n over [a, b)" and "earliest time
// >= t at which `need` fits on node n for d seconds". Built fresh for every pass from the
// running jobs; reservations are added to it as a pass makes them.
//
// Each node keeps a step function (a short sorted vector); a cluster of many nodes is a
// vector of them. Not thread-safe; a pass owns its timeline.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sched/types.h"

namespace loom::sched {

class Timeline {
 public:
  Timeline() = default;
  // Empty timeline starting at `origin` for nodes with the given capacities.
  void Reset(std::span<const Resources> capacity, Time origin);

  Time origin() const { return origin_; }
  int32_t num_nodes() const { return static_cast<int32_t>(nodes_.size()); }
  const Resources& capacity(int32_t node) const { return nodes_[node].capacity; }

  // Usage `amount` on `node` over [from, to).
  struct Interval {
    int32_t node;
    Resources amount;
    Time from;
    Time to;
  };
  // Empty timeline at `origin`, then every interval added, in O(n log n) (the way a pass
  // loads its running jobs and kept reservations). Reorders `intervals`.
  void Build(std::span<const Resources> capacity, Time origin, std::vector<Interval>& intervals);

  // Adds `amount` on `node` over [from, to); parts before origin() are ignored.
  void Add(int32_t node, const Resources& amount, Time from, Time to);
  // Undoes an Add of the same arguments.
  void Remove(int32_t node, const Resources& amount, Time from, Time to);
  void Add(const Allocation& alloc, Time from, Time to);
  void Remove(const Allocation& alloc, Time from, Time to);

  // Whether more than `node` has is in use at some time.
  bool Overbooked(int32_t node) const;
  // Least free amount, per component, on `node` over [from, to) (from < to); below zero
  // where more is in use than the node has.
  Resources FreeOver(int32_t node, Time from, Time to) const;
  // Whether `need` is free on `node` over all of [from, to).
  bool FitsOver(int32_t node, const Resources& need, Time from, Time to) const;
  // Earliest s >= from, s < limit, with `need` free on `node` over [s, s + duration).
  // Candidate times after origin() are rounded up to a multiple of `resolution` (>= 1).
  // Returns kNever when there is none.
  Time EarliestFit(int32_t node, const Resources& need, Time from, int64_t duration, Time limit,
                   int64_t resolution = 1) const;
  // The first time > t at which usage on `node` drops, or kNever.
  Time NextRelease(int32_t node, Time t) const;
  // Number of steps on `node`, and when step k begins (step 0 begins at origin()).
  size_t steps(int32_t node) const { return nodes_[node].steps.size(); }
  Time step_time(int32_t node, size_t k) const { return nodes_[node].steps[k].time; }

 private:
  struct Step {
    Time time;       // the step covers [time, next step's time)
    Resources used;
  };
  struct NodeLine {
    Resources capacity;
    std::vector<Step> steps;  // steps[0].time == origin_, strictly increasing times
  };

  // Index of the step covering t (t >= origin_).
  static size_t StepAt(const NodeLine& line, Time t);
  // Ensures a step starts exactly at t and returns its index.
  static size_t SplitAt(NodeLine& line, Time t);
  void Apply(int32_t node, const Resources& delta, Time from, Time to, bool merge);

  struct Event {
    int32_t node;
    Time time;
    Resources delta;
  };

  Time origin_ = 0;
  std::vector<NodeLine> nodes_;
  std::vector<Event> events_;  // scratch for Build
};

}  // namespace loom::sched
