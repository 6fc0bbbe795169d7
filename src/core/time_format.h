// Slurm's duration syntax ("MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS",
// "UNLIMITED"/"INFINITE") and its printed form. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace loom::core {

// Seconds value that stands for UNLIMITED / INFINITE.
inline constexpr int64_t kUnlimitedSeconds = INT64_MAX;

// Parses a Slurm time limit into seconds. A bare number is minutes, as in Slurm
// ("90" = 90 minutes); "UNLIMITED", "INFINITE" (any case) and "-1" give kUnlimitedSeconds.
// Errors name the offending text and the accepted forms.
StatusOr<int64_t> ParseDuration(std::string_view text);

// Formats seconds the way Slurm prints time limits (`scontrol show`, `sinfo`):
// "HH:MM:SS" or "D-HH:MM:SS"; kUnlimitedSeconds prints "UNLIMITED".
std::string FormatDuration(int64_t seconds);

// Formats an elapsed time the way `squeue` prints its TIME column:
// "M:SS", "H:MM:SS" or "D-HH:MM:SS".
std::string FormatElapsed(int64_t seconds);

}  // namespace loom::core
