// `sinfo` output, as Slurm 22.05 prints it: the partition summary (nodes grouped by partition
// and state, the default partition marked '*'), `-l`, `-N` and `-N -l` (one line per node and
// partition), `-R` (why nodes are down or drained), `-o` format strings and `-h`; and the node
// state names every command shares. Pure functions of the views; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "cli/format/views.h"
#include "core/status.h"

namespace loom::cli::format {

struct SinfoOptions {
  std::string format;                   // -o; "" for the layout the flags below choose
  bool node_oriented = false;           // -N
  bool long_listing = false;            // -l
  bool list_reasons = false;            // -R
  bool no_header = false;               // -h
  bool exact = false;                   // -e: group only nodes whose CPUs, memory and disk match
  std::vector<std::string> nodes;       // -n, expanded: only these nodes
  std::vector<std::string> partitions;  // -p: only these partitions
};

// Puts `nodes`, and each partition's node_names, in the order of Slurm's node table:
// slurmctld sorts it by name as hostlists sort ("cpu01" before "gpu01", "n2" before "n10"),
// and its listings follow it. Either pointer may be null.
void ToNodeTableOrder(std::vector<NodeView>* nodes, std::vector<PartitionView>* partitions);

// Checks the format string; RenderSinfo fails on exactly these errors.
Status ValidateSinfoOptions(const SinfoOptions& options);

// The table sinfo prints. `partitions` in configuration order (the order sinfo lists them in);
// `nodes` in node-table order, each naming its partitions in PartitionView::node_names.
StatusOr<std::string> RenderSinfo(const std::vector<PartitionView>& partitions,
                                  const std::vector<NodeView>& nodes, const SinfoOptions& options,
                                  const RenderContext& ctx);

// Node state names. Compact as `sinfo %t` ("idle", "mix", "drain", "plnd", "down*"), long as
// `sinfo %T` ("idle", "mixed", "drained", "planned"), complete as `scontrol show node`
// State= ("IDLE+DRAIN+PLANNED").
std::string NodeStateCompact(model::NodeState state, uint32_t flags);
std::string NodeStateLong(model::NodeState state, uint32_t flags);
using model::NodeStateComplete;

}  // namespace loom::cli::format
