#include "policy/helper_wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/strings.h"

namespace loom::policy {
namespace {

using core::StrCat;

// Reads exactly `n` bytes. `began`: whether a frame had begun before these bytes.
Status ReadExactly(int fd, char* out, size_t n, const core::Clock* clock, int64_t deadline_ms,
                   bool began) {
  size_t got = 0;
  while (got < n) {
    if (clock != nullptr) {
      const int64_t left = deadline_ms - clock->MonotonicMs();
      if (left <= 0) return absl::DeadlineExceededError("no answer in time");
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
      if (ready < 0 && errno != EINTR)
        return absl::InternalError(StrCat("poll: ", strerror(errno)));
      if (ready <= 0) continue;
    }
    const ssize_t r = ::recv(fd, out + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::DataLossError(StrCat("read: ", strerror(errno)));
    }
    if (r == 0) {
      if (!began && got == 0) return absl::NotFoundError("the peer closed the connection");
      return absl::DataLossError("the peer closed the connection in the middle of a frame");
    }
    got += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace

Status WriteHelperFrame(int fd, const nlohmann::json& message) {
  const std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (body.size() > kMaxHelperFrame) {
    return absl::InvalidArgumentError(StrCat("a message of ", body.size(), " bytes is too large"));
  }
  std::string frame(4, '\0');
  const uint32_t n = static_cast<uint32_t>(body.size());
  frame[0] = static_cast<char>(n >> 24);
  frame[1] = static_cast<char>(n >> 16);
  frame[2] = static_cast<char>(n >> 8);
  frame[3] = static_cast<char>(n);
  frame += body;
  size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t w = ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(StrCat("write: ", strerror(errno)));
    }
    sent += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

StatusOr<nlohmann::json> ReadHelperFrame(int fd, const core::Clock* clock, int64_t deadline_ms) {
  unsigned char head[4];
  RETURN_IF_ERROR(ReadExactly(fd, reinterpret_cast<char*>(head), 4, clock, deadline_ms, false));
  const uint32_t n = (uint32_t{head[0]} << 24) | (uint32_t{head[1]} << 16) |
                     (uint32_t{head[2]} << 8) | uint32_t{head[3]};
  if (n > kMaxHelperFrame) return absl::DataLossError(StrCat("a frame of ", n, " bytes"));
  std::string body(n, '\0');
  RETURN_IF_ERROR(ReadExactly(fd, body.data(), n, clock, deadline_ms, true));
  nlohmann::json message = nlohmann::json::parse(body, nullptr, false);
  if (message.is_discarded()) return absl::DataLossError("a frame that is not JSON");
  return message;
}

}  // namespace loom::policy
