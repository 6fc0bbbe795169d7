// The gres.conf reader: the file in which Slurm sites describe each node's generic
// resources (GPUs, MPS, shards, ...) device by device, and the GPU topology Loom derives
// from it for placement.
//
//   [NodeName=<hostlist>] Name=<gres> [Type=<type>] [File=<devices>|MultipleFiles=<devices>]
//       [Cores=<cpu list>] [Links=<n,n,...>] [Count=<n>[K|M|G|T|P]] [Flags=<flag,...>]
//       [AutoDetect=off|nvml|rsmi|oneapi|nrt|nvidia]
//   [NodeName=<hostlist>] AutoDetect=<mechanism>        (on its own: for all nodes)
//   NodeName=<hostlist> Topology=<matrix file>           (Loom; see gpu_topo_matrix.h)
//
// Keys are case-insensitive; `#` starts a comment; a line ending in `\` continues on the
// next. File=/dev/nvidia[0-7] names eight devices (brackets expand as in hostlists); a line
// without NodeName applies to every node whose slurm.conf Gres= has that GRES. A relative
// Topology= path is read from the directory of gres.conf.
//
// The node topologies (BuildNodeTopologies), per node:
//   - Topology= given: that matrix; gres.conf's File= and Type= of the node's GPUs, when
//     given, replace the matrix's device files and the GPU type;
//   - else GPU lines with File=, Cores= or Links=: GPUs in the order the lines list them;
//     NVLink domains from Links= (GPUs joined by links, directly or through others); NUMA
//     nodes from Cores= (GPUs whose sets overlap share one, whose CPUs are their sets
//     together; Cores= ids are taken as CPU ids); one PCIe switch per GPU (gres.conf does
//     not say which GPUs share one); no NIC;
//   - else none (placement then treats the node's GPUs as interchangeable).
//
// Pure functions (LoadGresConf apart, which reads files); thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/cluster_config.h"
#include "conf/diagnostic.h"
#include "conf/include_resolver.h"
#include "core/status.h"
#include "model/gpu_topology.h"

namespace loom::conf {

// AutoDetect=: how a node's daemon discovers its GPUs when it starts.
enum class GresAutoDetect : uint8_t { kNotSet, kOff, kNvml, kRsmi, kOneapi, kNrt, kNvidia };
std::string_view GresAutoDetectName(GresAutoDetect a);  // "nvml", ...; "" for kNotSet

// One line of gres.conf.
struct GresConfLine {
  SourceLocation location;
  std::string node_expr;           // NodeName= as written; empty: applies to every node
  std::vector<std::string> nodes;  // NodeName= expanded, in order
  std::string name;                // Name=, lower-cased; empty on AutoDetect/Topology lines
  std::string type;                // Type=; empty when not given
  std::vector<std::string> files;  // File= (one device each) or MultipleFiles=, expanded
  bool multiple_files = false;     // files came from MultipleFiles= (one device in all)
  std::optional<int64_t> count;    // Count= when given
  std::optional<std::vector<int32_t>> cores;            // Cores= (or the old CPUs=), ascending
  std::vector<int32_t> links;                           // Links=; empty when not given
  std::vector<std::string> flags;                       // Flags=, in their canonical spelling
  GresAutoDetect autodetect = GresAutoDetect::kNotSet;  // AutoDetect= on a NodeName line
  std::string topology;                                 // Topology= as written
  // The matrix Topology= names, read and parsed (GPU type still empty); null without one.
  std::shared_ptr<const model::NodeTopology> topology_matrix;

  // Count= when given; else the number of devices File= names (1 for MultipleFiles=);
  // else 1.
  int64_t Count() const;
};

struct GresConf {
  GresAutoDetect autodetect = GresAutoDetect::kNotSet;  // AutoDetect= on a line of its own
  SourceLocation autodetect_at;
  std::vector<GresConfLine> lines;  // in file order, AutoDetect-only lines included
  // gres.conf first, then each topology matrix read, in the order first named.
  std::vector<std::string> source_files;
};

// Parses `text` as the gres.conf named `file_name` (used in messages and as the directory
// relative Topology= paths start from); matrices are read through `resolver`. Warnings are
// appended to `warnings` when it is not null, also when parsing fails. On failure returns
// InvalidArgumentError listing each error as "file:line: error: ...", one per line.
StatusOr<GresConf> ParseGresConf(std::string_view text, std::string_view file_name,
                                 const IncludeResolver& resolver,
                                 std::vector<Diagnostic>* warnings);

// Reads and parses the gres.conf at `path` and the matrices it names, from the filesystem.
StatusOr<GresConf> LoadGresConf(const std::string& path, std::vector<Diagnostic>* warnings);

// Node `node`'s AutoDetect=: the last NodeName= line naming it that sets one, else the
// file's own AutoDetect= line, else kNotSet.
GresAutoDetect AutoDetectFor(const GresConf& conf, std::string_view node);

// What gres.conf is checked against: the cluster's nodes as slurm.conf defines them.
struct GresNode {
  std::string name;
  std::vector<GresSpec> gres;  // slurm.conf Gres=
  int32_t cpus = 0;            // 0: unknown
  int32_t sockets = 0;         // 0: unknown
};
struct GresCluster {
  std::vector<GresNode> nodes;          // slurm.conf order
  std::vector<std::string> gres_types;  // GresTypes, lower-cased; empty: not checked
};
GresCluster GresClusterOf(const ClusterConfig& config);

// One entry per node of `cluster`, in its order: the node's GPU topology, or null when
// gres.conf does not describe one. Nodes of one kind share one NodeTopology. Errors (all
// collected; InvalidArgumentError, one "file:line: error: ..." per line): a NodeName
// slurm.conf does not define, a GRES name GresTypes does not list, a node whose count of a
// GRES (or of GPUs of one Type) differs from its slurm.conf Gres=, Links= with the wrong
// number of entries or without -1 in the GPU's own place, two Topology= for one node, a
// matrix whose GPU count differs from slurm.conf. Warnings: nodes under AutoDetect for
// which gres.conf gives no topology, Links= that disagree between two GPUs, Links= or
// Cores= given for only some GPUs of a node, Cores= sets that overlap (their GPUs then
// share one NUMA node).
StatusOr<std::vector<std::shared_ptr<const model::NodeTopology>>> BuildNodeTopologies(
    const GresConf& conf, const GresCluster& cluster, std::vector<Diagnostic>* warnings);

}  // namespace loom::conf
