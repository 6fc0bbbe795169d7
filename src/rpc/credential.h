// MUNGE on every request, whatever carries it: a credential is made over RequestDigest of the
// method and the request's bytes, so it vouches for that one request only. gRPC calls (see
// call_auth.h) digest the request's deterministic serialization, since the server sees the
// message and not the bytes; Loom frames (frame.h) digest the body exactly as sent.
#pragma once

#include <google/protobuf/message.h>

#include <optional>
#include <string>
#include <string_view>

#include "auth/munge_auth.h"
#include "core/status.h"

namespace loom::rpc {

// `message` serialized with map entries in a fixed order: equal messages, equal bytes.
std::string DeterministicBytes(const google::protobuf::Message& message);

// A fresh credential for `method` over `body`.
StatusOr<std::string> MakeCredential(const auth::MungeCredentials& munge, std::string_view method,
                                     std::string_view body);

// Who `credential` proves the caller is, or why it is refused (missing, forged, expired,
// replayed, or made for another request).
StatusOr<auth::Identity> CheckCredential(auth::MungeCredentials& munge, std::string_view credential,
                                         std::string_view method, std::string_view body);

// The method and credential a serialized v1::Frame begins with (its fields 1 and 2 come
// before the body), read from the frame's first bytes only; nullopt when they are not both
// whole within `prefix`.
struct FrameHead {
  std::string method;
  std::string credential;
};
std::optional<FrameHead> ReadFrameHead(std::string_view prefix);

// The same check when `opened` was decoded from the request's credential before its body
// arrived (a large Loom frame is read only once its credential is known).
StatusOr<auth::Identity> CheckOpenedCredential(const auth::OpenedCredential& opened,
                                               std::string_view method, std::string_view body);

}  // namespace loom::rpc
