#include "core/tres.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/strings.h"

namespace loom::core {
namespace {

constexpr std::string_view kNamedTypes[] = {"gres", "license", "fs", "bb", "ic"};
constexpr std::string_view kPlainTypes[] = {"cpu",     "mem",  "energy", "node",
                                            "billing", "vmem", "pages"};
constexpr std::string_view kForms =
    "expected cpu, mem, energy, node, billing, vmem, pages, or TYPE/NAME with TYPE one of "
    "gres, license, fs, bb, ic (e.g. gres/gpu, gres/gpu:a100, license/matlab, fs/disk)";

// Print order: Slurm's built-in TRES ids first, then the named types.
int Group(std::string_view name) {
  constexpr std::string_view kFixed[] = {"cpu",     "mem",     "energy", "node",
                                         "billing", "fs/disk", "vmem",   "pages"};
  for (int i = 0; i < 8; ++i) {
    if (name == kFixed[i]) return i;
  }
  constexpr std::string_view kPrefixes[] = {"gres/", "license/", "bb/", "fs/", "ic/"};
  for (int i = 0; i < 5; ++i) {
    if (name.substr(0, kPrefixes[i].size()) == kPrefixes[i]) return 8 + i;
  }
  return 13;
}

bool Before(std::string_view a, std::string_view b) {
  int ga = Group(a), gb = Group(b);
  return ga != gb ? ga < gb : a < b;
}

enum class Unit { kCount, kMegabytes, kBytes };

Unit UnitOf(std::string_view name) {
  if (name == "mem" || name.substr(0, 3) == "bb/") return Unit::kMegabytes;
  if (name.substr(0, 3) == "fs/" || name.substr(0, 3) == "ic/") return Unit::kBytes;
  return Unit::kCount;
}

// Position of a unit suffix in "KMGTP" plus one (K = 1 ... P = 5); 0 if `c` is none of them.
int SuffixPower(char c) {
  constexpr std::string_view kSuffixes = "KMGTP";
  size_t i = kSuffixes.find(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return i == std::string_view::npos ? 0 : static_cast<int>(i) + 1;
}

// The value with the largest suffix that divides it exactly, from the unit at `base_power`
// (0 = none, 2 = M), as Slurm's exact unit conversion prints it.
std::string FormatWithUnits(int64_t value, int base_power) {
  constexpr std::string_view kSuffixes = "KMGTP";
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  int power = base_power;
  while (magnitude != 0 && magnitude % 1024 == 0 && power < 5) {
    magnitude /= 1024;
    ++power;
  }
  std::string out = value < 0 ? "-" : "";
  out += StrCat(magnitude);
  if (power > 0) out.push_back(kSuffixes[power - 1]);
  return out;
}

StatusOr<int64_t> ParseCount(std::string_view name, std::string_view text) {
  Unit unit = UnitOf(name);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string_view suffix = text.substr(digits);
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("invalid count '", text, "' for ", name, ": ", why));
  };
  if (digits == 0) {
    return bad(unit == Unit::kCount ? "expected a non-negative integer"
                                    : "expected a non-negative integer with an optional unit "
                                      "K, M, G, T or P");
  }
  std::optional<int64_t> value = ParseInt(text.substr(0, digits));
  if (!value) return bad("too large");
  int power = 0;  // relative to the TRES's own unit
  if (!suffix.empty()) {
    if (unit == Unit::kCount) return bad("expected a non-negative integer without a unit");
    int p = suffix.size() == 1 ? SuffixPower(suffix[0]) : 0;
    if (p == 0) return bad("unknown unit; expected K, M, G, T or P");
    power = p - (unit == Unit::kMegabytes ? 2 : 0);
  }
  int64_t v = *value;
  for (; power > 0; --power) {
    if (v > INT64_MAX / 1024) return bad("too large");
    v *= 1024;
  }
  for (; power < 0; ++power) v = (v + 1023) / 1024;  // kilobytes of memory round up
  return v;
}

}  // namespace

