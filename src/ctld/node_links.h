// The controller's calls to the node daemons (loomd): batch launches, srun's task launches and
// signals. One gRPC
// channel per node address, made on first use and kept. Calls to one node go out one at a
// time, in the order they were sent, so a signal never overtakes the launch it follows; calls
// to different nodes are independent (gRPC's callback API, no thread per node), so a node
// that is slow or gone delays only its own calls, each for at most the call deadline.
//
// Thread-safety: thread-safe. Send() returns at once; one internal thread attaches the MUNGE
// credentials and starts the calls, gRPC's threads report their ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "auth/munge_auth.h"
#include "core/mutex.h"
#include "core/status.h"
#include "loom/v1/loom.grpc.pb.h"
#include "model/job.h"

namespace loom::ctld {

struct NodeLinksOptions {
  // How long one call may take before it counts as failed; a task launch gets per_step_node
  // more for each node of its step, which all start their supervisors at once and answer up
  // the TreeWidth tree.
  std::chrono::milliseconds deadline = std::chrono::seconds(10);
  std::chrono::milliseconds per_step_node = std::chrono::milliseconds(200);
  std::chrono::milliseconds prolog_deadline = std::chrono::seconds(60);
  // Called, on a gRPC thread, when the launch of `job` on node `node` (its name) did not
  // succeed: `why` is Unavailable when no connection to the node could be made (the launch
  // never reached it), DeadlineExceeded when the node's answer did not come (the launch may
  // have reached it), another code when the node refused it. Must not block for long.
  std::function<void(model::JobId job, const std::string& node, const Status& why)> launch_failed;
  // The same for the tasks of a job srun submitted, or of step `step` inside a job's
  // allocation, on node `node` (its name).
  std::function<void(model::JobId job, std::optional<uint32_t> step, const std::string& node,
                     const Status& why)>
      tasks_failed;
};

class NodeLinks {
 public:
  NodeLinks(const auth::MungeCredentials* munge, NodeLinksOptions options);
  // Drain()s first.
  ~NodeLinks();
  NodeLinks(const NodeLinks&) = delete;
  NodeLinks& operator=(const NodeLinks&) = delete;

  // Queues the call behind the earlier ones to the same address ("host:port") of `node`.
  void Launch(const std::string& address, std::string node, v1::LaunchBatchRequest request);
  // A task launch for `node`, which passes it on to the nodes in request.forward (TreeWidth):
  // tasks_failed is called for each node whose launch failed, as the node's answer names
  // them, and for all of them when `node` cannot be reached.
  void LaunchTasks(const std::string& address, std::string node, v1::LaunchTasksRequest request);
  void Signal(const std::string& address, v1::SignalTasksRequest request);
  // The job's allocation ended: the node ends what is left and runs its epilog (it answers
  // with EpilogComplete). Not retried here: the controller asks again while it waits.
  void Terminate(const std::string& address, v1::TerminateJobRequest request);
  // PrologFlags=Alloc: the node runs the job's prolog now; a failure is reported as a launch's
  // (launch_failed, PROLOG_FAILED). The call may take prolog_deadline.
  void RunProlog(const std::string& address, std::string node, v1::RunPrologRequest request);
  // Asks the node what a job's tasks use now (sstat) and waits for the answer, at most the
  // call deadline. Independent of the queued calls.
  StatusOr<v1::StepUsageReply> StepUsage(const std::string& address,
                                         const v1::StepUsageRequest& request);

  // Waits until every call queued so far has ended (answered, refused or past its deadline),
  // then stops the internal thread; later calls are dropped. Idempotent.
  void Drain();

  // Channels made so far (one per address), for tests.
  size_t channels() const;

 private:
  struct Call {
    model::JobId job = 0;
    std::unique_ptr<v1::LaunchBatchRequest> launch;  // set for a launch
    std::unique_ptr<v1::LaunchTasksRequest> tasks;   // set for srun's tasks, on `node`
    std::string node;
    std::unique_ptr<v1::SignalTasksRequest> signal;  // set for a signal
    std::unique_ptr<v1::TerminateJobRequest> terminate;  // set for an allocation's end
    std::unique_ptr<v1::RunPrologRequest> prolog;        // set for a prolog at allocation
  };
  // Everything about one address. Links live as long as this object.
  struct Link {
    std::string address;
    std::unique_ptr<v1::NodeDaemon::Stub> stub;
    std::deque<Call> queue;  // not yet started
    bool scheduled = false;  // waiting in ready_ or in flight
  };
  // The link to `address`, made (with its channel) on first use.
  Link* LinkFor(const std::string& address) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The sender has a link to start a call on, or is draining and nothing is in flight.
  bool SenderHasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !ready_.empty() || (draining_ && in_flight_ == 0);
  }
  struct InFlight;

  void Enqueue(const std::string& address, Call call);
  void SenderLoop();
  void Start(Link* link, Call call);
  void Finished(Link* link);

  const auth::MungeCredentials* const munge_;
  const NodeLinksOptions options_;

  mutable core::Mutex mu_;
  std::map<std::string, std::unique_ptr<Link>> links_ ABSL_GUARDED_BY(mu_);
  std::deque<Link*> ready_ ABSL_GUARDED_BY(mu_);  // links whose next call should start
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  std::thread sender_;
};

}  // namespace loom::ctld
