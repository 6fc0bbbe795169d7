// Conversions between Loom's values and the wire API (proto/loom/v1/loom.proto):
//  - a submission, model::JobRequest <-> v1::JobSpec, lossless both ways;
//  - errors, Status <-> v1::Error, with Slurm's texts for the codes Slurm has.
// The controller's records become wire records in ctld/wire.h, and wire records become the
// CLI's views in cli/wire_views.h: each side converts what it owns.
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/cpu_set.h"
#include "core/status.h"
#include "loom/v1/loom.pb.h"
#include "model/gpu_topology.h"
#include "model/job_request.h"
#include "model/resources.h"
#include "sched/types.h"

namespace loom::rpc {

// ------------------------------------------------------------------------------ submissions

// Every field of `request` has a place in the JobSpec: the shape in JobSpec's shape fields,
// the options as given in JobSpec.given, the rest beside them. FromWire(ToWire(r)) == r.
v1::JobSpec ToWire(const model::JobRequest& request);
// The same into `spec`, with the script and environment only when asked for (queries leave
// them out).
void FillSpec(const model::JobRequest& request, bool with_script, bool with_environment,
              v1::JobSpec* spec);

// The request a JobSpec carries. Fails (InvalidArgument, naming the field) on what no
// JobRequest can hold: an unknown enum value, an array given only as text that does not
// parse. Fields another writer left unset read as JobRequest's defaults. JobSpec.command
// is not part of a JobRequest and is ignored.
StatusOr<model::JobRequest> FromWire(const v1::JobSpec& spec);

// ---------------------------------------------------------------------------------- errors

// The absl::StatusCode a wire code stands for (several wire codes share one).
absl::StatusCode StatusCodeFor(v1::ErrorCode code);

// What Slurm 22.05 says for the code (slurm_strerror): "Invalid job id specified",
// "Access/permission denied", ...; for codes Slurm has no text for, Loom's own short text.
std::string_view SlurmErrorText(v1::ErrorCode code);

// The wire code for a status: the one FromWire attached, else the code whose Slurm text the
// message starts with (when that code means the same StatusCode), else for Unauthenticated
// the credential problem the message names, else the general code of the StatusCode.
// StatusCodeFor(ErrorCodeFor(s)) == s.code() always.
v1::ErrorCode ErrorCodeFor(const Status& status);

// A wire error as a Status: the code's StatusCode, the message (SlurmErrorText when the
// error has none), and the wire code attached so that ToWire gives it back.
Status FromWire(const v1::Error& error);
// A Status as a wire error: ErrorCodeFor and the message as it is.
v1::Error ToWire(const Status& status);

}  // namespace loom::rpc
