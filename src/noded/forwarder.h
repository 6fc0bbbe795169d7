// A node daemon's part in the TreeWidth fan-out of step launches: the launches the controller
// (or the daemon above) asked this node to pass on go to their nodes at once, in parallel,
// each with a fresh MUNGE credential of this daemon (root, as the controller's daemons
// accept); the answers, and the nodes further below that failed, come back as one list.
//
// Thread-safe: the daemon's RPC threads call Forward at the same time.
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

 private:
  v1::NodeDaemon::Stub* StubFor(const std::string& address);

  const auth::MungeCredentials* munge_;
  core::Mutex mu_;
  std::map<std::string, std::unique_ptr<v1::NodeDaemon::Stub>> stubs_  // by address
      ABSL_GUARDED_BY(mu_);
};

}  // namespace loom::noded
