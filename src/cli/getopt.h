// The option scanner of every Slurm-named command (sbatch, srun, salloc, squeue, sinfo, scancel,
// scontrol, sstat, sdiag, ...), with the rules of glibc's getopt_long, which Slurm's commands
// use: short options may be clustered ("-lN", "-N2"); a long option may be abbreviated to any
// unambiguous prefix (an exact name wins); a required argument is "=value" or the next word
// (attached or the next word for a short option); an optional one only "=value" (or attached);
// "--" ends the options. Words that are not options are operands: with Ordering::kPermute they
// may come before, between or after the options (glibc's default, unless POSIXLY_CORRECT is
// set); with kRequireOrder the first one ends the options (a "+" optstring: sbatch's script).
// Error texts are glibc's ("squeue: unrecognized option '--foo'"). Pure functions over
// immutable tables; thread-safe.
#pragma once

#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::cli {

enum class ArgKind { kNone, kRequired, kOptional };
// Shorthands for the tables.
inline constexpr ArgKind kNoArg = ArgKind::kNone;
inline constexpr ArgKind kArg = ArgKind::kRequired;
inline constexpr ArgKind kOptArg = ArgKind::kOptional;

// One row of a command's option table. Rows sharing `id` and `arg` are one option under two
// names (sbatch's --cluster and --clusters): an abbreviation of both is not ambiguous.
template <typename Id>
struct OptionSpec {
  std::string_view name;  // long name without "--"; empty: a short option only
  char short_name;        // 0: none
  ArgKind arg;
  Id id;
};

template <typename Id>
struct ParsedOption {
  Id id;
  std::optional<std::string> value;  // unset: no argument given
  friend bool operator==(const ParsedOption&, const ParsedOption&) = default;
};

template <typename Id>
struct ScanResult {
  // The options in order, up to a malformed one or to one of the scan's `final` options
  // (--help, --usage, --version: the commands act on them at once, as Slurm's exit there).
  std::vector<ParsedOption<Id>> options;
  // The operands, in order. With kRequireOrder: the first non-option word and all after it.
  std::vector<std::string> rest;
  // A malformed option after `options`: InvalidArgumentError whose message is the line glibc
  // prints, e.g. "scancel: option '--us=x' is ambiguous; possibilities: '--usage' '--user'".
  Status error;
};

enum class Ordering { kPermute, kRequireOrder };

// glibc's choice for a table without "+": permute unless POSIXLY_CORRECT is set.
inline Ordering DefaultOrdering() {
  return std::getenv("POSIXLY_CORRECT") != nullptr ? Ordering::kRequireOrder : Ordering::kPermute;
}

namespace getopt_internal {

// The table with its ids reduced to what the scan compares.
struct Row {
  std::string_view name;
  char short_name;
  ArgKind arg;
  int group;   // rows of one option share it
  bool final;  // the scan ends after it
};
struct Hit {
  size_t row;
  std::optional<std::string> value;
};
struct RawScan {
  std::vector<Hit> hits;
  std::vector<std::string> rest;
  Status error;
};
RawScan Scan(std::span<const std::string> words, std::span<const Row> rows,
             std::string_view program, Ordering ordering);

}  // namespace getopt_internal

// Scans `words` (without the program name) against `table`; errors name `program`.
template <typename Id>
ScanResult<Id> ScanOptions(std::span<const std::string> words,
                           std::span<const OptionSpec<Id>> table, std::string_view program,
                           Ordering ordering, std::span<const Id> final = {}) {
  std::vector<getopt_internal::Row> rows;
  rows.reserve(table.size());
  for (const OptionSpec<Id>& o : table) {
    bool is_final = false;
    for (Id f : final) is_final = is_final || f == o.id;
    rows.push_back({o.name, o.short_name, o.arg, static_cast<int>(o.id), is_final});
  }
  getopt_internal::RawScan raw = getopt_internal::Scan(words, rows, program, ordering);
  ScanResult<Id> out;
  for (getopt_internal::Hit& h : raw.hits) {
    out.options.push_back({table[h.row].id, std::move(h.value)});
  }
  out.rest = std::move(raw.rest);
  out.error = std::move(raw.error);
  return out;
}

// The long name of `id` in `table` ("" when it has none).
template <typename Id>
std::string_view LongName(std::span<const OptionSpec<Id>> table, Id id) {
  for (const OptionSpec<Id>& o : table) {
    if (o.id == id && !o.name.empty()) return o.name;
  }
  return "";
}

}  // namespace loom::cli
