// conservative: conservative backfilling as in the published studies (SIM-CONVENTIONS.md,
// C1-C4). Every waiting job holds a reservation, kept across passes:
//  - a job without one is reserved at its earliest start on the timeline of running jobs
//    and existing reservations (C1);
//  - after a termination, jobs reserved later than now are taken out one at a time, in
//    queue order, and placed again at their earliest start, which is never later (C2);
//  - a job reserved at now starts, and is never re-placed (C3); starts of one pass are
//    ordered by when their start time was decided (C4).
#include <algorithm>
#include <vector>

#include "sched/backfill/policy.h"
#include "sched/priority/priority.h"

namespace loom::sched {
namespace {

class ConservativePolicy final : public Policy {
 public:
  explicit ConservativePolicy(const PolicyOptions& opts) : opts_(opts) {}
  std::string_view name() const override { return "conservative"; }

  void Pass(const PassInput& in, PassOutput* out) override {
    using model::PendingReason;
    policy_internal::BeginPass(in, out);
    const Cluster& cluster = *in.cluster;
    cluster_ = &cluster;
    LimitTally tally(in.limits);
    std::vector<int32_t> queue = QueueOrder(cluster, in.pending);
    uint64_t seq = in.next_decision_seq;

    // The reservations as they stand go on the timeline with the running jobs. One that no
    // longer fits (a node went away) is dropped and placed again below.
    planner_.Reset(cluster, in.now, in.running);
    res_.assign(in.pending.size(), std::nullopt);
    kept_.clear();
    for (int32_t idx : queue) {
      const PendingJob& job = in.pending[idx];
      if (!job.reservation || job.blocked != PendingReason::kNone) continue;
      if (!Usable(job, *job.reservation)) continue;
      res_[idx] = job.reservation;
      Time end = SaturatingAdd(job.reservation->start, job.estimate);
      for (const NodeAlloc& a : job.reservation->alloc) {
        kept_.push_back(Timeline::Interval{a.node, a.amount, job.reservation->start, end});
      }
    }
    if (!kept_.empty()) {
      // Without advance reservations the timeline itself tells (it holds nothing more).
      const bool fits = cluster.reservations.empty() || NoneOverbooked(in);
      planner_.Reset(cluster, in.now, in.running, kept_);
      if (!fits || (cluster.reservations.empty() && Overbooked(planner_.timeline()))) {
        // Some reservation collides with another (capacity shrank): place them all anew.
        res_.assign(in.pending.size(), std::nullopt);
        planner_.Reset(cluster, in.now, in.running);
      }
    }

    Allocation alloc;
    for (int32_t idx : queue) {
      const PendingJob& job = in.pending[idx];
      PendingReason r = policy_internal::UnschedulableReason(cluster, job);
      if (r != PendingReason::kNone) {
        out->reasons[idx] = r;
        continue;
      }
      std::optional<Reservation>& res = res_[idx];
      // Held by a limit: no reservation (a kept one goes), no start.
      if (!policy_internal::WithinLimits(tally, in, idx, out)) {
        if (res) planner_.Release(res->alloc, res->start, job.estimate);
        res.reset();
        continue;
      }
      if (res && res->start <= in.now) {  // C3: counts as started
        tally.Charge(job);
        continue;
      }
      if (res && in.trigger != PassTrigger::kTermination) continue;  // only C2 compresses
      ++out->stats.jobs_tested;
      if (res) {
        planner_.Release(res->alloc, res->start, job.estimate);
        Time t = planner_.EarliestStart(job, in.now, res->start, 1, &alloc);
        if (t < res->start) {
          res = Reservation{t, std::move(alloc), seq++};
        }
        planner_.Hold(res->alloc, res->start, job.estimate);
        if (res->start <= in.now) tally.Charge(job);
        continue;
      }
      Time t = planner_.EarliestStart(job, in.now, kNever, 1, &alloc);
      if (t >= kNever) {
        out->reasons[idx] = policy_internal::WaitReason(planner_, job, PendingReason::kResources);
        continue;
      }
      res = Reservation{t, std::move(alloc), seq++};
      planner_.Hold(res->alloc, t, job.estimate);
      if (t <= in.now) tally.Charge(job);
      ++out->stats.reservations;
    }

    // Starts, in the order their start times were decided; the rest keep reservations.
    starting_.clear();
    backfilled_.assign(in.pending.size(), 0);
    bool first_waiting = true;
    for (int32_t idx : queue) {
      const std::optional<Reservation>& res = res_[idx];
      if (!res) continue;
      if (res->start <= in.now) {
        starting_.push_back(idx);
        backfilled_[idx] = !first_waiting;
      } else {
        out->reservations.emplace_back(idx, *res);
        out->reasons[idx] = first_waiting ? PendingReason::kResources : PendingReason::kPriority;
        first_waiting = false;
      }
    }
    std::stable_sort(starting_.begin(), starting_.end(), [&](int32_t a, int32_t b) {
      return res_[a]->decided_seq < res_[b]->decided_seq;
    });
    for (int32_t idx : starting_) {
      // The resources are already held on the timeline from the reservation; a
      // reservation made in an earlier pass gets its devices now.
      planner_.AssignDevices(&res_[idx]->alloc);
      out->reasons[idx] = PendingReason::kNone;
      out->starts.push_back(JobStart{idx, res_[idx]->alloc, backfilled_[idx] != 0});
      ++out->stats.started;
      out->stats.backfilled += backfilled_[idx];
    }
    out->next_decision_seq = seq;
  }

