// When a driver runs scheduling passes, and of which kind: the one answer both drivers use,
// so that the controller and the simulator pass the same triggers at the same times.
//
//  - An event (a submission, a job's end, a node back in service) calls for a pass of its
//    kind at once (PassTrigger::kSubmit, kTermination), but not sooner than
//    `min_event_gap` after the last event pass (SchedulerParameters=sched_min_interval,
//    in whole seconds: both drivers count time in seconds, so Slurm's default of 2 µs
//    changes nothing); a deferred event pass runs when the gap has passed.
//  - Timed passes fall on a grid of multiples of their interval, and only while jobs wait:
//    the policy's periodic pass (kPeriodic: the `slurm` policy's backfill cycle,
//    bf_interval) and its main pass over the whole queue (kMain: sched_interval). Where
//    both fall at one time, the periodic pass runs alone: it begins with that main pass.
//
// The grid is anchored at time 0 of the driver's clock (Unix time in the controller,
// trace time in the simulator), as the published backfilling studies tick. Pure; a
// Cadence is a value the driver keeps. Thread-compatible.
#pragma once

#include <cstdint>
#include <optional>

#include "sched/backfill/policy.h"
#include "sched/types.h"

namespace loom::sched {

class Cadence {
 public:
  Cadence() = default;
  explicit Cadence(const Policy& policy)
      : periodic_(policy.periodic_interval()),
        main_(policy.main_interval()),
        gap_(policy.min_event_gap()) {}

  // The first timed pass after `last` (the time the driver last looked) while jobs wait;
  // kNever when none is due (no job waits, or the policy has no timed passes).
  Time NextTick(Time last, bool waiting) const;

  // The timed pass due at `now` (after the passes of its events), given the time the driver
  // last looked, `last`, and whether jobs waited then: kPeriodic when a periodic tick falls
  // in (last, now], else kMain when a main tick does, else none.
  std::optional<PassTrigger> TimedPass(Time last, Time now, bool waiting) const;

  // Whether an event pass may run at `now`, and when one may run next.
  bool EventPassAllowed(Time now) const { return !ran_event_pass_ || now >= allowed_at(); }
  Time allowed_at() const { return ran_event_pass_ ? SaturatingAdd(last_event_pass_, gap_) : 0; }
  // An event pass ran at `now`.
  void EventPassRan(Time now) {
    ran_event_pass_ = true;
    last_event_pass_ = now;
  }

 private:
  static Time NextOnGrid(Time last, int64_t interval) {
    return interval > 0 ? (last / interval + 1) * interval : kNever;
  }
  int64_t periodic_ = 0;
  int64_t main_ = 0;
  int64_t gap_ = 0;
  bool ran_event_pass_ = false;
  Time last_event_pass_ = 0;
};

// The trigger of one pass that stands for several events: a job's end (resources freed)
// outweighs a submission.
inline PassTrigger Stronger(PassTrigger a, PassTrigger b) {
  return a == PassTrigger::kTermination || b == PassTrigger::kTermination ? PassTrigger::kTermination
                                                                          : PassTrigger::kSubmit;
}

}  // namespace loom::sched
