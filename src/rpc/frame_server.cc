#include "rpc/frame_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>

#include "absl/container/flat_hash_map.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/strings.h"
#include "rpc/frame.h"

namespace loom::rpc {
namespace {

using SteadyClock = std::chrono::steady_clock;

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

StatusOr<int> Listen(const std::string& address) {
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
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 4096) == 0) {
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

// How much one readiness event may read from one connection, so that a peer sending a large
// frame shares the loop with the others.
constexpr size_t kReadBudget = size_t{1} << 20;
constexpr int kSweepMs = 100;

// Tags in epoll's data for the two descriptors that are no connection.
constexpr uint64_t kListenTag = 0;
constexpr uint64_t kWakeTag = 1;

}  // namespace

struct FrameServer::Connection {
  enum class Phase { kUndecided, kReading, kHandling, kWriting };

  uint64_t id = 0;
  int fd = -1;
  Phase phase = Phase::kUndecided;
  bool authenticated = false;
  SteadyClock::time_point deadline;
  // What has arrived and is not yet a frame: the 4-byte length, then the body so far.
  std::string in;
  bool admission_checked = false;  // this frame needed admission and got it
  std::any admitted;
  std::string out;
  size_t out_sent = 0;
  bool close_after_write = false;
  uint32_t events = 0;  // what epoll watches for now
  std::list<Connection*>::iterator in_unauthenticated;
};

struct FrameServer::State {
  uint64_t next_id = 2;  // 0 and 1 tag the listening socket and the eventfd
  absl::flat_hash_map<uint64_t, std::unique_ptr<Connection>> connections;
  // Unauthenticated connections, oldest first: the first to go when the cap is reached.
  std::list<Connection*> unauthenticated;
  SteadyClock::time_point next_sweep;
  bool accept_paused = false;  // out of descriptors: the listening socket is not watched
};

StatusOr<std::unique_ptr<FrameServer>> FrameServer::Start(FrameServerOptions options,
                                                          Handler handler, Refusal refusal,
                                                          Handoff http2, Admit admit) {
  std::unique_ptr<FrameServer> s(new FrameServer());
  s->options_ = std::move(options);
  s->options_.max_unauthenticated_connections =
      std::max(1, s->options_.max_unauthenticated_connections);
  s->handler_ = std::move(handler);
  s->refusal_ = std::move(refusal);
  s->http2_ = std::move(http2);
  s->admit_ = std::move(admit);
  s->state_ = std::make_unique<State>();
  ASSIGN_OR_RETURN(s->listen_fd_, Listen(s->options_.address));
  s->epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  s->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->epoll_fd_ < 0 || s->wake_fd_ < 0) {
    return absl::InternalError(core::StrCat("epoll: ", std::strerror(errno)));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenTag;
  ::epoll_ctl(s->epoll_fd_, EPOLL_CTL_ADD, s->listen_fd_, &ev);
  ev.data.u64 = kWakeTag;
  ::epoll_ctl(s->epoll_fd_, EPOLL_CTL_ADD, s->wake_fd_, &ev);
  for (int i = 0; i < std::max(1, s->options_.threads); ++i) {
    s->workers_.emplace_back([p = s.get()] { p->WorkerLoop(); });
  }
  s->loop_ = std::thread([p = s.get()] { p->EventLoop(); });
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

FrameServerStats FrameServer::stats() const {
  core::MutexLock lock(&stats_mu_);
  return stats_;
}

void FrameServer::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    stop_ = true;
    if (wake_fd_ >= 0) {
      const uint64_t one = 1;
      (void)!::write(wake_fd_, &one, sizeof one);
    }
    if (loop_.joinable()) loop_.join();
    {
      core::MutexLock lock(&mu_);
      workers_stop_ = true;
      jobs_.clear();  // their connections are closed: nobody would read the answers
    }
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    for (int* fd : {&listen_fd_, &epoll_fd_, &wake_fd_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  });
}

void FrameServer::WorkerLoop() {
  while (true) {
    Job job;
    {
      core::MutexLock lock(&mu_);
      mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return workers_stop_ || !jobs_.empty();
      });
      if (workers_stop_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    FrameAnswer answer = handler_(job.request, job.admitted);
    {
      core::MutexLock lock(&mu_);
      done_.push_back(Done{job.id, std::move(answer)});
    }
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
}

void FrameServer::EventLoop() {
  State& st = *state_;
  std::vector<epoll_event> events(256);
  st.next_sweep = core::RealClock().Monotonic() + std::chrono::milliseconds(kSweepMs);
  while (!stop_) {
    const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), kSweepMs);
    for (int i = 0; i < n; ++i) {
      const uint64_t tag = events[i].data.u64;
      if (tag == kListenTag) {
        AcceptAll();
        continue;
      }
      if (tag == kWakeTag) {
        uint64_t count;
        (void)!::read(wake_fd_, &count, sizeof count);
        CollectAnswers();
        continue;
      }
      Connection* c = Find(tag);
      if (c == nullptr) continue;  // closed by an earlier event of this round
      const uint32_t ev = events[i].events;
      switch (c->phase) {
        case Connection::Phase::kUndecided:
        case Connection::Phase::kReading:
          OnReadable(*c);
          break;
        case Connection::Phase::kWriting:
          OnWritable(*c);
          break;
        case Connection::Phase::kHandling:
          if (ev & (EPOLLERR | EPOLLHUP)) Close(*c);  // nobody is left to answer
          break;
      }
    }
    if (core::RealClock().Monotonic() >= st.next_sweep) {
      Sweep();
      st.next_sweep = core::RealClock().Monotonic() + std::chrono::milliseconds(kSweepMs);
    }
  }
  // Every connection still open is closed; answers still being made are dropped.
  std::vector<Connection*> all;
  for (auto& [id, c] : st.connections) all.push_back(c.get());
  for (Connection* c : all) Close(*c);
}

