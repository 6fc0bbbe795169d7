#include "core/cpu_list.h"

#include <algorithm>

#include "core/strings.h"

namespace loom::core {
namespace {

using core::StrCat;

StatusOr<int32_t> ParseId(std::string_view s, std::string_view item) {
  std::optional<int64_t> v = core::ParseInt(core::Trim(s));
  if (!v || *v < 0) {
    return absl::InvalidArgumentError(StrCat("'", item, "' is not a CPU id or range"));
  }
  if (*v >= kMaxCpuIds) {
    return absl::InvalidArgumentError(
        StrCat("CPU id ", *v, " in '", item, "' is beyond the largest allowed, ", kMaxCpuIds - 1));
  }
  return static_cast<int32_t>(*v);
}

}  // namespace

StatusOr<std::vector<int32_t>> ParseCpuList(std::string_view text) {
  if (core::Trim(text).empty()) return absl::InvalidArgumentError("the CPU list is empty");
  std::vector<std::pair<int32_t, int32_t>> ranges;
  for (std::string_view raw : core::Split(text, ',')) {
    std::string_view item = core::Trim(raw);
    if (item.empty()) {
      return absl::InvalidArgumentError(StrCat("'", text, "' has an empty item"));
    }
    size_t dash = item.find('-');
    int32_t lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      ASSIGN_OR_RETURN(lo, ParseId(item, item));
      hi = lo;
    } else {
      ASSIGN_OR_RETURN(lo, ParseId(item.substr(0, dash), item));
      ASSIGN_OR_RETURN(hi, ParseId(item.substr(dash + 1), item));
      if (hi < lo) {
        return absl::InvalidArgumentError(
            StrCat("range '", item, "' ends before it starts; write it as ", hi, "-", lo));
      }
    }
    ranges.emplace_back(lo, hi);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<int32_t> out;
  for (const auto& [lo, hi] : ranges) {
    for (int32_t c = out.empty() ? lo : std::max(lo, out.back() + 1); c <= hi; ++c) {
      out.push_back(c);
    }
  }
  return out;
}

std::string FormatCpuList(const std::vector<int32_t>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out.push_back(',');
    out += j == i ? StrCat(cpus[i]) : StrCat(cpus[i], "-", cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace loom::core
