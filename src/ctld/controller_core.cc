#include "ctld/controller_core.h"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>

#include "core/hostlist.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "ctld/job_defaults.h"
#include "model/constraint.h"
#include "sched/config.h"
#include "sched/plan/planner.h"
#include "sched/select/selector.h"

namespace loom::ctld {
namespace {

using model::JobState;
using model::PendingReason;

// priority/basic: earlier jobs first. A held job has priority 0.
constexpr int64_t kBasePriority = 4294901760;


}  // namespace

ControllerCore::ControllerCore(const conf::SiteConfig& site, CoreOptions options,
                               JobId first_job_id)
    : site_(site), opt_(options), cluster_(sched::ClusterFromSite(site)), next_id_(first_job_id) {
  auto policy = sched::MakePolicy(sched::PolicyNameFromConfig(site.cluster),
                                  sched::PolicyOptionsFromConfig(site.cluster));
  policy_ = policy.ok() ? std::move(*policy) : nullptr;
  if (!policy_) policy_ = std::move(*sched::MakePolicy("easy", sched::PolicyOptions{}));
  cadence_ = sched::Cadence(*policy_);
  node_alive_.assign(cluster_.nodes.size(), 0);
  last_seen_.assign(cluster_.nodes.size(), 0);
  node_admin_.assign(cluster_.nodes.size(), NodeAdmin{});
  // No node takes work before its daemon registers.
  for (model::Node& n : cluster_.nodes) {
    if (n.state == model::NodeState::kIdle) {
      n.state = model::NodeState::kDown;
      n.reason = "Not responding";
    }
  }
  ++cluster_.generation;
}

void ControllerCore::Restore(std::vector<JobEntry> entries, JobId next_job_id) {
  jobs_.clear();
  live_.clear();
  for (JobEntry& e : entries) {
    e.request = Intern(std::move(e.request));
    // Ended or requeued with its processes still being killed: it keeps its nodes.
    e.completing =
        (model::IsFinal(e.job.state) || e.job.state == JobState::kPending) && !e.alloc().empty();
    next_id_ = std::max(next_id_, e.job.id + 1);
    if (e.live()) live_.insert(e.job.id);
    const JobId id = e.job.id;
    jobs_.insert_or_assign(id, std::move(e));
  }
  next_id_ = std::max(next_id_, next_job_id);
}

void ControllerCore::Changed(const JobEntry& e, Effects* fx) {
  if (fx) fx->changed.push_back(e.job.id);
  if (e.live()) live_.insert(e.job.id);
  pass_due_ = true;
}

std::vector<JobEntry*> ControllerCore::LiveMutable() {
  std::vector<JobEntry*> out;
  out.reserve(live_.size());
  for (auto it = live_.begin(); it != live_.end();) {
    auto e = jobs_.find(*it);
    if (e == jobs_.end() || !e->second.live()) {
      it = live_.erase(it);
      continue;
    }
    out.push_back(&e->second);
    ++it;
  }
  return out;
}

std::vector<const JobEntry*> ControllerCore::LiveEntries() const {
  std::vector<const JobEntry*> out;
  out.reserve(live_.size());
  for (JobId id : live_) {
    auto e = jobs_.find(id);
    if (e != jobs_.end() && e->second.live()) out.push_back(&e->second);
  }
  return out;
}

JobEntry* ControllerCore::FindMutable(JobId id) {
  auto e = jobs_.find(id);
  return e == jobs_.end() ? nullptr : &e->second;
}

const JobEntry* ControllerCore::Find(JobId id) const {
  return const_cast<ControllerCore*>(this)->FindMutable(id);
}

std::vector<const JobEntry*> ControllerCore::JobsWithId(JobId id) const {
  // The job itself, or every task of the array `id` names: tasks have the ids from the
  // array's own onwards, consecutive (some may have been purged).
  std::vector<const JobEntry*> out;
  // No job has id 0, and every plain job's array id is 0: without this, 0 named them all.
  if (id == 0) return out;
  for (auto it = jobs_.lower_bound(id); it != jobs_.end(); ++it) {
    const JobEntry& e = it->second;
    if (e.job.id != id && e.array_job_id() != id) break;
    out.push_back(&e);
    if (e.array_job_id() != id) break;  // a plain job, or a task named by its own id
  }
  return out;
}

std::shared_ptr<const model::JobRequest> ControllerCore::Intern(
    std::shared_ptr<const model::JobRequest> r) {
  if (r == nullptr) return r;
  for (const auto& recent : recent_requests_) {
    if (recent != nullptr && *recent == *r) return recent;
  }
  recent_requests_[next_recent_++ % recent_requests_.size()] = r;
  return r;
}

bool ControllerCore::AnyJobOf(JobId submission) const {
  // Its jobs have the ids from the submission's own onwards.
  auto it = jobs_.lower_bound(submission);
  return it != jobs_.end() && it->second.submission_id() == submission;
}

bool ControllerCore::MayActOn(const Caller& who, const JobEntry& e) const {
  return who.uid == 0 || who.uid == opt_.slurm_user_uid || who.uid == e.job.uid;
}

int64_t DefaultPriority(const model::JobRequest& r, JobId id) {
  if (r.priority) return *r.priority;
  return std::clamp<int64_t>(kBasePriority - static_cast<int64_t>(id) - r.nice, 1,
                             kMaxJobPriority);
}

StatusOr<std::vector<int32_t>> ControllerCore::NodesNamed(const std::string& hostlist) const {
  std::optional<std::vector<int32_t>> named = sched::NodesNamed(cluster_, hostlist);
  if (!named) return absl::InvalidArgumentError("Invalid node name specified");
  return *std::move(named);
}

Status ControllerCore::ApplyAssociation(const Caller& who, const std::string& partition,
                                        model::JobRequest* r) const {
  if (associations_ == nullptr) return absl::OkStatus();
  const conf::ClusterConfig& cfg = site_.cluster;
  r->account = core::ToLower(r->account);
  r->qos = core::ToLower(r->qos);
  if (r->account.empty()) {
    auto d = associations_->default_account.find(who.user);
    if (d != associations_->default_account.end()) r->account = d->second;
  }
  const model::UserAssociation* a =
      r->account.empty() ? nullptr : associations_->Find(who.user, r->account, partition);
  if (a == nullptr && cfg.Enforces("associations")) {
    return absl::InvalidArgumentError("Invalid account or account/partition combination specified");
  }
  if (r->qos.empty() && a != nullptr) r->qos = model::AssociationTable::DefaultQos(*a);
  if (!r->qos.empty() && cfg.Enforces("qos")) {
    const bool allowed =
        a == nullptr || std::find(a->qos.begin(), a->qos.end(), r->qos) != a->qos.end();
    if (!associations_->qos.count(r->qos) || !allowed) {
      return absl::InvalidArgumentError("Invalid qos specification");
    }
  }
  return absl::OkStatus();
}

Status ControllerCore::CheckPartitionAccess(const model::JobRequest& r,
                                            const std::string& partition) const {
  const conf::PartitionConfig* p = site_.cluster.FindPartition(partition);
  if (p == nullptr) return absl::OkStatus();
  auto listed = [](const std::vector<std::string>& list, const std::string& name) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& n) { return core::EqualsIgnoreCase(n, name); });
  };
  // An Allow list, when there is one, is the rule; a Deny list is read only without it.
  const bool account_ok = !p->allow_accounts.empty() ? listed(p->allow_accounts, r.account)
                                                     : !listed(p->deny_accounts, r.account);
  if (!account_ok) {
    return absl::InvalidArgumentError("Invalid account or account/partition combination specified");
  }
  // A job without a QOS (no accounting) is not judged by the QOS lists.
  if (r.qos.empty()) return absl::OkStatus();
  const bool qos_ok =
      !p->allow_qos.empty() ? listed(p->allow_qos, r.qos) : !listed(p->deny_qos, r.qos);
  if (!qos_ok) return absl::InvalidArgumentError("Invalid qos specification");
  return absl::OkStatus();
}

