// The wire records queries answer with (proto/loom/v1/loom.proto) as the views `squeue`,
// `sinfo` and `scontrol show` render (cli/format/views.h). Pure functions; thread-safe.
#pragma once

#include "cli/client.h"
#include "cli/format/resv_format.h"
#include "cli/format/views.h"
#include "loom/v1/loom.pb.h"

namespace loom::cli {

// Every view field the wire carries; the rest keep the view's defaults. Unknown state names
// read as PENDING (jobs) and UNKNOWN (nodes).
format::JobView ToJobView(const v1::JobInfo& job);
format::NodeView ToNodeView(const v1::NodeInfo& node);
format::PartitionView ToPartitionView(const v1::PartitionInfo& partition);
format::ReservationView ToReservationView(const v1::ReservationInfo& resv);

// The reservations (all, or the one named) from the controller, with its time and the local
// zone in `ctx`, for the renderers.
StatusOr<std::vector<format::ReservationView>> FetchReservations(Client& client,
                                                                 std::string_view name,
                                                                 format::RenderContext* ctx);

// The zone offset east of UTC at Unix time `t`, in the local time zone: what timestamps print
// in.
int32_t LocalUtcOffset(int64_t t);

}  // namespace loom::cli
