// Client::Call, which client.h declares.
#pragma once

#include <chrono>

#include "rpc/call_auth.h"
#include "rpc/convert.h"

namespace loom::cli {

template <typename Req, typename Reply>
Status Client::Call(std::string_view method, const Req& req, Reply* reply,
                    grpc::Status (v1::Controller::Stub::*fn)(grpc::ClientContext*, const Req&,
                                                             Reply*)) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  RETURN_IF_ERROR(rpc::AttachCredential(&ctx, *munge_, method, req));
  grpc::Status s = ((*stub_).*fn)(&ctx, req, reply);
  if (!s.ok()) {
    return absl::UnavailableError("Unable to contact slurm controller (connect failure)");
  }
  return rpc::FromWire(reply->error());
}

}  // namespace loom::cli