StatusOr<ControllerCore::Admitted> ControllerCore::Admit(model::JobRequest request) const {
  // Partition: the first one named that exists, or the default.
  int32_t part = -1;
  if (request.partitions.empty()) {
    for (size_t p = 0; p < cluster_.partitions.size(); ++p) {
      if (cluster_.partitions[p].is_default) part = static_cast<int32_t>(p);
    }
    if (part < 0) {
      return absl::InvalidArgumentError(
          "No partition specified or system default partition; name one with -p");
    }
  } else {
    for (const std::string& name : request.partitions) {
      for (size_t p = 0; p < cluster_.partitions.size() && part < 0; ++p) {
        if (cluster_.partitions[p].name == name) part = static_cast<int32_t>(p);
      }
    }
    if (part < 0) return absl::InvalidArgumentError("Invalid partition name specified");
  }
  const model::Partition& partition = cluster_.partitions[part];
  // The submission as the job keeps it: with what the cluster fills in.
  auto filled = std::make_shared<model::JobRequest>(std::move(request));
  if (const conf::PartitionConfig* pc = site_.cluster.FindPartition(partition.name)) {
    ApplyMemoryDefault(site_.cluster, *pc, filled.get());
  }
  // -w and -x name nodes the cluster has; a job has every node -w names, so at least as
  // many nodes (Slurm's NumNodes).
  ASSIGN_OR_RETURN(const std::vector<int32_t> named, NodesNamed(filled->nodelist));
  ASSIGN_OR_RETURN(const std::vector<int32_t> excluded, NodesNamed(filled->exclude));
  for (int32_t n : named) {
    if (std::find(partition.nodes.begin(), partition.nodes.end(), n) == partition.nodes.end() ||
        std::find(excluded.begin(), excluded.end(), n) != excluded.end()) {
      return absl::InvalidArgumentError("Requested node configuration is not available");
    }
  }
  if (!named.empty()) {
    model::JobShape& shape = filled->shape;
    const int32_t count = static_cast<int32_t>(named.size());
    shape.min_nodes = std::max(shape.min_nodes, count);
    shape.max_nodes = std::max(shape.max_nodes, shape.min_nodes);
    shape.ntasks = std::max(shape.ntasks, shape.min_nodes);
  }
  const model::JobRequest& r = *filled;

  // Some node of the partition, idle, must be able to run it.
  auto expr = model::FeatureExpr::Parse(r.constraint);
  if (!expr.ok()) return absl::InvalidArgumentError("Invalid feature specification");
  const bool only_named =
      !named.empty() && r.shape.max_nodes <= static_cast<int32_t>(named.size());
  std::vector<sched::Candidate> cands;
  for (int32_t n : partition.nodes) {
    const model::Node& node = cluster_.nodes[n];
    if (std::find(excluded.begin(), excluded.end(), n) != excluded.end()) continue;
    if (only_named && std::find(named.begin(), named.end(), n) == named.end()) continue;
    if (!expr->Matches(node.features)) continue;
    if (!r.shape.gpu_type.empty() && node.gpu_type != r.shape.gpu_type) continue;
    cands.push_back(sched::Candidate{n, node.capacity, node.capacity});
  }
  sched::Allocation probe;
  if (!sched::SelectNodes(r.shape, cands, &probe)) {
    return absl::InvalidArgumentError("Requested node configuration is not available");
  }
  return Admitted{part, std::move(filled)};
}

