// What a large frame's first bytes must show before the rest is read: its method and
// credential, whole, ahead of the body.
#include "rpc/credential.h"

#include <gtest/gtest.h>

#include "loom/v1/loom.pb.h"

namespace loom::rpc {
namespace {

std::string FrameBytes(const std::string& method, const std::string& credential,
                       const std::string& body) {
  v1::Frame f;
  f.set_method(method);
  f.set_credential(credential);
  f.set_body(body);
  return f.SerializeAsString();
}

TEST(ReadFrameHeadTest, TheMethodAndCredentialComeBeforeTheBody) {
  const std::string credential = "MUNGE:" + std::string(200, 'c') + ":";
  const std::string bytes = FrameBytes("Submit", credential, std::string(1 << 20, 'b'));
  auto head = ReadFrameHead(std::string_view(bytes).substr(0, 300));
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->method, "Submit");
  EXPECT_EQ(head->credential, credential);
}

TEST(ReadFrameHeadTest, NothingWhenEitherIsMissingOrCutShort) {
  const std::string bytes = FrameBytes("Submit", "MUNGE:abc:", "body");
  EXPECT_FALSE(ReadFrameHead(std::string_view(bytes).substr(0, 12)).has_value());  // cut
  EXPECT_FALSE(ReadFrameHead(FrameBytes("Submit", "", "body")).has_value());  // no credential
  EXPECT_FALSE(ReadFrameHead(FrameBytes("", "", std::string(100, 'b'))).has_value());
  EXPECT_FALSE(ReadFrameHead(std::string(64, '\n')).has_value());
  EXPECT_FALSE(ReadFrameHead("").has_value());
}

}  // namespace
}  // namespace loom::rpc
