// The planner a policy works with during one pass: the availability timeline built from the
// running jobs, plus the questions policies ask of it — can this job start at t, when is the
// earliest it can start, reserve or release its resources. Also caches, per pass, which
// nodes each kind of job may use (partition, node state, --constraint, GPU type).
// Not thread-safe; one planner per pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/plan/timeline.h"
#include "sched/select/selector.h"
#include "sched/types.h"

namespace loom::sched {

class Planner {
 public:
  // Rebuilds the timeline at `now` from the running jobs: each holds its allocation over
  // [now, end). A job whose predicted end is not after `now` holds nothing. `also_held`
  // adds more holdings at once (kept reservations), cheaper than Hold() one by one.
  void Reset(const Cluster& cluster, Time now, std::span<const RunningJob> running,
             std::span<const Timeline::Interval> also_held = {});

  Time now() const { return now_; }
  Timeline& timeline() { return timeline_; }
  const Timeline& timeline() const { return timeline_; }

  // The nodes `job` may use, in selection order (Weight, then configuration order).
  // Empty when none qualifies; `reason` then says why.
  const std::vector<int32_t>& Eligible(const PendingJob& job, model::PendingReason* reason);

  // Whether `job` fits over [start, start + estimate); fills `out` with its allocation.
  bool FitsAt(const PendingJob& job, Time start, Allocation* out);
  // Earliest start in [from, limit) at which `job` fits for its estimate, or kNever.
  // Start times after now are rounded up to a multiple of `resolution`.
  Time EarliestStart(const PendingJob& job, Time from, Time limit, int64_t resolution,
                     Allocation* out);

  void Hold(const Allocation& alloc, Time start, int64_t duration) {
    timeline_.Add(alloc, start, SaturatingAdd(start, duration));
  }
  void Release(const Allocation& alloc, Time start, int64_t duration) {
    timeline_.Remove(alloc, start, SaturatingAdd(start, duration));
  }

 private:
  // The nodes one kind of job may use. Passes see few kinds (partition, constraint and
  // GPU type combinations), so a short list searched in order beats hashing a key.
  struct EligibleSet {
    int32_t partition;
    std::string constraint;
    std::string gpu_type;
    std::vector<int32_t> nodes;
    model::PendingReason reason = model::PendingReason::kNone;
  };
  void Fill(EligibleSet& set) const;
  Time EarliestSingleNode(const PendingJob& job, const std::vector<int32_t>& nodes, Time from,
                          Time limit, int64_t resolution, Allocation* out);
  Time EarliestMultiNode(const PendingJob& job, const std::vector<int32_t>& nodes, Time from,
                         Time limit, int64_t resolution, Allocation* out);

  const Cluster* cluster_ = nullptr;
  uint64_t generation_ = 0;
  Time now_ = 0;
  Timeline timeline_;
  std::vector<int32_t> node_order_;  // all nodes by (weight, index)
  std::vector<EligibleSet> eligible_cache_;
  size_t last_eligible_ = 0;
  std::vector<Resources> caps_;
  std::vector<Timeline::Interval> holdings_;
  std::vector<Candidate> scratch_;
  std::vector<Time> scratch_times_;
};

}  // namespace loom::sched
