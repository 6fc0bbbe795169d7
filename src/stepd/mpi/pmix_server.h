// The PMIx server a step's supervisor runs for the step's tasks on its node (srun
// --mpi=pmix), on OpenPMIx (Debian's libpmix2), loaded when a step first asks for it so that
// nodes without it still run every other step. It registers the step's namespace with what
// MPI libraries read at start (sizes, the rank and node maps, each rank's local and node
// rank and node id, this node's peers), gives each task the environment that leads its PMIx
// client here, and carries out fences, direct modex requests and aborts with the step's
// other nodes (StepExchange).
//
// One per process: the PMIx server library keeps global state.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "stepd/mpi/wire_up.h"

namespace loom::stepd {

// Starts the server for `step`. FailedPrecondition naming Debian's package when the PMIx
// library cannot be loaded; other errors as the library reports them.
StatusOr<std::unique_ptr<WireUp>> StartPmixServer(const WireUpStep& step,
                                                  const std::string& relay_socket,
                                                  AbortStep abort_step);

}  // namespace loom::stepd
