#include "sched/plan/timeline.h"

#include <algorithm>

namespace loom::sched {

void Timeline::Reset(std::span<const Resources> capacity, Time origin) {
  origin_ = origin;
  nodes_.resize(capacity.size());
  for (size_t i = 0; i < capacity.size(); ++i) {
    nodes_[i].capacity = capacity[i];
    nodes_[i].steps.clear();
    nodes_[i].steps.push_back(Step{origin, Resources{}});
  }
}

void Timeline::Build(std::span<const Resources> capacity, Time origin,
                     std::vector<Interval>& intervals) {
  Reset(capacity, origin);
  // Each interval becomes two events, +amount at its start and -amount at its end.
  events_.clear();
  for (const Interval& iv : intervals) {
    Time from = std::max(iv.from, origin);
    if (iv.to <= from) continue;
    if (from == origin) {
      nodes_[iv.node].steps[0].used += iv.amount;  // no event needed at the origin
    } else {
      events_.push_back(Event{iv.node, from, iv.amount});
    }
    if (iv.to < kNever) events_.push_back(Event{iv.node, iv.to, Resources{} - iv.amount});
  }
  std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
    return a.node != b.node ? a.node < b.node : a.time < b.time;
  });
  for (size_t i = 0; i < events_.size();) {
    const int32_t node = events_[i].node;
    std::vector<Step>& steps = nodes_[node].steps;
    Resources level = steps[0].used;
    while (i < events_.size() && events_[i].node == node) {
      const Time t = events_[i].time;
      for (; i < events_.size() && events_[i].node == node && events_[i].time == t; ++i) {
        level += events_[i].delta;
      }
      if (steps.back().time == t) {
        steps.back().used = level;
      } else if (!(steps.back().used == level)) {
        steps.push_back(Step{t, level});
      }
    }
  }
}

size_t Timeline::StepAt(const NodeLine& line, Time t) {
  // Last step with time <= t. Most questions are about now, the first step.
  if (line.steps.size() == 1 || t < line.steps[1].time) return 0;
  // Binary search keeps long lines cheap.
  auto it = std::upper_bound(line.steps.begin(), line.steps.end(), t,
                             [](Time v, const Step& s) { return v < s.time; });
  return static_cast<size_t>(it - line.steps.begin()) - 1;
}

size_t Timeline::SplitAt(NodeLine& line, Time t) {
  size_t i = StepAt(line, t);
  if (line.steps[i].time == t) return i;
  line.steps.insert(line.steps.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    Step{t, line.steps[i].used});
  return i + 1;
}

void Timeline::Apply(int32_t node, const Resources& delta, Time from, Time to, bool merge) {
  from = std::max(from, origin_);
  if (to <= from) return;
  NodeLine& line = nodes_[node];
  size_t a = SplitAt(line, from);
  size_t b = to >= kNever ? line.steps.size() : SplitAt(line, to);
  for (size_t i = a; i < b; ++i) line.steps[i].used += delta;
  if (!merge) return;
  // Coalesce equal neighbours around the changed range so lines do not grow without bound.
  size_t lo = a > 0 ? a - 1 : 0;
  size_t hi = std::min(b + 1, line.steps.size());
  size_t out = lo + 1;
  for (size_t i = lo + 1; i < hi; ++i) {
    if (line.steps[i].used == line.steps[out - 1].used) continue;
    line.steps[out++] = line.steps[i];
  }
  if (out < hi) {
    line.steps.erase(line.steps.begin() + static_cast<std::ptrdiff_t>(out),
                     line.steps.begin() + static_cast<std::ptrdiff_t>(hi));
  }
}

void Timeline::Add(int32_t node, const Resources& amount, Time from, Time to) {
  Apply(node, amount, from, to, /*merge=*/false);
}

void Timeline::Remove(int32_t node, const Resources& amount, Time from, Time to) {
  Apply(node, Resources{} - amount, from, to, /*merge=*/true);
}

void Timeline::Add(const Allocation& alloc, Time from, Time to) {
  for (const NodeAlloc& a : alloc) Add(a.node, a.amount, from, to);
}

void Timeline::Remove(const Allocation& alloc, Time from, Time to) {
  for (const NodeAlloc& a : alloc) Remove(a.node, a.amount, from, to);
}

bool Timeline::Overbooked(int32_t node) const {
  const NodeLine& line = nodes_[node];
  for (const Step& step : line.steps) {
    if (!line.capacity.Covers(step.used)) return true;
  }
  return false;
}

Resources Timeline::FreeOver(int32_t node, Time from, Time to) const {
  const NodeLine& line = nodes_[node];
  from = std::max(from, origin_);
  size_t i = StepAt(line, from);
  Resources peak = line.steps[i].used;
  for (++i; i < line.steps.size() && line.steps[i].time < to; ++i) {
    const Resources& u = line.steps[i].used;
    peak.cpus = std::max(peak.cpus, u.cpus);
    peak.gpus = std::max(peak.gpus, u.gpus);
    peak.mem_mb = std::max(peak.mem_mb, u.mem_mb);
  }
  return line.capacity - peak;
}

bool Timeline::FitsOver(int32_t node, const Resources& need, Time from, Time to) const {
  const NodeLine& line = nodes_[node];
  if (!line.capacity.Covers(need)) return false;
  const Resources room = line.capacity - need;
  size_t i = StepAt(line, std::max(from, origin_));
  if (!room.Covers(line.steps[i].used)) return false;
  for (++i; i < line.steps.size() && line.steps[i].time < to; ++i) {
    if (!room.Covers(line.steps[i].used)) return false;
  }
  return true;
}

Time Timeline::EarliestFit(int32_t node, const Resources& need, Time from, int64_t duration,
                           Time limit, int64_t resolution) const {
  const NodeLine& line = nodes_[node];
  if (!line.capacity.Covers(need)) return kNever;
  // The most a step may already use for `need` to fit beside it.
  const Resources room = line.capacity - need;
  auto round_up = [&](Time t) {
    if (resolution <= 1 || t <= origin_) return t;
    Time r = (t + resolution - 1) / resolution * resolution;
    return r;
  };
  Time s = round_up(std::max(from, origin_));
  size_t n = line.steps.size();
  size_t i = StepAt(line, s);
  while (s < limit) {
    Time end = SaturatingAdd(s, duration);
    size_t j = i;
    while (j < n && line.steps[j].time < end && room.Covers(line.steps[j].used)) ++j;
    if (j == n || line.steps[j].time >= end) return s;
    // Step j blocks every window that starts before the next step begins.
    if (j + 1 == n) return kNever;
    s = round_up(line.steps[j + 1].time);
    i = StepAt(line, s);
  }
  return kNever;
}

Time Timeline::NextRelease(int32_t node, Time t) const {
  const NodeLine& line = nodes_[node];
  size_t i = StepAt(line, std::max(t, origin_));
  for (size_t k = i + 1; k < line.steps.size(); ++k) {
    const Resources& prev = line.steps[k - 1].used;
    const Resources& cur = line.steps[k].used;
    if (cur.cpus < prev.cpus || cur.gpus < prev.gpus || cur.mem_mb < prev.mem_mb) {
      return line.steps[k].time;
    }
  }
  return kNever;
}

}  // namespace loom::sched