StatusOr<std::string> CanonicalTresName(std::string_view name) {
  auto bad = [&] {
    return absl::InvalidArgumentError(StrCat("unknown TRES '", name, "': ", kForms));
  };
  size_t slash = name.find('/');
  std::string type = ToLower(name.substr(0, slash));
  if (slash == std::string_view::npos) {
    for (std::string_view t : kPlainTypes) {
      if (type == t) return type;
    }
    return bad();
  }
  std::string_view rest = name.substr(slash + 1);
  if (std::find(std::begin(kNamedTypes), std::end(kNamedTypes), type) == std::end(kNamedTypes)) {
    return bad();
  }
  if (rest.empty()) return bad();
  for (char c : rest) {
    if (c == '=' || c == ',' || c == '/' || std::isspace(static_cast<unsigned char>(c))) {
      return bad();
    }
  }
  if (type == "gres") {
    size_t colon = rest.find(':');
    if (colon == 0 || (colon != std::string_view::npos &&
                       (colon + 1 == rest.size() || rest.find(':', colon + 1) != rest.npos))) {
      return bad();
    }
  } else if (rest.find(':') != std::string_view::npos) {
    return bad();
  }
  return StrCat(type, "/", rest);
}

// ---------------------------------------------------------------------------------------------
// TresVector

int64_t TresVector::Get(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return Before(e.first, n); });
  return it != entries_.end() && it->first == name ? it->second : 0;
}

void TresVector::Set(std::string_view name, int64_t count) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return Before(e.first, n); });
  if (it != entries_.end() && it->first == name) {
    if (count == 0) {
      entries_.erase(it);
    } else {
      it->second = count;
    }
  } else if (count != 0) {
    entries_.emplace(it, std::string(name), count);
  }
}

void TresVector::Add(std::string_view name, int64_t delta) { Set(name, Get(name) + delta); }

TresVector& TresVector::operator+=(const TresVector& other) {
  for (const Entry& e : other.entries_) Add(e.first, e.second);
  return *this;
}

TresVector& TresVector::operator-=(const TresVector& other) {
  for (const Entry& e : other.entries_) Add(e.first, -e.second);
  return *this;
}

TresVector TresVector::operator*(int64_t factor) const {
  TresVector out;
  if (factor == 0) return out;
  out.entries_ = entries_;
  for (Entry& e : out.entries_) e.second *= factor;
  return out;
}

bool TresVector::FitsIn(const TresVector& capacity) const {
  for (const Entry& e : entries_) {
    if (e.second > capacity.Get(e.first)) return false;
  }
  return true;
}

std::vector<std::string> TresVector::Exceeding(const TresVector& capacity) const {
  std::vector<std::string> names;
  for (const Entry& e : entries_) {
    if (e.second > capacity.Get(e.first)) names.push_back(e.first);
  }
  return names;
}

bool TresVector::IsNonNegative() const {
  return std::all_of(entries_.begin(), entries_.end(),
                     [](const Entry& e) { return e.second >= 0; });
}

std::string TresVector::ToString() const { return FormatTres(*this); }

StatusOr<TresVector> ParseTres(std::string_view text) {
  TresVector tres;
  std::string_view trimmed = Trim(text);
  if (trimmed.empty()) return tres;
  std::vector<std::string> seen;
  for (std::string_view item : Split(trimmed, ',')) {
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(StrCat("invalid TRES list '", text, "': ", why));
    };
    item = Trim(item);
    if (item.empty()) return bad("empty item; expected NAME=COUNT[,NAME=COUNT...]");
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) return bad(StrCat("'", item, "' is not NAME=COUNT"));
    StatusOr<std::string> name = CanonicalTresName(Trim(item.substr(0, eq)));
    if (!name.ok()) return bad(std::string(name.status().message()));
    if (std::find(seen.begin(), seen.end(), *name) != seen.end()) {
      return bad(StrCat(*name, " appears twice"));
    }
    seen.push_back(*name);
    StatusOr<int64_t> count = ParseCount(*name, Trim(item.substr(eq + 1)));
    if (!count.ok()) return bad(std::string(count.status().message()));
    tres.Set(*name, *count);
  }
  return tres;
}