StatusOr<JobId> ControllerCore::Submit(model::JobRequest request, const Caller& who, Time now,
                                       Effects* fx) {
  // Only root and SlurmUser may put their jobs ahead of others' (a negative --nice).
  if (request.nice < 0 && who.uid != 0 && who.uid != opt_.slurm_user_uid) {
    return absl::PermissionDeniedError("Access/permission denied");
  }
  ASSIGN_OR_RETURN(Admitted admitted, Admit(std::move(request)));
  const int32_t part = admitted.partition;
  const model::Partition& partition = cluster_.partitions[part];
  model::JobRequest& filled = *admitted.request;
  RETURN_IF_ERROR(ApplyAssociation(who, partition.name, &filled));
  RETURN_IF_ERROR(CheckPartitionAccess(filled, partition.name));
  if (!filled.reservation.empty()) {
    const auto resv = reservations_.find(filled.reservation);
    if (resv == reservations_.end()) {
      return absl::InvalidArgumentError("Requested reservation is invalid");
    }
    if (!MayUseReservation(resv->second, who.user, filled.account,
                           who.uid == 0 || who.uid == opt_.slurm_user_uid)) {
      return absl::PermissionDeniedError("Access denied to requested reservation");
    }
  }
  RETURN_IF_ERROR(CheckSubmitLimits(
      filled, partition.name, who,
      filled.time_limit_s.value_or(partition.default_time_s >= 0 ? partition.default_time_s
                                                                 : partition.max_time_s),
      filled.array ? static_cast<int64_t>(filled.array->Count()) : 1));

  // A dependency on a job the controller does not know (never existed, or purged after
  // MinJobAge) is accepted and counts as satisfied, as Slurm 22.05 does.

  // Every task of an array is a job with an id of its own from the start (the array's id
  // is its first task's), so that each is stored and recovered on its own.
  const JobId id = next_id_;
  next_id_ += filled.array ? static_cast<JobId>(filled.array->Count()) : 1;
  Submission submission{id, nullptr, std::move(filled.script), std::move(filled.environment)};
  filled.script.clear();
  filled.environment.clear();
  auto shared = Intern(std::shared_ptr<const model::JobRequest>(std::move(admitted.request)));
  submission.request = shared;
  if (fx) {
    fx->next_id_changed = true;
    fx->submitted.push_back(std::move(submission));
  }
  JobId task_id = id;
  const model::JobRequest& r = *shared;
  int64_t limit = r.time_limit_s.value_or(
      partition.default_time_s >= 0 ? partition.default_time_s : partition.max_time_s);
  auto make = [&](std::optional<int64_t> task) {
    JobEntry e;
    e.request = shared;
    e.partition = part;
    e.last_sched_eval = now;
    model::Job& j = e.job;
    j.uid = who.uid;
    j.gid = who.gid;
    j.user = who.user;
    j.partition = partition.name;
    j.time_limit_s = limit;
    j.reason = r.hold ? PendingReason::kJobHeldUser : PendingReason::kNone;
    j.submit_time = now;
    j.eligible_time = std::max<int64_t>(now, r.begin_time);
    j.id = task_id++;
    if (task) e.SetArrayTask(id, static_cast<int32_t>(*task));
    j.priority = r.hold ? 0 : InitialPriority(e);
    if (fx) {
      fx->created.push_back(j.id);
      fx->changed.push_back(j.id);
    }
    pass_due_ = pass_due_ || !r.hold;  // a held job changes no pass
    live_.insert(j.id);
    jobs_.emplace(j.id, std::move(e));
  };
  if (shared->array) {
    for (int64_t t : shared->array->Indices()) make(t);
  } else {
    make(std::nullopt);
  }
  return id;
}

