// srun inside an allocation: runs a step of the job SrunInput::step names (srun_in_job.cc).
#pragma once

#include "cli/submit/srun_options.h"

namespace loom::cli {

// Creates the step, runs its tasks with their output coming here, and returns srun's exit
// status. `input.step` must be set.
int RunSrunInJob(submit::SrunInput input);

}  // namespace loom::cli
