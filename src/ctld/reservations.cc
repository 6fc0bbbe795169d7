#include "ctld/reservations.h"

#include <algorithm>
#include <array>

#include "core/hostlist.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::ctld {
namespace {

using core::EqualsIgnoreCase;
using core::StrCat;

constexpr int64_t kDay = 86400;

struct FlagName {
  uint32_t bit;
  std::string_view name;
};
// Slurm's order, as scontrol show reservation prints them.
constexpr std::array<FlagName, 9> kFlags = {{
    {kResvMaint, "MAINT"},
    {kResvOverlap, "OVERLAP"},
    {kResvIgnoreJobs, "IGNORE_JOBS"},
    {kResvDaily, "DAILY"},
    {kResvWeekday, "WEEKDAY"},
    {kResvWeekend, "WEEKEND"},
    {kResvWeekly, "WEEKLY"},
    {kResvSpecNodes, "SPEC_NODES"},
    {kResvPurgeComp, "PURGE_COMP"},
}};

// Slurm flags Loom does not act on yet: refused by name rather than ignored.
constexpr std::array<std::string_view, 12> kUnsupportedFlags = {
    "FLEX",         "MAGNETIC",   "ANY_NODES",   "REPLACE",      "REPLACE_DOWN",       "TIME_FLOAT",
    "STATIC_ALLOC", "PART_NODES", "FIRST_CORES", "LICENSE_ONLY", "NO_HOLD_JOBS_AFTER", "HOURLY"};

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view piece : core::Split(text, ',')) {
    if (!piece.empty()) out.emplace_back(piece);
  }
  return out;
}

}  // namespace

// "alice,bob" or "-alice,-bob" (all but them).
Status ReadAccessList(std::string_view key, std::string_view value, std::vector<std::string>* list,
                      bool* deny) {
  list->clear();
  *deny = false;
  std::vector<std::string> names = SplitList(value);
  for (size_t i = 0; i < names.size(); ++i) {
    const bool minus = names[i].front() == '-';
    if (i == 0) *deny = minus;
    if (minus != *deny) {
      return absl::InvalidArgumentError(StrCat(
          "Invalid ", key, "=", value,
          ": either name who may use the reservation or, each with a leading '-', who may not"));
    }
    if (minus) names[i].erase(0, 1);
    if (names[i].empty()) {
      return absl::InvalidArgumentError(StrCat("Invalid ", key, "=", value, ": an empty name"));
    }
  }
  *list = std::move(names);
  return absl::OkStatus();
}

namespace {

Status ReadFlags(std::string_view value, ReservationRecord* r) {
  uint32_t flags = r->flags & kResvSpecNodes;
  for (std::string_view word : core::Split(value, ',')) {
    if (word.empty()) continue;
    std::string_view name = word;
    std::string_view arg;
    if (const size_t eq = word.find('='); eq != std::string_view::npos) {
      name = word.substr(0, eq);
      arg = word.substr(eq + 1);
    }
    const auto known = std::find_if(kFlags.begin(), kFlags.end(), [&](const FlagName& f) {
      return EqualsIgnoreCase(f.name, name);
    });
    if (known != kFlags.end() && known->bit != kResvSpecNodes) {
      flags |= known->bit;
      if (known->bit == kResvPurgeComp && !arg.empty()) {
        StatusOr<int64_t> idle = core::ParseDuration(arg);
        if (!idle.ok() || *idle <= 0) {
          return absl::InvalidArgumentError(
              StrCat("Invalid PURGE_COMP time '", arg, "': give a time such as 00:05:00"));
        }
        r->purge_after_s = *idle;
      }
      continue;
    }
    const bool later = std::any_of(kUnsupportedFlags.begin(), kUnsupportedFlags.end(),
                                   [&](std::string_view f) { return EqualsIgnoreCase(f, name); });
    if (later) {
      return absl::InvalidArgumentError(
          StrCat("Reservation flag ", name, " is not supported by Loom yet"));
    }
    return absl::InvalidArgumentError(StrCat("Error parsing flags ", value, ".  Loom knows MAINT, ",
                                             "IGNORE_JOBS, OVERLAP, DAILY, WEEKLY, WEEKDAY, ",
                                             "WEEKEND and PURGE_COMP[=time]"));
  }
  if (std::popcount(flags & kResvRecurring) > 1) {
    return absl::InvalidArgumentError(
        "A reservation recurs one way only: give one of DAILY, WEEKLY, WEEKDAY and WEEKEND");
  }
  r->flags = flags;
  return absl::OkStatus();
}

Status Unsupported(std::string_view key) {
  return absl::InvalidArgumentError(StrCat(
      key, "= is not supported by Loom yet: reservations hold whole nodes (Nodes= or NodeCnt=)"));
}

}  // namespace

