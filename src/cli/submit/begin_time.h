// The date/time syntax of sbatch --begin and --deadline (also scontrol's StartTime=):
//   now[{+|-}count[seconds|minutes|hours|days|weeks]]   (seconds by default)
//   HH:MM[:SS][AM|PM]      a time of day; tomorrow if already past
//   midnight, noon, fika (15:00), teatime (16:00)       likewise
//   today, tomorrow        00:00 of that day, unless a time of day is also given
//   MMDD[YY], MM/DD[/YY], MM.DD[.YY]                     a date; without a year, next year
//                                                        if that moment has passed
//   YYYY-MM-DD[THH:MM[:SS]]
//   MM/DD[/YY]-HH:MM[:SS]
// A date and a time may both be given, in either order, separated by spaces. Words are
// case-insensitive. Times are read in the given time zone (the submitting host's). Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/time/time.h"
#include "core/status.h"

namespace loom::cli::submit {

// Parses `text` relative to `now` (Unix seconds) into Unix seconds. On failure returns
// InvalidArgumentError with Slurm's message, "Invalid time specification (pos=N): TEXT",
// where N is the offset at which the text stopped making sense.
StatusOr<int64_t> ParseSlurmDateTime(std::string_view text, int64_t now,
                                     const absl::TimeZone& zone);

}  // namespace loom::cli::submit
