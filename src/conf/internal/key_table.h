// The keys Slurm knows in slurm.conf, per kind of line, and the messages for keys it does
// not know (closest known key, or the line/file where the key belongs). Static tables and
// pure functions; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace loom::conf::internal {

// The kind of line a key appears on: global keys, or the options of a NodeName=,
// PartitionName=, DownNodes=, NodeSet= or FrontendName= line.
enum class Scope { kGlobal, kNode, kPartition, kDownNodes, kNodeSet, kFrontend };

// All keys Slurm accepts in `scope` (Slurm 22.05, plus keys of later releases), in their
// canonical spelling. For record scopes the record key itself (e.g. "NodeName") is included.
std::span<const std::string_view> KnownKeys(Scope scope);

// The canonical spelling of `key` (matched case-insensitively) in `scope`, or nullopt.
std::optional<std::string_view> CanonicalKey(Scope scope, std::string_view key);

// An explanation for a key that is unknown in `scope`: where it belongs if it is an option
// of another line kind or another Slurm file, whether it was removed from Slurm, or the
// closest known key. Full sentence, without the location.
std::string UnknownKeyMessage(Scope scope, std::string_view key);

// Closest candidate to `word` by case-insensitive edit distance (transpositions count as
// one edit), when near enough to be a plausible typo.
std::optional<std::string_view> ClosestMatch(std::string_view word,
                                             std::span<const std::string_view> candidates);

// Optimal-string-alignment edit distance between the lower-cased strings.
int EditDistance(std::string_view a, std::string_view b);

// The SchedulerParameters options Slurm knows (lower case), for warnings and suggestions.
std::span<const std::string_view> KnownSchedulerOptions();

// Human name of a line kind for messages: "global", "NodeName", "PartitionName", ...
std::string_view ScopeName(Scope scope);

}  // namespace loom::conf::internal
