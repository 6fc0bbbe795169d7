// One request to a Loom frame server (loomctld's or loomdbd's port), as every client sends
// it: a v1::Frame holding the method, a fresh MUNGE credential over the body, and the body.
// Thread-compatible (one connection, one caller at a time).
#pragma once

#include <string>
#include <string_view>

#include "auth/munge_auth.h"
#include "core/status.h"
#include "rpc/frame.h"

namespace loom::rpc {

// The serialized v1::Frame for `method` and `body`, with a credential of this process's user.
StatusOr<std::string> SealFrame(const auth::MungeCredentials& munge, std::string_view method,
                                std::string body);

// Sends `method` with `body` over `conn` and returns the reply's bytes (the reply message's
// own error is the caller's to read).
StatusOr<std::string> CallFrame(FrameConnection& conn, const auth::MungeCredentials& munge,
                                std::string_view method, std::string body, int timeout_ms);

}  // namespace loom::rpc