FrameServer::Connection* FrameServer::Find(uint64_t id) {
  auto it = state_->connections.find(id);
  return it == state_->connections.end() ? nullptr : it->second.get();
}

void FrameServer::Watch(Connection& c, uint32_t events) {
  if (c.events == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.events = events;
}

void FrameServer::AcceptAll() {
  State& st = *state_;
  for (int accepted = 0; accepted < 256; ++accepted) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors: the oldest connection that has not proven itself makes room.
      if ((errno == EMFILE || errno == ENFILE) && !st.unauthenticated.empty()) {
        EvictOldest();
        continue;
      }
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Nothing to close for room: stop watching the listening socket for a moment
        // rather than spin on it (the sweep watches it again).
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        st.accept_paused = true;
      }
      return;  // EAGAIN: nobody else is waiting; anything else: try at the next event
    }
    if (static_cast<int>(st.unauthenticated.size()) >= options_.max_unauthenticated_connections) {
      EvictOldest();
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Connection>();
    c->id = st.next_id++;
    c->fd = fd;
    c->deadline =
        core::RealClock().Monotonic() + std::chrono::milliseconds(options_.frame_deadline_ms);
    // Edge-triggered until the first four bytes decide the protocol: they are only peeked at
    // (gRPC must still find them), so a level-triggered watch would fire again at once.
    c->events = EPOLLIN | EPOLLET;
    epoll_event ev{};
    ev.events = c->events;
    ev.data.u64 = c->id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      continue;
    }
    st.unauthenticated.push_back(c.get());
    c->in_unauthenticated = std::prev(st.unauthenticated.end());
    Connection& ref = *c;
    st.connections.emplace(c->id, std::move(c));
    {
      core::MutexLock lock(&stats_mu_);
      ++stats_.accepted;
      ++stats_.open;
      ++stats_.unauthenticated;
    }
    OnReadable(ref);  // a client that spoke at once needs no second event
  }
}

void FrameServer::OnReadable(Connection& c) {
  if (c.phase == Connection::Phase::kUndecided) {
    char start[4];
    const ssize_t n = ::recv(c.fd, start, sizeof start, MSG_PEEK);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      Close(c);
      return;
    }
    if (n <= 0) return;
    const size_t got = static_cast<size_t>(n);
    if (std::memcmp(start, kHttp2Start, got) == 0) {
      if (got < 4) return;  // it may yet be HTTP/2: wait for more
      // gRPC's from here on: off the loop, in blocking mode, nothing read.
      const int fd = c.fd;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      c.fd = -1;
      Close(c);
      http2_(fd);
      return;
    }
    c.phase = Connection::Phase::kReading;
    Watch(c, EPOLLIN);
  }
  char buffer[64 << 10];
  size_t budget = kReadBudget;
  while (budget > 0) {
    const ssize_t n = ::recv(c.fd, buffer, std::min(sizeof buffer, budget), 0);
    if (n > 0) {
      if (c.authenticated && c.in.empty()) {
        c.deadline =
            core::RealClock().Monotonic() + std::chrono::milliseconds(options_.io_timeout_ms);
      }
      c.in.append(buffer, static_cast<size_t>(n));
      budget -= static_cast<size_t>(n);
      if (!Consume(c)) return;
      if (c.phase != Connection::Phase::kReading) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // The peer closed (in the middle of a frame or between frames) or the socket failed.
    if (!c.in.empty()) {
      core::MutexLock lock(&stats_mu_);
      ++stats_.refused;
    }
    Close(c);
    return;
  }
}

