// Loom frames: the plain transport the CLI uses to reach loomctld (see Frame in
// proto/loom/v1/loom.proto). A frame is a 4-byte big-endian length and that many bytes.
// Blocking sockets with a deadline on every read and write; nothing here knows what the
// bytes mean.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace loom::rpc {

// Larger frames are refused before anything is read into memory: a batch script and its
// environment fit with room to spare.
inline constexpr size_t kMaxFrameBytes = 64u << 20;

// Writes one frame within `timeout_ms`.
Status WriteFrame(int fd, std::string_view payload, int timeout_ms);

// Reads one frame within `timeout_ms`. OutOfRange when the peer closed the connection
// cleanly before the frame began (the end of a conversation, not an error); DataLoss for a
// frame that ends early or announces more than `max_bytes`.
StatusOr<std::string> ReadFrame(int fd, int timeout_ms, size_t max_bytes = kMaxFrameBytes);

// One frame as bytes: the 4-byte length, then `payload`.
std::string EncodeFrame(std::string_view payload);
// The length a frame's 4-byte header announces.
size_t FrameLength(const char* header);

// Splits a byte stream that arrives in pieces (a non-blocking socket's reads) into frames.
class FrameDecoder {
 public:
  explicit FrameDecoder(size_t max_bytes = kMaxFrameBytes) : max_bytes_(max_bytes) {}

  void Append(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame's payload, or nullopt until one has arrived. DataLoss for a frame
  // that announces more than max_bytes; the stream cannot be read past it.
  StatusOr<std::optional<std::string>> Next();
  // Bytes of a frame not yet whole: a stream that ends with some was cut short.
  size_t buffered() const { return buffer_.size() - offset_; }

 private:
  size_t max_bytes_;
  std::string buffer_;
  size_t offset_ = 0;  // where the next frame starts in buffer_
};

// A client's connection to a frame server. Move-only; closes on destruction.
class FrameConnection {
 public:
  // `host` is a name or address (resolved with getaddrinfo); tries each address in turn.
  static StatusOr<FrameConnection> Connect(const std::string& host, int port, int timeout_ms);

  FrameConnection(FrameConnection&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FrameConnection& operator=(FrameConnection&& other) noexcept;
  FrameConnection(const FrameConnection&) = delete;
  FrameConnection& operator=(const FrameConnection&) = delete;
  ~FrameConnection();

  // Sends `payload` as one frame and returns the answering frame.
  StatusOr<std::string> Call(std::string_view payload, int timeout_ms);
  // Sends `payload` as one frame of a one-way stream (no answer is read).
  Status Send(std::string_view payload, int timeout_ms) {
    return WriteFrame(fd_, payload, timeout_ms);
  }

 private:
  explicit FrameConnection(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace loom::rpc
