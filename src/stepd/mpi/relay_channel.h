// A step's supervisor's connection to its own loomd for MPI wire-up (noded/step_relay.h):
// what StepExchange sends to other nodes goes out on it, and what they send comes in on it.
// The supervisor opens no listener and talks to no other host.
//
// Thread-safe: Send may be called from any thread; messages are handed to `on_message` on
// the channel's own thread, in the order they came.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "core/status.h"
#include "loom/v1/loom.pb.h"

namespace loom::stepd {

// The frames between a supervisor and loomd's relay (noded/step_relay.h), both ways: how
// long one may take to arrive once begun, or to be written, and how large one may be (a
// fence's data is the ranks' endpoints; the bound keeps a broken peer from making the other
// allocate without limit).
inline constexpr int kRelayFrameTimeoutMs = 10000;
inline constexpr size_t kMaxRelayFrame = 256u << 20;

class RelayChannel {
 public:
  using OnMessage = std::function<void(int32_t from, const v1::StepMessage& message)>;

  // Connects to the loomd socket `socket_path` as node `me` of the step (`addresses`: every
  // node's loomd, in the step's order) and starts reading. Unavailable, naming the socket,
  // when loomd does not listen there.
  static StatusOr<std::unique_ptr<RelayChannel>> Open(const std::string& socket_path,
                                                      uint64_t job_id,
                                                      std::optional<uint32_t> step_id, int32_t me,
                                                      std::vector<std::string> addresses,
                                                      OnMessage on_message);
  ~RelayChannel();
  RelayChannel(const RelayChannel&) = delete;
  RelayChannel& operator=(const RelayChannel&) = delete;

  // Sends `message` to each of `nodes`; a failure is logged (the ranks waiting for it end
  // with the step's time limit).
  void Send(const std::vector<int32_t>& nodes, const v1::StepMessage& message);

 private:
  RelayChannel(int fd, uint64_t job_id, std::optional<uint32_t> step_id, int32_t me,
               std::vector<std::string> addresses, OnMessage on_message);
  void Read();

  const int fd_;
  const uint64_t job_id_;
  const std::optional<uint32_t> step_id_;
  const int32_t me_;
  const std::vector<std::string> addresses_;
  const OnMessage on_message_;
  core::Mutex write_mu_;
  std::thread reader_;
};

}  // namespace loom::stepd
