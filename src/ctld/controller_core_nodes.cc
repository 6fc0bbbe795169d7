// ControllerCore and the nodes: their daemons registering and reporting, the jobs lost with
// a node, administrative updates (scontrol update node), reconfiguration and the node state
// a restart restores. Split from core.cc by concept; same class, same rules.
#include <algorithm>
#include <csignal>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/hostlist.h"
#include "core/strings.h"
#include "ctld/controller_core.h"
#include "sched/config.h"

namespace loom::ctld {

using model::JobState;
using model::PendingReason;

void ControllerCore::NodeAlive(const std::string& node, Time now, Effects* fx) {
  (void)fx;
  for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
    if (cluster_.nodes[n].name != node) continue;
    last_seen_[n] = now;
    if (node_alive_[n] != kNodeAlive) {
      node_alive_[n] = kNodeAlive;
      model::Node& m = cluster_.nodes[n];
      if (m.state == model::NodeState::kDown && !node_admin_[n].down) {
        m.state = model::NodeState::kIdle;
        if (!m.drain) {  // a drained node keeps its administrator's reason
          m.reason.clear();
          node_admin_[n] = NodeAdmin{};
        }
      }
      ++cluster_.generation;
    }
    return;
  }
}

std::vector<JobId> ControllerCore::NodeReportsJobs(const std::string& node,
                                                   const std::vector<JobId>& running,
                                                   Effects* fx) {
  std::vector<JobId> orphans;
  const int32_t index = NodeIndex(node);
  if (index < 0) return orphans;
  // Earlier runs this node no longer reports are gone: their jobs may come back to it.
  for (auto it = stale_runs_.begin(); it != stale_runs_.end();) {
    std::vector<int32_t>& nodes = it->second;
    if (std::find(running.begin(), running.end(), it->first) == running.end()) {
      const size_t before = nodes.size();
      nodes.erase(std::remove(nodes.begin(), nodes.end(), index), nodes.end());
      if (nodes.size() != before) pass_due_ = true;  // the job may start there now
    }
    it = nodes.empty() ? stale_runs_.erase(it) : std::next(it);
  }
  for (JobId id : running) {
    const JobEntry* e = Find(id);
    if (e != nullptr && RunsOn(*e, index)) continue;
    orphans.push_back(id);
    if (e != nullptr && !model::IsFinal(e->job.state)) RememberStaleRun(id, index);
    if (fx) fx->signals.push_back(SignalJob{id, SIGKILL, {index}, std::nullopt});
  }
  return orphans;
}

void ControllerCore::NodeRegistered(const std::string& node, const model::Resources& reported,
                                    Time now, Effects* fx) {
  NodeAlive(node, now, fx);
  if (opt_.config_overrides) return;
  for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
    model::Node& m = cluster_.nodes[n];
    if (m.name != node || m.drain || node_admin_[n].down) continue;
    const std::string mismatch = model::CapacityShortfall(m.capacity, reported);
    if (mismatch.empty()) return;
    m.drain = true;
    m.reason = mismatch;
    node_admin_[n] = NodeAdmin{false, opt_.slurm_user_uid, opt_.slurm_user_name, now};
    ++cluster_.generation;
    if (fx) fx->nodes_changed.push_back(static_cast<int32_t>(n));
    return;
  }
}

std::vector<JobId> ControllerCore::NodeMissesJobs(const std::string& node,
                                                  const std::vector<JobId>& running, Time now,
                                                  Effects* fx) {
  std::vector<JobId> missing;
  const int32_t index = NodeIndex(node);
  if (index < 0) return missing;
  const std::unordered_set<JobId> reported(running.begin(), running.end());
  for (JobEntry* live : LiveMutable()) {
    JobEntry& e = *live;
    // salloc's allocations and srun's jobs run no batch script: nothing to report.
    if (e.completing || e.request->srun || e.request->allocation_only ||
        e.job.state != JobState::kRunning) {
      continue;
    }
    if (e.alloc().empty() || e.alloc().front().node != index) continue;
    if (e.job.start_time + kLaunchGraceS > now || reported.count(e.job.id)) continue;
    missing.push_back(e.job.id);
  }
  for (JobId id : missing) LoseJob(*FindMutable(id), now, fx);
  return missing;
}

