#include "core/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace loom::core {
namespace {

// FIPS 180-4 examples and the NIST short/long message vectors.
TEST(Sha256Test, KnownAnswers) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every split of the input into two updates gives the one-shot digest, across the
// 55/56/64-byte padding edges.
TEST(Sha256Test, SplitUpdatesAgree) {
  for (size_t len : {55u, 56u, 63u, 64u, 65u, 119u, 120u, 128u}) {
    std::string data;
    for (size_t i = 0; i < len; ++i) data.push_back(static_cast<char>('a' + i % 26));
    const std::string whole = Sha256Hex(data);
    for (size_t cut = 0; cut <= len; ++cut) {
      Sha256 s;
      s.Update(std::string_view(data).substr(0, cut));
      s.Update(std::string_view(data).substr(cut));
      std::string hex;
      for (uint8_t b : s.Finish()) {
        static constexpr char kHex[] = "0123456789abcdef";
        hex.push_back(kHex[b >> 4]);
        hex.push_back(kHex[b & 15]);
      }
      ASSERT_EQ(hex, whole) << "len " << len << " cut " << cut;
    }
  }
}

}  // namespace
}  // namespace loom::core
