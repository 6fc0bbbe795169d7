// libFuzzer target for Slurm durations. ParseDuration must not crash on any text, never return a
// negative value, and whatever it accepts must print (FormatDuration) as text that parses back
// to the same number of seconds.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/time_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  loom::StatusOr<int64_t> seconds = loom::core::ParseDuration(text);
  if (!seconds.ok()) return 0;
  std::string printed = loom::core::FormatDuration(*seconds);
  loom::StatusOr<int64_t> again = loom::core::ParseDuration(printed);
  if (*seconds < 0 || !again.ok() || *again != *seconds) {
    std::fprintf(stderr, "input '%.*s' -> %lld s -> '%s' -> %s\n", static_cast<int>(size),
                 reinterpret_cast<const char*>(data), static_cast<long long>(*seconds),
                 printed.c_str(),
                 again.ok() ? std::to_string(*again).c_str()
                            : std::string(again.status().message()).c_str());
    std::abort();
  }
  static volatile size_t keep;
  keep = keep + loom::core::FormatElapsed(*seconds).size();
  return 0;
}
