#include "noded/step_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/clock.h"
#include "core/log.h"
#include "core/strings.h"
#include "rpc/frame.h"
#include "stepd/control.h"
#include "stepd/mpi/relay_channel.h"

namespace loom::noded {
namespace {

using core::StrCat;

// Targets a message goes to at the same time.
constexpr size_t kParallelSends = 16;

// The step a message is about: a step inside a job's allocation, or a job srun submitted.
stepd::StepRef StepOf(const v1::StepRelay& m) {
  return m.has_step_id() ? stepd::StepRef::Step(m.job_id(), m.step_id())
                         : stepd::StepRef::OnlyStep(m.job_id());
}

}  // namespace

StepRelayHub::StepRelayHub(std::string socket_path, Send send)
    : path_(std::move(socket_path)), send_(std::move(send)) {}

StepRelayHub::~StepRelayHub() {
  {
    core::MutexLock lock(&mu_);
    stopping_ = true;
    for (int fd : reader_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  if (stop_pipe_[1] >= 0) (void)!::write(stop_pipe_[1], "x", 1);
  if (acceptor_.joinable()) acceptor_.join();
  std::map<uint64_t, std::thread> readers;
  {
    core::MutexLock lock(&mu_);
    readers.swap(readers_);
  }
  for (auto& [id, t] : readers) t.join();
  for (int fd : {listen_fd_, stop_pipe_[0], stop_pipe_[1]}) {
    if (fd >= 0) ::close(fd);
  }
  if (listen_fd_ >= 0) ::unlink(path_.c_str());
}

Status StepRelayHub::Start() {
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
  }
  ASSIGN_OR_RETURN(listen_fd_, stepd::ListenUnix(path_));
  acceptor_ = std::thread([this] { Accept(); });
  return absl::OkStatus();
}

void StepRelayHub::Accept() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    core::MutexLock lock(&mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    // Reader threads of ended connections are joined here, so that they do not pile up.
    for (uint64_t id : finished_) {
      readers_[id].join();
      readers_.erase(id);
    }
    finished_.clear();
    const uint64_t id = next_reader_++;
    reader_fds_.push_back(fd);
    readers_.emplace(id, std::thread([this, fd, id] { Read(fd, id); }));
  }
}

void StepRelayHub::Read(int fd, uint64_t id) {
  std::optional<stepd::StepRef> key;
  auto conn = std::make_shared<Connection>();
  conn->fd = fd;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) break;
    StatusOr<std::string> frame =
        rpc::ReadFrame(fd, stepd::kRelayFrameTimeoutMs, stepd::kMaxRelayFrame);
    if (!frame.ok()) break;  // the supervisor is gone (or loomd stops)
    v1::StepRelay message;
    if (!message.ParseFromString(*frame)) {
      core::LogError("relay socket: a frame that is not a StepRelay; closing the connection");
      break;
    }
    if (message.hello()) {
      key = StepOf(message);
      // What waited goes first: nothing else is written to the connection meanwhile.
      core::MutexLock write(&conn->write_mu);
      std::vector<Kept> waiting;
      {
        core::MutexLock lock(&mu_);
        steps_[*key] = conn;
        if (auto it = kept_.find(*key); it != kept_.end()) {
          waiting = std::move(it->second);
          kept_.erase(it);
        }
      }
      for (const Kept& k : waiting) WriteLocked(*conn, k.frame);
      continue;
    }
    if (!key) {
      core::LogError("relay socket: a message before the supervisor said which step it is");
      break;
    }
    PassOn(std::move(message));
  }
  core::MutexLock lock(&mu_);
  if (key) {
    auto it = steps_.find(*key);
    if (it != steps_.end() && it->second == conn) steps_.erase(it);
  }
  std::erase(reader_fds_, fd);
  finished_.push_back(id);
  {
    core::MutexLock write(&conn->write_mu);
    ::close(fd);
    conn->fd = -1;
  }
}

void StepRelayHub::PassOn(v1::StepRelay message) {
  std::vector<v1::RelayTarget> targets(message.to().begin(), message.to().end());
  message.clear_to();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < targets.size(); i = next++) {
      if (Status s = send_(targets[i].address(), message); !s.ok()) {
        // The ranks there will wait for this in vain: the step ends by its time limit or
        // by the failure that made the node unreachable.
        core::LogError("{}: cannot pass a wire-up message to node {} at {}: {}",
                       stepd::Describe(StepOf(message)), targets[i].node(), targets[i].address(),
                       s.message());
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t h = 1; h < std::min(targets.size(), kParallelSends); ++h) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
}

void StepRelayHub::WriteTo(Connection& c, const std::string& frame) {
  core::MutexLock lock(&c.write_mu);
  WriteLocked(c, frame);
}

void StepRelayHub::WriteLocked(Connection& c, const std::string& frame) {
  if (c.fd < 0) return;
  if (Status s = rpc::WriteFrame(c.fd, frame, stepd::kRelayFrameTimeoutMs); !s.ok()) {
    core::LogError("relay socket: a supervisor does not read its messages: {}", s.message());
    ::shutdown(c.fd, SHUT_RDWR);  // its reader ends the connection
  }
}

void StepRelayHub::Deliver(v1::StepRelay message) {
  const stepd::StepRef key = StepOf(message);
  message.clear_to();
  std::string frame = message.SerializeAsString();
  std::shared_ptr<Connection> conn;
  {
    core::MutexLock lock(&mu_);
    const auto now = core::RealClock().Monotonic();
    // Messages for steps that never connected here (their launch failed) are dropped.
    for (auto it = kept_.begin(); it != kept_.end();) {
      std::erase_if(it->second, [&](const Kept& k) { return now - k.at > kKeepUndelivered; });
      it = it->second.empty() ? kept_.erase(it) : std::next(it);
    }
    auto it = steps_.find(key);
    if (it == steps_.end()) {
      kept_[key].push_back(Kept{now, std::move(frame)});
      return;
    }
    conn = it->second;
  }
  WriteTo(*conn, frame);
}

size_t StepRelayHub::undelivered() const {
  core::MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [key, kept] : kept_) n += kept.size();
  return n;
}

}  // namespace loom::noded
