// The planner a policy works with during one pass: the availability timeline built from the
// running jobs, plus the questions policies ask of it — can this job start at t, when is the
// earliest it can start, reserve or release its resources. Also caches, per pass, which
// nodes each kind of job may use (partition, node state, --constraint, GPU type).
//
// Searches stay fast on large clusters without changing their answers:
//  - a FreeIndex over the nodes (in selection order) finds the nodes with enough free now;
//  - a node can first fit a job at now or where one of its steps begins, so later starts
//    are found by sweeping the cluster's step boundaries in time order, stopping at the
//    best start found so far;
//  - within a pass nothing is freed (except by Release), so a single-node job cannot start
//    before a job with a smaller request and a shorter estimate could: those results are
//    remembered per kind of job and used as lower bounds.
// Not thread-safe; one planner per pass.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/plan/free_index.h"
#include "sched/plan/timeline.h"
#include "sched/select/selector.h"
#include "sched/types.h"

namespace loom::sched {

// The indices of the nodes a hostlist (-w, -x) names, each once; nullopt when it is not a
// hostlist or names a node the cluster lacks. Empty for an empty list.
std::optional<std::vector<int32_t>> NodesNamed(const Cluster& c, std::string_view hostlist);

class Planner {
 public:
  // Rebuilds the timeline at `now` from the running jobs: each holds its allocation over
  // [now, end). A job whose predicted end is not after `now` holds nothing. `also_held`
  // adds more holdings at once (kept reservations), cheaper than Hold() one by one.
  void Reset(const Cluster& cluster, Time now, std::span<const RunningJob> running,
             std::span<const Timeline::Interval> also_held = {});

  Time now() const { return now_; }
  const Timeline& timeline() const { return timeline_; }

  // The nodes `job` may use, in selection order (Weight, then configuration order).
  // Empty when none qualifies; `reason` then says why.
  const std::vector<int32_t>& Eligible(const PendingJob& job, model::PendingReason* reason);

  // Whether `job` fits over [start, start + estimate); fills `out` with its allocation.
  // A job of an advance reservation fits only on its nodes, starting while it is active.
  bool FitsAt(const PendingJob& job, Time start, Allocation* out);
  // Earliest start in [from, limit) at which `job` fits for its estimate, or kNever.
  // Start times after now are rounded up to a multiple of `resolution`. Among nodes that
  // allow the same earliest start, selection order decides.
  Time EarliestStart(const PendingJob& job, Time from, Time limit, int64_t resolution,
                     Allocation* out);

  // Why `job`, which does not fit, waits when advance reservations are the cause: kReservation
  // for a job whose reservation has not started, kReservedForMaintenance for one whose
  // nodes a MAINT reservation takes over its time limit; else kNone.
  model::PendingReason ReservationReason(const PendingJob& job);

  // Test hook: up to this many eligible nodes (default 32), a single-node search asks
  // every node rather than sweeping step boundaries. Both give the same answers.
  void set_small_set_for_testing(size_t n) { small_set_ = n; }

  // Holds `alloc` over [start, start + duration) / gives it back. An allocation that
  // starts now holds its device ids too.
  void Hold(const Allocation& alloc, Time start, int64_t duration);
  void Release(const Allocation& alloc, Time start, int64_t duration);

  // Gives the parts of `alloc` on nodes with a known topology that have no device ids yet
  // (a reservation whose time has come) GPUs and CPUs from those free now, and holds them.
  // The amounts must already be held on the timeline.
  void AssignDevices(Allocation* alloc);

 private:
  // A single-node search's answer, kept as a lower bound for larger, longer requests.
  struct Memo {
    Resources need;
    int64_t duration;
    Time limit;
    int64_t resolution;
    Time result;
  };
  // The nodes one kind of job may use. Passes see few kinds (partition, constraint and
  // GPU type combinations), so a short list searched in order beats hashing a key.
  struct EligibleSet {
    int32_t partition = -1;
    std::string constraint;
    std::string gpu_type;
    std::string nodelist;       // -w
    std::string exclude;        // -x
    int32_t reservation = -1;   // --reservation: only its nodes
    int32_t max_nodes = 0;      // the job's, when it names nodes (-w): only they, or more
    std::vector<int32_t> required;  // -w's nodes, first in `nodes`; all in every placement
    std::vector<int32_t> nodes;  // in selection order
    std::vector<char> member;    // by node index
    int32_t max_gpus = 0;        // the most GPUs one of the nodes has
    int32_t max_leaf_nodes = 0;  // the most of the nodes under one leaf switch (block)
    model::PendingReason reason = model::PendingReason::kNone;
    std::vector<Memo> memo;
    size_t memo_next = 0;
  };
  EligibleSet& SetFor(const PendingJob& job);
  // Advance reservations: every active or future one holds its nodes whole on the timeline
  // (Reset). A search for one of its jobs takes that holding off for the search's length
  // (OpenReservation), so that its jobs see the nodes with only each other's work on them.
  // Within a pass only searches take holdings off, and they put them back: what other
  // searches see still only grows, which the single-node lower bounds rely on.
  const AdvanceReservation* ReservationOf(const PendingJob& job) const;
  void HoldReservation(const AdvanceReservation& r, bool hold);
  class OpenReservation;
  bool FitsAtOpen(const PendingJob& job, Time start, Allocation* out);
  Time EarliestStartOpen(const PendingJob& job, Time from, Time limit, int64_t resolution,
                         Allocation* out);
  void Fill(EligibleSet& set) const;
  // What the FreeIndex is asked for: the least a node must have free now.
  static Resources Probe(const model::JobShape& shape);
  void Touch(int32_t node, Time start, Time end);
  Resources FreeNow(int32_t node) const;

