// ControllerCore's scheduling pass: what keeps a pending job waiting besides resources
// (a hold, its dependencies, its begin time, its array's throttle), and the policy's pass
// over the jobs nothing else blocks. Split from core.cc by concept; same class, same rules.
#include <algorithm>
#include <map>
#include <vector>

#include "core/time_format.h"
#include "ctld/core.h"

namespace loom::ctld {

using model::JobState;
using model::PendingReason;

ControllerCore::DepState ControllerCore::Dependencies(const JobEntry& e, Time now,
                                                     Time* wake) const {
  const model::Dependency& dep = e.request->dependency;
  if (dep.empty()) return DepState::kSatisfied;
  auto clause_state = [&](const model::DependencyClause& c) {
    if (c.type == model::DependencyType::kSingleton) {
      for (JobId id : live_) {
        auto it = jobs_.find(id);
        if (it == jobs_.end()) continue;
        const JobEntry& other = it->second;
        if (id == e.job.id || other.job.uid != e.job.uid ||
            other.request->name != e.request->name) {
          continue;
        }
        if (model::IsFinal(other.job.state)) continue;
        if (other.job.state == JobState::kRunning || id < e.job.id) return DepState::kWaiting;
      }
      return DepState::kSatisfied;
    }
    DepState all = DepState::kSatisfied;
    for (const model::DependencyTarget& t : c.jobs) {
      for (const JobEntry* other : JobsWithId(t.job_id)) {
        if (t.array_task && other->array_task_id() != t.array_task) continue;
        const model::Job& o = other->job;
        const bool final = model::IsFinal(o.state);
        const bool ok = o.state == JobState::kCompleted && o.exit_code == 0;
        DepState s = DepState::kWaiting;
        switch (c.type) {
          case model::DependencyType::kAfter:
            if ((o.start_time > 0 && now >= o.start_time + t.delay_s) || final) {
              s = DepState::kSatisfied;
            } else if (o.start_time > 0) {
              *wake = std::min(*wake, o.start_time + t.delay_s);
            }
            break;
          case model::DependencyType::kAfterAny:
            if (final) s = DepState::kSatisfied;
            break;
          case model::DependencyType::kAfterOk:
          case model::DependencyType::kAfterCorr:
            if (final) s = ok ? DepState::kSatisfied : DepState::kNever;
            break;
          case model::DependencyType::kAfterNotOk:
            if (final) s = ok ? DepState::kNever : DepState::kSatisfied;
            break;
          default:
            s = DepState::kSatisfied;
            break;
        }
        if (s == DepState::kNever) return DepState::kNever;
        if (s == DepState::kWaiting) all = DepState::kWaiting;
      }
    }
    return all;
  };
  bool waiting = false, any_satisfied = false, all_never = true;
  for (const model::DependencyClause& c : dep.clauses) {
    DepState s = clause_state(c);
    if (dep.combine == model::Dependency::Combine::kAll) {
      if (s == DepState::kNever) return DepState::kNever;
      waiting = waiting || s == DepState::kWaiting;
    } else {
      any_satisfied = any_satisfied || s == DepState::kSatisfied;
      all_never = all_never && s == DepState::kNever;
    }
  }
  if (dep.combine == model::Dependency::Combine::kAll) {
    return waiting ? DepState::kWaiting : DepState::kSatisfied;
  }
  if (any_satisfied) return DepState::kSatisfied;
  return all_never ? DepState::kNever : DepState::kWaiting;
}

PendingReason ControllerCore::Blocked(const JobEntry& e, Time now, Time* wake) const {
  if (e.job.priority == 0) {
    return e.job.reason == PendingReason::kJobHeldAdmin ? PendingReason::kJobHeldAdmin
                                                        : PendingReason::kJobHeldUser;
  }
  switch (Dependencies(e, now, wake)) {
    case DepState::kWaiting:
      return PendingReason::kDependency;
    case DepState::kNever:
      return PendingReason::kDependencyNeverSatisfied;
    case DepState::kSatisfied:
      break;
  }
  if (e.job.eligible_time > now) {
    *wake = std::min(*wake, e.job.eligible_time);
    return PendingReason::kBeginTime;
  }
  return PendingReason::kNone;
}

bool ControllerCore::Schedule(Time now, Effects* fx) {
  const bool periodic = opt_.sched_interval_s >= 0 &&
                        now >= last_pass_time_ + std::max<int64_t>(1, opt_.sched_interval_s);
  if (!pass_due_ && cluster_.generation == last_pass_generation_ && now < wake_ && !periodic) {
    return false;
  }
  last_pass_time_ = now;
  last_pass_generation_ = cluster_.generation;
  wake_ = sched::kNever;
  std::vector<sched::RunningJob> running;
  std::vector<sched::PendingJob> pending;
  std::vector<JobEntry*> pending_entry;
  std::map<JobId, int64_t> array_running;  // running tasks per array
  const std::vector<JobEntry*> live = LiveMutable();
  for (JobEntry* entry : live) {
    const JobEntry& e = *entry;
    if (!e.holds_nodes()) continue;
    const Time end = e.job.time_limit_s >= core::kUnlimitedSeconds
                         ? sched::kNever
                         : sched::SaturatingAdd(e.job.start_time, e.job.time_limit_s);
    // A job being killed holds its nodes until it is gone.
    running.push_back(sched::RunningJob{e.job.id, e.alloc(), e.job.start_time,
                                        e.completing ? sched::kNever : end});
    if (e.array_place != 0 && e.job.state == JobState::kRunning) ++array_running[e.array_job_id()];
  }
  std::map<JobId, int64_t> array_budget;
  for (JobEntry* entry : live) {
    JobEntry& e = *entry;
    // A requeued job whose processes are still being killed waits for them.
    if (e.job.state != JobState::kPending || e.completing) continue;
    PendingReason blocked = Blocked(e, now, &wake_);
    if (blocked == PendingReason::kNone && e.array_place != 0 && e.request->array &&
        e.request->array->max_running > 0) {
      auto [it, fresh] = array_budget.try_emplace(
          e.array_job_id(), e.request->array->max_running - array_running[e.array_job_id()]);
      if (it->second <= 0) {
        blocked = PendingReason::kJobArrayTaskLimit;
      } else {
        --it->second;  // this task may start in this pass
      }
    }
    if (blocked != PendingReason::kNone) {
      // Every policy only reports a blocked job's reason: it need not enter the pass.
      if (e.job.reason != blocked && fx) fx->touched.push_back(e.job.id);
      e.job.reason = blocked;
      continue;
    }
    // Considered by this pass: Slurm's LastSchedEval.
    if (e.last_sched_eval != now) {
      e.last_sched_eval = now;
      if (fx) fx->touched.push_back(e.job.id);
    }
    sched::PendingJob p;
    p.id = e.job.id;
    p.submit = e.job.submit_time;
    p.priority = e.job.priority;
    p.partition = e.partition;
    p.constraint = e.request->constraint;
    p.nodelist = e.request->nodelist;
    p.exclude = e.request->exclude;
    // Not where an earlier run of it is still being killed.
    if (auto stale = stale_runs_.find(e.job.id); stale != stale_runs_.end()) {
      for (int32_t n : stale->second) {
        if (!p.exclude.empty()) p.exclude += ',';
        p.exclude += cluster_.nodes[n].name;
      }
    }
    p.shape = e.request->shape;
    p.estimate =
        e.job.time_limit_s >= core::kUnlimitedSeconds ? sched::kNever / 4 : e.job.time_limit_s;
    pending.push_back(std::move(p));
    pending_entry.push_back(&e);
  }
  sched::PassInput in;
  in.cluster = &cluster_;
  in.running = running;
  in.pending = pending;
  in.now = now;
  in.trigger = sched::PassTrigger::kPeriodic;
  in.next_decision_seq = decision_seq_;
  sched::PassOutput out;
  policy_->Pass(in, &out);
  decision_seq_ = out.next_decision_seq;
  last_pass_ = out.stats;
  for (size_t i = 0; i < pending_entry.size(); ++i) {
    JobEntry& e = *pending_entry[i];
    const PendingReason r = out.reasons[i];
    if (e.job.reason != r && fx) fx->touched.push_back(e.job.id);
    e.job.reason = r;
  }
  for (const sched::JobStart& s : out.starts) {
    JobEntry& e = *pending_entry[s.pending_index];
    (void)e.job.Transition(JobState::kRunning, now);
    e.job.end_time = e.job.time_limit_s >= core::kUnlimitedSeconds
                         ? 0
                         : sched::SaturatingAdd(now, e.job.time_limit_s);
    e.job.reason = PendingReason::kNone;
    e.mutable_alloc() = s.alloc;
    Changed(e, fx);
    fx->launches.push_back(Launch{e.job.id});
  }
  pass_due_ = false;  // what this pass started needs no pass of its own
  // But jobs waiting `after:` one it started learn when their wait ends in the next one.
  if (!out.starts.empty()) wake_ = std::min(wake_, now + 1);
  return true;
}

}  // namespace loom::ctld
