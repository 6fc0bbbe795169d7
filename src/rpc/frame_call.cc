#include "rpc/frame_call.h"

#include <utility>

#include "loom/v1/loom.pb.h"
#include "rpc/credential.h"

namespace loom::rpc {

StatusOr<std::string> SealFrame(const auth::MungeCredentials& munge, std::string_view method,
                                std::string body) {
  ASSIGN_OR_RETURN(std::string credential, MakeCredential(munge, method, body));
  v1::Frame frame;
  frame.set_method(std::string(method));
  frame.set_credential(std::move(credential));
  frame.set_body(std::move(body));
  return frame.SerializeAsString();
}

StatusOr<std::string> CallFrame(FrameConnection& conn, const auth::MungeCredentials& munge,
                                std::string_view method, std::string body, int timeout_ms) {
  ASSIGN_OR_RETURN(std::string request, SealFrame(munge, method, std::move(body)));
  return conn.Call(request, timeout_ms);
}

}  // namespace loom::rpc
