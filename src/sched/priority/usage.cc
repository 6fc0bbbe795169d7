#include "sched/priority/usage.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <vector>

#include "core/strings.h"
#include "sched/priority/fairshare.h"

namespace loom::sched {
namespace {

constexpr std::string_view kHeader = "loom-usage 1";

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t tab = line.find('\t');
    out.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) return out;
    line.remove_prefix(tab + 1);
  }
}

std::optional<double> ParseDouble(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<Time> NextReset(UsageReset r, Time t) {
  if (r == UsageReset::kNone || r == UsageReset::kNow) return std::nullopt;
  const std::time_t now = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&now, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  switch (r) {
    case UsageReset::kDaily:
      tm.tm_mday += 1;
      break;
    case UsageReset::kWeekly:
      tm.tm_mday += 7 - ((tm.tm_wday + 6) % 7);
      break;  // next Monday
    case UsageReset::kMonthly:
      tm.tm_mday = 1;
      tm.tm_mon += 1;
      break;
    case UsageReset::kQuarterly:
      tm.tm_mday = 1;
      tm.tm_mon = (tm.tm_mon / 3 + 1) * 3;
      break;
    case UsageReset::kYearly:
      tm.tm_mday = 1;
      tm.tm_mon = 0;
      tm.tm_year += 1;
      break;
    default:
      break;
  }
  return static_cast<Time>(timegm(&tm));
}

bool UsageLedger::Advance(Time now, int64_t half_life_s, UsageReset reset) {
  if (last_decay_ == 0) {
    last_decay_ = now;
    return true;
  }
  if (now <= last_decay_) return false;
  if (std::optional<Time> boundary = NextReset(reset, last_decay_); boundary && *boundary <= now) {
    usage_.clear();
    tres_.clear();
    qos_tres_.clear();
  } else if (const double f = DecayFactor(now - last_decay_, half_life_s); f != 1.0) {
    for (auto& [key, value] : usage_) value *= f;
    for (auto& [key, tres] : tres_) {
      for (auto& [name, value] : tres) value *= f;
    }
    for (auto& [key, tres] : qos_tres_) {
      for (auto& [name, value] : tres) value *= f;
    }
  }
  last_decay_ = now;
  return true;
}

void UsageLedger::Charge(const std::string& account, const std::string& user,
                         double billing_seconds) {
  if (billing_seconds <= 0) return;
  usage_[{account, user}] += billing_seconds;
}

namespace {

void AddTres(const core::TresVector& tres, double seconds, UsageLedger::TresSeconds* to) {
  if (seconds <= 0) return;
  for (const auto& [name, count] : tres.entries()) {
    if (count > 0) (*to)[name] += static_cast<double>(count) * seconds;
  }
}

}  // namespace

void UsageLedger::ChargeTres(const std::string& account, const std::string& user,
                             const core::TresVector& tres, double seconds) {
  if (seconds > 0 && !tres.empty()) AddTres(tres, seconds, &tres_[{account, user}]);
}

void UsageLedger::ChargeQosTres(const std::string& qos, const core::TresVector& tres,
                                double seconds) {
  if (seconds > 0 && !tres.empty() && !qos.empty()) AddTres(tres, seconds, &qos_tres_[qos]);
}

void UsageLedger::Reset(Time now) {
  usage_.clear();
  tres_.clear();
  qos_tres_.clear();
  last_decay_ = now;
}

double UsageLedger::UsageOf(const std::string& account, const std::string& user) const {
  auto it = usage_.find({account, user});
  return it == usage_.end() ? 0.0 : it->second;
}

std::string UsageLedger::Serialize() const {
  std::string out = core::StrCat(kHeader, "\t", charged_to_, "\t", last_decay_, "\n");
  char number[64];
  for (const auto& [key, value] : usage_) {
    std::snprintf(number, sizeof number, "%.17g", value);
    out += core::StrCat(key.first, "\t", key.second, "\t", number, "\n");
  }
  // TRES usage: four fields, "a" (association) or "q" (QOS, no user), then name=seconds.
  auto list = [&number](const TresSeconds& tres) {
    std::string s;
    for (const auto& [name, value] : tres) {
      std::snprintf(number, sizeof number, "%.17g", value);
      s += core::StrCat(s.empty() ? "" : ",", name, "=", number);
    }
    return s;
  };
  for (const auto& [key, tres] : tres_) {
    out += core::StrCat("a\t", key.first, "\t", key.second, "\t", list(tres), "\n");
  }
  for (const auto& [qos, tres] : qos_tres_) {
    out += core::StrCat("q\t", qos, "\t\t", list(tres), "\n");
  }
  return out;
}

StatusOr<UsageLedger> UsageLedger::Parse(std::string_view text, std::string_view where) {
  UsageLedger l;
  int line_no = 0;
  auto bad = [&](std::string_view why) {
    return absl::DataLossError(core::StrCat(where, ", line ", line_no, ": ", why));
  };
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    const std::vector<std::string_view> f = Fields(line);
    if (line_no == 1) {
      if (f.size() != 3 || f[0] != kHeader) return bad("not a usage record of this version");
      std::optional<double> charged = ParseDouble(f[1]), decayed = ParseDouble(f[2]);
      if (!charged || !decayed) return bad("times do not parse");
      l.charged_to_ = static_cast<Time>(*charged);
      l.last_decay_ = static_cast<Time>(*decayed);
      continue;
    }
    if (f.size() == 4 && (f[0] == "a" || f[0] == "q")) {
      TresSeconds tres;
      for (std::string_view item : core::Split(f[3], ',')) {
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        std::optional<double> v =
            eq == std::string_view::npos ? std::nullopt : ParseDouble(item.substr(eq + 1));
        if (!v) return bad("expected TRES=seconds");
        tres[std::string(item.substr(0, eq))] = *v;
      }
      if (f[0] == "a") {
        l.tres_[{std::string(f[1]), std::string(f[2])}] = std::move(tres);
      } else {
        l.qos_tres_[std::string(f[1])] = std::move(tres);
      }
      continue;
    }
    std::optional<double> value = f.size() == 3 ? ParseDouble(f[2]) : std::nullopt;
    if (!value) return bad("expected account, user and usage");
    l.usage_[{std::string(f[0]), std::string(f[1])}] = *value;
  }
  if (line_no == 0) return bad("empty");
  return l;
}

}  // namespace loom::sched
