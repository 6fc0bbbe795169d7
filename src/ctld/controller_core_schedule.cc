// ControllerCore's scheduling pass: the controller's side of "one scheduler, two drivers".
// It gathers what the scheduler needs from the job table: what keeps each pending job
// waiting besides resources (judged by sched::deps::Gate, as in the simulator), the running
// jobs and the pending ones the pass may start, and it passes each pass the trigger that
// caused it at the time sched::Cadence says, as the simulator does. Split from core.cc by
// concept; same class, same rules.
#include <algorithm>
#include <optional>
#include <vector>

#include "core/time_format.h"
#include "ctld/controller_core.h"
#include "model/step.h"
#include "sched/deps/gate.h"

namespace loom::ctld {

using model::JobState;
using model::PendingReason;

namespace {

// GrpTRESMins counts a job without a time limit as this long.
constexpr int64_t kLongestLimitS = 365LL * 86400;

sched::deps::JobView ViewOf(const JobEntry& e) {
  sched::deps::JobView v;
  v.id = e.job.id;
  if (auto task = e.array_task_id()) v.array_task = *task;
  v.uid = e.job.uid;
  v.name = e.request->name;
  v.state = e.job.state;
  v.exit_code = e.job.exit_code;
  v.started = e.job.start_time > 0;
  v.start_time = e.job.start_time;
  return v;
}

}  // namespace

// The job table as dependencies see it.
class ControllerCore::TableView final : public sched::deps::JobsView {
 public:
  TableView(const ControllerCore& core, const std::vector<JobEntry*>& live)
      : core_(core), live_(live) {}
  void ForEachNamed(JobId id,
                    const std::function<void(const sched::deps::JobView&)>& fn) const override {
    for (const JobEntry* e : core_.JobsWithId(id)) fn(ViewOf(*e));
  }
  void ForEachLive(const std::function<void(const sched::deps::JobView&)>& fn) const override {
    for (const JobEntry* e : live_) fn(ViewOf(*e));
  }

