#include "core/time_format.h"

#include <cstdio>
#include <vector>

#include "core/strings.h"

namespace loom::core {
namespace {

constexpr std::string_view kForms =
    "expected MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED or INFINITE";

Status BadTime(std::string_view text) {
  return absl::InvalidArgumentError(StrCat("invalid time '", text, "': ", kForms));
}

// Parses up to three ':'-separated non-negative numbers.
bool ParseFields(std::string_view s, std::vector<int64_t>* out) {
  for (std::string_view part : Split(s, ':')) {
    if (part.empty()) return false;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
    }
    std::optional<int64_t> v = ParseInt(part);
    if (!v || *v > 100'000'000) return false;
    out->push_back(*v);
  }
  return out->size() <= 3;
}

// Durations past a million days are typos, and would not print back in a form that parses.
constexpr int64_t kMaxDays = 1'000'000;

StatusOr<int64_t> Capped(int64_t seconds, std::string_view text) {
  if (seconds > kMaxDays * 86400) {
    return absl::InvalidArgumentError(
        StrCat("invalid time '", text, "': longer than ", kMaxDays, " days"));
  }
  return seconds;
}

}  // namespace

StatusOr<int64_t> ParseDuration(std::string_view text) {
  std::string_view s = Trim(text);
  if (EqualsIgnoreCase(s, "UNLIMITED") || EqualsIgnoreCase(s, "INFINITE") || s == "-1") {
    return kUnlimitedSeconds;
  }
  if (s.empty()) return BadTime(text);
  int64_t days = 0;
  size_t dash = s.find('-');
  std::vector<int64_t> f;
  if (dash != std::string_view::npos) {
    std::string_view d = s.substr(0, dash);
    std::optional<int64_t> dv = ParseInt(d);
    if (d.empty() || d.front() == '+' || !dv || *dv < 0 || *dv > kMaxDays) return BadTime(text);
    days = *dv;
    if (!ParseFields(s.substr(dash + 1), &f)) return BadTime(text);
    // D-HH, D-HH:MM, D-HH:MM:SS
    int64_t h = f[0], m = f.size() > 1 ? f[1] : 0, sec = f.size() > 2 ? f[2] : 0;
    return Capped(((days * 24 + h) * 60 + m) * 60 + sec, text);
  }
  if (!ParseFields(s, &f)) return BadTime(text);
  switch (f.size()) {
    case 1:
      return Capped(f[0] * 60, text);  // MM
    case 2:
      return Capped(f[0] * 60 + f[1], text);  // MM:SS
    default:
      return Capped((f[0] * 60 + f[1]) * 60 + f[2], text);  // HH:MM:SS
  }
}

namespace {

// Days, hours, minutes and seconds of a non-negative duration; `compact` drops leading
// zero fields and padding the way squeue's TIME column does ("M:SS", "H:MM:SS").
std::string Format(int64_t seconds, bool compact) {
  if (seconds == kUnlimitedSeconds) return "UNLIMITED";
  if (seconds < 0) seconds = 0;
  long long d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
  char buf[64];
  if (d > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", d, h, m, s);
  } else if (!compact) {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", h, m, s);
  } else if (h > 0) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, s);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", m, s);
  }
  return buf;
}

}  // namespace

std::string FormatDuration(int64_t seconds) { return Format(seconds, /*compact=*/false); }

std::string FormatElapsed(int64_t seconds) { return Format(seconds, /*compact=*/true); }

}  // namespace loom::core
