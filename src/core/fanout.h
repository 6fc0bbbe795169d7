// How a message for many nodes travels: as Slurm's TreeWidth describes it, the sender talks to
// at most `width` nodes itself; each of them passes the message on to the nodes of its share,
// again at most `width` at a time, and so on. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace loom::core {

// One node of the tree: its index among the nodes the message is for, and the nodes it
// passes the message on to.
struct FanoutNode {
  int32_t index = 0;
  std::vector<FanoutNode> children;
  friend bool operator==(const FanoutNode&, const FanoutNode&) = default;
};

// The nodes 0..count-1 as the sender's direct children: the list is cut into at most `width`
// consecutive spans as even as can be (earlier spans one longer); the first node of each span
// heads it and passes the message on to the rest of its span, cut the same way. Every index
// appears once; with count <= width the sender talks to every node itself. `width` < 2 counts
// as 2, so that a tree always gets shallower as it widens.
std::vector<FanoutNode> FanoutTree(int32_t count, int32_t width);

// The number of levels of `tree` (0 when empty): how many hops the last node is away.
int32_t FanoutDepth(const std::vector<FanoutNode>& tree);

}  // namespace loom::core
