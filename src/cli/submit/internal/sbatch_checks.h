// The checks sbatch makes once every source is in. Shared by the files of the submission
// layer; not part of its interface.
#pragma once

#include <string>
#include <vector>

#include "cli/submit/internal/sbatch_apply.h"
#include "cli/submit/sbatch_options.h"
#include "core/status.h"
#include "model/job_request.h"

namespace loom::cli::submit::internal {

// Validates what the sources say once all are in, and parses the GRES and GPU counts, the
// export policy, the dependency and the array into `state->r`.
Status CheckRequest(const SbatchSettings& settings, int error_exit, State* state);

}  // namespace loom::cli::submit::internal
