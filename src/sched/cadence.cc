#include "sched/cadence.h"

#include <algorithm>

namespace loom::sched {

Time Cadence::NextTick(Time last, bool waiting) const {
  if (!waiting) return kNever;
  return std::min(NextOnGrid(last, periodic_), NextOnGrid(last, main_));
}

std::optional<PassTrigger> Cadence::TimedPass(Time last, Time now, bool waiting) const {
  if (!waiting || now <= last) return std::nullopt;
  if (NextOnGrid(last, periodic_) <= now) return PassTrigger::kPeriodic;
  if (NextOnGrid(last, main_) <= now) return PassTrigger::kMain;
  return std::nullopt;
}

}  // namespace loom::sched
