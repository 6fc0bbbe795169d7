// libFuzzer target for what loom-stepd's PMI server reads from a task (stepd/mpi/pmi_wire.h):
// the PMI-1 and PMI-2 command streams, whose bytes the job's own processes write, and the
// key-value pairs a fence brings from other nodes.
//
// Properties: a stream split into pieces of any sizes yields the same commands, and the same
// error, as the stream whole; a PMI-2 command the server formats reads back as itself; pairs
// either read whole or are refused, never read past their end.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stepd/mpi/pmi_wire.h"

namespace {

using loom::stepd::PmiCommand;
using loom::stepd::PmiDecoder;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "pmi_wire_fuzzer: %s\n", what);
  std::abort();
}

struct Decoded {
  std::vector<PmiCommand> commands;
  bool refused = false;
};

Decoded DecodeInPieces(std::string_view stream, bool v2, size_t piece) {
  PmiDecoder d;
  if (v2) d.SwitchToV2();
  Decoded out;
  for (size_t at = 0; at < stream.size() && !out.refused; at += piece) {
    d.Append(stream.substr(at, piece));
    for (;;) {
      auto next = d.Next();
      if (!next.ok()) {
        out.refused = true;
        break;
      }
      if (!next->has_value()) break;
      out.commands.push_back(**next);
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool v2 = (data[0] & 1) != 0;
  const size_t piece = 1 + data[0] / 2 % 17;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Decoded whole = DecodeInPieces(stream, v2, stream.size() + 1);
  const Decoded pieces = DecodeInPieces(stream, v2, piece);
  // In pieces the stream may stop at the first bad command before later ones come whole;
  // what was read before it must agree.
  if (whole.refused != pieces.refused || whole.commands != pieces.commands) {
    Fail("a stream read in pieces differs from the stream read whole");
  }
  for (const PmiCommand& c : whole.commands) {
    std::vector<std::pair<std::string, std::string>> args(c.args.begin(), c.args.end());
    PmiDecoder again;
    again.SwitchToV2();
    again.Append(loom::stepd::FormatPmi2(c.cmd, args));
    auto back = again.Next();
    // Keys are read up to '=' and ';': one holding them cannot come back as itself.
    bool plain = c.cmd.find(';') == std::string::npos;
    for (const auto& [k, v] : c.args) {
      plain = plain && k.find_first_of(";=") == std::string::npos && !k.empty() && k != "cmd";
    }
    if (plain && c.cmd.find('=') == std::string::npos &&
        (!back.ok() || !back->has_value() || **back != c)) {
      Fail("a PMI-2 command the server formats does not read back as itself");
    }
  }
  std::map<std::string, std::string> pairs;
  (void)loom::stepd::ReadPairs(stream, &pairs);
  return 0;
}
