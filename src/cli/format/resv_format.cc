#include "cli/format/resv_format.h"

#include <algorithm>

#include "cli/format/text.h"
#include "core/strings.h"

namespace loom::cli::format {
namespace {

using core::StrCat;

std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : s; }

}  // namespace

std::string RenderReservations(const std::vector<ReservationView>& resvs, bool one_liner,
                               const RenderContext& ctx) {
  if (resvs.empty()) return "No reservations in the system\n";
  const std::string br = one_liner ? " " : "\n   ";
  std::string out;
  for (const ReservationView& r : resvs) {
    out +=
        StrCat("ReservationName=", r.name, " StartTime=", FormatIsoTime(r.start, ctx.utc_offset_s),
               " EndTime=", FormatIsoTime(r.end, ctx.utc_offset_s),
               " Duration=", core::FormatDuration(r.end - r.start));
    out += StrCat(br, "Nodes=", OrNull(r.nodes), " NodeCnt=", r.node_count,
                  " CoreCnt=", r.core_count, " Features=", OrNull(r.features),
                  " PartitionName=", OrNull(r.partition), " Flags=", r.flags);
    out += StrCat(br, "TRES=cpu=", r.core_count);
    out += StrCat(br, "Users=", OrNull(r.users), " Groups=(null) Accounts=", OrNull(r.accounts),
                  " Licenses=(null) State=", r.active ? "ACTIVE" : "INACTIVE",
                  " BurstBuffer=(null) Watts=n/a");
    out += StrCat(br, "MaxStartDelay=(null)\n");
    if (!one_liner) out += "\n";
  }
  return out;
}

std::string RenderReservationTable(const std::vector<ReservationView>& resvs,
                                   const RenderContext& ctx) {
  // The name column is as wide as the longest name (at least the header's), plus one.
  size_t width = std::string_view("RESV_NAME").size();
  for (const ReservationView& r : resvs) width = std::max(width, r.name.size());
  ++width;
  auto row = [&](std::string_view name, std::string_view state, std::string_view start,
                 std::string_view end, std::string_view duration, std::string_view nodes) {
    std::string line;
    AppendColumn(&line, name, static_cast<int>(width), /*right=*/false);
    line += ' ';
    AppendColumn(&line, state, 8, /*right=*/true);
    line += "  ";
    AppendColumn(&line, start, 19, true);
    line += "  ";
    AppendColumn(&line, end, 19, true);
    line += "  ";
    AppendColumn(&line, duration, 11, true);
    line += "  ";
    line += nodes;
    line += '\n';
    return line;
  };
  std::string out = row("RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST");
  for (const ReservationView& r : resvs) {
    out +=
        row(r.name, r.active ? "ACTIVE" : "INACTIVE", FormatIsoTime(r.start, ctx.utc_offset_s),
            FormatIsoTime(r.end, ctx.utc_offset_s), core::FormatDuration(r.end - r.start), r.nodes);
  }
  return out;
}

}  // namespace loom::cli::format
