// The submission layer of `salloc`: its command line (options as sbatch's and srun's, then an
// optional command) into a model::JobRequest for an allocation only (allocation_only: nothing
// is launched on its nodes; srun starts steps there). Errors speak as salloc
// ("salloc: error: ..."). Pure: it reads nothing but its arguments. Thread-safe.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "cli/submit/sbatch_options.h"
#include "core/status.h"
#include "model/job_request.h"

namespace loom::cli::submit {

struct SallocInput {
  enum class Action { kAllocate, kHelp, kUsage, kVersion };
  Action action = Action::kAllocate;
  model::JobRequest request;          // allocation_only, never requeued
  std::vector<std::string> command;   // what to run; empty: the user's shell ($SHELL)
  bool quiet = false;                 // -Q: no informational messages
  int error_exit = 1;                 // $SLURM_EXIT_ERROR, else 1
  std::vector<std::string> warnings;  // "salloc: warning: ..." lines for stderr
};

// Resolves salloc's command line. `argv` as main() receives it; `env` salloc's environment;
// `now` Unix seconds. Errors are InvalidArgumentError whose message is what salloc prints and
// which carry its exit status (SbatchExitCode).
StatusOr<SallocInput> ParseSalloc(std::span<const std::string> argv,
                                  const std::map<std::string, std::string>& env, int64_t now,
                                  const SbatchSettings& settings = {});

// What `salloc --help` prints.
std::string SallocHelpText();

}  // namespace loom::cli::submit