void ControllerCore::LoseJobsOn(int32_t n, Time now, Effects* fx) {
  for (JobEntry* live : LiveMutable()) {
    JobEntry& e = *live;
    if (!e.holds_nodes()) continue;
    bool on_node = false;
    for (const sched::NodeAlloc& a : e.alloc()) on_node = on_node || a.node == n;
    if (!on_node) continue;
    if (e.history().awaits_epilogs()) {  // its epilog there will not come
      EpilogComplete(e.job.id, cluster_.nodes[n].name, false, "", now, fx);
      continue;
    }
    if (e.request->srun) {
      EndStep(e, JobState::kNodeFail, cluster_.nodes[n].name, SIGKILL, now, fx);
    } else {
      LoseJob(e, now, fx);
    }
  }
}

void ControllerCore::LoseJob(JobEntry& e, Time now, Effects* fx) {
  if (e.completing) {
    Release(e, fx);  // whatever it ran died with the node
  } else if (e.request->requeue.value_or(opt_.requeue_by_default)) {
    ++e.mutable_history().restarts;  // Slurm counts a requeue for a failed node too
    BackToQueue(e, now, fx);
  } else {
    End(e, JobState::kNodeFail, 0, now, fx);
  }
}

Status ControllerCore::UpdateNodes(const std::vector<std::string>& names, std::string_view state,
                                   const std::string& reason, const Caller& who, Time now,
                                   Effects* fx) {
  if (who.uid != 0 && who.uid != opt_.slurm_user_uid) {
    return absl::PermissionDeniedError("Access/permission denied");
  }
  enum class Op { kDrain, kDown, kResume, kUndrain };
  Op op;
  if (core::EqualsIgnoreCase(state, "DRAIN")) {
    op = Op::kDrain;
  } else if (core::EqualsIgnoreCase(state, "DOWN")) {
    op = Op::kDown;
  } else if (core::EqualsIgnoreCase(state, "RESUME") || core::EqualsIgnoreCase(state, "IDLE")) {
    op = Op::kResume;
  } else if (core::EqualsIgnoreCase(state, "UNDRAIN")) {
    op = Op::kUndrain;
  } else {
    return absl::InvalidArgumentError(core::StrCat(
        "Invalid node state specified: '", state, "' (Loom takes DRAIN, DOWN, RESUME, UNDRAIN)"));
  }
  if ((op == Op::kDrain || op == Op::kDown) && reason.empty()) {
    return absl::InvalidArgumentError(
        "You must specify a reason when DOWNING or DRAINING a node. Request denied");
  }
  std::vector<int32_t> targets;
  for (const std::string& name : names) {
    int32_t found = -1;
    for (size_t n = 0; n < cluster_.nodes.size() && found < 0; ++n) {
      if (cluster_.nodes[n].name == name) found = static_cast<int32_t>(n);
    }
    if (found < 0) return absl::NotFoundError(core::StrCat("Invalid node name specified: ", name));
    targets.push_back(found);
  }
  for (int32_t n : targets) {
    model::Node& node = cluster_.nodes[n];
    NodeAdmin& admin = node_admin_[n];
    switch (op) {
      case Op::kDrain:
        node.drain = true;
        break;
      case Op::kDown:
        admin.down = true;
        node.state = model::NodeState::kDown;
        LoseJobsOn(n, now, fx);
        break;
      case Op::kResume:
        node.drain = false;
        admin.down = false;
        node.state = node_alive_[n] == kNodeAlive ? model::NodeState::kIdle : model::NodeState::kDown;
        break;
      case Op::kUndrain:
        node.drain = false;
        break;
    }
    if (op == Op::kDrain || op == Op::kDown) {
      node.reason = reason;
      admin.reason_uid = who.uid;
      admin.reason_user = who.user;
      admin.reason_time = now;
    } else if (!node.drain && !admin.down) {
      node.reason = node_alive_[n] == kNodeAlive ? "" : "Not responding";
      admin = NodeAdmin{};
    }
    if (fx) fx->nodes_changed.push_back(n);
  }
  ++cluster_.generation;
  return absl::OkStatus();
}

