// Slurm memory sizes: "512" (MB, the default unit), "512M", "16G", "1T", "2048K".
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace loom::core {

// Parses a size into megabytes (rounding kilobytes up). Suffixes K, M, G, T (any case,
// optionally followed by "B"). Errors name the text and the accepted suffixes.
StatusOr<int64_t> ParseMemoryMb(std::string_view text);

// Formats megabytes the way Slurm prints them in TRES strings: "500G", "1T", "512M".
// Uses the largest unit that divides exactly; otherwise megabytes.
std::string FormatMemoryMb(int64_t mb);

}  // namespace loom::core