StatusOr<WillRun> ControllerCore::TestOnly(const model::JobRequest& submitted, Time now,
                                           Effects* fx) {
  ASSIGN_OR_RETURN(const Admitted admitted, Admit(submitted));
  const int32_t part = admitted.partition;
  const model::Partition& partition = cluster_.partitions[part];
  const model::JobRequest& request = *admitted.request;
  WillRun answer;
  const int32_t reservation =
      request.reservation.empty() ? -1 : ReservationIndex(request.reservation);
  if (!request.reservation.empty() && reservation < 0) {
    return absl::InvalidArgumentError("Requested reservation is invalid");
  }
  answer.job_id = next_id_++;  // spent, as Slurm spends one
  if (fx) fx->next_id_changed = true;
  answer.partition = partition.name;
  std::vector<sched::RunningJob> running;
  for (const JobEntry* e : LiveEntries()) {
    if (!e->holds_nodes()) continue;
    const Time end = e->job.time_limit_s >= core::kUnlimitedSeconds || e->completing
                         ? sched::kNever
                         : sched::SaturatingAdd(e->job.start_time, e->job.time_limit_s);
    running.push_back(sched::RunningJob{e->job.id, e->alloc(), e->job.start_time, end});
  }
  const int64_t limit = request.time_limit_s.value_or(
      partition.default_time_s >= 0 ? partition.default_time_s : partition.max_time_s);
  sched::PendingJob p;
  p.partition = part;
  p.constraint = request.constraint;
  p.nodelist = request.nodelist;
  p.exclude = request.exclude;
  p.advance_reservation = reservation;
  p.shape = request.shape;
  p.submit = now;
  p.estimate = limit >= core::kUnlimitedSeconds ? sched::kNever / 4 : limit;
  sched::Planner planner;
  planner.Reset(cluster_, now, running);
  sched::Allocation alloc;
  answer.start = planner.EarliestStart(p, std::max<Time>(now, request.begin_time), sched::kNever,
                                       1, &alloc);
  if (answer.start == sched::kNever) {
    return absl::UnavailableError(
        "Requested nodes are busy, down or drained and no time is known when they will be free");
  }
  std::vector<std::string> names;
  for (const sched::NodeAlloc& a : alloc) {
    answer.cpus += a.amount.cpus;
    names.push_back(cluster_.nodes[a.node].name);
  }
  answer.nodes = core::CompressHostlist(names);
  return answer;
}

