#include "sched/backfill/policy.h"

#include <algorithm>
#include <array>

#include "core/strings.h"

namespace loom::sched {

std::unique_ptr<Policy> MakeFcfsPolicy(const PolicyOptions& opts);
std::unique_ptr<Policy> MakeEasyPolicy(const PolicyOptions& opts);
std::unique_ptr<Policy> MakeConservativePolicy(const PolicyOptions& opts);
std::unique_ptr<Policy> MakeSlurmPolicy(const PolicyOptions& opts);

namespace {
constexpr std::array<std::string_view, 4> kNames = {"fcfs", "easy", "conservative", "slurm"};
}  // namespace

std::span<const std::string_view> PolicyNames() { return kNames; }

StatusOr<std::unique_ptr<Policy>> MakePolicy(std::string_view name, const PolicyOptions& opts) {
  if (name == "fcfs") return MakeFcfsPolicy(opts);
  if (name == "easy") return MakeEasyPolicy(opts);
  if (name == "conservative") return MakeConservativePolicy(opts);
  if (name == "slurm") return MakeSlurmPolicy(opts);
  return absl::InvalidArgumentError(core::StrCat("unknown scheduling policy '", name,
                                                 "': choose fcfs, easy, conservative or slurm"));
}

namespace policy_internal {

void BeginPass(const PassInput& in, PassOutput* out) {
  out->starts.clear();
  out->reservations.clear();
  out->transient_reservations.clear();
  out->reasons.assign(in.pending.size(), model::PendingReason::kNone);
  out->next_decision_seq = in.next_decision_seq;
  out->stats = PassStats{};
}

model::PendingReason LimitReason(const Cluster& cluster, const PendingJob& job) {
  if (job.partition < 0 || job.partition >= static_cast<int32_t>(cluster.partitions.size())) {
    return model::PendingReason::kPartitionDown;
  }
  const model::Partition& p = cluster.partitions[job.partition];
  if (job.estimate > p.max_time_s) return model::PendingReason::kPartitionTimeLimit;
  if (job.shape.min_nodes > p.max_nodes || job.shape.max_nodes < p.min_nodes) {
    return model::PendingReason::kPartitionNodeLimit;
  }
  return model::PendingReason::kNone;
}

model::PendingReason UnschedulableReason(const Cluster& cluster, const PendingJob& job) {
  if (job.blocked != model::PendingReason::kNone) return job.blocked;
  return LimitReason(cluster, job);
}

model::PendingReason WaitReason(Planner& planner, const PendingJob& job,
                                model::PendingReason otherwise) {
  model::PendingReason why = model::PendingReason::kNone;
  planner.Eligible(job, &why);
  if (why != model::PendingReason::kNone) return why;
  if (otherwise == model::PendingReason::kResources) {
    why = planner.ReservationReason(job);
    if (why != model::PendingReason::kNone) return why;
  }
  return otherwise;
}

bool WithinLimits(const LimitTally& tally, const PassInput& in, int32_t idx, PassOutput* out) {
  const model::PendingReason r = tally.Check(in.pending[idx]);
  if (r == model::PendingReason::kNone) return true;
  out->reasons[idx] = r;
  return false;
}

void Start(Planner& planner, LimitTally& tally, const PassInput& in, int32_t idx, Allocation alloc,
           bool backfilled, PassOutput* out) {
  planner.Hold(alloc, in.now, in.pending[idx].estimate);
  tally.Charge(in.pending[idx]);
  out->reasons[idx] = model::PendingReason::kNone;
  out->starts.push_back(JobStart{idx, std::move(alloc), backfilled});
  ++out->stats.started;
  if (backfilled) ++out->stats.backfilled;
}

void OrderCandidates(std::span<const PendingJob> jobs, BackfillOrder how,
                     std::vector<int32_t>* order) {
  if (how == BackfillOrder::kShortestFirst) {
    std::stable_sort(order->begin(), order->end(),
                     [&](int32_t a, int32_t b) { return jobs[a].estimate < jobs[b].estimate; });
  }
}

}  // namespace policy_internal
}  // namespace loom::sched
