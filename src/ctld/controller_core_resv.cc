// Advance reservations in the controller: made, changed and deleted by scontrol, checked
// against the nodes, the running jobs and each other, rolled forward when they recur, and
// handed to the scheduler as sched::AdvanceReservation (the planner keeps everyone else off
// their nodes while they are active).
#include <algorithm>

#include "core/strings.h"
#include "ctld/controller_core.h"
#include "model/constraint.h"

namespace loom::ctld {

using core::StrCat;
using model::JobState;

namespace {

Status Denied() { return absl::PermissionDeniedError("Access/permission denied"); }
Status InvalidReservation() {
  return absl::InvalidArgumentError("Requested reservation is invalid");
}

bool Overlap(const ReservationRecord& a, const ReservationRecord& b) {
  return a.start < b.end && b.start < a.end;
}

std::string_view NameIn(const ControllerCore::Words& words) {
  for (const auto& [key, value] : words) {
    if (IsReservationNameKey(key)) return value;
  }
  return {};
}

}  // namespace

void ControllerCore::SyncReservations() {
  cluster_.reservations.clear();
  for (const auto& [name, r] : reservations_) {
    sched::AdvanceReservation a;
    a.name = name;
    a.start = r.start;
    a.end = r.end;
    a.maint = (r.flags & kResvMaint) != 0;
    const bool all = r.nodes.size() == 1 && r.nodes[0] == "ALL";
    for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
      if (all ||
          std::find(r.nodes.begin(), r.nodes.end(), cluster_.nodes[n].name) != r.nodes.end()) {
        a.nodes.push_back(static_cast<int32_t>(n));
      }
    }
    cluster_.reservations.push_back(std::move(a));
  }
  ++cluster_.generation;
  pass_due_ = true;
}

