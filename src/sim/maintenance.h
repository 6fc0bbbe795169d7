// Maintenance windows added to any workload (`loom sim --maint EVERY,DURATION,NODES`): from
// the first submission on, every EVERY a MAINT advance reservation of DURATION on NODES
// nodes, each window on the next block of nodes (a rolling maintenance that sweeps the
// machine). The scheduler keeps jobs off a window's nodes as the controller does
// (sched::AdvanceReservation); the simulator checks that no job ever ran into one. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "sched/types.h"

namespace loom::sim {

struct MaintenanceSpec {
  int64_t every_s = 0;  // 0: no windows
  int64_t duration_s = 0;
  int32_t nodes = 0;
  bool enabled() const { return every_s > 0; }
};

// "EVERY,DURATION,NODES": two Slurm durations ("7-0", "12:00:00"; a bare number is minutes)
// and a node count. The duration must be shorter than the period.
StatusOr<MaintenanceSpec> ParseMaintenance(std::string_view text);

// Adds the windows that begin in (from, to] to `cluster` (MAINT reservations named
// maint-1, maint-2, ...); returns how many. Needs at least `spec.nodes` nodes.
StatusOr<int32_t> AddMaintenanceWindows(const MaintenanceSpec& spec, sched::Time from,
                                        sched::Time to, sched::Cluster* cluster);

}  // namespace loom::sim
