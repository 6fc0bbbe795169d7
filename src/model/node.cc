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

std::string CapacityShortfall(const Resources& configured, const Resources& reported) {
  std::vector<std::string> reasons;
  if (reported.cpus < configured.cpus) {
    reasons.push_back(core::StrCat("Low socket*core*thread count, Low CPUs (reported:",
                                   reported.cpus, " < configured:", configured.cpus, ")"));
  }
  if (reported.mem_mb < configured.mem_mb) {
    reasons.push_back(core::StrCat("Low RealMemory (reported:", reported.mem_mb,
                                   " < 100.00% of configured:", configured.mem_mb, ")"));
  }
  if (reported.gpus < configured.gpus) {
    reasons.push_back(core::StrCat("gres/gpu count reported lower than configured (",
                                   reported.gpus, " < ", configured.gpus, ")"));
  }
  return core::Join(reasons, ", ");
}

std::string NodeStateComplete(NodeState state, uint32_t flags) {
  static constexpr std::pair<uint32_t, std::string_view> kFlagNames[] = {
      {kNodeFlagReserved, "RESERVED"},
      {kNodeFlagCloud, "CLOUD"},
      {kNodeFlagDrain, "DRAIN"},
      {kNodeFlagCompleting, "COMPLETING"},
      {kNodeFlagNotResponding, "NOT_RESPONDING"},
      {kNodeFlagPoweredDown, "POWERED_DOWN"},
      {kNodeFlagFail, "FAIL"},
      {kNodeFlagPoweringUp, "POWERING_UP"},
      {kNodeFlagMaintenance, "MAINTENANCE"},
      {kNodeFlagRebootRequested, "REBOOT_REQUESTED"},
      {kNodeFlagPoweringDown, "POWERING_DOWN"},
      {kNodeFlagRebootIssued, "REBOOT_ISSUED"},
      {kNodeFlagPlanned, "PLANNED"},
      {kNodeFlagInvalidReg, "INVALID_REG"},
      {kNodeFlagPowerDown, "POWER_DOWN"},
  };
  std::string out(NodeStateName(state));
  for (const auto& [bit, name] : kFlagNames) {
    if (flags & bit) {
      out.push_back('+');
      out += name;
    }
  }
  return out;
}

}  // namespace loom::model