int32_t ControllerCore::ReservationIndex(std::string_view name) const {
  for (size_t i = 0; i < cluster_.reservations.size(); ++i) {
    if (cluster_.reservations[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

bool ControllerCore::ReservationBusy(std::string_view name) const {
  for (JobId id : live_) {
    const JobEntry& e = jobs_.at(id);
    if (e.request->reservation == name) return true;
  }
  return false;
}

Status ControllerCore::PlaceReservation(ReservationRecord* r, const ReservationAsk& ask) const {
  int32_t partition = -1;
  if (!r->partition.empty()) {
    for (size_t p = 0; p < cluster_.partitions.size(); ++p) {
      if (cluster_.partitions[p].name == r->partition) partition = static_cast<int32_t>(p);
    }
    if (partition < 0) return absl::InvalidArgumentError("Invalid partition name specified");
  }
  StatusOr<model::FeatureExpr> features = model::FeatureExpr::Parse(r->features);
  if (!features.ok()) return absl::InvalidArgumentError("Invalid feature specification");
  // Per node: whether another reservation at the same time has it (named nodes may share
  // with a MAINT one, or when either may OVERLAP; NodeCnt= takes none of them), and whether
  // a job that is not this reservation's holds it into the window.
  const bool choosing = !ask.nodes_set && (r->nodes.empty() || ask.node_count > 0);
  std::vector<char> taken(cluster_.nodes.size(), 0), busy(cluster_.nodes.size(), 0);
  for (const auto& [name, other] : reservations_) {
    if (name == r->name || !Overlap(*r, other)) continue;
    const bool may_share = (r->flags & (kResvOverlap | kResvMaint)) || (other.flags & kResvMaint);
    if (may_share && !choosing) continue;
    const int32_t idx = ReservationIndex(name);
    if (idx < 0) continue;
    for (int32_t n : cluster_.reservations[idx].nodes) taken[n] = 1;
  }
  if (!(r->flags & kResvIgnoreJobs)) {
    for (JobId id : live_) {
      const JobEntry& e = jobs_.at(id);
      if (e.job.state == JobState::kPending || e.request->reservation == r->name) continue;
      const Time end = e.job.time_limit_s >= core::kUnlimitedSeconds
                           ? sched::kNever
                           : sched::SaturatingAdd(e.job.start_time, e.job.time_limit_s);
      if (end <= r->start && !e.completing) continue;
      for (const sched::NodeAlloc& a : e.alloc()) busy[a.node] = 1;
    }
  }
  if (!choosing) {
    if (r->nodes.size() == 1 && r->nodes[0] == "ALL") {
      r->nodes.clear();
      for (const model::Node& n : cluster_.nodes) r->nodes.push_back(n.name);
    }
    for (const std::string& name : r->nodes) {
      const auto it = std::find_if(cluster_.nodes.begin(), cluster_.nodes.end(),
                                   [&](const model::Node& n) { return n.name == name; });
      if (it == cluster_.nodes.end()) {
        return absl::InvalidArgumentError(StrCat("Invalid node name specified: ", name));
      }
      const size_t n = static_cast<size_t>(it - cluster_.nodes.begin());
      if (taken[n]) {
        return absl::InvalidArgumentError(
            "Requested reservation overlaps with another reservation");
      }
      if (busy[n]) return absl::InvalidArgumentError("Requested nodes are busy");
    }
    if (ask.node_count > static_cast<int32_t>(r->nodes.size())) {
      return absl::InvalidArgumentError("Requested node configuration is not available");
    }
    return absl::OkStatus();
  }
  // NodeCnt=: the first that are free for the window, from the partition named (else the
  // default one, else all nodes), in the order the scheduler would use them.
  if (partition < 0) {
    for (size_t p = 0; p < cluster_.partitions.size(); ++p) {
      if (cluster_.partitions[p].is_default) partition = static_cast<int32_t>(p);
    }
  }
  std::vector<int32_t> candidates;
  if (partition >= 0) {
    candidates = cluster_.partitions[partition].nodes;
  } else {
    for (size_t n = 0; n < cluster_.nodes.size(); ++n)
      candidates.push_back(static_cast<int32_t>(n));
  }
  std::stable_sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
    return cluster_.nodes[a].weight < cluster_.nodes[b].weight;
  });
  r->nodes.clear();
  for (int32_t n : candidates) {
    if (static_cast<int32_t>(r->nodes.size()) == ask.node_count) break;
    const model::Node& node = cluster_.nodes[n];
    if (taken[n] || busy[n] || !node.Schedulable() || !features->Matches(node.features)) continue;
    r->nodes.push_back(node.name);
  }
  if (static_cast<int32_t>(r->nodes.size()) < ask.node_count) {
    return absl::InvalidArgumentError("Requested nodes are busy");
  }
  // Cluster order, as Slurm lists them.
  std::vector<std::string> ordered;
  for (const model::Node& node : cluster_.nodes) {
    if (std::find(r->nodes.begin(), r->nodes.end(), node.name) != r->nodes.end()) {
      ordered.push_back(node.name);
    }
  }
  r->nodes = std::move(ordered);
  return absl::OkStatus();
}

StatusOr<std::string> ControllerCore::CreateReservation(const Words& words, const Caller& who,
                                                        Time now, Effects* fx) {
  if (who.uid != 0 && who.uid != opt_.slurm_user_uid) return Denied();
  ReservationRecord r;
  ReservationAsk ask;
  RETURN_IF_ERROR(ApplyReservationWords(words, /*creating=*/true, now, &r, &ask));
  if (r.name.empty()) {
    // Slurm's made-up name: the first user (else account, else the caller) and a number.
    const std::string base = !r.users.empty()      ? r.users[0]
                             : !r.accounts.empty() ? r.accounts[0]
                                                   : who.user;
    do {
      r.name = StrCat(base, "_", ++resv_serial_);
    } while (reservations_.count(r.name) != 0);
  } else if (reservations_.count(r.name) != 0) {
    return absl::AlreadyExistsError("Duplicate reservation name");
  }
  if (ask.nodes_set) r.flags |= kResvSpecNodes;
  RETURN_IF_ERROR(PlaceReservation(&r, ask));
  const std::string name = r.name;
  reservations_.emplace(name, std::move(r));
  SyncReservations();
  if (fx) fx->reservations_changed.push_back(name);
  return name;
}

Status ControllerCore::UpdateReservation(const Words& words, const Caller& who, Time now,
                                         Effects* fx) {
  if (who.uid != 0 && who.uid != opt_.slurm_user_uid) return Denied();
  const auto it = reservations_.find(NameIn(words));
  if (it == reservations_.end()) return InvalidReservation();
  ReservationRecord r = it->second;
  ReservationAsk ask;
  RETURN_IF_ERROR(ApplyReservationWords(words, /*creating=*/false, now, &r, &ask));
  if (ask.nodes_set) r.flags |= kResvSpecNodes;
  if (ask.node_count > 0 && !ask.nodes_set) r.flags &= ~kResvSpecNodes;
  RETURN_IF_ERROR(PlaceReservation(&r, ask));
  if (r == it->second) return absl::OkStatus();
  it->second = std::move(r);
  SyncReservations();
  if (fx) fx->reservations_changed.push_back(it->first);
  return absl::OkStatus();
}

Status ControllerCore::DeleteReservation(std::string_view name, const Caller& who, Effects* fx) {
  if (who.uid != 0 && who.uid != opt_.slurm_user_uid) return Denied();
  const auto it = reservations_.find(name);
  if (it == reservations_.end()) return InvalidReservation();
  if (ReservationBusy(name)) {
    return absl::FailedPreconditionError("Requested reservation is in use");
  }
  if (fx) fx->reservations_changed.push_back(it->first);
  resv_idle_since_.erase(it->first);
  reservations_.erase(it);
  SyncReservations();
  return absl::OkStatus();
}

void ControllerCore::RestoreReservation(ReservationRecord r) {
  std::string name = r.name;
  reservations_.insert_or_assign(std::move(name), std::move(r));
  SyncReservations();
}

void ControllerCore::ReservationTick(Time now, Effects* fx) {
  const Time last = resv_tick_at_;
  resv_tick_at_ = now;
  bool changed = false;
  for (auto it = reservations_.begin(); it != reservations_.end();) {
    ReservationRecord& r = it->second;
    // One that began since the last tick: its jobs may start now.
    if (r.start > last && r.start <= now) changed = true;
    if (now >= r.end) {
      changed = true;
      if (fx) fx->reservations_changed.push_back(it->first);
      // Its running jobs end with it, ResvOverRun later (Tick ends them as timed out).
      if (opt_.resv_over_run_s < core::kUnlimitedSeconds) {
        for (JobId id : live_) {
          const JobEntry& e = jobs_.at(id);
          if (e.job.state == JobState::kRunning && !e.completing &&
              e.request->reservation == it->first) {
            resv_deadlines_.emplace(id, r.end + opt_.resv_over_run_s);
          }
        }
      }
      if (r.flags & kResvRecurring) {
        RollForward(&r, now, opt_.zone);
        ++it;
      } else {
        // Its pending jobs stay, waiting with the reason ReservationDeleted.
        resv_idle_since_.erase(it->first);
        it = reservations_.erase(it);
      }
      continue;
    }
    if ((r.flags & kResvPurgeComp) && r.start <= now) {
      if (ReservationBusy(it->first)) {
        resv_idle_since_.erase(it->first);
      } else {
        const Time since = resv_idle_since_.try_emplace(it->first, now).first->second;
        if (now - since >= r.purge_after_s) {
          changed = true;
          if (fx) fx->reservations_changed.push_back(it->first);
          resv_idle_since_.erase(it->first);
          it = reservations_.erase(it);
          continue;
        }
      }
    }
    ++it;
  }
  if (changed) SyncReservations();
}

}  // namespace loom::ctld