Status ApplyReservationWords(const std::vector<std::pair<std::string, std::string>>& words,
                             bool creating, Time now, ReservationRecord* r, ReservationAsk* ask) {
  const Time old_start = r->start;
  const Time old_end = r->end;
  bool start_set = false;
  for (const auto& [key, value] : words) {
    if (IsReservationNameKey(key)) {
      if (!creating) continue;  // names the reservation to update
      if (value.empty() || value.find_first_of(" ,=") != std::string::npos) {
        return absl::InvalidArgumentError(
            StrCat("Invalid ReservationName '", value, "': no spaces, commas or '='"));
      }
      r->name = value;
    } else if (EqualsIgnoreCase(key, "StartTime")) {
      std::optional<int64_t> t = core::ParseInt(value);
      if (!t) return absl::InvalidArgumentError(StrCat("Invalid StartTime=", value));
      r->start = *t;
      start_set = true;
      ask->times_set = true;
    } else if (EqualsIgnoreCase(key, "EndTime")) {
      std::optional<int64_t> t = core::ParseInt(value);
      if (!t) return absl::InvalidArgumentError(StrCat("Invalid EndTime=", value));
      r->end = *t;
      ask->end_set = true;
      ask->times_set = true;
    } else if (EqualsIgnoreCase(key, "Duration")) {
      StatusOr<int64_t> d = core::ParseDuration(value);
      if (!d.ok() || *d <= 0 || *d >= core::kUnlimitedSeconds) {
        return absl::InvalidArgumentError(
            StrCat("Invalid Duration=", value, ": give minutes or [days-]hours:minutes:seconds"));
      }
      ask->duration_s = (*d + 59) / 60 * 60;  // whole minutes, rounded up, as Slurm keeps it
      ask->duration_set = true;
      ask->times_set = true;
    } else if (EqualsIgnoreCase(key, "Nodes") || EqualsIgnoreCase(key, "NodeList")) {
      if (EqualsIgnoreCase(value, "ALL")) {
        r->nodes = {"ALL"};
      } else {
        StatusOr<std::vector<std::string>> names = core::ExpandHostlist(value);
        if (!names.ok() || names->empty()) {
          return absl::InvalidArgumentError(StrCat("Invalid node name specified: ", value));
        }
        r->nodes = *std::move(names);
      }
      ask->nodes_set = true;
    } else if (EqualsIgnoreCase(key, "NodeCnt") || EqualsIgnoreCase(key, "NodeCount")) {
      std::optional<int64_t> n = core::ParseInt(value);
      if (!n || *n <= 0 || *n > INT32_MAX) {
        return absl::InvalidArgumentError(StrCat("Invalid NodeCnt=", value, ": a node count"));
      }
      ask->node_count = static_cast<int32_t>(*n);
    } else if (EqualsIgnoreCase(key, "PartitionName") || EqualsIgnoreCase(key, "Partition")) {
      r->partition = value;
    } else if (EqualsIgnoreCase(key, "Features")) {
      r->features = value;
    } else if (EqualsIgnoreCase(key, "Users") || EqualsIgnoreCase(key, "User")) {
      RETURN_IF_ERROR(ReadAccessList("Users", value, &r->users, &r->users_deny));
    } else if (EqualsIgnoreCase(key, "Accounts") || EqualsIgnoreCase(key, "Account")) {
      RETURN_IF_ERROR(ReadAccessList("Accounts", value, &r->accounts, &r->accounts_deny));
    } else if (EqualsIgnoreCase(key, "Flags")) {
      RETURN_IF_ERROR(ReadFlags(value, r));
    } else if (EqualsIgnoreCase(key, "CoreCnt") || EqualsIgnoreCase(key, "TRES") ||
               EqualsIgnoreCase(key, "Licenses") || EqualsIgnoreCase(key, "BurstBuffer") ||
               EqualsIgnoreCase(key, "Groups") || EqualsIgnoreCase(key, "Watts") ||
               EqualsIgnoreCase(key, "MaxStartDelay")) {
      return Unsupported(key);
    } else {
      return absl::InvalidArgumentError(StrCat("Invalid reservation option ", key, "=", value));
    }
  }
  if (creating) {
    // scontrol checks these before asking; a client that did not is told the same.
    if (!start_set) {
      return absl::InvalidArgumentError("A start time must be given.  No reservation created.");
    }
    if (!ask->end_set && !ask->duration_set) {
      return absl::InvalidArgumentError(
          "An end time or duration must be given.  No reservation created.");
    }
    if (!ask->nodes_set && ask->node_count == 0) {
      return absl::InvalidArgumentError(
          "Nodes or NodeCnt must be specified.  No reservation created.");
    }
  }
  // A start a minute in the past is "now" (scontrol's clock and ours differ a little).
  if (start_set && r->start < now) {
    if (r->start < now - 60) return absl::InvalidArgumentError("Invalid time specified");
    r->start = now;
  }
  if (ask->duration_set) {
    r->end = r->start + ask->duration_s;
  } else if (!ask->end_set && !creating && start_set) {
    r->end = r->start + (old_end - old_start);  // moved, same length
  }
  if (r->end <= r->start) return absl::InvalidArgumentError("Invalid time specified");
  return absl::OkStatus();
}

