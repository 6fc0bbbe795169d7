// Errors: Status <-> v1::Error, with Slurm's texts for the codes Slurm has.
#include <optional>

#include "absl/strings/cord.h"
#include "core/strings.h"
#include "rpc/convert.h"

namespace loom::rpc {
namespace {

using core::StrCat;

struct ErrorEntry {
  v1::ErrorCode code;
  absl::StatusCode status;
  std::string_view text;  // Slurm's (slurm_strerror) where Slurm has one
};

constexpr ErrorEntry kErrors[] = {
    {v1::OK, absl::StatusCode::kOk, "No error"},
    {v1::INVALID_ARGUMENT, absl::StatusCode::kInvalidArgument, "Invalid argument"},
    {v1::AUTH_MISSING, absl::StatusCode::kUnauthenticated, "Protocol authentication error"},
    {v1::AUTH_INVALID, absl::StatusCode::kUnauthenticated, "Invalid authentication credential"},
    {v1::AUTH_EXPIRED, absl::StatusCode::kUnauthenticated, "Authentication credential expired"},
    {v1::AUTH_REPLAYED, absl::StatusCode::kUnauthenticated, "Authentication credential replayed"},
    {v1::ACCESS_DENIED, absl::StatusCode::kPermissionDenied, "Access/permission denied"},
    {v1::INVALID_JOB_ID, absl::StatusCode::kNotFound, "Invalid job id specified"},
    {v1::INVALID_PARTITION, absl::StatusCode::kInvalidArgument, "Invalid partition name specified"},
    {v1::INVALID_NODE_NAME, absl::StatusCode::kNotFound, "Invalid node name specified"},
    {v1::REQUESTED_CONFIG_UNAVAILABLE, absl::StatusCode::kInvalidArgument,
     "Requested node configuration is not available"},
    {v1::INVALID_DEPENDENCY, absl::StatusCode::kInvalidArgument, "Job dependency problem"},
    {v1::JOB_ALREADY_COMPLETE, absl::StatusCode::kFailedPrecondition,
     "Job/step already completing or completed"},
    {v1::STORE_FAILED, absl::StatusCode::kAborted, "I/O error writing script/environment to file"},
    {v1::INTERNAL, absl::StatusCode::kInternal, "Unspecified error"},
    {v1::NOT_LEADER, absl::StatusCode::kUnavailable, "Slurm backup controller in standby mode"},
    {v1::NOT_FOUND, absl::StatusCode::kNotFound, "Not found"},
    {v1::JOB_NOT_PENDING, absl::StatusCode::kFailedPrecondition,
     "Job is no longer pending execution"},
    {v1::INVALID_FEATURE, absl::StatusCode::kInvalidArgument, "Invalid feature specification"},
    {v1::INVALID_TIME_LIMIT, absl::StatusCode::kInvalidArgument,
     "Requested time limit is invalid (missing or exceeds some limit)"},
    {v1::NO_DEFAULT_PARTITION, absl::StatusCode::kInvalidArgument,
     "No partition specified or system default partition"},
    {v1::UNAVAILABLE, absl::StatusCode::kUnavailable,
     "Unable to contact slurm controller (connect failure)"},
    {v1::JOB_NOT_HELD, absl::StatusCode::kFailedPrecondition, "Job is not held"},
    {v1::INVALID_ARRAY, absl::StatusCode::kInvalidArgument, "Invalid job array specification"},
    {v1::FAILED_PRECONDITION, absl::StatusCode::kFailedPrecondition, "Failed precondition"},
    {v1::RESOURCE_EXHAUSTED, absl::StatusCode::kResourceExhausted, "Resource exhausted"},
    {v1::ALREADY_EXISTS, absl::StatusCode::kAlreadyExists, "Already exists"},
    {v1::ABORTED, absl::StatusCode::kAborted, "Aborted"},
    {v1::DEADLINE_EXCEEDED, absl::StatusCode::kDeadlineExceeded, "Deadline exceeded"},
    {v1::CANCELLED, absl::StatusCode::kCancelled, "Cancelled"},
    {v1::UNIMPLEMENTED, absl::StatusCode::kUnimplemented,
     "Requested operation not supported on this system"},
    {v1::OUT_OF_RANGE, absl::StatusCode::kOutOfRange, "Out of range"},
    {v1::DATA_LOSS, absl::StatusCode::kDataLoss, "Data loss"},
    {v1::UNKNOWN, absl::StatusCode::kUnknown, "Unknown error"},
    {v1::PROLOG_FAILED, absl::StatusCode::kFailedPrecondition, "Job prolog failed"},
};

// The general code of each StatusCode.
v1::ErrorCode GeneralCode(absl::StatusCode c) {
  switch (c) {
    case absl::StatusCode::kOk:
      return v1::OK;
    case absl::StatusCode::kCancelled:
      return v1::CANCELLED;
    case absl::StatusCode::kUnknown:
      return v1::UNKNOWN;
    case absl::StatusCode::kInvalidArgument:
      return v1::INVALID_ARGUMENT;
    case absl::StatusCode::kDeadlineExceeded:
      return v1::DEADLINE_EXCEEDED;
    case absl::StatusCode::kNotFound:
      return v1::NOT_FOUND;
    case absl::StatusCode::kAlreadyExists:
      return v1::ALREADY_EXISTS;
    case absl::StatusCode::kPermissionDenied:
      return v1::ACCESS_DENIED;
    case absl::StatusCode::kResourceExhausted:
      return v1::RESOURCE_EXHAUSTED;
    case absl::StatusCode::kFailedPrecondition:
      return v1::FAILED_PRECONDITION;
    case absl::StatusCode::kAborted:
      return v1::ABORTED;
    case absl::StatusCode::kOutOfRange:
      return v1::OUT_OF_RANGE;
    case absl::StatusCode::kUnimplemented:
      return v1::UNIMPLEMENTED;
    case absl::StatusCode::kInternal:
      return v1::INTERNAL;
    case absl::StatusCode::kUnavailable:
      return v1::UNAVAILABLE;
    case absl::StatusCode::kDataLoss:
      return v1::DATA_LOSS;
    case absl::StatusCode::kUnauthenticated:
      return v1::AUTH_INVALID;
    default:
      return v1::UNKNOWN;
  }
}

constexpr char kErrorCodePayload[] = "type.loom/loom.v1.ErrorCode";

}  // namespace

absl::StatusCode StatusCodeFor(v1::ErrorCode code) {
  for (const ErrorEntry& e : kErrors) {
    if (e.code == code) return e.status;
  }
  return absl::StatusCode::kUnknown;
}

std::string_view SlurmErrorText(v1::ErrorCode code) {
  for (const ErrorEntry& e : kErrors) {
    if (e.code == code) return e.text;
  }
  return "Unknown error";
}

v1::ErrorCode ErrorCodeFor(const Status& status) {
  if (status.ok()) return v1::OK;
  if (absl::optional<absl::Cord> p = status.GetPayload(kErrorCodePayload)) {
    std::optional<int64_t> n = core::ParseInt(std::string(*p));
    if (n && v1::ErrorCode_IsValid(static_cast<int>(*n))) {
      auto code = static_cast<v1::ErrorCode>(*n);
      if (StatusCodeFor(code) == status.code()) return code;
    }
  }
  const std::string message(status.message());
  for (const ErrorEntry& e : kErrors) {
    if (e.status == status.code() && e.code != v1::OK &&
        std::string_view(message).substr(0, e.text.size()) == e.text) {
      return e.code;
    }
  }
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    const std::string lower = core::ToLower(message);
    if (lower.find("no munge credential") != std::string::npos ||
        lower.find("missing") != std::string::npos) {
      return v1::AUTH_MISSING;
    }
    if (lower.find("expired") != std::string::npos) return v1::AUTH_EXPIRED;
    if (lower.find("replayed") != std::string::npos) return v1::AUTH_REPLAYED;
    return v1::AUTH_INVALID;
  }
  return GeneralCode(status.code());
}

Status FromWire(const v1::Error& error) {
  if (error.code() == v1::OK) return absl::OkStatus();
  const absl::StatusCode code = StatusCodeFor(error.code());
  Status s(code,
           error.message().empty() ? std::string(SlurmErrorText(error.code())) : error.message());
  s.SetPayload(kErrorCodePayload, absl::Cord(StrCat(static_cast<int>(error.code()))));
  return s;
}

v1::Error ToWire(const Status& status) {
  v1::Error e;
  e.set_code(ErrorCodeFor(status));
  e.set_message(std::string(status.message()));
  return e;
}

}  // namespace loom::rpc
