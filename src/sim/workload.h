// Turns a trace into what the simulator replays: the machine as a cluster and the jobs.
// An SWF machine of m processors is one pool of m CPUs (one node), so every policy sees
// exactly the processor-count model of the published studies. Pure; thread-safe.
#pragma once

#include <vector>

#include "sched/types.h"
#include "sim/simulator.h"
#include "sim/swf.h"

namespace loom::sim {

enum class EstimateKind { kRequested, kExact };

sched::Cluster SwfCluster(const SwfTrace& trace);
std::vector<SimJob> SwfJobs(const SwfTrace& trace, EstimateKind estimate);

}  // namespace loom::sim
