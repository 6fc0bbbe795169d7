// The options of a cli_filter.lua pass (CliFilter) in the terms of a command's option table,
// and back. Shared by sbatch, srun and salloc's parsers; not part of the layer's interface.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/submit/internal/sbatch_getopt.h"
#include "cli/submit/sbatch_options.h"
#include "core/status.h"

namespace loom::cli::submit::internal {

// The options given, by long name (the last of each wins; an option given without a value
// reads "set"), added to `out`.
void AddToOptionMap(std::span<const ParsedOption> given, std::map<std::string, std::string>* out);

// The options a pass set (those of `after` missing from `before` or changed), as options of
// `table`. Errors (`command: error: ...`) name an option the command does not have. "type",
// which says which command runs, is not an option.
StatusOr<std::vector<ParsedOption>> FilterOptions(const std::map<std::string, std::string>& before,
                                                  const std::map<std::string, std::string>& after,
                                                  std::span<const OptionSpec> table,
                                                  std::string_view command);

// The two passes, as options of `table` (errors are the command's text, "sbatch: error: ...";
// give them the command's exit code with WithExit): slurm_cli_setup_defaults' options, and
// what slurm_cli_pre_submit changed in the options `given`.
StatusOr<std::vector<ParsedOption>> DefaultsPass(CliFilter& filter,
                                                 std::span<const OptionSpec> table,
                                                 std::string_view command);
StatusOr<std::vector<ParsedOption>> PreSubmitPass(CliFilter& filter,
                                                  const std::map<std::string, std::string>& given,
                                                  std::span<const OptionSpec> table,
                                                  std::string_view command);

}  // namespace loom::cli::submit::internal
