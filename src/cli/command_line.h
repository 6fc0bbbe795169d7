// What the Slurm-named commands share around the option scanner (cli/getopt.h): the version
// line, the answer to a malformed option (glibc's line, Slurm's "Try" line, Slurm's exit
// status), --help, --usage and --version, and the error for an option Slurm has and Loom does
// not honour yet. Writes to stdout and stderr only; thread-compatible.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/getopt.h"
#include "core/status.h"
#include "core/version.h"

namespace loom::cli {

// What --version prints: the Slurm release Loom follows (scripts test it as they test
// Slurm's), then Loom's own (core/version.h).
inline constexpr std::string_view kSlurmVersion = "slurm-wlm 22.05.8 (loom 0.1.0)\n";
static_assert(kSlurmVersion.substr(0, kSlurmVersion.size() - 1) == core::kVersionLine);

struct CommandText {
  std::string_view program;  // "squeue"
  std::string_view help;     // what --help prints
  std::string_view usage;    // what --usage prints
  // Whether a malformed option is followed by `Try "squeue --help" for more information`
  // (every command but sstat).
  bool try_help = true;
};

// Writes `text` to stdout; returns 0, or 1 when it could not be written.
int PrintText(std::string_view text);

// Prints the scanner's error line (and the "Try" line) to stderr; returns Slurm's exit
// status for a bad option: 1 (squeue, sinfo, scancel, scontrol, sstat, sdiag).
int BadOption(const CommandText& text, const Status& error);

// "squeue: error: --qos is not supported by Loom yet"; returns 1.
int NotSupported(std::string_view program, std::string_view long_name);

// A time as the accounting commands print it: "2026-11-29T18:56:28" in the local time zone;
// "Unknown" when unset (0 or less).
std::string LocalAcctTime(int64_t t);

// The name of the user running the command (what --me stands for), or its uid in decimal.
std::string CurrentUserName();

// Scans argv (argv[0]: the program) with glibc's ordering (cli/getopt.h). On a malformed
// option, or on --help, --usage or --version (which `Id` names kHelp, kUsage and kVersion),
// prints what Slurm prints and returns the exit status; otherwise fills *scan.
template <typename Id>
std::optional<int> ScanCommandLine(int argc, char** argv, std::span<const OptionSpec<Id>> table,
                                   const CommandText& text, ScanResult<Id>* scan) {
  const std::vector<std::string> words(argv + (argc > 0 ? 1 : 0), argv + argc);
  constexpr Id kFinal[] = {Id::kHelp, Id::kUsage, Id::kVersion};
  *scan = ScanOptions<Id>(words, table, text.program, DefaultOrdering(), kFinal);
  if (!scan->error.ok()) return BadOption(text, scan->error);
  if (scan->options.empty()) return std::nullopt;
  switch (scan->options.back().id) {
    case Id::kHelp:
      return PrintText(text.help);
    case Id::kUsage:
      return PrintText(text.usage);
    case Id::kVersion:
      return PrintText(kSlurmVersion);
    default:
      return std::nullopt;
  }
}

}  // namespace loom::cli
