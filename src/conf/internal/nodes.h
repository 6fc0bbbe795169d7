// The node half of slurm.conf: NodeName lines (with NodeName=DEFAULT merging, hostlist
// expansion, derived CPU topology, Gres lists, per-node hostnames/addresses/ports),
// DownNodes lines and NodeSet lines, and the resolution of node lists that partitions
// name. Used by one parse at a time; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "conf/cluster_config.h"
#include "conf/internal/context.h"
#include "conf/internal/lexer.h"
#include "core/status.h"

namespace loom::conf::internal {

// "8", "4K", "2G" -> count, as Slurm reads GRES counts; nullopt when not a count.
std::optional<int64_t> ParseGresCount(std::string_view s);

// Parses a node Gres= value: "gpu:a100:8,gpu:2,bandwidth:lustre:no_consume:4G".
// Each item is <name>[:<type>][:no_consume][:<count>[K|M|G|T|P]]; a missing count is 1.
StatusOr<std::vector<GresSpec>> ParseGres(std::string_view value);

// Parses a node Port= value: "17001", "17001-17016" or a comma list of those.
StatusOr<std::vector<int32_t>> ParsePortList(std::string_view value);

// Parses "name(addr)" / "name" as SlurmctldHost writes it.
StatusOr<ControllerHost> ParseControllerHost(std::string_view value);

class NodeTable {
 public:
  // Upper bound on defined nodes, far above any real cluster; protects against a hostlist
  // typo such as node[1-10000000].
  static constexpr size_t kMaxNodes = 200000;

  explicit NodeTable(ParseContext* ctx) : ctx_(ctx) {}

  void AddNodeLine(const Statement& st);   // first pair is NodeName=
  void AddDownNodes(const Statement& st);  // first pair is DownNodes=
  void AddNodeSet(const Statement& st);    // first pair is NodeSet=

  // Call after all lines: applies SlurmdPort defaults and DownNodes, resolves NodeSets and
  // moves the nodes into the config.
  void Finish();

  // Resolves a partition's Nodes= value (hostlists, NodeSet names, ALL) to node indices in
  // definition order without duplicates. Unknown nodes are errors at `at`. Call after Finish.
  std::optional<std::vector<size_t>> Resolve(const SourceLocation& at, std::string_view key,
                                             std::string_view value) const;

 private:
  // Values of one NodeName line (or the accumulated NodeName=DEFAULT values).
  struct Spec {
    std::optional<int64_t> cpus, boards, sockets, sockets_per_board, cores, threads;
    std::optional<int64_t> real_memory, tmp_disk, weight;
    std::optional<std::vector<GresSpec>> gres;
    std::optional<std::vector<std::string>> features;
    std::optional<NodeState> state;
    std::optional<std::string> reason, hostname, addr;
    std::optional<std::vector<int32_t>> ports;
    std::map<std::string, std::string> other;
    void MergeFrom(const Spec& over);
  };
  struct Topology {
    int32_t cpus, boards, sockets_per_board, cores, threads;
  };
  struct DownNodes {
    SourceLocation at;
    std::string key, value;
    NodeState state;
    std::string reason;
  };
  struct NodeSet {
    SourceLocation at;
    std::string nodes_expr, feature;
    std::vector<size_t> members;
  };

  // Reads the options of a NodeName line into `spec`; bad values are reported and skipped.
  void ParseSpec(const Statement& st, Spec* spec);
  std::optional<Topology> DeriveTopology(const SourceLocation& at, const Spec& spec);
  // Expands a hostlist value of `key`; more than `max_hosts` names is an error.
  std::optional<std::vector<std::string>> Expand(const SourceLocation& at, std::string_view key,
                                                 std::string_view value,
                                                 size_t max_hosts = kMaxNodes);
  std::optional<NodeState> ParseState(const SourceLocation& at, const KeyValue& kv);

  ParseContext* ctx_;
  Spec defaults_;
  std::vector<NodeConfig> nodes_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<DownNodes> down_nodes_;
  std::map<std::string, NodeSet> node_sets_;
};

}  // namespace loom::conf::internal
