// Scheduling policies, selectable by name. A policy turns one pass's input (the cluster,
// running and pending jobs, now) into decisions: which jobs start where, which hold
// reservations, and why the others wait. Policies keep no state between passes (what must
// persist, like conservative reservations, comes back in PassOutput and is handed in again
// by the driver), so the controller and the simulator get identical decisions for
// identical inputs. A Policy object is not thread-safe (it keeps scratch space); use one
// per thread.
//
//   fcfs          strict priority order, no backfill
//   easy          EASY backfilling: only the first blocked job holds a reservation
//   conservative  every waiting job holds a reservation, kept and compressed across passes
//   slurm         Slurm's sched/backfill: a main pass in priority order on every event (the
//                 first default_queue_depth jobs) and every sched_interval (all of them),
//                 and every bf_interval a backfill pass that reserves each tested job that
//                 cannot start at its earliest start (bf_window, bf_resolution,
//                 bf_max_job_test, bf_max_job_start, bf_max_job_part, bf_min_age_reserve)
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "core/status.h"
#include "sched/limits/limits.h"
#include "sched/plan/planner.h"
#include "sched/types.h"

namespace loom::sched {

enum class BackfillOrder : uint8_t {
  kQueue,          // priority (queue) order
  kShortestFirst,  // stable sort by estimate
};

struct PolicyOptions {
  BackfillOrder order = BackfillOrder::kQueue;
  // Slurm SchedulerParameters, in seconds where Slurm uses minutes.
  int64_t bf_interval_s = 30;
  int64_t bf_window_s = 1440 * 60;
  int64_t bf_resolution_s = 60;
  int32_t bf_max_job_test = 500;  // 0: no limit
  int32_t bf_max_job_start = 0;   // 0: no limit
  int32_t bf_max_job_part = 0;    // 0: no limit
  int64_t bf_min_age_reserve_s = 0;
  int32_t default_queue_depth = 100;  // jobs the event-driven main pass looks at; 0: all
  int64_t sched_interval_s = 60;      // the main pass over the whole queue; <= 0: none
  int64_t sched_min_interval_us = 2;  // the least time between two event-driven passes
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // Seconds between periodic passes the driver should run (0: only event-driven passes).
  virtual int64_t periodic_interval() const { return 0; }
  // Seconds between main passes over the whole queue (kMain; 0: none).
  virtual int64_t main_interval() const { return 0; }
  // Whole seconds an event-driven pass waits after the last one (0: none).
  virtual int64_t min_event_gap() const { return 0; }
  // Runs one pass. `out` is overwritten.
  virtual void Pass(const PassInput& in, PassOutput* out) = 0;
};

// The policy names MakePolicy accepts, in the order reports list them.
std::span<const std::string_view> PolicyNames();
StatusOr<std::unique_ptr<Policy>> MakePolicy(std::string_view name, const PolicyOptions& opts);

// Shared pieces of the policies (internal, but small enough to live here).
namespace policy_internal {

// Prepares `out` for a pass over `in`: clears it, sizes reasons, copies the decision seq.
void BeginPass(const PassInput& in, PassOutput* out);
// Partition limits a job can never pass (its time limit above MaxTime, node count outside
// the partition's bounds): the reason, or kNone.
model::PendingReason LimitReason(const Cluster& cluster, const PendingJob& job);
// Why a job cannot be scheduled at all in this pass (held, dependency, begin time, a
// partition limit), or kNone.
model::PendingReason UnschedulableReason(const Cluster& cluster, const PendingJob& job);
// Why a schedulable job waits: what its node set says (bad constraint, partition down),
// else `otherwise` (Resources or Priority).
model::PendingReason WaitReason(Planner& planner, const PendingJob& job,
                                model::PendingReason otherwise);
// Whether association and QOS limits let job `idx` start now, with what the pass started so
// far; when not, records the limit as its reason.
bool WithinLimits(const LimitTally& tally, const PassInput& in, int32_t idx, PassOutput* out);
// Records a start, holds its resources on the planner's timeline and counts it in `tally`.
void Start(Planner& planner, LimitTally& tally, const PassInput& in, int32_t idx, Allocation alloc,
           bool backfilled, PassOutput* out);
// Candidate order for a backfill scan over `order` (queue order, or stable by estimate).
void OrderCandidates(std::span<const PendingJob> jobs, BackfillOrder how,
                     std::vector<int32_t>* order);

}  // namespace policy_internal
}  // namespace loom::sched
