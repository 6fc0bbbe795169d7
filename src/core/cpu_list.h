// CPU lists as Linux, nvidia-smi and gres.conf write them ("0-63,128-191", "3", "0,2,4-7"):
// parsing into ascending ids and printing back in ranged form. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::core {

// Largest CPU id a list may name, plus one; a bound on what one node can have.
inline constexpr int32_t kMaxCpuIds = 65536;

// Parses a comma list of ids and inclusive ranges; returns the ids ascending, without
// duplicates. Errors (InvalidArgument, a phrase naming the offending item) for an empty
// list or item, a range whose end is below its start, and an id of kMaxCpuIds or more.
StatusOr<std::vector<int32_t>> ParseCpuList(std::string_view text);

// The ranged form of ascending ids: {0,1,2,3,8} -> "0-3,8".
std::string FormatCpuList(const std::vector<int32_t>& cpus);

}  // namespace loom::core
