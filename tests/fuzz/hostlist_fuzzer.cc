// libFuzzer target for hostlist expressions. Parsing any text must not crash, hang or leak, and
// for every expression that parses, the compressed form of its hosts must expand back to exactly
// those hosts (where the notation can carry the names at all), and the sorted compressed form to
// the same hosts in some order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/hostlist.h"

namespace {

// Names the ranged notation can carry: not empty, and free of separators and brackets. Slurm's
// reader cannot tell "a[1" from an unclosed bracket, and a ']' in a name ends the bracket search
// early: "x]1,x]2,x]4" prints as "x][1-2,4]", which reads back as "x][1-2" and "4]".
bool Representable(const std::vector<std::string>& hosts) {
  // Slurm rejects a range of more than 65536 hosts, which a longer run would print as.
  if (hosts.size() > static_cast<size_t>(loom::core::kMaxHostsPerRange)) return false;
  for (const std::string& h : hosts) {
    if (h.empty() || h.find_first_of(", \t[]") != std::string::npos) return false;
  }
  return true;
}

[[noreturn]] void Fail(std::string_view what, std::string_view expr, std::string_view detail) {
  std::fprintf(stderr, "%.*s\n  input: '%.*s'\n  %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(expr.size()), expr.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using loom::core::Hostlist;
  std::string_view expr(reinterpret_cast<const char*>(data), size);
  // Bounded so every run stays fast (each list is expanded, compressed and sorted several
  // times: at 65,536 hosts an input took milliseconds and a million runs an hour); the limit
  // itself is part of what is tested.
  constexpr int64_t kMaxHosts = 1 << 12;

  loom::core::SlurmHostlistParse slurm = loom::core::ParseHostlistLikeSlurm(expr, kMaxHosts);
  loom::StatusOr<Hostlist> list = Hostlist::Parse(expr, kMaxHosts);
  if (list.ok() != (slurm.hostlist.has_value() && !slurm.lossy)) {
    Fail("strict and Slurm parses disagree", expr, std::string(list.status().message()));
  }
  if (!list.ok()) return 0;

  std::vector<std::string> hosts = list->Expand();
  if (static_cast<int64_t>(hosts.size()) != list->size()) Fail("size mismatch", expr, "");
  if (!Representable(hosts)) return 0;

  std::string compressed = loom::core::CompressHostlist(hosts);
  loom::StatusOr<std::vector<std::string>> again = loom::core::ExpandHostlist(compressed);
  if (!again.ok()) Fail("compressed form does not parse", expr, compressed);
  if (*again != hosts) Fail("compressed form expands to other hosts", expr, compressed);

  std::string sorted = loom::core::CompressHostlistSorted(hosts);
  loom::StatusOr<std::vector<std::string>> sorted_hosts = loom::core::ExpandHostlist(sorted);
  if (!sorted_hosts.ok()) Fail("sorted form does not parse", expr, sorted);
  std::vector<std::string> a = hosts, b = *sorted_hosts;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b) Fail("sorted form holds other hosts", expr, sorted);
  return 0;
}
