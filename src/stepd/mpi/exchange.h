// The collectives of one step's MPI wire-up, as the step's supervisors on its nodes carry
// them out between themselves (through their loomds: relay_channel.h carries the messages).
//
// A fence gathers every node's data and gives all of it to every node. It travels a tree:
// node 0 is the root and stands where the controller stands for a launch; the other nodes
// hang below it as core::FanoutTree arranges them with slurm.conf's TreeWidth, so a fence
// over N nodes takes about 2·log_width(N) hops and no node talks to more than `width` others.
// Each node waits for its own ranks' part and for one contribution from each child, passes
// the lot up (the root: down, as a release, which every node passes on to its children).
// Fences are numbered in the order the node's ranks make them; every node makes them in the
// same order, which is what MPI's collective semantics guarantee.
//
// A direct modex asks the one node that holds a rank for that rank's data. An abort goes to
// every node.
//
// Thread-safe: the wire-up library's threads start collectives while the channel's thread
// delivers messages; callbacks run outside the lock, on whichever thread completed them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "loom/v1/loom.pb.h"

namespace loom::stepd {

// Node `me`'s place in the tree of `count` nodes with fan-out `width`.
struct TreeLinks {
  int32_t parent = -1;            // -1 for the root
  std::vector<int32_t> children;  // ascending
  friend bool operator==(const TreeLinks&, const TreeLinks&) = default;
};
TreeLinks StepTreeLinks(int32_t count, int32_t width, int32_t me);

class StepExchange {
 public:
  // Sends `message` to each of `nodes` (indices in the step's nodes).
  using Send = std::function<void(const std::vector<int32_t>& nodes, const v1::StepMessage&)>;
  using FenceDone = std::function<void(std::string all)>;
  using ModexDone = std::function<void(int32_t status, std::string data)>;
  // Another node asks for the data of `rank`, one of this node's; answer through `reply`.
  using ModexServe = std::function<void(uint32_t rank, ModexDone reply)>;
  using OnAbort = std::function<void(const v1::StepMessage::Abort&)>;

  StepExchange(int32_t count, int32_t width, int32_t me, Send send);
  void SetModexServe(ModexServe serve);
  void SetOnAbort(OnAbort on_abort);

  // This node's part of its next fence; `done` gets every node's parts, one after another
  // (the order of the nodes' parts is not defined).
  void Fence(std::string local, FenceDone done);
  // The data of `rank`, held by node `node`.
  void Modex(int32_t node, uint32_t rank, ModexDone done);
  // Tells every other node that the step aborts.
  void Abort(const v1::StepMessage::Abort& abort);
  // A message from node `from`.
  void Receive(int32_t from, const v1::StepMessage& message);

  const TreeLinks& links() const { return links_; }
  int32_t count() const { return count_; }

 private:
  struct PendingFence {
    bool local_in = false;
    size_t children_in = 0;
    std::string data;  // this node's part and its children's, as they came
    FenceDone done;
  };
  // Passes fence `seq` on once this node's part and every child's are in. Returns what to
  // run outside the lock.
  std::function<void()> Advance(uint64_t seq) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::function<void()> Release(uint64_t seq, std::string all) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int32_t count_;
  const int32_t me_;
  const TreeLinks links_;
  const Send send_;
  core::Mutex mu_;
  ModexServe serve_ ABSL_GUARDED_BY(mu_);
  OnAbort on_abort_ ABSL_GUARDED_BY(mu_);
  uint64_t next_fence_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, PendingFence> fences_ ABSL_GUARDED_BY(mu_);
  uint64_t next_modex_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, ModexDone> modex_ ABSL_GUARDED_BY(mu_);
};

}  // namespace loom::stepd
