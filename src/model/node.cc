#include "model/node.h"

#include "core/strings.h"

namespace loom::model {

std::string_view NodeStateName(NodeState s) {
  switch (s) {
    case NodeState::kUnknown: return "UNKNOWN";
    case NodeState::kIdle: return "IDLE";
    case NodeState::kAllocated: return "ALLOCATED";
    case NodeState::kMixed: return "MIXED";
    case NodeState::kDown: return "DOWN";
    case NodeState::kFuture: return "FUTURE";
  }
  return "UNKNOWN";
}

std::optional<NodeState> ParseNodeState(std::string_view s) {
  for (NodeState n : {NodeState::kUnknown, NodeState::kIdle, NodeState::kAllocated,
                      NodeState::kMixed, NodeState::kDown, NodeState::kFuture}) {
    if (core::EqualsIgnoreCase(s, NodeStateName(n))) return n;
  }
  return std::nullopt;
}

}  // namespace loom::model
