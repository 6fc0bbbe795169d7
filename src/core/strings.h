// Small string helpers used by the parsers. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace loom::core {

// Concatenates strings, string views, characters and numbers. (Debian's abseil does not
// take std::string_view in absl::StrCat, so the project uses this one.)
template <typename... Args>
std::string StrCat(const Args&... args);

bool EqualsIgnoreCase(std::string_view a, std::string_view b);
std::string ToLower(std::string_view s);
std::string_view Trim(std::string_view s);
// `parts` with `sep` between them.
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// Splits on `sep`, keeping empty pieces.
std::vector<std::string_view> Split(std::string_view s, char sep);
// Parses a whole string as a base-10 integer; nullopt on any stray character or overflow.
std::optional<int64_t> ParseInt(std::string_view s);
// Parses a whole string as a floating-point number; nullopt on stray characters.
std::optional<double> ParseDouble(std::string_view s);

namespace internal {
inline void AppendPiece(std::string* out, std::string_view v) { out->append(v); }
inline void AppendPiece(std::string* out, const char* v) { out->append(v); }
inline void AppendPiece(std::string* out, const std::string& v) { out->append(v); }
inline void AppendPiece(std::string* out, char v) { out->push_back(v); }
void AppendPiece(std::string* out, long long v);
void AppendPiece(std::string* out, unsigned long long v);
void AppendPiece(std::string* out, double v);
template <typename T>
  requires std::is_integral_v<T>
void AppendPiece(std::string* out, T v) {
  if constexpr (std::is_signed_v<T>) {
    AppendPiece(out, static_cast<long long>(v));
  } else {
    AppendPiece(out, static_cast<unsigned long long>(v));
  }
}
inline void AppendPiece(std::string* out, float v) { AppendPiece(out, static_cast<double>(v)); }
}  // namespace internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (internal::AppendPiece(&out, args), ...);
  return out;
}

}  // namespace loom::core
