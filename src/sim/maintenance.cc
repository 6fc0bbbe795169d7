#include "sim/maintenance.h"

#include "core/strings.h"
#include "core/time_format.h"

namespace loom::sim {

using core::StrCat;

StatusOr<MaintenanceSpec> ParseMaintenance(std::string_view text) {
  const std::vector<std::string_view> parts = core::Split(text, ',');
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat("--maint ", text, ": ", why, " (give EVERY,DURATION,NODES, e.g. 7-0,12:00:00,32)"));
  };
  if (parts.size() != 3) return bad("three fields");
  StatusOr<int64_t> every = core::ParseDuration(parts[0]);
  StatusOr<int64_t> duration = core::ParseDuration(parts[1]);
  std::optional<int64_t> nodes = core::ParseInt(parts[2]);
  if (!every.ok() || *every <= 0 || *every >= core::kUnlimitedSeconds) return bad("a period");
  if (!duration.ok() || *duration <= 0 || *duration >= *every) {
    return bad("a duration shorter than the period");
  }
  if (!nodes || *nodes <= 0 || *nodes > INT32_MAX) return bad("a node count");
  return MaintenanceSpec{*every, *duration, static_cast<int32_t>(*nodes)};
}

StatusOr<int32_t> AddMaintenanceWindows(const MaintenanceSpec& spec, sched::Time from,
                                        sched::Time to, sched::Cluster* cluster) {
  if (!spec.enabled()) return 0;
  const int32_t total = static_cast<int32_t>(cluster->nodes.size());
  if (spec.nodes > total) {
    return absl::InvalidArgumentError(
        StrCat("--maint takes ", spec.nodes, " nodes in each window; the cluster has ", total));
  }
  int32_t count = 0;
  int32_t next_node = 0;
  for (sched::Time start = from + spec.every_s; start <= to; start += spec.every_s) {
    sched::AdvanceReservation r;
    r.name = StrCat("maint-", ++count);
    r.start = start;
    r.end = start + spec.duration_s;
    r.maint = true;
    for (int32_t k = 0; k < spec.nodes; ++k) {
      r.nodes.push_back(next_node);
      next_node = (next_node + 1) % total;
    }
    cluster->reservations.push_back(std::move(r));
  }
  ++cluster->generation;
  return count;
}

}  // namespace loom::sim
