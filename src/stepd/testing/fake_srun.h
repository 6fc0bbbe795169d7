// For tests of what a node does for srun: a fake srun that accepts one connection on
// loopback and keeps every StepIo frame it carries, and what srun would make of them.
// Header-only; the fake's state is guarded by its mutex.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "loom/v1/loom.pb.h"
#include "rpc/frame.h"

namespace loom::stepd::testing_support {

// Accepts one connection on loopback and keeps every StepIo message it carries.
class FakeSrun {
 public:
  FakeSrun() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listen_fd_, 4);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeSrun() {
    Hangup();
    ::shutdown(listen_fd_, SHUT_RDWR);  // wakes an accept that never got a connection
    if (thread_.joinable()) thread_.join();
    ::close(listen_fd_);
  }

  int port() const { return port_; }
  // Closes the connection, as an srun that died would.
  void Hangup() {
    core::MutexLock lock(&mu_);
    hangup_ = true;
    if (conn_fd_ >= 0) ::shutdown(conn_fd_, SHUT_RDWR);
  }
  // Waits until the node closed the connection (or `ms` passed); returns the messages.
  std::vector<v1::StepIo> WaitClosed(int ms = 10000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        core::MutexLock lock(&mu_);
        if (closed_) return messages_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "the node never closed its connection";
    core::MutexLock lock(&mu_);
    return messages_;
  }
  size_t count() {
    core::MutexLock lock(&mu_);
    return messages_.size();
  }

 private:
  void Serve() {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    {
      core::MutexLock lock(&mu_);
      conn_fd_ = fd;
      if (hangup_) ::shutdown(fd, SHUT_RDWR);
    }
    while (fd >= 0) {
      auto frame = rpc::ReadFrame(fd, 60000);
      if (!frame.ok()) break;
      v1::StepIo m;
      if (!m.ParseFromString(*frame)) break;
      core::MutexLock lock(&mu_);
      messages_.push_back(m);
    }
    core::MutexLock lock(&mu_);
    closed_ = true;
    if (fd >= 0) ::close(fd);
    conn_fd_ = -1;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  core::Mutex mu_;
  int conn_fd_ ABSL_GUARDED_BY(mu_) = -1;
  bool hangup_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<v1::StepIo> messages_ ABSL_GUARDED_BY(mu_);
};

// What srun would print: each task's stdout and stderr, and each task's status.
struct Heard {
  std::map<int, std::string> out, err;
  std::map<int, int> status;
  std::vector<std::string> failures;
  bool exit_before_output = false;
};

inline Heard Collect(const std::vector<v1::StepIo>& messages) {
  Heard h;
  for (const v1::StepIo& m : messages) {
    if (m.has_output()) {
      (m.output().is_stderr() ? h.err : h.out)[m.output().task()] += m.output().data();
      if (h.status.contains(m.output().task())) h.exit_before_output = true;
    } else if (m.has_exit()) {
      for (int t : m.exit().tasks()) h.status[t] = m.exit().status();
    } else if (m.has_failure()) {
      h.failures.push_back(m.failure().message());
    }
  }
  return h;
}

}  // namespace loom::stepd::testing_support
