// Standard Workload Format traces (Parallel Workloads Archive), plain or gzip'd, read and
// filtered by the conventions of the published backfilling studies (SIM-CONVENTIONS.md,
// rules 1-4). Pure functions apart from reading the file; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::sim {

struct SwfJob {
  int64_t id = 0;        // field 1
  int64_t line = 0;      // line number in the file
  int64_t submit = 0;    // field 2
  int64_t run = 0;       // floor(field 4), at least 1, capped at the estimate
  int32_t procs = 0;     // field 8 (requested), or field 5 where 8 is missing
  int64_t estimate = 0;  // field 9 (requested time)
  int32_t user = -1;     // field 12
  int32_t group = -1;    // field 13
  // Field 17: the job (field 1) that must end before this one may start; -1: none.
  int64_t preceding = -1;
};

struct SwfReadOptions {
  bool skip_bad_lines = false;   // count malformed lines instead of failing
  int64_t machine_procs = 0;     // > 0: overrides the header's MaxProcs
  // Traces without requested times lose every job to the filter; this uses the run time
  // as the requested time instead (and reports say so).
  bool estimate_from_runtime = false;
};

struct SwfTrace {
  std::string name;
  int64_t machine_procs = 0;      // m (rule 1)
  int64_t max_nodes = 0;          // header MaxNodes, if any
  int64_t unix_start = 0;         // header UnixStartTime (when time 0 was); 0: not given
  std::vector<SwfJob> jobs;       // filtered, in file order
  int64_t job_lines = 0;          // non-comment lines with 18 fields
  int64_t dropped = 0;            // removed by the filter (rule 3)
  int64_t bad_lines = 0;          // malformed lines skipped (skip_bad_lines)
  bool estimates_from_runtime = false;
};

// Reads `path` (gzip'd or plain). Errors name the file and, for bad lines, the line.
StatusOr<SwfTrace> ReadSwfFile(const std::string& path, const SwfReadOptions& opts);
// Reads a trace held in memory (gzip'd or plain); `name` is used in messages.
StatusOr<SwfTrace> DecodeSwf(std::string data, std::string_view name,
                             const SwfReadOptions& opts);
// Parses trace text; `name` is used in messages.
StatusOr<SwfTrace> ParseSwf(std::string_view text, std::string_view name,
                            const SwfReadOptions& opts);

}  // namespace loom::sim