 private:
  const ControllerCore& core_;
  const std::vector<JobEntry*>& live_;
};

bool ControllerCore::Schedule(Time now, Effects* fx) {
  // A job that ended changed fair share: the pass goes by the priorities that follow.
  if (fair_share_stale_) Recalculate(now, /*period=*/false, fx);
  const bool event = ScheduleEvents(now, fx);
  const bool timed = ScheduleTimed(now, fx);
  return event || timed;
}

bool ControllerCore::ScheduleEvents(Time now, Effects* fx) {
  const bool due = pass_due_ || cluster_.generation != last_pass_generation_ || now >= wake_;
  // An event pass sooner than sched_min_interval after the last one waits for its turn.
  if (!due || !cadence_.EventPassAllowed(now)) return false;
  RunPass(std::nullopt, now, fx);
  cadence_.EventPassRan(now);
  return true;
}

bool ControllerCore::ScheduleTimed(Time now, Effects* fx) {
  // The timed pass goes by the last look: when it was, and whether jobs waited then.
  const std::optional<sched::PassTrigger> timed =
      cadence_.TimedPass(last_look_, now, look_waiting_);
  if (timed) RunPass(*timed, now, fx);
  if (now > last_look_) last_look_ = now;
  look_waiting_ = waiting_;
  return timed.has_value();
}

void ControllerCore::RunPass(std::optional<sched::PassTrigger> timed, Time now, Effects* fx) {
  const bool nodes_changed = cluster_.generation != last_pass_generation_;
  last_pass_generation_ = cluster_.generation;
  std::vector<sched::RunningJob> running;
  std::vector<sched::PendingJob> pending;
  std::vector<JobEntry*> pending_entry;
  const std::vector<JobEntry*> live = LiveMutable();
  const TableView table(*this, live);
  sched::deps::Gate gate(table, now);
  // AccountingStorageEnforce=limits: the scopes running and waiting jobs count against.
  std::optional<LimitsPlan> limits;
  if (limit_rules_ != nullptr) {
    limits.emplace(limit_rules_.get(), &usage_, site_.cluster.Enforces("safe"));
  }
  for (JobEntry* entry : live) {
    const JobEntry& e = *entry;
    if (!e.holds_nodes()) continue;
    if (limits) {
      // GrpTRESMins: what it may still use to its time limit, from where its usage was last
      // charged (the usage counts the rest).
      const Time charged = std::max(e.job.start_time, usage_.charged_to());
      const int64_t left =
          e.job.time_limit_s >= core::kUnlimitedSeconds
              ? 0
              : std::max<int64_t>(0, e.job.start_time + e.job.time_limit_s - charged);
      limits->table().AddRunning(TresOf(e),
                                 limits->ScopesOf(*e.request, e.job.user, e.job.partition), left);
    }
    const Time end = e.job.time_limit_s >= core::kUnlimitedSeconds
                         ? sched::kNever
                         : sched::SaturatingAdd(e.job.start_time, e.job.time_limit_s);
    // A job being killed holds its nodes until it is gone.
    running.push_back(sched::RunningJob{e.job.id, e.alloc(), e.job.start_time,
                                        e.completing ? sched::kNever : end});
    if (e.array_place != 0 && e.job.state == JobState::kRunning) gate.Running(e.array_job_id());
  }
  // An event pass: resources were freed when fewer jobs hold nodes than after the last pass
  // (jobs start only in passes) or the nodes changed.
  const sched::PassTrigger trigger =
      timed ? *timed
      : nodes_changed || static_cast<int64_t>(running.size()) < holding_after_pass_
          ? sched::PassTrigger::kTermination
          : sched::PassTrigger::kSubmit;
  int64_t waiting_jobs = 0;
  for (JobEntry* entry : live) {
    JobEntry& e = *entry;
    if (e.job.state != JobState::kPending) continue;
    ++waiting_jobs;
    // A requeued job whose processes are still being killed waits for them.
    if (e.completing) continue;
    sched::deps::Candidate c;
    c.id = e.job.id;
    c.uid = e.job.uid;
    c.name = e.request->name;
    c.held = e.job.priority == 0;
    c.admin_hold = e.job.reason == PendingReason::kJobHeldAdmin ||
                   e.job.reason == PendingReason::kLaunchFailedRequeuedHeld;
    c.dependency = &e.request->dependency;
    c.eligible_time = e.job.eligible_time;
    if (e.array_place != 0 && e.request->array) {
      c.array_id = e.array_job_id();
      c.array_max_running = e.request->array->max_running;
    }
    PendingReason blocked = gate.Judge(c);
    // An administrator's hold that says why it was set keeps saying so.
    if (blocked == PendingReason::kJobHeldAdmin &&
        e.job.reason == PendingReason::kLaunchFailedRequeuedHeld) {
      blocked = e.job.reason;
    }
    if (blocked != PendingReason::kNone) {
      // Every policy only reports a blocked job's reason: it need not enter the pass.
      if (e.job.reason != blocked && fx) fx->touched.push_back(e.job.id);
      e.job.reason = blocked;
      continue;
    }
    sched::PendingJob p;
    if (limits) {
      // A limit on the job alone holds it whatever runs: it need not enter the pass either.
      p.limit_tres = RequestTres(e.request->shape);
      const PendingReason over = limit_rules_->PerJob(*e.request, e.job.user, e.job.partition,
                                                      e.job.time_limit_s, p.limit_tres);
      if (over != PendingReason::kNone) {
        if (e.job.reason != over && fx) fx->touched.push_back(e.job.id);
        e.job.reason = over;
        continue;
      }
      p.limit_scopes = limits->ScopesOf(*e.request, e.job.user, e.job.partition);
      for (int32_t s : p.limit_scopes) {
        if (limits->table().scopes[s].tres_mins.empty()) continue;
        p.limit_tres_secs = p.limit_tres * std::min<int64_t>(e.job.time_limit_s, kLongestLimitS);
        break;
      }
    }
    // Considered by this pass: Slurm's LastSchedEval.
    if (e.last_sched_eval != now) {
      e.last_sched_eval = now;
      if (fx) fx->touched.push_back(e.job.id);
    }
    // Its reservation: gone (it ended or was deleted) holds it.
    if (!e.request->reservation.empty()) {
      p.advance_reservation = ReservationIndex(e.request->reservation);
      if (p.advance_reservation < 0) {
        if (e.job.reason != PendingReason::kReservationDeleted && fx) {
          fx->touched.push_back(e.job.id);
        }
        e.job.reason = PendingReason::kReservationDeleted;
        continue;
      }
    }
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
  in.trigger = trigger;
  in.next_decision_seq = decision_seq_;
  if (limits) in.limits = &limits->table();
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
    if (!Move(e, JobState::kRunning, now)) continue;
    e.job.end_time = e.job.time_limit_s >= core::kUnlimitedSeconds
                         ? 0
                         : sched::SaturatingAdd(now, e.job.time_limit_s);
    e.job.reason = PendingReason::kNone;
    e.mutable_alloc() = s.alloc;
    if (site_.cluster.mpi_ports_low > 0 && e.request->srun) {
      // srun's own job is its step 0: its ports, as many as its most loaded node has tasks.
      std::vector<int32_t> nodes, cpus;
      for (const sched::NodeAlloc& a : s.alloc) {
        nodes.push_back(a.node);
        cpus.push_back(a.amount.cpus);
      }
      const model::JobRequest& r = *e.request;
      const std::vector<int32_t> tasks =
          model::TaskCounts({r.ntasks, r.ntasks_per_node, r.cpus_per_task}, cpus);
      StatusOr<std::vector<int32_t>> ports =
          ReservePorts(nodes, tasks.empty() ? 1 : *std::max_element(tasks.begin(), tasks.end()));
      if (!ports.ok()) {
        e.mutable_history().launch_error = std::string(ports.status().message());
        End(e, JobState::kFailed, 1 << 8, now, fx);
        continue;
      }
      e.mutable_history().resv_ports = *std::move(ports);
    }
    Changed(e, fx);
    fx->launches.push_back(Launch{e.job.id});
  }
  pass_due_ = false;  // what this pass started needs no pass of its own
  waiting_ = waiting_jobs > static_cast<int64_t>(out.starts.size());
  holding_after_pass_ = static_cast<int64_t>(running.size() + out.starts.size());
  wake_ = gate.wake(!out.starts.empty());
}

}  // namespace loom::ctld
