// A node daemon's calls to other node daemons, each with a fresh MUNGE credential of this
// daemon (root, as the controller's daemons accept): the step launches of the TreeWidth
// fan-out that the controller (or the daemon above) asked this node to pass on go to their
// nodes at once, in parallel, and the answers, with the nodes further below that failed, come
// back as one list; and the wire-up messages of steps' supervisors (Relay).
//
// Thread-safe: the daemon's RPC threads call Forward and Relay at the same time.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "auth/munge_auth.h"
#include "core/mutex.h"
#include "loom/v1/loom.grpc.pb.h"

namespace loom::noded {

class LaunchForwarder {
 public:
  explicit LaunchForwarder(const auth::MungeCredentials* munge) : munge_(munge) {}

  // Sends each of `launches` to its node and waits for every answer, at most until
  // `deadline`. Returns the nodes whose launch failed: one that refused (its own error), one
  // that could not be reached or did not answer in time (it and every node it was to pass
  // the launch on to), and those the answers name.
  std::vector<v1::NodeLaunchError> Forward(
      const google::protobuf::RepeatedPtrField<v1::ForwardedLaunch>& launches,
      std::chrono::system_clock::time_point deadline);
  // Passes a step's wire-up message (noded/step_relay.h) to the loomd at `address`.
  Status Relay(const std::string& address, const v1::StepRelay& message,
               std::chrono::system_clock::time_point deadline);

 private:
  v1::NodeDaemon::Stub* StubFor(const std::string& address);

  const auth::MungeCredentials* munge_;
  core::Mutex mu_;
  std::map<std::string, std::unique_ptr<v1::NodeDaemon::Stub>> stubs_  // by address
      ABSL_GUARDED_BY(mu_);
};

}  // namespace loom::noded
