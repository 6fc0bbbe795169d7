// Value types shared by the scheduling core: time, allocations, running and pending jobs,
// and the input and output of one scheduling pass. Pure values; thread-compatible.
//
// The core never reads a clock: every pass is given `now`. Times are seconds on any epoch
// the driver chooses (trace time in the simulator, Unix time in the controller).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/cpu_set.h"
#include "core/tres.h"
#include "model/cluster_topology.h"
#include "model/job_state.h"
#include "model/node.h"
#include "model/partition.h"
#include "model/resources.h"

namespace loom::sched {

struct LimitTable;

using Time = int64_t;
// A time later than any real one: "never" for searches, "forever" for interval ends.
inline constexpr Time kNever = INT64_MAX / 4;

inline Time SaturatingAdd(Time t, int64_t d) { return (d >= kNever - t) ? kNever : t + d; }

using model::Resources;
using JobId = uint64_t;

// The part of one node that a job holds. On a node with a known topology, a job that
// starts also gets exact devices: which GPUs (CUDA_VISIBLE_DEVICES) and which CPUs (its CPU
// mask). Reservations for later hold amounts only; devices are chosen when the job starts.
struct NodeAlloc {
  NodeAlloc() = default;
  NodeAlloc(int32_t n, Resources a) : node(n), amount(a) {}
  int32_t node = 0;  // index into Cluster::nodes
  Resources amount;
  model::GpuMask gpu_ids = 0;
  core::CpuSet cpu_ids;
  friend bool operator==(const NodeAlloc&, const NodeAlloc&) = default;
};
using Allocation = std::vector<NodeAlloc>;

// How nodes and devices are chosen among those that fit. kTopology: fewest NVLink domains,
// PCIe switches and NUMA nodes inside a node, lowest switch level across nodes, best fit
// at every level. kFirstFit: lowest-index nodes (in selection order) and devices, what a
// topology-blind scheduler does; kept as the reference to measure placement against.
enum class Placement : uint8_t { kTopology, kFirstFit };

// An advance reservation (scontrol create reservation): over [start, end) its nodes are
// kept whole for the jobs that name it (--reservation); no other job may hold any part of
// them then. Recurring reservations are rolled forward by the driver (resv/).
struct AdvanceReservation {
  std::string name;
  std::vector<int32_t> nodes;  // indices into Cluster::nodes
  Time start = 0;
  Time end = 0;
  bool maint = false;  // MAINT: jobs kept off its nodes wait "Reserved for maintenance"
};

// The static picture of the cluster for a pass: nodes, partitions and advance reservations.
// A driver that changes them in place bumps `generation`, so that what a planner derived
// from them (which nodes each kind of job may use) is derived again.
struct Cluster {
  std::vector<model::Node> nodes;
  std::vector<model::Partition> partitions;
  std::vector<AdvanceReservation> reservations;
  model::ClusterTopology topology;  // switches or blocks between nodes; flat when unknown
  Placement placement = Placement::kTopology;
  uint64_t generation = 0;
};

struct RunningJob {
  JobId id = 0;
  Allocation alloc;
  Time start = 0;
  Time end = 0;  // predicted end: start + time limit (or estimate); kNever when unlimited
};

// A reservation a job holds across passes (conservative backfilling keeps them).
struct Reservation {
  Time start = 0;
  Allocation alloc;
  uint64_t decided_seq = 0;  // when this start time was last decided (a global counter)
};

struct PendingJob {
  JobId id = 0;
  Time submit = 0;
  int64_t priority = 0;     // higher runs first; ties by submit time, then id
  int32_t partition = 0;    // index into Cluster::partitions
  std::string constraint;   // --constraint expression, empty for none
  // -w: the nodes the job must have (a hostlist; it may have others when it needs more);
  // -x: nodes it may not have. Empty: none.
  std::string nodelist;
  std::string exclude;
  // --reservation: index into Cluster::reservations; -1 for none. Such a job runs only on
  // the reservation's nodes and starts only while it is active.
  int32_t advance_reservation = -1;
  model::JobShape shape;
  int64_t estimate = 0;     // seconds the scheduler assumes the job runs (its time limit)
  // A job that may not start for a reason other than resources (held, dependency, begin
  // time) has blocked = that reason; the scheduler only reports it.
  model::PendingReason blocked = model::PendingReason::kNone;
  std::optional<Reservation> reservation;
  // Association and QOS limits (limits/limits.h): the scopes of PassInput::limits the job
  // counts against, and what it counts there (cpu, mem, node, billing, gres/gpu[:type]).
  std::vector<int32_t> limit_scopes;
  core::TresVector limit_tres;
  // What it may use over its time limit, in TRES-seconds (GrpTRESMins).
  core::TresVector limit_tres_secs;
};

// What caused a pass; reference policies act differently on each (SIM-CONVENTIONS.md).
// kSubmit: a job arrived (or became eligible: released, its dependency or begin time met);
// kTermination: resources were freed (a job ended, a node came back); kPeriodic: the
// policy's periodic cycle (the `slurm` policy's backfill, every bf_interval); kMain: the
// main pass over the whole queue without backfill (Slurm's sched_interval). When each
// falls is decided by one Cadence (cadence.h) in both drivers.
enum class PassTrigger : uint8_t { kSubmit, kTermination, kPeriodic, kMain };

struct PassInput {
  const Cluster* cluster = nullptr;
  std::span<const RunningJob> running;
  std::span<const PendingJob> pending;  // any order; the pass orders them by priority
  Time now = 0;
  PassTrigger trigger = PassTrigger::kPeriodic;
  uint64_t next_decision_seq = 0;
  // Limits on what runs at once (null: none): no pass starts a job they forbid.
  const LimitTable* limits = nullptr;
};

struct JobStart {
  int32_t pending_index = 0;  // index into PassInput::pending
  Allocation alloc;
  bool backfilled = false;  // started out of priority order
};

struct PassStats {
  int64_t jobs_tested = 0;    // pending jobs the pass looked at
  int64_t reservations = 0;   // reservations made
  int64_t started = 0;
  int64_t backfilled = 0;
};

struct PassOutput {
  std::vector<JobStart> starts;  // in start order
  // Persistent reservations after the pass, by pending index (policies that keep them).
  std::vector<std::pair<int32_t, Reservation>> reservations;
  // Reservations made and dropped within this pass (EASY's head, Slurm's blocked jobs),
  // by pending index. Reported so the backfill invariant can be checked.
  std::vector<std::pair<int32_t, Reservation>> transient_reservations;
  std::vector<model::PendingReason> reasons;  // per pending index (kNone for started jobs)
  uint64_t next_decision_seq = 0;
  PassStats stats;
};

}  // namespace loom::sched