Status ControllerCore::Reconfigure(const conf::SiteConfig& site, CoreOptions options) {
  sched::Cluster next = sched::ClusterFromSite(site);
  std::map<std::string, int32_t> node_of, part_of;
  for (size_t n = 0; n < next.nodes.size(); ++n) node_of[next.nodes[n].name] = static_cast<int32_t>(n);
  for (size_t p = 0; p < next.partitions.size(); ++p) part_of[next.partitions[p].name] = static_cast<int32_t>(p);
  // Check everything first: a refused reconfigure changes nothing.
  for (const auto& [key, e] : jobs_) {
    for (const sched::NodeAlloc& a : e.alloc()) {
      const std::string& name = cluster_.nodes[a.node].name;
      if (!node_of.count(name)) {
        return absl::FailedPreconditionError(core::StrCat(
            "node ", name, " is not in the new configuration but job ", e.job.id,
            " runs on it; drain the node and let its jobs end before removing it"));
      }
    }
    if (!model::IsFinal(e.job.state) && !part_of.count(e.job.partition)) {
      return absl::FailedPreconditionError(core::StrCat(
          "partition ", e.job.partition, " is not in the new configuration but job ", e.job.id,
          " is in it; cancel or move its jobs before removing it"));
    }
  }
  auto policy = sched::MakePolicy(sched::PolicyNameFromConfig(site.cluster),
                                  sched::PolicyOptionsFromConfig(site.cluster));
  if (!policy.ok()) return policy.status();
  std::vector<char> alive(next.nodes.size(), 0);
  std::vector<Time> seen(next.nodes.size(), 0);
  std::vector<NodeAdmin> admin(next.nodes.size());
  for (model::Node& n : next.nodes) {
    if (n.state == model::NodeState::kIdle) {
      n.state = model::NodeState::kDown;
      n.reason = "Not responding";
    }
  }
  for (size_t old = 0; old < cluster_.nodes.size(); ++old) {
    auto it = node_of.find(cluster_.nodes[old].name);
    if (it == node_of.end()) continue;
    const int32_t n = it->second;
    alive[n] = node_alive_[old];
    seen[n] = last_seen_[old];
    admin[n] = node_admin_[old];
    model::Node& node = next.nodes[n];
    const model::Node& was = cluster_.nodes[old];
    if (node.state == model::NodeState::kFuture) continue;  // the new configuration says so
    node.drain = was.drain;
    node.state = was.state == model::NodeState::kDown ? model::NodeState::kDown
                                                       : model::NodeState::kIdle;
    node.reason = was.reason;
  }
  for (auto& [id, e] : jobs_) {
    if (!e.alloc().empty()) {
      for (sched::NodeAlloc& a : e.mutable_alloc()) {
        a.node = node_of.at(cluster_.nodes[a.node].name);
      }
    }
    // Where an ended job ran only serves queries: a node since removed drops out of it.
    if (!e.history().ran.empty()) {
      sched::Allocation& ran = e.mutable_history().ran;
      std::erase_if(ran, [&](sched::NodeAlloc& a) {
        auto to = node_of.find(cluster_.nodes[a.node].name);
        if (to == node_of.end()) return true;
        a.node = to->second;
        return false;
      });
    }
    auto p = part_of.find(e.job.partition);
    e.partition = p == part_of.end() ? -1 : p->second;
  }
  site_ = site;
  opt_ = options;
  const uint64_t generation = cluster_.generation;
  cluster_ = std::move(next);
  cluster_.generation = generation + 1;
  SyncReservations();  // node indices may have moved
  policy_ = std::move(*policy);
  cadence_ = sched::Cadence(*policy_);
  node_alive_ = std::move(alive);
  last_seen_ = std::move(seen);
  node_admin_ = std::move(admin);
  // Enforcement, weights and flags may have changed: limits and fair share follow.
  SetAssociations(associations_);
  return absl::OkStatus();
}

void ControllerCore::RestoreNode(const std::string& name, bool drain, bool down,
                                 const std::string& reason, uint32_t reason_uid,
                                 const std::string& reason_user, Time reason_time) {
  for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
    if (cluster_.nodes[n].name != name) continue;
    model::Node& node = cluster_.nodes[n];
    node.drain = drain;
    node_admin_[n] = NodeAdmin{down, reason_uid, reason_user, reason_time};
    if (down) node.state = model::NodeState::kDown;
    if (drain || down) node.reason = reason;
    ++cluster_.generation;
    return;
  }
}

}  // namespace loom::ctld
