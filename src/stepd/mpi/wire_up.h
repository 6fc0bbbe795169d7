// MPI wire-up of a step's tasks on one node (srun --mpi, SLURM_MPI_TYPE, MpiDefault): before
// the tasks start, the supervisor becomes the server the MPI library inside each task talks
// to (PMIx, or PMI-2 for MPICH-family libraries), tells it where every rank of the step runs,
// and, while the tasks run, carries out their collectives with the step's other nodes
// (StepExchange, through loomd). It stops once the tasks have all ended.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "core/status.h"
#include "stepd/mpi/exchange.h"
#include "stepd/mpi/relay_channel.h"
#include "stepd/step_launcher.h"

namespace loom::stepd {

// What `step`'s environment asks for (SLURM_MPI_TYPE, which srun sets from --mpi or
// MpiDefault; conf::kMpiTypes): "" (none), "pmix" or "pmi2".
std::string MpiTypeOf(const StepJob& step);

// Where a step's wire-up server keeps its files on node `node`: a private directory
// named this prefix and six random characters, under /dev/shm (or /tmp where there is none).
// `step` unset: the only step of a job srun submitted.
std::string WireUpDirPrefix(uint64_t job, std::optional<uint32_t> step, const std::string& node);
// Removes the wire-up directories of a step whose supervisor died without removing them.
void RemoveWireUpDirs(uint64_t job, std::optional<uint32_t> step, const std::string& node);

// The step as the wire-up sees it from this node.
struct WireUpStep {
  uint64_t job_id = 0;
  std::optional<uint32_t> step_id;          // unset: the only step of a job srun submitted
  std::vector<std::string> nodes;           // the step's nodes, in its order
  std::vector<std::vector<int32_t>> ranks;  // the ranks (task ids) on each of them
  int32_t me = 0;                           // this node's index in `nodes`
  std::vector<std::string> addresses;       // each node's loomd
  int32_t tree_width = 50;
  uint32_t uid = 0;  // whose tasks: the server's files are theirs
  uint32_t gid = 0;
  std::string work_dir;
  // The user chose where Open MPI's shared-memory transport keeps its segments
  // (OMPI_MCA_btl_vader_backing_directory or OMPI_MCA_btl_sm_backing_directory).
  bool shared_memory_dir_given = false;
  int32_t size() const;  // every rank of the step
  // "JOB.STEP" ("JOB.0" for the only step of a job srun submitted), as PMIx job ids and the
  // servers' namespaces name the step.
  std::string JobStep() const;
  // The node that runs `rank`; -1 for none.
  int32_t NodeOf(uint32_t rank) const;
};
// The layout of `step` (this node's share of it) for its wire-up. InvalidArgument when the
// launch did not say where the other nodes' loomds are.
StatusOr<WireUpStep> WireUpStepOf(const StepJob& step);

// Called when a rank aborts (MPI_Abort) here or on another node: the step's tasks here end.
using AbortStep = std::function<void(const std::string& why)>;

// The step's collectives on this node (StepExchange) wired to the other nodes through its
// loomd (RelayChannel), and the end of the step here when a rank aborts, on any node.
// Thread-safe.
class StepLink {
 public:
  // `name` names the step in the log (the server's namespace).
  StepLink(const WireUpStep& step, std::string name, AbortStep abort_step);
  ~StepLink() { Close(); }
  StepLink(const StepLink&) = delete;
  StepLink& operator=(const StepLink&) = delete;

  // Set its handlers before Connect: messages may come at once.
  StepExchange& exchange() { return *exchange_; }
  // Connects to loomd's socket `relay_socket` (a step on one node needs nothing).
  Status Connect(const std::string& relay_socket);
  // Nothing more comes in or goes out; waits for a message being handed in to be done.
  void Close();
  // A rank on this node aborted: the step ends here and on every other node.
  void Abort(const v1::StepMessage::Abort& abort);

 private:
  // Logs why and ends the step's tasks here.
  void EndStep(const v1::StepMessage::Abort& abort);

  const WireUpStep step_;
  const std::string name_;
  const AbortStep abort_step_;
  std::unique_ptr<StepExchange> exchange_;
  core::Mutex mu_;
  std::unique_ptr<RelayChannel> channel_ ABSL_GUARDED_BY(mu_);
};

// A running wire-up server for the step's tasks on this node.
class WireUp {
 public:
  virtual ~WireUp() = default;
  // What task `rank` (one of this node's) adds to its environment; called before it starts.
  virtual StatusOr<std::map<std::string, std::string>> TaskEnvironment(int32_t rank) = 0;
  // A descriptor task `rank` inherits under the same number (PMI_FD); -1 for none.
  virtual int TaskDescriptor(int32_t /*rank*/) { return -1; }
  // Task `rank` has started (or failed to): its inherited descriptor may be closed here.
  virtual void TaskStarted(int32_t /*rank*/) {}
};

// Starts the wire-up `step` asks for (null when none), reaching the other nodes through the
// loomd socket `relay_socket`. Errors name what is missing, such as the PMIx library.
StatusOr<std::unique_ptr<WireUp>> StartWireUp(const StepJob& step, const std::string& relay_socket,
                                              AbortStep abort_step);

}  // namespace loom::stepd
