#include "rpc/credential.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

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

std::optional<FrameHead> ReadFrameHead(std::string_view prefix) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(prefix.data()),
                                           static_cast<int>(prefix.size()));
  FrameHead head;
  // Fields in the order a serialized v1::Frame has them: method (1), credential (2), body (3).
  while (true) {
    const uint32_t tag = in.ReadTag();
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (tag == 0 || field < 1 || field > 2 ||
        WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      return std::nullopt;
    }
    uint32_t length = 0;
    std::string& value = field == 1 ? head.method : head.credential;
    if (!in.ReadVarint32(&length) || !in.ReadString(&value, static_cast<int>(length))) {
      return std::nullopt;
    }
    if (field == 2) return head;
  }
}

StatusOr<auth::Identity> CheckOpenedCredential(const auth::OpenedCredential& opened,
                                               std::string_view method, std::string_view body) {
  return auth::CheckPayload(opened, auth::RequestDigest(method, body));
}

}  // namespace loom::rpc
