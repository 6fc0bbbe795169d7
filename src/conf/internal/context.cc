#include "conf/internal/context.h"

#include <cctype>

#include "core/strings.h"
#include "core/time_format.h"

namespace loom::conf::internal {
namespace {

using core::StrCat;

bool IsUnlimitedWord(std::string_view v) {
  return core::EqualsIgnoreCase(v, "UNLIMITED") || core::EqualsIgnoreCase(v, "INFINITE");
}

}  // namespace

void ParseContext::Error(const SourceLocation& at, std::string_view key, std::string message) {
  if (errors_.size() >= kMaxErrors) return;
  errors_.push_back({Diagnostic::Severity::kError, at, std::string(key), std::move(message)});
}

void ParseContext::Warn(const SourceLocation& at, std::string_view key, std::string message) {
  warnings_->push_back({Diagnostic::Severity::kWarning, at, std::string(key), std::move(message)});
}

void ParseContext::BadValue(const SourceLocation& at, std::string_view key, std::string_view value,
                            std::string_view expected) {
  Error(at, key, StrCat("invalid value '", value, "' for ", key, ": expected ", expected));
}

void ParseContext::WarnNotActedOn(const SourceLocation& at, std::string_view key,
                                  std::string_view where) {
  Warn(at, key,
       StrCat(key, where.empty() ? "" : " ", where,
              " is accepted but not acted on by Loom yet; its value is kept as written"));
}

std::optional<int64_t> ParseContext::Int(const SourceLocation& at, const KeyValue& kv, int64_t min,
                                         int64_t max) {
  std::optional<int64_t> v = core::ParseInt(core::Trim(kv.value));
  if (!v || *v < min || *v > max) {
    BadValue(at, kv.key, kv.value, StrCat("a whole number from ", min, " to ", max));
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> ParseContext::IntOrUnlimited(const SourceLocation& at, const KeyValue& kv,
                                                    int64_t min, int64_t max, int64_t unlimited) {
  if (IsUnlimitedWord(core::Trim(kv.value))) return unlimited;
  std::optional<int64_t> v = core::ParseInt(core::Trim(kv.value));
  if (!v || *v < min || *v > max) {
    BadValue(at, kv.key, kv.value,
             StrCat("a whole number from ", min, " to ", max, " or UNLIMITED"));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> ParseContext::Bool(const SourceLocation& at, const KeyValue& kv) {
  std::string v = core::ToLower(core::Trim(kv.value));
  if (v == "yes" || v == "true" || v == "1" || v == "on") return true;
  if (v == "no" || v == "false" || v == "0" || v == "off") return false;
  BadValue(at, kv.key, kv.value, "YES or NO");
  return std::nullopt;
}

std::optional<int64_t> ParseContext::Duration(const SourceLocation& at, const KeyValue& kv) {
  StatusOr<int64_t> s = core::ParseDuration(kv.value);
  if (!s.ok()) {
    BadValue(at, kv.key, kv.value,
             "a time limit: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED");
    return std::nullopt;
  }
  return *s;
}

std::optional<size_t> ParseContext::Choice(const SourceLocation& at, const KeyValue& kv,
                                           std::initializer_list<std::string_view> choices) {
  size_t i = 0;
  std::string expected;
  for (std::string_view c : choices) {
    if (core::EqualsIgnoreCase(c, core::Trim(kv.value))) return i;
    ++i;
    if (!expected.empty()) expected += i == choices.size() ? " or " : ", ";
    expected += c;
  }
  BadValue(at, kv.key, kv.value, expected);
  return std::nullopt;
}

std::optional<core::TresBillingWeights> ParseContext::TresWeights(const SourceLocation& at,
                                                                  const KeyValue& kv) {
  StatusOr<core::TresBillingWeights> w = core::TresBillingWeights::Parse(kv.value);
  if (w.ok()) return std::move(*w);
  // The reason without core's "invalid TRESBillingWeights '<text>': " prefix.
  std::string why(w.status().message());
  std::string prefix = StrCat("'", kv.value, "': ");
  if (size_t pos = why.find(prefix); pos != std::string::npos) {
    why = why.substr(pos + prefix.size());
  }
  Error(at, kv.key,
        StrCat("invalid value '", kv.value, "' for ", kv.key, ": ", why,
               "; expected a comma list of TRES=weight, e.g. CPU=1.0,Mem=0.25G,GRES/gpu=2.0"));
  return std::nullopt;
}

std::optional<std::string> ParseContext::TresName(const SourceLocation& at, const KeyValue& kv,
                                                  std::string_view name) {
  StatusOr<std::string> canonical = core::CanonicalTresName(core::Trim(name));
  if (canonical.ok()) return std::move(*canonical);
  Error(at, kv.key,
        StrCat("invalid value '", kv.value, "' for ", kv.key, ": ",
               std::string(canonical.status().message())));
  return std::nullopt;
}

std::vector<std::string> SplitList(std::string_view value) {
  std::vector<std::string> out;
  for (std::string_view piece : core::Split(value, ',')) {
    piece = core::Trim(piece);
    if (!piece.empty()) out.emplace_back(piece);
  }
  return out;
}

std::vector<std::string> SplitTopLevelCommas(std::string_view value) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : value) {
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      std::string_view t = core::Trim(cur);
      if (!t.empty()) out.emplace_back(t);
      cur.clear();
      continue;
    }
    cur.push_back(c);
  }
  std::string_view t = core::Trim(cur);
  if (!t.empty()) out.emplace_back(t);
  return out;
}

}  // namespace loom::conf::internal
