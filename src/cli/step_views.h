// How scontrol and squeue print the steps loomctld keeps (v1::StepInfo), in Slurm 22.05's
// layouts: `scontrol show step` Key=Value blocks and `squeue -s` columns. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/v1/loom.pb.h"

namespace loom::cli {

// `scontrol show step`: one block per step ("StepId=12.0 UserId=1000 StartTime=... ");
// with `one_liner` each block on one line. Ended steps add EndTime= and ExitCode= (Slurm
// itself forgets a step once it ends; Loom keeps it as long as its job is listed).
std::string RenderStepsScontrol(const std::vector<v1::StepInfo>& steps, bool one_liner);

// `squeue -s`: STEPID NAME PARTITION USER TIME NODELIST of the running steps, as
// "%.15i %.8j %.9P %.8u %.10M %N"; `now` Unix seconds.
std::string RenderStepsSqueue(const std::vector<v1::StepInfo>& steps, int64_t now, bool header);

}  // namespace loom::cli
