// The network between nodes as placement sees it: a switch tree (topology/tree) or a set of
// blocks (topology/block, the multi-node NVLink domains of NVL72-style racks), as
// topology.conf describes them. Pure value; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::model {

struct Switch {
  std::string name;
  int32_t level = 0;                 // 0 for a leaf (has Nodes=), parent level = max child + 1
  int32_t parent = -1;               // index into ClusterTopology::switches, -1 for a root
  std::vector<int32_t> children;     // switch indices
  std::vector<int32_t> nodes;        // node indices directly attached (leaves only)
  int64_t link_speed = 0;            // LinkSpeed=, 0 when not given (informational)
  friend bool operator==(const Switch&, const Switch&) = default;
};

struct Block {
  std::string name;
  std::vector<int32_t> nodes;        // node indices, in configuration order
  friend bool operator==(const Block&, const Block&) = default;
};

struct ClusterTopology {
  enum class Kind : uint8_t { kFlat, kTree, kBlock };
  Kind kind = Kind::kFlat;
  std::vector<Switch> switches;      // kTree
  std::vector<int32_t> leaf_of;      // by node index: its leaf switch (kTree) or block
                                     // (kBlock), -1 for a node topology.conf does not name
  std::vector<Block> blocks;         // kBlock
  std::vector<int32_t> block_sizes;  // BlockSizes= (in nodes), ascending; default {block size}
  friend bool operator==(const ClusterTopology&, const ClusterTopology&) = default;

  bool empty() const { return kind == Kind::kFlat; }
};

}  // namespace loom::model
