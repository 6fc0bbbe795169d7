// ControllerCore's rules for the site's Prolog and Epilog, which each node's loomd runs: an
// ended allocation keeps its nodes (COMPLETING) until every node has run its epilog, a
// failed epilog drains its node, and a failed prolog drains its node and sends the job back
// to the queue held (docs/admin/prolog-epilog.md).
#include <algorithm>

#include "core/log.h"
#include "ctld/controller_core.h"

namespace loom::ctld {

using model::JobState;
using model::PendingReason;

void ControllerCore::AwaitEpilogs(JobEntry& e, Effects* fx) {
  JobHistory& history = e.mutable_history();
  history.epilog_asked_at = 0;  // Tick stamps it
  history.epilog_nodes.clear();
  history.kill_at = 0;
  // A node that is not there will not answer: it frees its share when it comes back empty.
  for (const sched::NodeAlloc& a : e.alloc()) {
    if (node_alive_[a.node] == kNodeAlive) history.epilog_nodes.push_back(a.node);
  }
  if (history.epilog_nodes.empty()) {
    FreeNodes(e, fx);
    return;
  }
  e.completing = true;
  if (fx) fx->terminations.push_back(e.job.id);
}

void ControllerCore::EpilogComplete(JobId id, std::string_view node, bool failed,
                                    const std::string& why, Time now, Effects* fx) {
  const int32_t n = NodeIndex(node);
  JobEntry* e = FindMutable(id);
  if (n < 0) return;
  if (failed) {
    core::LogError("{}: epilog failed on {}: {}; the node drains", core::JobId{id}, node, why);
    DrainNode(n, "Epilog error", now, fx);
  }
  if (e == nullptr || !e->history().awaits_epilogs()) return;  // a repeated report
  std::vector<int32_t>& waiting = e->mutable_history().epilog_nodes;
  auto it = std::find(waiting.begin(), waiting.end(), n);
  if (it == waiting.end()) return;
  waiting.erase(it);
  if (waiting.empty()) FreeNodes(*e, fx);
}

void ControllerCore::PrologFailed(JobId id, std::string_view node, const std::string& why, Time now,
                                  Effects* fx) {
  core::LogError("{}: prolog failed on {}: {}; the node drains", core::JobId{id}, node, why);
  if (const int32_t n = NodeIndex(node); n >= 0) DrainNode(n, "Prolog error", now, fx);
  JobEntry* e = FindMutable(id);
  if (e == nullptr || e->job.state != JobState::kRunning || e->completing) return;
  if (e->request->srun || e->request->allocation_only) {
    // No script to run again: its launch fails (LaunchFailed, StepNodeEnded) as any other.
    return;
  }
  const PendingReason held =
      opt_.nohold_on_prolog_fail ? PendingReason::kNone : PendingReason::kLaunchFailedRequeuedHeld;
  // The batch script's own launch failed (nothing of the job runs), or a step's on another
  // node (the script runs: it is ended).
  const bool script_runs =
      e->alloc().empty() || cluster_.nodes[e->alloc().front().node].name != node;
  RequeueStarted(*e, held, /*kill=*/script_runs, now, fx);
}

void ControllerCore::CtldPrologDone(JobId id, bool ok, const std::string& why, Time now,
                                    Effects* fx) {
  JobEntry* e = FindMutable(id);
  if (e == nullptr || e->job.state != JobState::kRunning || e->completing) return;
  if (ok) {
    e->mutable_history().ctld_prolog_done = true;
    if (fx) fx->launches.push_back(Launch{id, /*after_prolog=*/true});
    return;
  }
  core::LogError("{}: PrologSlurmctld failed: {}", core::JobId{id}, why);
  if (!e->request->srun && !e->request->allocation_only) {
    RequeueStarted(*e, PendingReason::kNone, /*kill=*/false, now, fx);
    // Not at once again: a program that keeps failing would start it in every pass.
    e->job.eligible_time = std::max(e->job.eligible_time, now + kCtldPrologRetryS);
    return;
  }
  e->mutable_history().launch_error = "PrologSlurmctld failed: " + why;
  End(*e, JobState::kCancelled, 0, now, fx);
}

void ControllerCore::DrainNode(int32_t n, const std::string& reason, Time now, Effects* fx) {
  model::Node& m = cluster_.nodes[n];
  if (m.drain && m.reason == reason) return;
  m.drain = true;
  m.reason = reason;
  node_admin_[n].reason_uid = opt_.slurm_user_uid;
  node_admin_[n].reason_user = opt_.slurm_user_name;
  node_admin_[n].reason_time = now;
  ++cluster_.generation;
  if (fx) fx->nodes_changed.push_back(n);
}

}  // namespace loom::ctld
