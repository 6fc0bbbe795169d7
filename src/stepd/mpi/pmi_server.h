// The PMI server a step's supervisor runs for its tasks on its node with srun --mpi=pmi2:
// MPICH and the libraries built on it (Intel MPI, MVAPICH) find it through PMI_FD, a socket
// the task inherits, and speak PMI-1 or PMI-2 on it (pmi_wire.h). Puts stay on the node until
// a fence (PMI-1 barrier, PMI-2 kvs-fence) that every local rank has entered; then the
// node's new pairs travel the step's tree (StepExchange) and every node's come back.
// PMI_process_mapping, the job's size and its kvs name are the server's own answers; node
// attributes (PMI-2 info-putnodeattr) are the node's alone.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "stepd/mpi/wire_up.h"

namespace loom::stepd {

StatusOr<std::unique_ptr<WireUp>> StartPmiServer(const WireUpStep& step,
                                                 const std::string& relay_socket,
                                                 AbortStep abort_step);

}  // namespace loom::stepd
