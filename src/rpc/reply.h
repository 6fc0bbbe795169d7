// The one way a Loom service answers: gRPC succeeds and the reply's Error says how the
// request went (v1::ErrorCode plus Slurm's text), so daemons and commands share one enum.
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/status.h"
#include "rpc/convert.h"

namespace loom::rpc {

template <typename Reply>
grpc::Status Answer(Reply* reply, const Status& s) {
  *reply->mutable_error() = ToWire(s);
  return grpc::Status::OK;
}

}  // namespace loom::rpc
