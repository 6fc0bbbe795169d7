#include "sched/deps/gate.h"

#include <algorithm>

namespace loom::sched::deps {

using model::DependencyType;
using model::JobState;
using model::PendingReason;

namespace {

// Singleton: every other job of the same user and name that is not over, and was
// submitted earlier or already runs, keeps it waiting.
DepState Singleton(JobId self, uint32_t uid, std::string_view name, const JobsView& jobs) {
  DepState s = DepState::kSatisfied;
  jobs.ForEachLive([&](const JobView& o) {
    if (o.id == self || o.uid != uid || o.name != name || model::IsFinal(o.state)) return;
    if (o.state == JobState::kRunning || o.id < self) s = DepState::kWaiting;
  });
  return s;
}

DepState Clause(const model::DependencyClause& c, JobId self, uint32_t uid,
                std::string_view name, const JobsView& jobs, Time now, Time* wake) {
  if (c.type == DependencyType::kSingleton) return Singleton(self, uid, name, jobs);
  DepState all = DepState::kSatisfied;
  for (const model::DependencyTarget& t : c.jobs) {
    jobs.ForEachNamed(t.job_id, [&](const JobView& o) {
      if (all == DepState::kNever) return;
      if (t.array_task && o.array_task != t.array_task) return;
      const bool final = model::IsFinal(o.state);
      const bool ok = o.state == JobState::kCompleted && o.exit_code == 0;
      DepState s = DepState::kWaiting;
      switch (c.type) {
        case DependencyType::kAfter:
          if ((o.started && now >= o.start_time + t.delay_s) || final) {
            s = DepState::kSatisfied;
          } else if (o.started) {
            *wake = std::min(*wake, o.start_time + t.delay_s);
          }
          break;
        case DependencyType::kAfterAny:
          if (final) s = DepState::kSatisfied;
          break;
        case DependencyType::kAfterOk:
        case DependencyType::kAfterCorr:
          if (final) s = ok ? DepState::kSatisfied : DepState::kNever;
          break;
        case DependencyType::kAfterNotOk:
          if (final) s = ok ? DepState::kNever : DepState::kSatisfied;
          break;
        default:
          s = DepState::kSatisfied;
          break;
      }
      if (s != DepState::kSatisfied) all = s;
    });
    if (all == DepState::kNever) return all;
  }
  return all;
}

}  // namespace

DepState Evaluate(const model::Dependency& dep, JobId self, uint32_t uid, std::string_view name,
                  const JobsView& jobs, Time now, Time* wake) {
  if (dep.empty()) return DepState::kSatisfied;
  bool waiting = false, any_satisfied = false, all_never = true;
  for (const model::DependencyClause& c : dep.clauses) {
    const DepState s = Clause(c, self, uid, name, jobs, now, wake);
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

PendingReason Gate::Judge(const Candidate& job) {
  if (job.held) return job.admin_hold ? PendingReason::kJobHeldAdmin : PendingReason::kJobHeldUser;
  if (job.dependency != nullptr) {
    switch (Evaluate(*job.dependency, job.id, job.uid, job.name, jobs_, now_, &wake_)) {
      case DepState::kWaiting:
        ++dependency_waits_;
        return PendingReason::kDependency;
      case DepState::kNever:
        return PendingReason::kDependencyNeverSatisfied;
      case DepState::kSatisfied:
        break;
    }
  }
  if (job.eligible_time > now_) {
    wake_ = std::min(wake_, job.eligible_time);
    return PendingReason::kBeginTime;
  }
  if (job.array_id != 0 && job.array_max_running > 0) {
    auto [it, fresh] = budget_.try_emplace(job.array_id, 0);
    if (fresh) {
      auto r = running_.find(job.array_id);
      it->second = job.array_max_running - (r == running_.end() ? 0 : r->second);
    }
    if (it->second <= 0) return PendingReason::kJobArrayTaskLimit;
    --it->second;  // this task may start in this pass
  }
  return PendingReason::kNone;
}

}  // namespace loom::sched::deps
