// `scontrol show job|node|partition`, as Slurm 22.05 prints them: Key=Value records with Slurm's
// line breaks (continuation lines indented by three spaces, a blank line after each record),
// `-o` one record per line, and `-d` details (DerivedExitCode, the JOB_GRES block with each
// node's CPU ids, memory and GPU indices). Pure functions of the views; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "cli/format/views.h"

namespace loom::cli::format {

struct ScontrolOptions {
  bool one_liner = false;  // -o
  bool details = false;    // -d
};

// One record each, with its trailing new lines; the plural forms concatenate them, as
// `scontrol show job` (no id) prints every job.
std::string RenderJob(const JobView& job, const ScontrolOptions& options, const RenderContext& ctx);
std::string RenderJobs(const std::vector<JobView>& jobs, const ScontrolOptions& options,
                       const RenderContext& ctx);
std::string RenderNode(const NodeView& node, const ScontrolOptions& options,
                       const RenderContext& ctx);
std::string RenderNodes(const std::vector<NodeView>& nodes, const ScontrolOptions& options,
                        const RenderContext& ctx);
std::string RenderPartition(const PartitionView& partition, const ScontrolOptions& options,
                            const RenderContext& ctx);
std::string RenderPartitions(const std::vector<PartitionView>& partitions,
                             const ScontrolOptions& options, const RenderContext& ctx);

// The paths scontrol prints for a batch job's standard streams: the submitted pattern with
// %j %A %a %x %u %N %% filled in and made absolute against WorkDir; without one, /dev/null for
// input, slurm-%j.out (slurm-%A_%a.out for an array task) for output, and the output path for
// errors.
std::string ResolvedStdIn(const JobView& job);
std::string ResolvedStdOut(const JobView& job);
std::string ResolvedStdErr(const JobView& job);

}  // namespace loom::cli::format
