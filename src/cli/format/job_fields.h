// Values derived from a JobView that several commands print the same way: the job's id as
// squeue shows it ("7_1", "7_[3-10%2]"), its time used, and the reason text. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cli/format/views.h"

namespace loom::cli::format {

// "6", "7_1" for one task of array 7, "7_[3-10%2]" for its pending tasks.
std::string FormatJobId(const JobView& job);

// Seconds the job has run (squeue's TIME, scontrol's RunTime): 0 before it starts, up to now
// while it runs, up to its end once it ended, less the time it spent suspended.
int64_t JobTimeUsed(const JobView& job, int64_t now);

// The reason squeue and scontrol print: the free-text description when there is one,
// otherwise the reason name.
std::string_view JobReasonText(const JobView& job);

}  // namespace loom::cli::format
