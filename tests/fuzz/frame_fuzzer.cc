// libFuzzer target for what the controller reads off a socket before it knows who is there:
// the frame stream (rpc/frame.h) and the head of a frame (rpc/credential.h, ReadFrameHead),
// on which a large frame is admitted.
//
// Properties: a stream split into pieces of any sizes yields the same frames, and the same
// error, as the stream whole; a frame that announces more than the limit is refused, not
// buffered; and a head read from a frame's first bytes is the head read from all of them
// (admission decided on a prefix holds for the whole frame).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/credential.h"
#include "rpc/frame.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "frame_fuzzer: %s\n", what);
  std::abort();
}

constexpr size_t kLimit = 4096;

struct Decoded {
  std::vector<std::string> frames;
  bool refused = false;
};

Decoded DecodeInPieces(std::string_view stream, const std::vector<size_t>& cuts) {
  loom::rpc::FrameDecoder d(kLimit);
  Decoded out;
  size_t at = 0, k = 0;
  while (at < stream.size()) {
    const size_t n = cuts.empty() ? stream.size() : std::min(cuts[k++ % cuts.size()], stream.size() - at);
    d.Append(stream.substr(at, n));
    at += n;
    while (true) {
      auto next = d.Next();
      if (!next.ok()) {
        out.refused = true;
        return out;
      }
      if (!next->has_value()) break;
      out.frames.push_back(std::move(**next));
    }
    if (d.buffered() > kLimit + 4 + n) Fail("the decoder kept more than one frame's worth");
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // The first byte chooses how the rest arrives: pieces of 1 to 16 bytes in a cycle.
  std::vector<size_t> cuts;
  for (unsigned i = 0; i < 4; ++i) cuts.push_back(1 + ((data[0] >> i) & 0x0f) % 16);
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  const Decoded whole = DecodeInPieces(stream, {});
  const Decoded pieces = DecodeInPieces(stream, cuts);
  if (whole.frames != pieces.frames || whole.refused != pieces.refused) {
    Fail("frames differ with how the stream was cut");
  }
  for (const std::string& frame : whole.frames) {
    if (frame.size() > kLimit) Fail("a frame over the limit was returned");
    const std::optional<loom::rpc::FrameHead> full = loom::rpc::ReadFrameHead(frame);
    for (size_t cut : {frame.size() / 2, frame.size() / 3, size_t{64}}) {
      if (cut > frame.size()) continue;
      auto part = loom::rpc::ReadFrameHead(std::string_view(frame).substr(0, cut));
      if (part && (!full || part->method != full->method || part->credential != full->credential)) {
        Fail("a head read from a prefix differs from the whole frame's");
      }
    }
  }
  // The stream itself as one frame's payload: what AdmitFrame sees of a large frame.
  (void)loom::rpc::ReadFrameHead(stream);
  return 0;
}
