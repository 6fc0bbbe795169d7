#include "stepd/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/clock.h"
#include "core/strings.h"

namespace loom::stepd {

using core::StrCat;

std::string FormatRequest(const ControlRequest& r) {
  switch (r.kind) {
    case ControlRequest::Kind::kPing:
      return "ping";
    case ControlRequest::Kind::kSignal:
      return StrCat("signal ", r.value);
    case ControlRequest::Kind::kTerminate:
      return StrCat("terminate ", r.value);
  }
  return "ping";
}

StatusOr<ControlRequest> ParseRequest(std::string_view line) {
  line = core::Trim(line);
  const size_t space = line.find(' ');
  const std::string_view verb = line.substr(0, space);
  const std::string_view arg = space == std::string_view::npos ? "" : line.substr(space + 1);
  ControlRequest r;
  if (verb == "ping" && arg.empty()) return r;
  auto value = core::ParseInt(core::Trim(arg));
  if (verb == "signal" && value && *value > 0 && *value < 65) {
    r.kind = ControlRequest::Kind::kSignal;
    r.value = *value;
    return r;
  }
  if (verb == "terminate" && value && *value >= 0) {
    r.kind = ControlRequest::Kind::kTerminate;
    r.value = *value;
    return r;
  }
  return absl::InvalidArgumentError(
      StrCat("not a loom-stepd request: '", line,
             "' (expected 'ping', 'signal SIG' or 'terminate SECONDS')"));
}

std::string FormatReply(const Status& s) {
  if (s.ok()) return "ok";
  std::string message(s.message());
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  return StrCat("error: ", message);
}

Status ParseReply(std::string_view line) {
  line = core::Trim(line);
  if (line == "ok") return absl::OkStatus();
  if (line.starts_with("error: "))
    return absl::FailedPreconditionError(std::string(line.substr(7)));
  return absl::InternalError(StrCat("unreadable answer from loom-stepd: '", line, "'"));
}

namespace {

StatusOr<sockaddr_un> AddressOf(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return absl::InvalidArgumentError(StrCat("socket path ", path, " is longer than ",
                                             sizeof addr.sun_path - 1,
                                             " bytes; use a shorter spool directory"));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

int64_t NowMs() { return core::RealClock().MonotonicMs(); }

Status WriteAll(int fd, std::string_view data, int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const int64_t left = deadline - NowMs();
      if (left <= 0) return absl::DeadlineExceededError("loom-stepd does not read its socket");
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(left));
      continue;
    }
    return absl::UnavailableError(StrCat("cannot write to loom-stepd: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<int> ListenUnix(const std::string& path) {
  ASSIGN_OR_RETURN(sockaddr_un addr, AddressOf(path));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::InternalError(StrCat("socket: ", std::strerror(errno)));
  ::unlink(path.c_str());
  const mode_t old = ::umask(077);
  const int bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  ::umask(old);
  if (bound != 0 || ::listen(fd, 16) != 0) {
    const int e = bound != 0 ? err : errno;
    ::close(fd);
    return absl::InternalError(StrCat("cannot listen on ", path, ": ", std::strerror(e)));
  }
  return fd;
}

StatusOr<std::string> ReadLine(int fd, int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  std::string line;
  for (;;) {
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      line.append(buf, static_cast<size_t>(n));
      if (const size_t nl = line.find('\n'); nl != std::string::npos) return line.substr(0, nl);
      if (line.size() > 4096) return absl::InvalidArgumentError("line longer than 4 KiB");
      continue;
    }
    if (n == 0) return line;  // the peer closed: what came is the line
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return absl::UnavailableError(StrCat("cannot read: ", std::strerror(errno)));
    }
    const int64_t left = deadline - NowMs();
    if (left <= 0) return absl::DeadlineExceededError("no answer in time");
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(left));
  }
}

StatusOr<int> ConnectUnix(const std::string& path) {
  ASSIGN_OR_RETURN(sockaddr_un addr, AddressOf(path));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::InternalError(StrCat("socket: ", std::strerror(errno)));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    const int err = errno;
    ::close(fd);
    return absl::UnavailableError(StrCat("nothing listens at ", path, ": ", std::strerror(err)));
  }
  return fd;
}

Status SendRequest(const std::string& socket_path, const ControlRequest& request, int timeout_ms) {
  StatusOr<int> connected = ConnectUnix(socket_path);
  if (!connected.ok()) {
    if (!absl::IsUnavailable(connected.status())) return connected.status();
    return absl::UnavailableError(
        StrCat("no loom-stepd answers: ", std::string(connected.status().message())));
  }
  const int fd = *connected;
  Status sent = WriteAll(fd, FormatRequest(request) + "\n", timeout_ms);
  if (!sent.ok()) {
    ::close(fd);
    return sent;
  }
  StatusOr<std::string> reply = ReadLine(fd, timeout_ms);
  ::close(fd);
  if (!reply.ok()) {
    return Status(reply.status().code(), StrCat("loom-stepd at ", socket_path, ": ",
                                                std::string(reply.status().message())));
  }
  return ParseReply(*reply);
}

}  // namespace loom::stepd