std::string FormatTres(const TresVector& tres) {
  std::string out;
  for (const TresVector::Entry& e : tres.entries()) {
    if (!out.empty()) out.push_back(',');
    out += e.first;
    out.push_back('=');
    switch (UnitOf(e.first)) {
      case Unit::kMegabytes:
        out += FormatWithUnits(e.second, 2);
        break;
      case Unit::kBytes:
        out += FormatWithUnits(e.second, 0);
        break;
      case Unit::kCount:
        out += StrCat(e.second);
        break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// TresBillingWeights

StatusOr<TresBillingWeights> TresBillingWeights::Parse(std::string_view text) {
  TresBillingWeights result;
  std::string_view s = Trim(text);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = Trim(s.substr(1, s.size() - 2));
  if (s.empty()) return result;
  for (std::string_view item : Split(s, ',')) {
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(StrCat("invalid TRESBillingWeights '", text, "': ", why));
    };
    item = Trim(item);
    size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos) {
      return bad(StrCat("'", item, "' is not NAME=WEIGHT (e.g. CPU=1.0,Mem=0.25G,GRES/gpu=2.0)"));
    }
    StatusOr<std::string> canonical = CanonicalTresName(Trim(item.substr(0, eq)));
    if (!canonical.ok()) return bad(std::string(canonical.status().message()));
    std::string name = ToLower(*canonical);
    std::string value(Trim(item.substr(eq + 1)));
    char* end = nullptr;
    errno = 0;
    double weight = value.empty() ? 0 : std::strtod(value.c_str(), &end);
    if (value.empty() || end == value.c_str() || errno == ERANGE || !std::isfinite(weight)) {
      return bad(StrCat("weight '", value, "' for ", *canonical, " is not a number"));
    }
    std::string_view suffix(end);
    if (!suffix.empty()) {
      int power = suffix.size() == 1 ? SuffixPower(suffix[0]) : 0;
      if (power == 0) {
        return bad(StrCat("weight '", value, "' for ", *canonical,
                          ": unknown unit; expected K, M, G, T or P"));
      }
      // A suffix larger than the TRES's own unit makes the weight apply per that unit; Slurm
      // ignores smaller ones.
      int base = UnitOf(name) == Unit::kMegabytes ? 2 : 0;
      for (; power > base; --power) weight /= 1024;
    }
    for (const auto& [n, w] : result.weights_) {
      if (n == name) return bad(StrCat(*canonical, " appears twice"));
    }
    result.weights_.emplace_back(std::move(name), weight);
  }
  std::sort(result.weights_.begin(), result.weights_.end());
  return result;
}

double TresBillingWeights::WeightFor(std::string_view name) const {
  std::string key = ToLower(name);
  auto it = std::lower_bound(
      weights_.begin(), weights_.end(), key,
      [](const std::pair<std::string, double>& w, const std::string& k) { return w.first < k; });
  return it != weights_.end() && it->first == key ? it->second : 0.0;
}

double TresBillingWeights::Billing(const TresVector& tres, bool max_tres) const {
  if (weights_.empty()) return static_cast<double>(tres.Get(kTresCpu));
  double per_node = 0, global = 0;
  for (const TresVector::Entry& e : tres.entries()) {
    if (e.first == kTresBilling) continue;
    double value = static_cast<double>(e.second) * WeightFor(e.first);
    bool node_tres = e.first == kTresCpu || e.first == kTresMem || e.first == kTresNode ||
                     e.first.substr(0, 5) == "gres/";
    if (max_tres && node_tres) {
      per_node = std::max(per_node, value);
    } else {
      global += value;
    }
  }
  return per_node + global;
}

int64_t TresBillingWeights::BillingCount(const TresVector& tres, bool max_tres) const {
  double billing = Billing(tres, max_tres);
  if (!(billing > -9.2e18 && billing < 9.2e18)) return billing > 0 ? INT64_MAX : INT64_MIN;
  return static_cast<int64_t>(billing);
}

StatusOr<std::vector<TresCap>> ParseTresCaps(std::string_view text) {
  std::vector<TresCap> caps;
  for (std::string_view item : Split(text, ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat("TRES limit '", item, "' has no value; write it as name=count"));
    }
    ASSIGN_OR_RETURN(std::string name, CanonicalTresName(Trim(item.substr(0, eq))));
    const std::string_view value = Trim(item.substr(eq + 1));
    if (value == "-1") continue;  // sacctmgr's way of clearing a limit
    StatusOr<TresVector> parsed = ParseTres(StrCat(name, "=", value));
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          StrCat("TRES limit '", item, "': ", std::string(parsed.status().message())));
    }
    caps.push_back(TresCap{name, parsed->Get(name)});
  }
  return caps;
}

}  // namespace loom::core
