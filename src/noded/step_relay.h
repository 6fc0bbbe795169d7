// loomd's part in MPI wire-up: the supervisors of a step on this node talk to the same
// step's supervisors on other nodes through it and through the other nodes' loomds, never
// through the controller and never on a listener of their own.
//
// A supervisor connects to the unix socket RelaySocketPath(spool, node) (root only, mode
// 0600) and keeps the connection for the step's life: a first v1::StepRelay frame with
// `hello` says which step and node it is; each later frame names its targets, and loomd
// passes it on to each target's loomd (`send`, NodeDaemon.RelayStep), at the same time when
// there are several. What other nodes send for a step here (Deliver) is written to its
// supervisor's connection; a message that comes before the supervisor has connected (another
// node's ranks can be quicker than this node's launch) waits for it, at most kKeepUndelivered.
//
// Thread-safe: a thread accepts, one per connection reads; Deliver is called on RPC threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "core/status.h"
#include "loom/v1/loom.pb.h"
#include "stepd/records.h"

namespace loom::noded {

class StepRelayHub {
 public:
  // How long a message for a step whose supervisor has not connected is kept.
  static constexpr std::chrono::minutes kKeepUndelivered{10};
  // Sends `message` (its targets cleared) to the loomd at `address`.
  using Send = std::function<Status(const std::string& address, const v1::StepRelay& message)>;

  StepRelayHub(std::string socket_path, Send send);
  ~StepRelayHub();
  StepRelayHub(const StepRelayHub&) = delete;
  StepRelayHub& operator=(const StepRelayHub&) = delete;

  // Listens on the socket (an old one is replaced) and starts accepting.
  Status Start();
  // A message from another node for a supervisor here: written to its connection, or kept
  // until it connects.
  void Deliver(v1::StepRelay message);

  // Messages kept for supervisors that have not connected (for tests and logs).
  size_t undelivered() const;

 private:
  struct Connection {
    int fd = -1;
    core::Mutex write_mu;  // one frame at a time
  };
  struct Kept {
    std::chrono::steady_clock::time_point at;
    std::string frame;
  };
  void Accept();
  void Read(int fd, uint64_t id);
  // Passes `message` on to its targets; returns once each has been tried.
  void PassOn(v1::StepRelay message);
  static void WriteTo(Connection& c, const std::string& frame);
  static void WriteLocked(Connection& c, const std::string& frame)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.write_mu);

  const std::string path_;
  const Send send_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread acceptor_;
  mutable core::Mutex mu_;
  std::map<stepd::StepRef, std::shared_ptr<Connection>> steps_ ABSL_GUARDED_BY(mu_);
  std::map<stepd::StepRef, std::vector<Kept>> kept_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::thread> readers_ ABSL_GUARDED_BY(mu_);  // by id
  std::vector<uint64_t> finished_ ABSL_GUARDED_BY(mu_);           // readers that have ended
  uint64_t next_reader_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int> reader_fds_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace loom::noded
