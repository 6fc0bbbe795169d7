// The usage fair share weighs: billing-seconds charged to each (account, user) association,
// decayed with PriorityDecayHalfLife and cleared by PriorityUsageResetPeriod. Running jobs
// are charged for the time up to each recalculation (PriorityCalcPeriod) and, when they end,
// for the rest; a value type the controller stores and the simulator keeps in virtual time.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "conf/cluster_config.h"
#include "core/status.h"
#include "core/tres.h"
#include "sched/types.h"

namespace loom::sched {

using conf::UsageReset;

// The first reset boundary after `t` (UTC midnight of the next day, Monday, first of the
// month, quarter or year); nullopt for kNone and kNow.
std::optional<Time> NextReset(UsageReset r, Time t);

class UsageLedger {
 public:
  using Key = std::pair<std::string, std::string>;  // account, user

  // Decays every association's usage from the last decay to `now`, clearing it first when a
  // reset boundary passed meanwhile. Returns whether anything changed.
  bool Advance(Time now, int64_t half_life_s, UsageReset reset);
  // Adds `billing_seconds` (already scaled by the QOS's UsageFactor) to an association.
  void Charge(const std::string& account, const std::string& user, double billing_seconds);
  // Adds what a job held, times `seconds` (scaled as above), to an association's TRES
  // usage, or to a QOS's; it decays and resets with the billing usage (GrpTRESMins).
  void ChargeTres(const std::string& account, const std::string& user, const core::TresVector& tres,
                  double seconds);
  void ChargeQosTres(const std::string& qos, const core::TresVector& tres, double seconds);
  // Clears every association's usage (PriorityUsageResetPeriod=NOW at a start).
  void Reset(Time now);

  double UsageOf(const std::string& account, const std::string& user) const;
  const std::map<Key, double>& usage() const { return usage_; }
  // TRES-seconds by association and by QOS, decayed.
  using TresSeconds = std::map<std::string, double>;
  const std::map<Key, TresSeconds>& tres_usage() const { return tres_; }
  const std::map<std::string, TresSeconds>& qos_tres_usage() const { return qos_tres_; }
  // Running jobs are charged up to here; each job for the part of its run after it.
  Time charged_to() const { return charged_to_; }
  void set_charged_to(Time t) { charged_to_ = t; }
  Time last_decay() const { return last_decay_; }

  // A line-oriented text form for the controller's store; Parse names `where` in its errors.
  std::string Serialize() const;
  static StatusOr<UsageLedger> Parse(std::string_view text, std::string_view where);

  friend bool operator==(const UsageLedger&, const UsageLedger&) = default;

 private:
  std::map<Key, double> usage_;
  std::map<Key, TresSeconds> tres_;
  std::map<std::string, TresSeconds> qos_tres_;
  Time charged_to_ = 0;
  Time last_decay_ = 0;
};

}  // namespace loom::sched
