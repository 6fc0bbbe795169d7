#include "rpc/credential.h"

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

StatusOr<std::string> MakeCredential(const auth::MungeCredentials& munge, std::string_view method,
                                     std::string_view body) {
  return munge.Encode(auth::RequestDigest(method, body));
}

StatusOr<auth::Identity> CheckCredential(auth::MungeCredentials& munge, std::string_view credential,
                                         std::string_view method, std::string_view body) {
  return munge.Decode(credential, auth::RequestDigest(method, body));
}

StatusOr<auth::Identity> CheckOpenedCredential(const auth::OpenedCredential& opened,
                                               std::string_view method, std::string_view body) {
  return auth::CheckPayload(opened, auth::RequestDigest(method, body));
}

}  // namespace loom::rpc
