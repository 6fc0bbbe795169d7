// The submission layer of `sbatch`: turns a command line, a batch script and the submitting
// environment into one model::JobRequest, with Slurm 22.05's option syntax, precedence and
// error texts. Pure: it reads nothing but its arguments (the command reads the script file
// and the clock, and prints). Thread-safe.
//
// Precedence, as in Slurm: command line > SBATCH_* environment variables > #SBATCH
// directives (only those before the script's first command). Every source is validated,
// even where a higher one overrides it: a bad #SBATCH value is an error even when the
// command line sets the same option.
//
// Errors are InvalidArgumentError whose message is exactly what sbatch prints on stderr
// (one or more lines, "sbatch: error: ..." included, no trailing newline), and which carry
// the exit status sbatch would end with (SbatchExitCode): 255 for malformed options and
// values, 1 for "Invalid numeric value" and sbatch's fatal errors, and 1 or
// $SLURM_EXIT_ERROR for the rest (script checks, GRES checks, refused submissions).
// docs/user/sbatch.md lists them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "core/status.h"
#include "model/job_request.h"

namespace loom::cli::submit {

// The exit status sbatch uses for malformed options and option values.
inline constexpr int kOptionErrorExit = 255;

// What the cluster configuration and the submitting host contribute.
// A site's cli_filter.lua (CliFilterPlugins=lua) as sbatch, srun and salloc call it: passes
// over the options by their long names ("partition", "gpu-bind"; a flag given reads "set").
// cli/cli_filter.h runs the script; tests give a fake.
class CliFilter {
 public:
  virtual ~CliFilter() = default;
  // slurm_cli_setup_defaults: options the site sets below every other source (#SBATCH
  // directives, the environment and the command line all override them).
  virtual StatusOr<std::map<std::string, std::string>> SetupDefaults(std::string_view command) = 0;
  // slurm_cli_pre_submit: given the options as resolved, the options as the script left
  // them; what it changed or added overrides every source. An error refuses the submission.
  virtual StatusOr<std::map<std::string, std::string>> PreSubmit(
      std::string_view command, const std::map<std::string, std::string>& options) = 0;
};

struct SbatchSettings {
  int64_t max_array_size = 1001;                   // slurm.conf MaxArraySize
  std::vector<std::string> gres_types = {"gpu"};   // slurm.conf GresTypes
  absl::TimeZone time_zone = absl::UTCTimeZone();  // the host's, for --begin/--deadline
  // The submitting process's working directory: relative --chdir, --output, --error and
  // --input paths are made absolute against it (or against --chdir). Empty: $PWD from the
  // environment; when that is missing too, paths stay as written.
  std::string submit_dir;
  CliFilter* cli_filter = nullptr;  // none: no cli_filter.lua
};

// What the command line says before the script is read: which script to read.
struct SbatchCommandLine {
  std::optional<std::string> script_path;  // unset: standard input (or --wrap)
  std::vector<std::string> script_args;
  bool wrap = false;  // --wrap given: no script is read
};

// Finds the script on a command line (argv as main() receives it: argv[0] is the command's
// name). Never fails: malformed options are reported by ParseSbatch, in sbatch's order.
SbatchCommandLine ScanSbatchCommandLine(std::span<const std::string> argv);

struct SbatchInput {
  enum class Action {
    kSubmit,    // submit `request` (or, with request.test_only, ask when it would start)
    kHelp,      // --help: print the help text, exit 0
    kUsage,     // --usage: print the usage text, exit 0
    kVersion,   // --version: print the version, exit 0
    kGresHelp,  // --gres=help: print GresHelpText, exit 0
  };
  Action action = Action::kSubmit;
  model::JobRequest request;
  // How the command reports: --parsable, --wait (-W), --quiet (-Q), --verbose (-v count).
  bool parsable = false;
  bool wait = false;
  bool quiet = false;
  int verbose = 0;
  // The exit status for failures from here on (submission errors): 1 or $SLURM_EXIT_ERROR.
  int error_exit = 1;
  // Lines for stderr ("sbatch: warning: ..."), printed unless --quiet.
  std::vector<std::string> warnings;
};

// Resolves a submission. `argv` as main() receives it; `script` the text of the script
// file or of standard input (ignored with --wrap); `env` the submitting environment; `now`
// Unix seconds, for --begin and --deadline.
StatusOr<SbatchInput> ParseSbatch(std::span<const std::string> argv, std::string_view script,
                                  const std::map<std::string, std::string>& env, int64_t now,
                                  const SbatchSettings& settings = {});

// The exit status sbatch ends with for `status`: 0 when OK, else the status carried by a
// ParseSbatch error (1 for errors from elsewhere).
int SbatchExitCode(const Status& status);

// What `sbatch --gres=help` prints for the configured GRES types.
std::string GresHelpText(std::span<const std::string> gres_types);

}  // namespace loom::cli::submit
