// The partition half of slurm.conf: PartitionName lines with PartitionName=DEFAULT merging,
// typed partition options, and resolution of each partition's Nodes= once all nodes are
// known. Used by one parse at a time; thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "conf/cluster_config.h"
#include "conf/internal/context.h"
#include "conf/internal/lexer.h"
#include "conf/internal/nodes.h"

namespace loom::conf::internal {

// Parses a PreemptMode value ("OFF", "REQUEUE", "SUSPEND,GANG", "GANG", "CANCEL,WITHIN").
std::optional<PreemptMode> ParsePreemptMode(std::string_view value);

class PartitionTable {
 public:
  // Upper bound on the sum of the partitions' node counts (each partition holds its node
  // names), far above any real cluster.
  static constexpr size_t kMaxMemberships = 5000000;

  explicit PartitionTable(ParseContext* ctx) : ctx_(ctx) {}

  void AddLine(const Statement& st);  // first pair is PartitionName=

  // Call after NodeTable::Finish: resolves Nodes= and moves partitions into the config.
  void Finish(const NodeTable& nodes);

 private:
  // A partition as written: typed values already checked, Nodes= still a string.
  struct Pending {
    PartitionConfig partition;
    std::optional<std::string> nodes_expr;
    SourceLocation nodes_at;
  };
  void Apply(const SourceLocation& at, const std::string& key, const KeyValue& kv, Pending* p);

  ParseContext* ctx_;
  std::map<std::string, KeyValue> defaults_;  // PartitionName=DEFAULT values
  std::vector<Pending> pending_;
};

}  // namespace loom::conf::internal
