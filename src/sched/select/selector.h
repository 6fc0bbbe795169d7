// Node selection: which nodes, and how much of each, a job takes given what is free on each
// candidate node. Whole-node (--exclusive) and core-level (CR_Core, CR_Core_Memory)
// requests; nodes are tried in the order given (the caller orders them by Weight, then by
// their place in the configuration, as Slurm does). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "sched/types.h"

namespace loom::sched {

// Tasks of `shape` that fit in `free` on a node of capacity `capacity` (0 if none).
int32_t TasksThatFit(const model::JobShape& shape, const Resources& free,
                     const Resources& capacity);
// Resources that `tasks` tasks of `shape` take on a node of capacity `capacity`.
Resources AmountFor(const model::JobShape& shape, int32_t tasks, const Resources& capacity);
// The least a node must have free to host any part of the job.
Resources MinNodeNeed(const model::JobShape& shape, const Resources& capacity);
// Whether the whole job always lands on one node.
inline bool SingleNode(const model::JobShape& shape) { return shape.max_nodes <= 1; }

struct Candidate {
  int32_t node;
  Resources free;
  Resources capacity;
};

// Chooses nodes for the job among `candidates` (in preference order). On success fills
// `out` and returns true. Every chosen node gets at least one task; the node count stays
// within [min_nodes, max_nodes]. Tasks fill the preferred nodes first, except that with an
// exact node count (-N) and no --ntasks-per-node they are dealt round robin over the chosen
// nodes as Slurm lays them out (-N2 -n4: 2 and 2; -N2 -n3: 2 and 1).
bool SelectNodes(const model::JobShape& shape, std::span<const Candidate> candidates,
                 Allocation* out);

}  // namespace loom::sched
