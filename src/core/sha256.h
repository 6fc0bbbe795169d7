// SHA-256 (FIPS 180-4). Loom digests every request it authenticates (auth::RequestDigest);
// doing it here rather than through OpenSSL spares each command OpenSSL's start-up (config
// file, provider tables), which cost more than the rest of a query's client side.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loom::core {

class Sha256 {
 public:
  static constexpr size_t kBytes = 32;
  Sha256();
  void Update(std::string_view data);
  // The digest of everything given to Update. The object must not be used afterwards.
  std::array<uint8_t, kBytes> Finish();

 private:
  void Block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes seen
};

// The digest of `data` as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view data);

}  // namespace loom::core