 private:
  // Whether a job's reservation still holds: its nodes exist and take work, and it keeps
  // to the advance reservations (inside the one it names while that is active, off the
  // nodes of any other while it is).
  bool Usable(const PendingJob& job, const Reservation& r) const {
    const Time end = SaturatingAdd(r.start, job.estimate);
    for (const NodeAlloc& a : r.alloc) {
      if (a.node < 0 || a.node >= static_cast<int32_t>(cluster_->nodes.size())) return false;
      if (!cluster_->nodes[a.node].Schedulable()) return false;
      for (size_t i = 0; i < cluster_->reservations.size(); ++i) {
        const AdvanceReservation& adv = cluster_->reservations[i];
        const bool on = std::find(adv.nodes.begin(), adv.nodes.end(), a.node) != adv.nodes.end();
        if (job.advance_reservation == static_cast<int32_t>(i)) {
          if (!on || r.start < adv.start || r.start >= adv.end) return false;
        } else if (on && r.start < adv.end && end > adv.start) {
          return false;
        }
      }
    }
    return true;
  }
  // Whether the running jobs and the kept reservations fit the nodes together (advance
  // reservations aside: those hold their nodes whole, under their own jobs' work).
  bool NoneOverbooked(const PassInput& in) {
    check_.clear();
    for (const RunningJob& r : in.running) {
      if (r.end <= in.now) continue;
      for (const NodeAlloc& a : r.alloc) check_.push_back({a.node, a.amount, in.now, r.end});
    }
    check_.insert(check_.end(), kept_.begin(), kept_.end());
    caps_.clear();
    for (const model::Node& n : cluster_->nodes) caps_.push_back(n.capacity);
    scratch_.Build(caps_, in.now, check_);
    return !Overbooked(scratch_);
  }
  static bool Overbooked(const Timeline& t) {
    for (int32_t n = 0; n < t.num_nodes(); ++n) {
      if (t.Overbooked(n)) return true;
    }
    return false;
  }
  Timeline scratch_;
  std::vector<Timeline::Interval> check_;
  std::vector<Resources> caps_;

  PolicyOptions opts_;
  Planner planner_;
  const Cluster* cluster_ = nullptr;
  std::vector<std::optional<Reservation>> res_;
  std::vector<Timeline::Interval> kept_;
  std::vector<int32_t> starting_;
  std::vector<char> backfilled_;
};

}  // namespace

std::unique_ptr<Policy> MakeConservativePolicy(const PolicyOptions& opts) {
  return std::make_unique<ConservativePolicy>(opts);
}

}  // namespace loom::sched
