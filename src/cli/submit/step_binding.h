// srun's task binding options, checked with Slurm 22.05's syntax and error texts:
// --cpu-bind=[{quiet|verbose},]TYPE and --gpu-bind=[verbose,]TYPE. Loom carries the values to
// the nodes as given; the node decides each task's CPUs and GPUs (noded BindTask). Pure
// functions; thread-safe.
#pragma once

#include <string_view>

#include "core/status.h"

namespace loom::cli::submit {

// --cpu-bind: quiet, verbose, then one of none|no, rank, rank_ldom, sockets, cores, threads,
// ldoms, boards, map_cpu:<list>, mask_cpu:<list>, map_ldom:<list>, mask_ldom:<list>
// (lists of numbers, hex for masks, each optionally "*count"). Errors say what Slurm's
// srun says ("unrecognized --cpu-bind argument \"x\"", "missing list for ...").
Status ValidateCpuBind(std::string_view value);

// --gpu-bind: verbose, then one of closest, none, map_gpu:<list>, mask_gpu:<list>,
// per_task:<n>, single:<n>. Error: "Invalid --gpu-bind argument: VALUE".
Status ValidateGpuBind(std::string_view value);

}  // namespace loom::cli::submit
