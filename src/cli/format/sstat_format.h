// sstat's report: each step's usage gathered from its tasks (max, min and average over the
// tasks, with the node and task of the max or min), in sacct's column layout or parsable.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace loom::cli::format {

// One task's usage now, as the nodes report it.
struct TaskUsageView {
  std::string step;  // "batch" or "0", "1", ...
  int32_t task = 0;
  std::string node;
  int64_t cpu_usec = 0;
  int64_t rss_bytes = 0;
  int64_t vsize_bytes = 0;
  int64_t pages = 0;
};

// The fields Loom fills, by Slurm's names (case-insensitive on input), and the default list:
// JobID MaxVMSize MaxVMSizeNode MaxVMSizeTask AveVMSize MaxRSS MaxRSSNode MaxRSSTask AveRSS
// MaxPages MaxPagesNode MaxPagesTask AvePages MinCPU MinCPUNode MinCPUTask AveCPU NTasks.
std::vector<std::string> SstatFields();
// Checks a --format list ("JobID,MaxRSS" or with %width suffixes not supported); errors name
// the unknown field as sstat does ("Invalid field requested: \"x\"").
StatusOr<std::vector<std::string>> ParseSstatFormat(const std::string& list);

struct SstatOptions {
  std::vector<std::string> fields;  // canonical names; empty: SstatFields()
  bool header = true;               // -n: none
  char delimiter = 0;               // -p / -P: '|'; 0: columns
  bool trailing_delimiter = false;  // -p (not -P): a delimiter after the last field too
};

// The report for job `job_id`'s steps in `steps` (each a step name), from `tasks`.
std::string RenderSstat(uint64_t job_id, const std::vector<std::string>& steps,
                        const std::vector<TaskUsageView>& tasks, const SstatOptions& options);

// CPU time as sacct prints it: "MM:SS.mmm" under an hour, else "[D-]HH:MM:SS".
std::string FormatCpuTime(int64_t usec);
// A size in bytes as sacct prints memory: kibibytes with a K ("2248K"), "0" for nothing.
std::string FormatKib(int64_t bytes);

}  // namespace loom::cli::format
