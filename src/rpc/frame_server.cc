#include "rpc/frame_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/strings.h"
#include "rpc/frame.h"

namespace loom::rpc {
namespace {

// Splits "host:port" (or "[v6]:port").
StatusOr<std::pair<std::string, std::string>> SplitAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    return absl::InvalidArgumentError(core::StrCat("'", address, "' is not HOST:PORT"));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, address.substr(colon + 1));
}

StatusOr<int> Listen(const std::string& address, int defer_accept_s) {
  ASSIGN_OR_RETURN(auto hp, SplitAddress(address));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const char* host = hp.first.empty() || hp.first == "*" ? nullptr : hp.first.c_str();
  if (int rc = ::getaddrinfo(host, hp.second.c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(
        core::StrCat("cannot resolve ", address, ": ", gai_strerror(rc)));
  }
  std::string last = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // Every client speaks first (see Serve): a connection is handed to a worker once its
    // first bytes are there, so one that connects and says nothing holds no worker while the
    // kernel waits for it.
    ::setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_accept_s, sizeof defer_accept_s);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      ::freeaddrinfo(found);
      return fd;
    }
    last = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return absl::UnavailableError(core::StrCat("cannot listen on ", address, ": ", last,
                                             "; is another controller running there?"));
}

// "PRI " begins HTTP/2's connection preface; no frame of Loom's starts so (it would announce
// a frame of over a gigabyte).
constexpr char kHttp2Start[] = "PRI ";

}  // namespace

StatusOr<std::unique_ptr<FrameServer>> FrameServer::Start(FrameServerOptions options,
                                                          Handler handler, Refusal refusal,
                                                          Handoff http2) {
  std::unique_ptr<FrameServer> s(new FrameServer());
  s->options_ = std::move(options);
  s->handler_ = std::move(handler);
  s->refusal_ = std::move(refusal);
  s->http2_ = std::move(http2);
  ASSIGN_OR_RETURN(s->listen_fd_,
                   Listen(s->options_.address, std::max(1, s->options_.io_timeout_ms / 1000)));
  for (int i = 0; i < std::max(1, s->options_.threads); ++i) {
    s->workers_.emplace_back([p = s.get()] { p->WorkerLoop(); });
  }
  return s;
}

FrameServer::~FrameServer() { Shutdown(); }

int FrameServer::port() const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
  return 0;
}

void FrameServer::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
    for (int fd : serving_) ::shutdown(fd, SHUT_RDWR);
  }
  // Wakes every worker blocked in accept() on it (Linux answers them EINVAL).
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

void FrameServer::WorkerLoop() {
  // Each worker accepts for itself: the kernel hands a new connection to one of the workers
  // blocked in accept(), with no thread in between to wake.
  while (true) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return;
      }
      // Out of descriptors or memory for a moment: wait rather than spin. Otherwise the
      // client gave up before it was accepted.
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) {
        ::close(fd);
        return;
      }
      serving_.insert(fd);
    }
    Serve(fd);
  }
}

void FrameServer::Serve(int fd) {
  // Who speaks first decides: both gRPC's and Loom's clients write before they read.
  char start[4] = {};
  pollfd p{fd, POLLIN, 0};
  const bool spoke = ::poll(&p, 1, options_.io_timeout_ms) == 1 &&
                     ::recv(fd, start, sizeof start, MSG_PEEK | MSG_WAITALL) == 4;
  if (spoke && std::memcmp(start, kHttp2Start, 4) == 0) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      serving_.erase(fd);
    }
    http2_(fd);
    return;
  }
  while (spoke) {
    auto request = ReadFrame(fd, options_.idle_timeout_ms);
    if (!request.ok()) {
      // Closed or idle: nothing to answer. Not a frame: say so, then close.
      if (absl::IsDataLoss(request.status())) {
        (void)WriteFrame(fd, refusal_(request.status()), options_.io_timeout_ms);
      }
      break;
    }
    const std::string reply = handler_(*request);
    if (!WriteFrame(fd, reply, options_.io_timeout_ms).ok()) break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  serving_.erase(fd);
  ::close(fd);
}

}  // namespace loom::rpc
