// MUNGE on every gRPC call: the client puts a credential over the request's digest into the
// call's metadata; the server checks it against the request it received. Both sides digest
// the request's deterministic serialization (credential.h), so the digest does not depend
// on how either side's protobuf library orders map entries.
#pragma once

#include <grpcpp/grpcpp.h>
#include <google/protobuf/message.h>

#include <string_view>

#include "auth/munge_auth.h"
#include "core/status.h"
#include "rpc/credential.h"

namespace loom::rpc {

// The metadata key that carries the credential.
inline constexpr char kCredentialKey[] = "x-loom-cred";

// Adds a fresh credential for `method` + `request` to `ctx`.
Status AttachCredential(grpc::ClientContext* ctx, const auth::MungeCredentials& munge,
                        std::string_view method, const google::protobuf::Message& request);

// The caller's identity, or why the call is refused (missing, forged, expired, replayed or
// misdirected credential).
StatusOr<auth::Identity> VerifyCall(const grpc::ServerContext& ctx, auth::MungeCredentials& munge,
                                    std::string_view method,
                                    const google::protobuf::Message& request);

}  // namespace loom::rpc
