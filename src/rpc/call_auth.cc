#include "rpc/call_auth.h"

namespace loom::rpc {

Status AttachCredential(grpc::ClientContext* ctx, const auth::MungeCredentials& munge,
                        std::string_view method, const google::protobuf::Message& request) {
  ASSIGN_OR_RETURN(std::string cred, MakeCredential(munge, method, DeterministicBytes(request)));
  ctx->AddMetadata(kCredentialKey, cred);
  return absl::OkStatus();
}

StatusOr<auth::Identity> VerifyCall(const grpc::ServerContext& ctx, auth::MungeCredentials& munge,
                                    std::string_view method,
                                    const google::protobuf::Message& request) {
  const auto& md = ctx.client_metadata();
  auto it = md.find(kCredentialKey);
  std::string cred = it == md.end() ? std::string() : std::string(it->second.data(), it->second.size());
  return CheckCredential(munge, cred, method, DeterministicBytes(request));
}

}  // namespace loom::rpc
