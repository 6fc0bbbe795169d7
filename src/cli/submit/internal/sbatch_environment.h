// The SBATCH_* input variables as options. Shared by the files of the submission layer; not
// part of its interface.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/submit/internal/sbatch_apply.h"
#include "cli/submit/internal/sbatch_getopt.h"

namespace loom::cli::submit::internal {

// One SBATCH_* variable as an option. A flag variable set to anything but "", "yes" or a
// non-zero number resets the option instead (`reset`), undoing an #SBATCH line.
struct EnvOption {
  ParsedOption option;
  bool reset = false;
};

// The options the SBATCH_* variables of `env` stand for, in a fixed order.
std::vector<EnvOption> EnvironmentOptions(const std::map<std::string, std::string>& env);

// Undoes a flag option (see EnvOption).
void ResetFlag(Opt id, State* st);

}  // namespace loom::cli::submit::internal
