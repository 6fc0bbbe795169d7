// The slurm.conf reader: parses the file as sites write it (case-insensitive keys, comments,
// `\` continuations, quoted values, Include files, NodeName/PartitionName DEFAULT lines,
// hostlist node names), validates it, and returns an immutable ClusterConfig.
//
// What it does with each key:
//   - keys Loom acts on are parsed into typed ClusterConfig fields; a malformed value is an
//     error naming file:line, the key, the value and what is expected;
//   - other keys Slurm 22.05 accepts are kept verbatim (ClusterConfig::other_keys) and
//     reported as warnings ("not acted on by Loom yet");
//   - keys Slurm does not know are errors, with the closest known key suggested.
// Errors are all collected; the returned Status carries every one, one per line.
//
// Pure functions (apart from LoadSlurmConf reading files); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "conf/cluster_config.h"
#include "conf/diagnostic.h"
#include "conf/include_resolver.h"
#include "core/status.h"

namespace loom::conf {

// Parses `text` as the slurm.conf named `file_name` (used in messages and as the base
// directory of relative Include paths). Include lines are read through `resolver`.
// Warnings are appended to `warnings` when it is not null, also when parsing fails.
// On failure returns InvalidArgumentError whose message lists each error as
// "file:line: error: ..." (NotFound/other errors of the resolver are reported the same way).
StatusOr<ClusterConfig> ParseSlurmConf(std::string_view text, std::string_view file_name,
                                       const IncludeResolver& resolver,
                                       std::vector<Diagnostic>* warnings);

// Reads and parses the slurm.conf at `path` from the filesystem, Include files included.
StatusOr<ClusterConfig> LoadSlurmConf(const std::string& path, std::vector<Diagnostic>* warnings);

// A small mixed cluster that needs no file: two 8-GPU nodes (gpu-[01-02], A100) and two CPU
// nodes (cpu-[01-02]) in partitions `gpu` and `cpu` (default). Parses without warnings.
std::string_view DefaultSlurmConf();

// The name DefaultSlurmConf() is parsed under in messages.
inline constexpr std::string_view kDefaultSlurmConfName = "<built-in slurm.conf>";

}  // namespace loom::conf
