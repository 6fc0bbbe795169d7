// The topology.conf reader: the network between nodes as Slurm's topology/tree and
// topology/block plugins describe it, validated against the cluster's nodes and turned into
// model::ClusterTopology.
//
//   SwitchName=<name> Nodes=<hostlist> [LinkSpeed=<n>]      a leaf switch and its nodes
//   SwitchName=<name> Switches=<hostlist> [LinkSpeed=<n>]   a switch above other switches
//   BlockName=<name> Nodes=<hostlist>                       a block (NVL72 rack, ...)
//   BlockSizes=<n>[,<n>...]                                 block sizes jobs may use
//
// Keys are case-insensitive; `#` starts a comment; a line ending in `\` continues on the
// next. Errors name file:line: an unknown node or child switch, a node under two leaves or
// in two blocks, a switch with both Switches= and Nodes=, a switch below two parents, a
// cycle, SwitchName and BlockName lines in one file, BlockSizes that are not ascending
// power-of-two multiples of the first or larger than a block. A node the file does not name
// is a warning (it gets leaf_of = -1).
//
// Pure functions (LoadTopologyConf apart, which reads a file); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "conf/diagnostic.h"
#include "core/status.h"
#include "model/cluster_topology.h"

namespace loom::conf {

// Parses `text`, the topology.conf named `file_name` in messages, for a cluster whose nodes
// are `node_names` (slurm.conf order; the result's node indices index this vector).
// Switches and blocks keep the order of their lines; a switch's children and nodes keep the
// order written. Levels: a leaf is 0, a parent one more than its highest child. A file with
// no switches or blocks gives an empty (kFlat) topology. Warnings are appended to
// `warnings` when it is not null, also when parsing fails. On failure returns
// InvalidArgumentError listing each error as "file:line: error: ...", one per line.
StatusOr<model::ClusterTopology> ParseTopologyConf(std::string_view text,
                                                   std::string_view file_name,
                                                   const std::vector<std::string>& node_names,
                                                   std::vector<Diagnostic>* warnings);

// Reads and parses the topology.conf at `path`.
StatusOr<model::ClusterTopology> LoadTopologyConf(const std::string& path,
                                                  const std::vector<std::string>& node_names,
                                                  std::vector<Diagnostic>* warnings);

}  // namespace loom::conf
