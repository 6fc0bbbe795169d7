#include "rpc/frame.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/clock.h"
#include "core/strings.h"

namespace loom::rpc {
namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - core::RealClock().Monotonic());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits until `fd` is ready for `events` or the deadline passes.
Status WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, RemainingMs(deadline));
    if (n > 0) return absl::OkStatus();
    if (n == 0) return absl::DeadlineExceededError("timed out");
    if (errno != EINTR) return absl::UnavailableError(core::StrCat("poll: ", std::strerror(errno)));
  }
}

Status WriteAll(int fd, const char* data, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      RETURN_IF_ERROR(WaitFor(fd, POLLOUT, deadline));
      continue;
    }
    return absl::UnavailableError(core::StrCat("send: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Reads exactly `size` bytes; `*got` says how many arrived before an end of stream.
Status ReadAll(int fd, char* data, size_t size, Clock::time_point deadline, size_t* got) {
  *got = 0;
  while (*got < size) {
    const ssize_t n = ::recv(fd, data + *got, size - *got, MSG_DONTWAIT);
    if (n > 0) {
      *got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return absl::DataLossError("connection closed in the middle of a frame");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      RETURN_IF_ERROR(WaitFor(fd, POLLIN, deadline));
      continue;
    }
    return absl::UnavailableError(core::StrCat("recv: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

Status TooLarge(size_t size, size_t max_bytes) {
  return absl::DataLossError(
      core::StrCat("a frame announces ", size, " bytes, more than the ", max_bytes, "-byte limit"));
}

}  // namespace

size_t FrameLength(const char* header) {
  const auto* h = reinterpret_cast<const unsigned char*>(header);
  return (size_t{h[0]} << 24) | (size_t{h[1]} << 16) | (size_t{h[2]} << 8) | size_t{h[3]};
}

std::string EncodeFrame(std::string_view payload) {
  const uint32_t n = static_cast<uint32_t>(payload.size());
  std::string frame;
  frame.reserve(4 + payload.size());
  frame.push_back(static_cast<char>(n >> 24));
  frame.push_back(static_cast<char>(n >> 16));
  frame.push_back(static_cast<char>(n >> 8));
  frame.push_back(static_cast<char>(n));
  frame.append(payload);
  return frame;
}

StatusOr<std::optional<std::string>> FrameDecoder::Next() {
  if (buffered() < 4) return std::nullopt;
  const size_t size = FrameLength(buffer_.data() + offset_);
  if (size > max_bytes_) return TooLarge(size, max_bytes_);
  if (buffered() < 4 + size) return std::nullopt;
  std::string payload = buffer_.substr(offset_ + 4, size);
  offset_ += 4 + size;
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  } else if (offset_ > (64u << 10) && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);  // keep what is unread, not everything ever read
    offset_ = 0;
  }
  return payload;
}

Status WriteFrame(int fd, std::string_view payload, int timeout_ms) {
  if (payload.size() > kMaxFrameBytes) {
    return absl::ResourceExhaustedError(core::StrCat("message of ", payload.size(),
                                                     " bytes is larger than the ", kMaxFrameBytes,
                                                     "-byte limit"));
  }
  const auto deadline = core::RealClock().Monotonic() + std::chrono::milliseconds(timeout_ms);
  const std::string frame = EncodeFrame(payload);
  return WriteAll(fd, frame.data(), frame.size(), deadline);
}

StatusOr<std::string> ReadFrame(int fd, int timeout_ms, size_t max_bytes) {
  const auto deadline = core::RealClock().Monotonic() + std::chrono::milliseconds(timeout_ms);
  unsigned char header[4];
  size_t got = 0;
  Status s = ReadAll(fd, reinterpret_cast<char*>(header), sizeof header, deadline, &got);
  if (!s.ok()) {
    if (got == 0 && absl::IsDataLoss(s)) return absl::OutOfRangeError("connection closed");
    return s;
  }
  const size_t size = FrameLength(reinterpret_cast<const char*>(header));
  if (size > max_bytes) return TooLarge(size, max_bytes);
  std::string payload(size, '\0');
  RETURN_IF_ERROR(ReadAll(fd, payload.data(), size, deadline, &got));
  return payload;
}

FrameConnection& FrameConnection::operator=(FrameConnection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FrameConnection::~FrameConnection() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<FrameConnection> FrameConnection::Connect(const std::string& host, int port,
                                                   int timeout_ms) {
  const auto deadline = core::RealClock().Monotonic() + std::chrono::milliseconds(timeout_ms);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return absl::UnavailableError(core::StrCat("cannot resolve ", host, ": ", gai_strerror(rc)));
  }
  std::string last = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last = std::strerror(errno);
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
      Status w = WaitFor(fd, POLLOUT, deadline);
      int err = 0;
      socklen_t len = sizeof err;
      if (w.ok() && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
        rc = 0;
      else
        errno = w.ok() ? err : ETIMEDOUT;
    }
    if (rc == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ::freeaddrinfo(found);
      return FrameConnection(fd);
    }
    last = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return absl::UnavailableError(core::StrCat("cannot connect to ", host, ":", port, ": ", last));
}

StatusOr<std::string> FrameConnection::Call(std::string_view payload, int timeout_ms) {
  RETURN_IF_ERROR(WriteFrame(fd_, payload, timeout_ms));
  auto reply = ReadFrame(fd_, timeout_ms);
  if (!reply.ok() && absl::IsOutOfRange(reply.status())) {
    return absl::UnavailableError("the server closed the connection without answering");
  }
  return reply;
}

}  // namespace loom::rpc
