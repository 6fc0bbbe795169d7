// A compute node as the scheduler and the daemons see it: static capacity from the
// configuration plus its administrative/health state. Pure value; thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu_topology.h"
#include "model/resources.h"

namespace loom::model {

// Base node states as Slurm names them; DRAIN is a flag on top of a base state in Slurm
// and is kept as a separate bool here.
enum class NodeState : uint8_t { kUnknown, kIdle, kAllocated, kMixed, kDown, kFuture };

std::string_view NodeStateName(NodeState s);  // "IDLE", "ALLOCATED", "MIXED", "DOWN", ...

// Node state flags, stacked on the base state as Slurm stacks them. The values are Slurm's own
// bit values, so ordering by (base | flags) orders the way sinfo does.
inline constexpr uint32_t kNodeFlagReserved = 0x00000020;
inline constexpr uint32_t kNodeFlagCloud = 0x00000080;
inline constexpr uint32_t kNodeFlagDrain = 0x00000200;
inline constexpr uint32_t kNodeFlagCompleting = 0x00000400;
inline constexpr uint32_t kNodeFlagNotResponding = 0x00000800;
inline constexpr uint32_t kNodeFlagPoweredDown = 0x00001000;
inline constexpr uint32_t kNodeFlagFail = 0x00002000;
inline constexpr uint32_t kNodeFlagPoweringUp = 0x00004000;
inline constexpr uint32_t kNodeFlagMaintenance = 0x00008000;
inline constexpr uint32_t kNodeFlagRebootRequested = 0x00010000;
inline constexpr uint32_t kNodeFlagPoweringDown = 0x00040000;
inline constexpr uint32_t kNodeFlagRebootIssued = 0x00100000;
inline constexpr uint32_t kNodeFlagPlanned = 0x00200000;
inline constexpr uint32_t kNodeFlagInvalidReg = 0x00400000;
inline constexpr uint32_t kNodeFlagPowerDown = 0x00800000;

// The state as `scontrol show node` State= and the wire name it: the base state, then each
// flag set, "+"-joined ("IDLE+DRAIN+PLANNED").
std::string NodeStateComplete(NodeState state, uint32_t flags);
std::optional<NodeState> ParseNodeState(std::string_view s);

struct Node {
  std::string name;
  Resources capacity;            // CPUs, RealMemory, GPUs (all GRES gpu of the node)
  std::string gpu_type;          // type of the node's GPUs, empty if untyped or none
  int32_t sockets = 1;
  int32_t cores_per_socket = 1;
  int32_t threads_per_core = 1;
  std::vector<std::string> features;
  uint32_t weight = 1;           // lower weight is preferred, as in Slurm
  NodeState state = NodeState::kIdle;
  bool drain = false;
  std::string reason;
  // Inside the node: GPUs by NVLink domain, PCIe switch and NUMA node; null when unknown
  // (placement then treats GPUs and CPUs as interchangeable). Shared by nodes of one kind.
  std::shared_ptr<const NodeTopology> topology;

  // A node the scheduler may place new work on.
  bool Schedulable() const {
    return !drain && state != NodeState::kDown && state != NodeState::kFuture;
  }
};

// What a node's daemon reported against what the configuration gives the node, in Slurm's
// words ("Low socket*core*thread count, Low CPUs (reported:8 < configured:16)", "Low
// RealMemory (reported:1000 < 100.00% of configured:2000)", "gres/gpu count reported lower
// than configured (0 < 8)"); empty when the node has at least what is configured.
std::string CapacityShortfall(const Resources& configured, const Resources& reported);

}  // namespace loom::model
