// slurm: the behaviour of Slurm's sched/backfill.
//  - Event-driven passes (submission, termination) run Slurm's main scheduler: jobs in
//    priority order, at most default_queue_depth of them, start where they fit now; the
//    first job of a partition that does not fit blocks the rest of that partition. Every
//    sched_interval (kMain) the main scheduler runs over the whole queue.
//  - Periodic passes (every bf_interval) run the main scheduler and then the backfill
//    scheduler: every tested job (at most bf_max_job_test, bf_max_job_part per partition)
//    starts if it fits now without delaying a reservation made earlier in the pass, and
//    otherwise is reserved at its earliest start within bf_window, with start times
//    rounded to bf_resolution. At most bf_max_job_start jobs start this way per pass.
//    Reservations live only for the pass, as in Slurm.
#include <algorithm>
#include <vector>

#include "sched/backfill/policy.h"
#include "sched/priority/priority.h"

namespace loom::sched {
namespace {

class SlurmPolicy final : public Policy {
 public:
  explicit SlurmPolicy(const PolicyOptions& opts) : opts_(opts) {}
  std::string_view name() const override { return "slurm"; }
  int64_t periodic_interval() const override { return opts_.bf_interval_s; }
  int64_t main_interval() const override { return std::max<int64_t>(0, opts_.sched_interval_s); }
  int64_t min_event_gap() const override { return opts_.sched_min_interval_us / 1'000'000; }

  void Pass(const PassInput& in, PassOutput* out) override {
    policy_internal::BeginPass(in, out);
    const Cluster& cluster = *in.cluster;
    planner_.Reset(cluster, in.now, in.running);
    tally_ = LimitTally(in.limits);
    std::vector<int32_t> queue = QueueOrder(cluster, in.pending);
    started_.assign(in.pending.size(), 0);
    MainPass(in, queue, out);
    if (in.trigger == PassTrigger::kPeriodic) BackfillPass(in, queue, out);
  }

 private:
  void MainPass(const PassInput& in, const std::vector<int32_t>& queue, PassOutput* out) {
    using model::PendingReason;
    const Cluster& cluster = *in.cluster;
    blocked_.assign(cluster.partitions.size() + 1, 0);
    int32_t depth = 0;
    Allocation alloc;
    for (int32_t idx : queue) {
      const PendingJob& job = in.pending[idx];
      PendingReason r = policy_internal::UnschedulableReason(cluster, job);
      if (r != PendingReason::kNone) {
        out->reasons[idx] = r;
        continue;
      }
      if (blocked_[static_cast<size_t>(job.partition)]) {
        out->reasons[idx] = PendingReason::kPriority;
        continue;
      }
      // A job a limit holds keeps no other job of its partition waiting.
      if (!policy_internal::WithinLimits(tally_, in, idx, out)) continue;
      if (opts_.default_queue_depth > 0 && depth >= opts_.default_queue_depth &&
          (in.trigger == PassTrigger::kSubmit || in.trigger == PassTrigger::kTermination)) {
        out->reasons[idx] = PendingReason::kPriority;
        continue;
      }
      ++depth;
      ++out->stats.jobs_tested;
      if (planner_.FitsAt(job, in.now, &alloc)) {
        policy_internal::Start(planner_, tally_, in, idx, std::move(alloc), false, out);
        started_[idx] = 1;
      } else {
        out->reasons[idx] = policy_internal::WaitReason(planner_, job, PendingReason::kResources);
        blocked_[static_cast<size_t>(job.partition)] = 1;
      }
    }
  }

  void BackfillPass(const PassInput& in, const std::vector<int32_t>& queue, PassOutput* out) {
    using model::PendingReason;
    const Cluster& cluster = *in.cluster;
    per_part_.assign(cluster.partitions.size() + 1, 0);
    std::vector<char> part_waiting(cluster.partitions.size() + 1, 0);
    const Time horizon = SaturatingAdd(in.now, opts_.bf_window_s);
    const int64_t resolution = std::max<int64_t>(1, opts_.bf_resolution_s);
    int32_t tested = 0, bf_started = 0;
    bool any_reserved = false;
    Allocation alloc;
    for (int32_t idx : queue) {
      const PendingJob& job = in.pending[idx];
      if (started_[idx]) continue;
      if (policy_internal::UnschedulableReason(cluster, job) != PendingReason::kNone) continue;
      // Held by a limit: no start and no reservation (its reason is set).
      if (!policy_internal::WithinLimits(tally_, in, idx, out)) continue;
      if (opts_.bf_max_job_test > 0 && tested >= opts_.bf_max_job_test) break;
      int32_t& part_count = per_part_[static_cast<size_t>(job.partition)];
      if (opts_.bf_max_job_part > 0 && part_count >= opts_.bf_max_job_part) continue;
      ++tested;
      ++part_count;
      ++out->stats.jobs_tested;
      Time t = planner_.EarliestStart(job, in.now, horizon, resolution, &alloc);
      if (t == in.now) {
        policy_internal::Start(planner_, tally_, in, idx, std::move(alloc), any_reserved, out);
        started_[idx] = 1;
        if (opts_.bf_max_job_start > 0 && ++bf_started >= opts_.bf_max_job_start) break;
        continue;
      }
      // The partition's first waiting job waits for Resources, the others for Priority.
      char& seen = part_waiting[static_cast<size_t>(job.partition)];
      out->reasons[idx] = policy_internal::WaitReason(
          planner_, job, seen ? PendingReason::kPriority : PendingReason::kResources);
      seen = 1;
      if (t >= kNever) continue;  // not within bf_window: no reservation
      if (in.now - job.submit < opts_.bf_min_age_reserve_s) continue;
      planner_.Hold(alloc, t, job.estimate);
      out->transient_reservations.emplace_back(idx, Reservation{t, alloc, 0});
      ++out->stats.reservations;
      any_reserved = true;
    }
  }

  PolicyOptions opts_;
  Planner planner_;
  LimitTally tally_;
  std::vector<char> started_;
  std::vector<char> blocked_;
  std::vector<int32_t> per_part_;
};

}  // namespace

std::unique_ptr<Policy> MakeSlurmPolicy(const PolicyOptions& opts) {
  return std::make_unique<SlurmPolicy>(opts);
}

}  // namespace loom::sched
