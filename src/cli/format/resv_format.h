// Advance reservations as Slurm 22.05 prints them: `scontrol show reservation` (Key=Value
// records, `-o` one per line) and `sinfo -T` (a table whose name column fits the longest
// name). Pure functions of the views; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/format/views.h"

namespace loom::cli::format {

struct ReservationView {
  std::string name;
  int64_t start = 0;
  int64_t end = 0;
  std::string nodes;  // hostlist
  int32_t node_count = 0;
  int64_t core_count = 0;
  std::string features, partition, flags, users, accounts;  // "" prints "(null)"
  bool active = false;
};

std::string RenderReservations(const std::vector<ReservationView>& resvs, bool one_liner,
                               const RenderContext& ctx);
std::string RenderReservationTable(const std::vector<ReservationView>& resvs,
                                   const RenderContext& ctx);

}  // namespace loom::cli::format