Status ControllerCore::Signal(JobId id, std::optional<int64_t> task, int32_t signal,
                              const Caller& who, Time now, Effects* fx) {
  std::vector<JobEntry*> targets;
  // Every plain job's array id is 0: id 0 would name them all.
  if (id == 0) return absl::NotFoundError("Invalid job id specified");
  for (auto& [key, e] : jobs_) {
    const bool match = task ? (e.array_job_id() == id && e.array_task_id() == task) ||
                                  (e.job.id == id && e.array_task_id() == task)
                            : (e.job.id == id || e.array_job_id() == id);
    if (match) targets.push_back(&e);
  }
  if (targets.empty()) return absl::NotFoundError("Invalid job id specified");
  for (JobEntry* e : targets) {
    if (!MayActOn(who, *e)) {
      return absl::PermissionDeniedError("Access/permission denied");
    }
  }
  bool any = false;
  for (JobEntry* e : targets) {
    if (model::IsFinal(e->job.state)) continue;
    any = true;
    if (signal != 0 && signal != SIGKILL) {
      if (e->job.state == JobState::kRunning) {
        fx->signals.push_back(SignalJob{e->job.id, signal, {}, std::nullopt});
        for (const sched::NodeAlloc& a : e->alloc()) fx->signals.back().nodes.push_back(a.node);
      }
      continue;
    }
    if (e->job.state == JobState::kPending || e->job.state == JobState::kRunning) {
      e->mutable_history().cancelled_by = who.uid;
    }
    if (e->job.state == JobState::kPending) {
      End(*e, JobState::kCancelled, 0, now, fx);
    } else if (e->job.state == JobState::kRunning) {
      Kill(*e, JobState::kCancelled, now, fx);
    }
  }
  if (!any) return absl::FailedPreconditionError("Job/step already completing or completed");
  return absl::OkStatus();
}

Status ControllerCore::Requeue(JobId id, bool hold, const Caller& who, Time now, Effects* fx) {
  std::vector<JobId> started;
  for (const JobEntry* e : JobsWithId(id)) {
    if (!MayActOn(who, *e)) return absl::PermissionDeniedError("Access/permission denied");
    if (e->job.state != JobState::kPending) started.push_back(e->job.id);
  }
  if (started.empty()) {
    return JobsWithId(id).empty() ? absl::NotFoundError("Invalid job id specified")
                                  : absl::FailedPreconditionError("Job is pending execution");
  }
  for (JobId job : started) {
    RequeueStarted(jobs_.at(job), hold ? PendingReason::kJobHeldUser : PendingReason::kNone,
                   /*kill=*/true, now, fx);
  }
  return absl::OkStatus();
}

void ControllerCore::RequeueStarted(JobEntry& e, PendingReason held, bool kill, Time now,
                                    Effects* fx) {
  if (e.job.state == JobState::kRunning) {
    // Its processes go first; it holds its nodes until they are gone (completing).
    if (kill) {
      SignalJob s{e.job.id, SIGTERM, {}, std::nullopt};
      for (const sched::NodeAlloc& a : e.alloc()) s.nodes.push_back(a.node);
      if (fx) fx->signals.push_back(std::move(s));
    }
    e.completing = true;
    e.mutable_history().kill_at = now + opt_.kill_wait_s;
  }
  if (!Move(e, JobState::kPending, now)) return;
  e.job.exit_code = 0;
  e.job.reason = held;
  if (held != PendingReason::kNone) e.job.priority = 0;
  JobHistory& history = e.mutable_history();
  history.ran.clear();
  history.launch_error.clear();
  history.ctld_prolog_done = false;
  const bool had_steps = history.step != nullptr;
  history.step.reset();
  if ((steps_.erase(e.job.id) > 0 || had_steps) && fx != nullptr) {
    fx->steps_changed.push_back(e.job.id);  // the stored ones go too
  }
  ++history.restarts;
  pass_due_ = true;
  Changed(e, fx);
  // Nothing ran (its launch failed): no end will be reported, its nodes are done with it.
  if (!kill && e.completing) Release(e, fx);
}

