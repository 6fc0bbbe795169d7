// What the convert_*.cc files share; not part of rpc/convert.h's interface.
#pragma once

#include "loom/v1/loom.pb.h"
#include "model/job_request.h"

namespace loom::rpc::internal {

// The conversion behind ToWire; the script and environment only when asked for.
void FillSpec(const model::JobRequest& r, bool with_script, bool with_environment, v1::JobSpec* s);

}  // namespace loom::rpc::internal