  bool FitsNow(const PendingJob& job, EligibleSet& set, Allocation* out);
  // Chooses among `cands` (all fit the job's least per-node need over [start, start +
  // estimate)) by the cluster's placement: topology-aware or first fit. At now, device
  // ids are chosen as well.
  bool Choose(const PendingJob& job, const EligibleSet& set, Time start,
              std::span<Candidate> cands, Allocation* out);
  // Choose without the check that the nodes the job names (-w) are all in it.
  bool ChooseAny(const PendingJob& job, const EligibleSet& set, Time start,
                 std::span<Candidate> cands, Allocation* out);
  bool ChooseOneNode(const PendingJob& job, Time start, std::span<const Candidate> cands,
                     Allocation* out);
  // Nodes under the tightest leaf switch (block), else the lowest switch above, that holds
  // the job; with `leaf_only`, under one leaf or not at all.
  bool ChooseAcrossSwitches(const PendingJob& job, std::span<Candidate> cands, bool leaf_only,
                            Allocation* out);
  // --segment on a cluster of blocks: whole segments from as few blocks as can hold them.
  bool ChooseSegments(const PendingJob& job, std::span<const Candidate> cands, Allocation* out);
  // Device ids for the parts of `alloc` on nodes with a topology, from those free now.
  void PickDevices(Allocation* alloc) const;
  void TakeDevices(const NodeAlloc& a, bool take);
  bool TopologyAware() const;
  // How many leaf switches (blocks) a job may span, and until when (then any number).
  struct LeafLimit {
    int32_t max_leaves = 0;  // 0: any number
    Time until = 0;
  };
  LeafLimit LeafLimitFor(const PendingJob& job, const EligibleSet& set) const;
  // A --gpus=N job that one node can hold, which topology-aware placement keeps on one.
  bool OneNodeJob(const PendingJob& job, const EligibleSet& set) const;
  PendingJob one_node_job_;
  Time EarliestSingleNode(const PendingJob& job, EligibleSet& set, Time limit,
                          int64_t resolution, Allocation* out);
  Time EarliestMultiNode(const PendingJob& job, EligibleSet& set, Time limit,
                         int64_t resolution, Allocation* out);
  // The direct search every node at a time; used when `from` is later than now.
  Time EarliestByScan(const PendingJob& job, EligibleSet& set, Time from, Time limit,
                      int64_t resolution, Allocation* out);
  bool FitsByScan(const PendingJob& job, const EligibleSet& set, Time start, Allocation* out);

  size_t small_set_ = 32;
  const Cluster* cluster_ = nullptr;
  uint64_t generation_ = 0;
  Time now_ = 0;
  Timeline timeline_;
  std::vector<int32_t> node_order_;  // all nodes by (weight, index)
  std::vector<int32_t> pos_;         // node -> its place in node_order_
  std::vector<EligibleSet> eligible_cache_;
  size_t last_eligible_ = 0;
  // Step boundaries after now, as (time, node), in time order: those on the timeline when
  // a search first needed them, sorted once, and those added since (few on small clusters).
  using Event = std::pair<Time, int32_t>;
  class EventCursor;
  void EnsureEvents();
  EventCursor EventsFrom(Time t) const;
  bool events_built_ = false;
  std::vector<Event> events_base_;
  std::set<Event> events_added_;
  FreeIndex free_now_;  // by position in node_order_

  // Devices free now, by node (only nodes with a topology have any); CPU ids are tracked
  // where the topology lists as many CPUs as the node has.
  std::vector<model::GpuMask> free_gpus_;
  std::vector<core::CpuSet> free_cpus_;
  std::vector<char> has_devices_;
  std::vector<char> tracks_cpus_;
  bool any_devices_ = false;
  std::vector<int32_t> free_now_gpus_;   // by node
  std::vector<int64_t> leaf_free_gpus_;  // by leaf switch (block)
  int32_t LeafOf(int32_t node) const {
    const auto& leaf_of = cluster_->topology.leaf_of;
    return node < static_cast<int32_t>(leaf_of.size()) ? leaf_of[node] : -1;
  }

  std::vector<Resources> caps_;
  std::vector<Resources> scratch_free_;
  std::vector<Timeline::Interval> holdings_;
  std::vector<Candidate> scratch_;
  std::vector<int32_t> scratch_nodes_;
};

}  // namespace loom::sched
