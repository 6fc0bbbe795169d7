// The wire records queries answer with (proto/loom/v1/loom.proto) as the views `squeue`,
// `sinfo` and `scontrol show` render (cli/format/views.h). Pure functions; thread-safe.
#pragma once

#include "cli/format/views.h"
#include "loom/v1/loom.pb.h"

namespace loom::cli {

// Every view field the wire carries; the rest keep the view's defaults. Unknown state names
// read as PENDING (jobs) and UNKNOWN (nodes).
format::JobView ToJobView(const v1::JobInfo& job);
format::NodeView ToNodeView(const v1::NodeInfo& node);
format::PartitionView ToPartitionView(const v1::PartitionInfo& partition);

}  // namespace loom::cli
