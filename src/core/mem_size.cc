#include "core/mem_size.h"

#include <cctype>

#include "core/strings.h"

namespace loom::core {

StatusOr<int64_t> ParseMemoryMb(std::string_view text) {
  std::string_view s = Trim(text);
  auto bad = [&] {
    return absl::InvalidArgumentError(StrCat(
        "invalid memory size '", text, "': expected a number with an optional unit K, M, G or T "
                                       "(default M), e.g. 512M, 16G, 1T"));
  };
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) return bad();
  std::optional<int64_t> v = ParseInt(s.substr(0, digits));
  if (!v) return bad();
  std::string unit = ToLower(s.substr(digits));
  if (unit.size() == 2 && unit[1] == 'b') unit.pop_back();
  int64_t value = *v;
  constexpr int64_t kMax = int64_t{1} << 50;
  if (value > kMax) return bad();
  if (unit.empty() || unit == "m") return value;
  if (unit == "k") return (value + 1023) / 1024;
  if (unit == "g") return value * 1024;
  if (unit == "t") return value * 1024 * 1024;
  return bad();
}

std::string FormatMemoryMb(int64_t mb) {
  if (mb != 0 && mb % (1024 * 1024) == 0) return StrCat(mb / (1024 * 1024), "T");
  if (mb != 0 && mb % 1024 == 0) return StrCat(mb / 1024, "G");
  return StrCat(mb, "M");
}

}  // namespace loom::core
