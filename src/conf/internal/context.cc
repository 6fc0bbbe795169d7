#include "conf/internal/context.h"

#include <cctype>
#include <cmath>

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

std::optional<std::vector<TresWeight>> ParseContext::TresWeights(const SourceLocation& at,
                                                                 const KeyValue& kv) {
  constexpr std::string_view kExpected =
      "a comma list of TRES=weight, e.g. CPU=1.0,Mem=0.25G,GRES/gpu=2.0 (a K, M, G or T "
      "suffix on the Mem weight gives the weight per that unit)";
  std::vector<TresWeight> out;
  for (const std::string& item : SplitList(kv.value)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      BadValue(at, kv.key, kv.value, kExpected);
      return std::nullopt;
    }
    std::string name = CanonicalTres(core::Trim(std::string_view(item).substr(0, eq)));
    std::string_view w = core::Trim(std::string_view(item).substr(eq + 1));
    if (!IsValidTresName(name)) {
      Error(at, kv.key,
            StrCat("invalid value '", kv.value, "' for ", kv.key, ": '", name,
                   "' is not a TRES name (cpu, mem, node, energy, billing, gres/NAME[:TYPE], "
                   "license/NAME, bb/NAME, fs/NAME, ic/NAME)"));
      return std::nullopt;
    }
    double scale = 1.0;
    if (!w.empty() && std::isalpha(static_cast<unsigned char>(w.back()))) {
      if (name != "mem") {
        BadValue(at, kv.key, kv.value, kExpected);
        return std::nullopt;
      }
      switch (std::toupper(static_cast<unsigned char>(w.back()))) {
        case 'K':
          scale = 1024.0;
          break;
        case 'M':
          scale = 1.0;
          break;
        case 'G':
          scale = 1.0 / 1024;
          break;
        case 'T':
          scale = 1.0 / (1024.0 * 1024);
          break;
        case 'P':
          scale = 1.0 / (1024.0 * 1024 * 1024);
          break;
        default:
          BadValue(at, kv.key, kv.value, kExpected);
          return std::nullopt;
      }
      w.remove_suffix(1);
    }
    std::optional<double> d = core::ParseDouble(w);
    if (!d || !std::isfinite(*d) || *d < 0) {
      BadValue(at, kv.key, kv.value, kExpected);
      return std::nullopt;
    }
    for (const TresWeight& prev : out) {
      if (prev.tres == name) {
        Error(at, kv.key, StrCat(kv.key, " names '", name, "' twice"));
        return std::nullopt;
      }
    }
    out.push_back({std::move(name), *d * scale});
  }
  return out;
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

std::string CanonicalTres(std::string_view tres) { return core::ToLower(core::Trim(tres)); }

bool IsValidTresName(std::string_view tres) {
  constexpr std::string_view kPlain[] = {"cpu",     "mem",  "node", "energy",
                                         "billing", "vmem", "pages"};
  for (std::string_view p : kPlain) {
    if (tres == p) return true;
  }
  size_t slash = tres.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view kind = tres.substr(0, slash), name = tres.substr(slash + 1);
  if (name.empty() || name.find('/') != std::string_view::npos) return false;
  for (char c : name) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '=' || c == ',') return false;
  }
  if (kind == "gres") {
    size_t colon = name.find(':');
    if (colon == 0 || (colon != std::string_view::npos &&
                       (colon + 1 == name.size() || name.find(':', colon + 1) != name.npos))) {
      return false;
    }
    return true;
  }
  if (name.find(':') != std::string_view::npos) return false;
  return kind == "license" || kind == "bb" || kind == "fs" || kind == "ic";
}

}  // namespace loom::conf::internal
