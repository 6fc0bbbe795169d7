// easy: EASY backfilling as in the published studies (SIM-CONVENTIONS.md, rules 12-17).
// Jobs start in queue order while they fit; the first that does not (the head) is
// reserved at its earliest start (the shadow time); then every other waiting job, in queue
// order or shortest-estimate-first, starts if it fits now without touching the head's
// reservation. The reservation is dropped after the pass.
//
// Over one pool of processors the timeline formulation is exactly the shadow-time/extra-
// processors rule: free processors only grow over time once running jobs alone are on
// the timeline, so "fits on the timeline with the head reserved" is "procs <= free(now)
// and (ends by the shadow time or procs <= extra)".
#include <vector>

#include "sched/backfill/policy.h"
#include "sched/priority/priority.h"

namespace loom::sched {
namespace {

class EasyPolicy final : public Policy {
 public:
  explicit EasyPolicy(const PolicyOptions& opts) : opts_(opts) {}
  std::string_view name() const override { return "easy"; }

  void Pass(const PassInput& in, PassOutput* out) override {
    using model::PendingReason;
    policy_internal::BeginPass(in, out);
    const Cluster& cluster = *in.cluster;
    planner_.Reset(cluster, in.now, in.running);
    tally_ = LimitTally(in.limits);
    std::vector<int32_t> queue = QueueOrder(cluster, in.pending);

    // Jobs that may be scheduled at all; the others only get their reason.
    waiting_.clear();
    for (int32_t idx : queue) {
      const PendingJob& job = in.pending[idx];
      PendingReason r = policy_internal::UnschedulableReason(cluster, job);
      if (r != PendingReason::kNone) {
        out->reasons[idx] = r;
      } else {
        waiting_.push_back(idx);
      }
    }

    // Head phase: start jobs in order while the first one fits.
    size_t head = 0;
    Allocation alloc;
    for (; head < waiting_.size(); ++head) {
      const PendingJob& job = in.pending[waiting_[head]];
      // A job a limit holds is passed over: it is no head and keeps nobody waiting.
      if (!policy_internal::WithinLimits(tally_, in, waiting_[head], out)) continue;
      ++out->stats.jobs_tested;
      if (!planner_.FitsAt(job, in.now, &alloc)) break;
      policy_internal::Start(planner_, tally_, in, waiting_[head], std::move(alloc), false, out);
    }
    if (head >= waiting_.size()) return;
    const int32_t head_idx = waiting_[head];
    const PendingJob& head_job = in.pending[head_idx];
    out->reasons[head_idx] =
        policy_internal::WaitReason(planner_, head_job, PendingReason::kResources);
    // A lone head gets no reservation (nothing could be backfilled around it).
    if (head + 1 >= waiting_.size()) return;

    Time shadow = planner_.EarliestStart(head_job, in.now, kNever, 1, &alloc);
    if (shadow < kNever) {
      planner_.Hold(alloc, shadow, head_job.estimate);
      out->transient_reservations.emplace_back(head_idx, Reservation{shadow, alloc, 0});
      ++out->stats.reservations;
    }

    candidates_.assign(waiting_.begin() + static_cast<std::ptrdiff_t>(head) + 1, waiting_.end());
    policy_internal::OrderCandidates(in.pending, opts_.order, &candidates_);
    for (int32_t idx : candidates_) {
      const PendingJob& job = in.pending[idx];
      if (!policy_internal::WithinLimits(tally_, in, idx, out)) continue;
      ++out->stats.jobs_tested;
      if (planner_.FitsAt(job, in.now, &alloc)) {
        policy_internal::Start(planner_, tally_, in, idx, std::move(alloc), true, out);
      } else {
        out->reasons[idx] = policy_internal::WaitReason(planner_, job, PendingReason::kPriority);
      }
    }
  }

 private:
  PolicyOptions opts_;
  Planner planner_;
  LimitTally tally_;
  std::vector<int32_t> waiting_;
  std::vector<int32_t> candidates_;
};

}  // namespace

std::unique_ptr<Policy> MakeEasyPolicy(const PolicyOptions& opts) {
  return std::make_unique<EasyPolicy>(opts);
}

}  // namespace loom::sched
