// Advance reservations as the controller keeps them (scontrol create|update|delete
// reservation): what each holds and for whom, the words scontrol sends read into one, who
// may use it, and how a recurring one rolls forward. The scheduling core sees each as a
// sched::AdvanceReservation. Pure functions and values; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "core/status.h"
#include "sched/types.h"

namespace loom::ctld {

using sched::Time;

// Slurm's reservation flags that Loom acts on.
enum ReservationFlag : uint32_t {
  kResvMaint = 1u << 0,       // maintenance: nodes shown "maint", jobs told so
  kResvIgnoreJobs = 1u << 1,  // made over running jobs, which keep running
  kResvOverlap = 1u << 2,     // may share nodes with another reservation at once
  kResvDaily = 1u << 3,       // recurs: the same window a day later
  kResvWeekly = 1u << 4,      // a week later
  kResvWeekday = 1u << 5,     // the next Monday to Friday
  kResvWeekend = 1u << 6,     // the next Saturday or Sunday
  kResvPurgeComp = 1u << 7,   // deleted once idle for purge_after_s after it began
  kResvSpecNodes = 1u << 8,   // its nodes were named (Nodes=), shown as Slurm does
};
inline constexpr uint32_t kResvRecurring = kResvDaily | kResvWeekly | kResvWeekday | kResvWeekend;

struct ReservationRecord {
  std::string name;
  Time start = 0;
  Time end = 0;
  std::vector<std::string> nodes;  // node names, in cluster order
  std::string partition;           // PartitionName=, empty: none
  std::string features;            // Features=
  std::vector<std::string> users;  // who may use it; all but them when users_deny
  bool users_deny = false;
  std::vector<std::string> accounts;
  bool accounts_deny = false;
  uint32_t flags = 0;
  int64_t purge_after_s = 300;  // PURGE_COMP[=time]
  friend bool operator==(const ReservationRecord&, const ReservationRecord&) = default;
};

// What scontrol create|update reservation asks for beyond the record's own fields: how many
// nodes to choose when it names none (NodeCnt=), and which fields it set.
struct ReservationAsk {
  int32_t node_count = 0;
  bool nodes_set = false;  // Nodes=
  bool times_set = false;  // StartTime=, EndTime= or Duration=
  bool duration_set = false;
  int64_t duration_s = 0;
  bool end_set = false;
};

// Applies scontrol's KEY=VALUE words to `r` (a new record, or an existing one on update).
// Keys are Slurm's, in any case; StartTime and EndTime come in Unix seconds. Errors name the
// word and say what would be accepted.
Status ApplyReservationWords(const std::vector<std::pair<std::string, std::string>>& words,
                             bool creating, Time now, ReservationRecord* r, ReservationAsk* ask);

// "MAINT,IGNORE_JOBS,SPEC_NODES" or "DAILY,PURGE_COMP=00:05:00", in Slurm's order.
std::string ReservationFlagsString(uint32_t flags, int64_t purge_after_s);

// Whether `user` charging `account` may run jobs in it. With no Users and no Accounts
// (a maintenance window) only root and SlurmUser may.
bool MayUseReservation(const ReservationRecord& r, std::string_view user, std::string_view account,
                       bool privileged);

// The next window of a recurring reservation that has ended at `now`: moved by a day, a
// week, or to the next weekday or weekend day (in `zone`), until it ends after `now`.
void RollForward(ReservationRecord* r, Time now, const absl::TimeZone& zone);

// Users=/Accounts= as shown and stored: "alice,bob", or "-carol" for all but carol.
std::string AccessListString(const std::vector<std::string>& names, bool deny);
Status ReadAccessList(std::string_view key, std::string_view value, std::vector<std::string>* list,
                      bool* deny);
// Flags as ReservationFlagsString writes them back into bits.
uint32_t ReservationFlagsFrom(std::string_view text);

// Whether a scontrol word's key names the reservation (ReservationName=, Reservation=,
// ResvName=, any case).
bool IsReservationNameKey(std::string_view key);

// The named value a reservation is stored under, and the name a key stores (empty when the
// key is not a reservation's).
std::string ReservationKey(std::string_view name);
std::string_view ReservationOfKey(std::string_view key);

}  // namespace loom::ctld