Status ControllerCore::Hold(JobId id, const Caller& who, Effects* fx) {
  bool any = false;
  for (const JobEntry* match : JobsWithId(id)) {
    JobEntry& e = jobs_.at(match->job.id);
    if (!MayActOn(who, e)) return absl::PermissionDeniedError("Access/permission denied");
    if (e.job.state != JobState::kPending) continue;
    any = true;
    e.job.priority = 0;
    e.job.reason = who.uid == e.job.uid ? PendingReason::kJobHeldUser : PendingReason::kJobHeldAdmin;
    Changed(e, fx);
  }
  if (!any) {
    return JobsWithId(id).empty() ? absl::NotFoundError("Invalid job id specified")
                                  : absl::FailedPreconditionError("Job is no longer pending execution");
  }
  return absl::OkStatus();
}

Status ControllerCore::Release(JobId id, const Caller& who, Effects* fx) {
  bool any = false;
  for (const JobEntry* match : JobsWithId(id)) {
    JobEntry& e = jobs_.at(match->job.id);
    if (!MayActOn(who, e)) return absl::PermissionDeniedError("Access/permission denied");
    if (e.job.state != JobState::kPending || e.job.priority != 0) continue;
    // A user may not release what an administrator held.
    if ((e.job.reason == PendingReason::kJobHeldAdmin ||
         e.job.reason == PendingReason::kLaunchFailedRequeuedHeld) &&
        who.uid != 0 && who.uid != opt_.slurm_user_uid) {
      return absl::PermissionDeniedError("Access/permission denied");
    }
    any = true;
    e.job.priority = InitialPriority(e);
    e.job.reason = PendingReason::kNone;
    Changed(e, fx);
  }
  if (!any) {
    return JobsWithId(id).empty() ? absl::NotFoundError("Invalid job id specified")
                                  : absl::FailedPreconditionError("Job is not held");
  }
  return absl::OkStatus();
}

bool ControllerCore::Move(JobEntry& e, JobState to, Time now) {
  if (e.job.state == JobState::kRunning && to != JobState::kRunning) ChargeUsage(e, now);
  const Status moved = e.job.Transition(to, now);
  if (moved.ok()) return true;
  // A rule of the controller let a job reach a step the state machine forbids: a bug. The
  // job keeps its state, the refusal is counted (tests fail on it) and said loudly.
  ++refused_transitions_;
  core::LogError("BUG: {}; the job keeps its state", moved.message());
  return false;
}

void ControllerCore::End(JobEntry& e, JobState state, int32_t exit_code, Time now, Effects* fx) {
  if (!Move(e, state, now)) return;
  e.job.exit_code = exit_code;
  e.job.reason = PendingReason::kNone;
  EndSteps(e, /*kill=*/true, now, fx);
  if (opt_.node_scripts && !e.alloc().empty()) {
    AwaitEpilogs(e, fx);
  } else {
    e.DropAlloc(/*keep=*/true);
    e.completing = false;
    if (e.history().kill_at != 0) e.mutable_history().kill_at = 0;
  }
  Changed(e, fx);
  if (fx) {
    fx->ended.push_back(state);
    fx->finished.push_back(e.job.id);
  }
}

void ControllerCore::Kill(JobEntry& e, JobState as, Time now, Effects* fx) {
  if (e.job.state != JobState::kRunning || !Move(e, as, now)) return;
  e.completing = true;
  e.mutable_history().kill_at = now + opt_.kill_wait_s;
  fx->ended.push_back(as);
  fx->finished.push_back(e.job.id);
  EndSteps(e, /*kill=*/false, now, fx);  // the job's signal reaches their tasks
  // Nothing but steps ran on an allocation salloc holds: once their tasks have the signal,
  // its nodes are free.
  if (e.request->allocation_only) Release(e, fx);
  SignalJob s{e.job.id, SIGTERM, {}, std::nullopt};
  for (const sched::NodeAlloc& a : e.alloc()) s.nodes.push_back(a.node);
  fx->signals.push_back(std::move(s));
  Changed(e, fx);
}

