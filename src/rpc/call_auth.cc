#include "rpc/call_auth.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace loom::rpc {

std::string DeterministicBytes(const google::protobuf::Message& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

Status AttachCredential(grpc::ClientContext* ctx, const auth::MungeCredentials& munge,
                        std::string_view method, const google::protobuf::Message& request) {
  ASSIGN_OR_RETURN(std::string cred,
                   munge.Encode(auth::RequestDigest(method, DeterministicBytes(request))));
  ctx->AddMetadata(kCredentialKey, cred);
  return absl::OkStatus();
}

StatusOr<auth::Identity> VerifyCall(const grpc::ServerContext& ctx, auth::MungeCredentials& munge,
                                    std::string_view method,
                                    const google::protobuf::Message& request) {
  const auto& md = ctx.client_metadata();
  auto it = md.find(kCredentialKey);
  std::string cred = it == md.end() ? std::string() : std::string(it->second.data(), it->second.size());
  return munge.Decode(cred, auth::RequestDigest(method, DeterministicBytes(request)));
}

}  // namespace loom::rpc