bool FrameServer::Consume(Connection& c) {
  if (c.in.size() < 4) return true;
  const size_t size = FrameLength(c.in.data());
  const size_t limit = c.authenticated
                           ? kMaxFrameBytes
                           : std::min(kMaxFrameBytes, options_.max_unauthenticated_frame_bytes);
  if (size > kMaxFrameBytes || (size > limit && !admit_)) {
    const size_t broken = size > kMaxFrameBytes ? kMaxFrameBytes : limit;
    Refuse(c, absl::DataLossError(core::StrCat("a frame announces ", size, " bytes, more than the ",
                                               broken, "-byte limit")));
    return false;
  }
  if (size > limit && !c.admission_checked) {
    // The frame's first bytes must vouch for the rest before any more is kept.
    if (c.in.size() < 4 + limit) return true;
    auto admitted = admit_(std::string_view(c.in).substr(4, limit));
    if (!admitted.ok()) {
      Refuse(c, admitted.status());
      return false;
    }
    c.admitted = std::move(*admitted);
    c.admission_checked = true;
  }
  if (c.in.size() < 4 + size) return true;
  Job job;
  job.id = c.id;
  job.request = c.in.substr(4, size);
  job.admitted = std::move(c.admitted);
  c.in.erase(0, 4 + size);
  c.admitted.reset();
  c.admission_checked = false;
  c.phase = Connection::Phase::kHandling;
  Watch(c, 0);  // what follows waits in the kernel until the answer is out; a hang-up ends it
  {
    core::MutexLock lock(&mu_);
    jobs_.push_back(std::move(job));
  }
  return true;
}

void FrameServer::Refuse(Connection& c, const Status& why) {
  {
    core::MutexLock lock(&stats_mu_);
    ++stats_.refused;
  }
  c.in.clear();
  StartWrite(c, refusal_(why), /*close_after=*/true);
}

void FrameServer::StartWrite(Connection& c, std::string bytes, bool close_after) {
  if (bytes.size() > kMaxFrameBytes) {
    bytes = refusal_(absl::ResourceExhaustedError(
        core::StrCat("the answer of ", bytes.size(), " bytes is larger than the ", kMaxFrameBytes,
                     "-byte frame limit; ask for less (filter by job, user or partition)")));
    close_after = true;
  }
  c.out = EncodeFrame(bytes);
  c.out_sent = 0;
  c.close_after_write = close_after;
  c.phase = Connection::Phase::kWriting;
  c.deadline = core::RealClock().Monotonic() + std::chrono::milliseconds(options_.io_timeout_ms);
  OnWritable(c);
}

void FrameServer::OnWritable(Connection& c) {
  while (c.out_sent < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out_sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      Watch(c, EPOLLOUT);
      return;
    }
    Close(c);
    return;
  }
  std::string().swap(c.out);
  if (c.close_after_write || !c.authenticated) {
    // An unauthenticated connection gets one answer: it has no business asking again.
    Close(c);
    return;
  }
  c.phase = Connection::Phase::kReading;
  c.deadline = core::RealClock().Monotonic() + std::chrono::milliseconds(options_.idle_timeout_ms);
  Watch(c, EPOLLIN);
  // A frame sent before the answer was taken may already be here.
  if (!c.in.empty()) {
    if (!Consume(c)) return;
  }
}

void FrameServer::Trust(Connection& c) {
  if (c.authenticated) return;
  c.authenticated = true;
  state_->unauthenticated.erase(c.in_unauthenticated);
  core::MutexLock lock(&stats_mu_);
  --stats_.unauthenticated;
}

void FrameServer::CollectAnswers() {
  std::vector<Done> done;
  {
    core::MutexLock lock(&mu_);
    done.swap(done_);
  }
  for (Done& d : done) {
    {
      core::MutexLock lock(&stats_mu_);
      ++stats_.answered;
    }
    Connection* c = Find(d.id);
    if (c == nullptr) continue;  // closed while its answer was being made
    if (d.answer.authenticated) Trust(*c);
    StartWrite(*c, std::move(d.answer.reply), /*close_after=*/false);
  }
}

void FrameServer::Sweep() {
  const auto now = core::RealClock().Monotonic();
  if (state_->accept_paused) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenTag;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    state_->accept_paused = false;
  }
  std::vector<Connection*> late;
  for (auto& [id, c] : state_->connections) {
    // The handler's time is the server's own; every other phase waits on the peer.
    if (c->phase != Connection::Phase::kHandling && now >= c->deadline) late.push_back(c.get());
  }
  if (late.empty()) return;
  {
    core::MutexLock lock(&stats_mu_);
    for (Connection* c : late) {
      // An authenticated connection idle between frames is simply done; any other missed a
      // deadline.
      if (!(c->authenticated && c->phase == Connection::Phase::kReading && c->in.empty())) {
        ++stats_.timed_out;
      }
    }
  }
  for (Connection* c : late) Close(*c);
}

void FrameServer::EvictOldest() {
  {
    core::MutexLock lock(&stats_mu_);
    ++stats_.evicted;
  }
  Close(*state_->unauthenticated.front());
}

void FrameServer::Close(Connection& c) {
  State& st = *state_;
  if (c.fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
  }
  {
    core::MutexLock lock(&stats_mu_);
    --stats_.open;
    if (!c.authenticated) --stats_.unauthenticated;
  }
  if (!c.authenticated) st.unauthenticated.erase(c.in_unauthenticated);
  st.connections.erase(c.id);  // `c` is gone from here on
}

}  // namespace loom::rpc