std::string ReservationFlagsString(uint32_t flags, int64_t purge_after_s) {
  std::string out;
  for (const FlagName& f : kFlags) {
    if (!(flags & f.bit)) continue;
    if (!out.empty()) out += ',';
    out += f.name;
    if (f.bit == kResvPurgeComp) out += StrCat("=", core::FormatDuration(purge_after_s));
  }
  return out;
}

bool MayUseReservation(const ReservationRecord& r, std::string_view user, std::string_view account,
                       bool privileged) {
  auto listed = [](const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (r.users.empty() && r.accounts.empty()) return privileged;
  // Slurm's rule: a user or account list that names the caller lets them in; a deny list
  // that names them keeps them out whatever else says.
  if (r.users_deny && listed(r.users, user)) return false;
  if (r.accounts_deny && listed(r.accounts, account)) return false;
  const bool user_ok = r.users.empty() ? false : (r.users_deny || listed(r.users, user));
  const bool account_ok =
      r.accounts.empty() ? false : (r.accounts_deny || listed(r.accounts, account));
  return user_ok || account_ok;
}

void RollForward(ReservationRecord* r, Time now, const absl::TimeZone& zone) {
  if (!(r->flags & kResvRecurring)) return;
  auto weekday = [&](Time t) {
    return absl::GetWeekday(absl::CivilDay(zone.At(absl::FromUnixSeconds(t)).cs));
  };
  auto fits = [&](Time start) {
    const absl::Weekday day = weekday(start);
    const bool weekend = day == absl::Weekday::saturday || day == absl::Weekday::sunday;
    if (r->flags & kResvWeekday) return !weekend;
    if (r->flags & kResvWeekend) return weekend;
    return true;
  };
  const int64_t step = (r->flags & kResvWeekly) ? 7 * kDay : kDay;
  while (r->end <= now || !fits(r->start)) {
    r->start += step;
    r->end += step;
  }
}

std::string AccessListString(const std::vector<std::string>& names, bool deny) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ',';
    if (deny) out += '-';
    out += n;
  }
  return out;
}

uint32_t ReservationFlagsFrom(std::string_view text) {
  uint32_t flags = 0;
  for (std::string_view word : core::Split(text, ',')) {
    word = word.substr(0, word.find('='));
    for (const FlagName& f : kFlags) {
      if (f.name == word) flags |= f.bit;
    }
  }
  return flags;
}

bool IsReservationNameKey(std::string_view key) {
  return EqualsIgnoreCase(key, "ReservationName") || EqualsIgnoreCase(key, "Reservation") ||
         EqualsIgnoreCase(key, "ResvName");
}

std::string ReservationKey(std::string_view name) { return StrCat("reservation/", name); }

std::string_view ReservationOfKey(std::string_view key) {
  constexpr std::string_view kPrefix = "reservation/";
  if (key.substr(0, kPrefix.size()) != kPrefix) return {};
  return key.substr(kPrefix.size());
}

}  // namespace loom::ctld
