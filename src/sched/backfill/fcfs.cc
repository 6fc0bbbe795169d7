// fcfs: jobs start strictly in queue order; the first job of a partition that cannot start
// blocks every later job of that partition. No backfilling.
#include <vector>

#include "sched/backfill/policy.h"
#include "sched/priority/priority.h"

namespace loom::sched {
namespace {

class FcfsPolicy final : public Policy {
 public:
  explicit FcfsPolicy(const PolicyOptions& opts) : opts_(opts) {}
  std::string_view name() const override { return "fcfs"; }

  void Pass(const PassInput& in, PassOutput* out) override {
    using model::PendingReason;
    policy_internal::BeginPass(in, out);
    const Cluster& cluster = *in.cluster;
    planner_.Reset(cluster, in.now, in.running);
    tally_ = LimitTally(in.limits);
    std::vector<char> blocked(cluster.partitions.size() + 1, 0);
    Allocation alloc;
    for (int32_t idx : QueueOrder(cluster, in.pending)) {
      const PendingJob& job = in.pending[idx];
      if (PendingReason r = policy_internal::UnschedulableReason(cluster, job);
          r != PendingReason::kNone) {
        out->reasons[idx] = r;
        continue;
      }
      char& part_blocked = blocked[static_cast<size_t>(job.partition)];
      if (part_blocked) {
        out->reasons[idx] = PendingReason::kPriority;
        continue;
      }
      // A job held by a limit keeps no other job waiting.
      if (!policy_internal::WithinLimits(tally_, in, idx, out)) continue;
      ++out->stats.jobs_tested;
      if (planner_.FitsAt(job, in.now, &alloc)) {
        policy_internal::Start(planner_, tally_, in, idx, std::move(alloc), false, out);
      } else {
        out->reasons[idx] = policy_internal::WaitReason(planner_, job, PendingReason::kResources);
        part_blocked = 1;
      }
    }
  }

 private:
  PolicyOptions opts_;
  Planner planner_;
  LimitTally tally_;
};

}  // namespace

std::unique_ptr<Policy> MakeFcfsPolicy(const PolicyOptions& opts) {
  return std::make_unique<FcfsPolicy>(opts);
}

}  // namespace loom::sched
