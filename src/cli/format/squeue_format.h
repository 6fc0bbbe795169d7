// `squeue` output, as Slurm 22.05 prints it: the default, `-l` and `--start` layouts, `-o`
// format strings ("%.18i %.9P %j", "%all"), `-O` field lists ("JobID,Name:30,State:.10"),
// `-h`, `-r` (one line per array task), `-t` state filters, `-S` sort keys, and `--json`.
// Pure functions of the job views; thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/format/text.h"
#include "cli/format/views.h"
#include "core/status.h"
#include "model/job_state.h"

namespace loom::cli::format {

// The states `-t` selects. Slurm's names, long or short, any case, comma separated, or "all".
struct JobStateFilter {
  bool given = false;  // false: Slurm's default, the jobs that have not finished
  bool all = false;
  std::vector<model::JobState> states;
  bool Matches(model::JobState s) const;
};

// Parses `-t`'s argument. Names Slurm knows for states Loom never enters (CONFIGURING,
// REQUEUED, RESIZING, ...) are accepted and match nothing; anything else is an error that
// lists the valid names.
StatusOr<JobStateFilter> ParseJobStateFilter(std::string_view text);

struct SqueueOptions {
  std::string format;          // -o; "" for the layout the flags below choose
  std::string long_format;     // -O; used when `format` is empty
  bool long_listing = false;   // -l
  bool start = false;          // --start: pending jobs, expected start times
  bool no_header = false;      // -h
  bool expand_arrays = false;  // -r
  std::string sort;            // -S, "P,t,-p" style; "" for Slurm's default order
  JobStateFilter states;       // -t
  // -j, -u, -p, -n, -R: keep only jobs that match one entry of each non-empty list. A job
  // id matches the job itself and, for an array, every task of it.
  std::vector<uint32_t> job_ids;
  std::vector<std::string> users;
  std::vector<std::string> partitions;
  std::vector<std::string> names;
  std::vector<std::string> reservations;
};

// Checks the format strings and the sort keys; RenderSqueue fails on exactly these errors.
// Messages name the option ("-o", "-O", "-S") and the offending part.
Status ValidateSqueueOptions(const SqueueOptions& options);

// The table squeue prints for `jobs` (in the controller's order; ties in the sort keep it),
// with the trailing new line of each row.
StatusOr<std::string> RenderSqueue(const std::vector<JobView>& jobs, const SqueueOptions& options,
                                   const RenderContext& ctx);


// `squeue --json`: Slurm 22.05's document (meta, errors, jobs) with every job key in Slurm's
// order. The -j/-u/-p/-n/-t filters of `options` apply; without -t every job is listed, the
// finished ones the controller still holds included, as Slurm does. No sorting, no new line at
// the end (Slurm prints none).
std::string RenderSqueueJson(const std::vector<JobView>& jobs, const SqueueOptions& options,
                             const RenderContext& ctx, const JsonMeta& meta = {});
// The same document written to `file` as it is made, in pieces, with the jobs `next` gives
// one at a time (nullptr after the last), so that neither a listing of many thousands of jobs
// nor its views sit whole in memory. False when a write failed.
bool WriteSqueueJson(const std::function<const JobView*()>& next, const SqueueOptions& options,
                     const RenderContext& ctx, std::FILE* file, const JsonMeta& meta = {});

}  // namespace loom::cli::format