void ControllerCore::Release(JobEntry& e, Effects* fx) {
  if (e.history().awaits_epilogs()) return;  // its nodes' epilogs free them (EpilogComplete)
  if (opt_.node_scripts && !e.alloc().empty()) {
    AwaitEpilogs(e, fx);
    Changed(e, fx);
    return;
  }
  FreeNodes(e, fx);
}

void ControllerCore::FreeNodes(JobEntry& e, Effects* fx) {
  if (e.history().awaits_epilogs()) {
    e.mutable_history().epilog_nodes.clear();
    e.mutable_history().epilog_asked_at = 0;
  }
  e.completing = false;
  // A requeued job waits to run again: it no longer names where it ran.
  e.DropAlloc(/*keep=*/e.job.state != JobState::kPending);
  if (e.history().kill_at != 0) e.mutable_history().kill_at = 0;
  if (e.job.state == JobState::kPending) pass_due_ = true;
  Changed(e, fx);
}

void ControllerCore::JobEnded(JobId id, int32_t status, bool out_of_memory, Time now, Effects* fx,
                              std::string_view node) {
  JobEntry* e = FindMutable(id);
  if (!e) return;
  if (e->request->srun) return StepNodeEnded(*e, node, status, out_of_memory, now, fx);
  if (e->completing) {
    e->job.exit_code = status;
    Release(*e, fx);
    return;
  }
  if (e->job.state != JobState::kRunning) return;  // a repeated report
  if (!node.empty() && !RunsOn(*e, NodeIndex(node))) return;  // an earlier run, before a requeue
  End(*e, model::EndedState(status, out_of_memory), status, now, fx);
}

int32_t ControllerCore::NodeIndex(std::string_view node) const {
  for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
    if (cluster_.nodes[n].name == node) return static_cast<int32_t>(n);
  }
  return -1;
}

bool ControllerCore::RunsOn(const JobEntry& e, int32_t node) const {
  return node >= 0 && e.holds_nodes() &&
         std::any_of(e.alloc().begin(), e.alloc().end(),
                     [&](const sched::NodeAlloc& a) { return a.node == node; });
}

void ControllerCore::RememberStaleRun(JobId id, int32_t node) {
  std::vector<int32_t>& nodes = stale_runs_[id];
  if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
}

void ControllerCore::BackToQueue(JobEntry& e, Time now, Effects* fx) {
  if (!Move(e, JobState::kPending, now)) return;
  e.job.reason = PendingReason::kNone;
  e.DropAlloc(/*keep=*/false);
  if (e.history().ctld_prolog_done) e.mutable_history().ctld_prolog_done = false;
  pass_due_ = true;
  Changed(e, fx);
}

void ControllerCore::LaunchCollided(JobId id, const std::string& node, Time now, Effects* fx) {
  JobEntry* e = FindMutable(id);
  const int32_t n = NodeIndex(node);
  if (!e || e->request->srun || e->job.state != JobState::kRunning || !RunsOn(*e, n)) return;
  RememberStaleRun(id, n);
  // The earlier run goes as an orphan's would; this one never started.
  if (fx) fx->signals.push_back(SignalJob{id, SIGKILL, {n}, std::nullopt});
  BackToQueue(*e, now, fx);
}

void ControllerCore::LaunchFailed(JobId id, const std::string& why, Time now, Effects* fx,
                                  bool node_unreachable, std::string_view node) {
  JobEntry* e = FindMutable(id);
  if (!e) return;
  if (e->holds_nodes() && e->history().launch_error.empty()) {
    e->mutable_history().launch_error = node.empty() ? why : core::StrCat(node, ": ", why);
    if (fx) fx->touched.push_back(id);  // listed, not stored
  }
  const JobState failed = node_unreachable ? JobState::kNodeFail : JobState::kFailed;
  if (e->request->srun) return EndStep(*e, failed, node, 1 << 8, now, fx);
  if (e->job.state != JobState::kRunning) return;
  if (node_unreachable) {
    if (const int32_t n = NodeIndex(node); n >= 0) Unreachable(n, now);
    LoseJob(*e, now, fx);
    return;
  }
  End(*e, JobState::kFailed, 1 << 8, now, fx);
}

void ControllerCore::Unreachable(int32_t n, Time now) {
  if (node_alive_[n] != kNodeAlive) return;
  node_alive_[n] = kNodeUnreachable;
  model::Node& m = cluster_.nodes[n];
  if (!node_admin_[n].down) {
    m.state = model::NodeState::kDown;
    if (!m.drain) {
      m.reason = "Not responding";
      node_admin_[n] = NodeAdmin{false, opt_.slurm_user_uid, opt_.slurm_user_name, now};
    }
  }
  ++cluster_.generation;
}

void ControllerCore::Tick(Time now, Effects* fx) {
  ReservationTick(now, fx);
  if (calculated_at_ == 0 || now >= calculated_at_ + site_.cluster.priority.calc_period_s) {
    Recalculate(now, /*period=*/true, fx);
  } else if (fair_share_stale_) {
    Recalculate(now, /*period=*/false, fx);
  }
  // Nodes that stopped reporting: DOWN, and their jobs fail or go back to the queue.
  for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
    if (node_alive_[n] == kNodeSilent || now - last_seen_[n] <= opt_.slurmd_timeout_s) continue;
    node_alive_[n] = kNodeSilent;
    if (!node_admin_[n].down) {
      model::Node& m = cluster_.nodes[n];
      m.state = model::NodeState::kDown;
      if (!m.drain) {  // a drain's reason stays, with who gave it
        m.reason = "Not responding";
        // The controller set it: sinfo -R names SlurmUser and the time, as Slurm's does.
        node_admin_[n] = NodeAdmin{false, opt_.slurm_user_uid, opt_.slurm_user_name, now};
      }
    }
    ++cluster_.generation;
    LoseJobsOn(static_cast<int32_t>(n), now, fx);
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    JobEntry& e = it->second;
    const auto deadline = resv_deadlines_.find(e.job.id);
    const bool resv_over = deadline != resv_deadlines_.end() && now >= deadline->second;
    if (deadline != resv_deadlines_.end() && (resv_over || e.job.state != JobState::kRunning)) {
      resv_deadlines_.erase(deadline);
    }
    if (e.job.state == JobState::kRunning &&
        (resv_over || (e.job.time_limit_s < core::kUnlimitedSeconds &&
                       now >= sched::SaturatingAdd(e.job.start_time, e.job.time_limit_s)))) {
      Kill(e, JobState::kTimeout, now, fx);
    } else if (e.completing && e.history().awaits_epilogs()) {
      // Epilogs are waited for until each node reports or is lost (LoseJobsOn); a node that
      // lost the request (its daemon restarted) is asked again.
      JobHistory& history = e.mutable_history();
      if (history.epilog_asked_at == 0) {
        history.epilog_asked_at = now;
      } else if (now - history.epilog_asked_at >= kEpilogAskAgainS) {
        history.epilog_asked_at = now;
        if (fx) fx->terminations.push_back(e.job.id);
      }
    } else if (e.completing) {
      JobHistory& history = e.mutable_history();
      if (history.kill_at == 0) history.kill_at = now;  // restored: count KillWait from now
      // SIGKILL went out a KillWait ago and the node never answered: it is gone.
      if (now > history.kill_at + opt_.kill_wait_s) Release(e, fx);
    }
    if (model::IsFinal(e.job.state) && !e.completing &&
        now - e.job.end_time > opt_.min_job_age_s) {
      const JobId submission = e.submission_id();
      live_.erase(e.job.id);
      steps_.erase(e.job.id);
      if (fx) {
        fx->deleted.push_back(e.job.id);
        fx->touched.push_back(e.job.id);
      }
      it = jobs_.erase(it);
      // The submission goes with the last job made from it.
      if (fx && !AnyJobOf(submission)) fx->forgotten.push_back(submission);
      continue;
    }
    ++it;
  }
}

}  // namespace loom::ctld
