// Fair share and the multifactor priority in the controller: usage charged to associations
// as jobs run, its decay, the fair-share values of the tree and pending jobs' priorities.
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "core/tres.h"
#include "ctld/controller_core.h"
#include "sched/config.h"
#include "sched/priority/priority.h"
#include "sched/priority/share_tree.h"

namespace loom::ctld {
namespace {

using model::JobState;
using model::PendingReason;

}  // namespace

void ControllerCore::RestoreUsage(sched::UsageLedger ledger) {
  usage_ = std::move(ledger);
  fair_share_stale_ = true;
}

core::TresVector ControllerCore::TresOf(const JobEntry& e) const {
  core::TresVector tres;
  int64_t cpus = 0, mem = 0, gpus = 0;
  std::map<std::string, int64_t> typed;
  for (const sched::NodeAlloc& a : e.alloc()) {
    cpus += a.amount.cpus;
    mem += a.amount.mem_mb;
    gpus += a.amount.gpus;
    const std::string& type = cluster_.nodes[a.node].gpu_type;
    if (a.amount.gpus > 0 && !type.empty()) typed[type] += a.amount.gpus;
  }
  tres.Set(core::kTresCpu, cpus);
  tres.Set(core::kTresMem, mem);
  tres.Set(core::kTresNode, static_cast<int64_t>(e.alloc().size()));
  if (gpus > 0) tres.Set(core::kTresGpu, gpus);
  for (const auto& [type, n] : typed) tres.Set(core::StrCat(core::kTresGpu, ":", type), n);
  return tres;
}

double ControllerCore::BillingOf(const JobEntry& e) const {
  const core::TresVector tres = TresOf(e);
  const core::TresBillingWeights* weights = &site_.cluster.billing_weights;
  for (const conf::PartitionConfig& p : site_.cluster.partitions) {
    if (p.name == e.job.partition && !p.billing_weights.empty()) weights = &p.billing_weights;
  }
  return weights->Billing(tres, site_.cluster.priority.max_tres);
}

Status ControllerCore::CheckSubmitLimits(const model::JobRequest& r, const std::string& partition,
                                         const Caller& who, int64_t time_limit_s,
                                         int64_t count) const {
  if (limit_rules_ == nullptr) return absl::OkStatus();
  const Status refused = absl::InvalidArgumentError(
      "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)");
  if (limit_rules_->deny_on_limit(r, partition) &&
      limit_rules_->PerJob(r, who.user, partition, time_limit_s, RequestTres(r.shape)) !=
          PendingReason::kNone) {
    return refused;
  }
  // Jobs already submitted (waiting or running) under each submission limit that is set:
  // the QOS of the job and of its partition, its association, its accounts.
  struct QosCount {
    const std::string* name;
    const ParsedLimits* limits;
    int64_t user = 0, all = 0;
  };
  std::vector<QosCount> qos;
  for (const std::string* name : limit_rules_->QosOf(r, partition)) {
    const ParsedLimits* l = limit_rules_->Qos(*name);
    if (l != nullptr && (l->raw.max_submit_jobs >= 0 || l->raw.grp_submit_jobs >= 0)) {
      qos.push_back(QosCount{.name = name, .limits = l});
    }
  }
  const ParsedLimits* u = limit_rules_->User(r.account, who.user);
  std::vector<const ParsedLimits*> accounts;
  for (const std::string& a : limit_rules_->Lineage(r.account)) {
    const ParsedLimits* l = limit_rules_->Account(a);
    if (l != nullptr && l->raw.grp_submit_jobs >= 0) accounts.push_back(l);
  }
  const bool any = !qos.empty() ||
                   (u != nullptr && (u->raw.max_submit_jobs >= 0 || u->raw.grp_submit_jobs >= 0)) ||
                   !accounts.empty();
  if (!any) return absl::OkStatus();
  int64_t assoc = 0;
  std::map<std::string, int64_t> per_account;
  for (const JobEntry* e : LiveEntries()) {
    if (model::IsFinal(e->job.state)) continue;
    const model::JobRequest& o = *e->request;
    for (const std::string* name : limit_rules_->QosOf(o, e->job.partition)) {
      for (QosCount& c : qos) {
        if (*name != *c.name) continue;
        ++c.all;
        if (e->job.uid == who.uid) ++c.user;
      }
    }
    if (o.account == r.account && e->job.uid == who.uid) ++assoc;
    for (const std::string& a : limit_rules_->Lineage(o.account)) ++per_account[a];
  }
  auto over = [&](int64_t limit, int64_t have) { return limit >= 0 && have + count > limit; };
  for (const QosCount& c : qos) {
    if (over(c.limits->raw.max_submit_jobs, c.user) || over(c.limits->raw.grp_submit_jobs, c.all)) {
      return refused;
    }
  }
  if (u != nullptr &&
      (over(u->raw.max_submit_jobs, assoc) || over(u->raw.grp_submit_jobs, assoc))) {
    return refused;
  }
  for (const std::string& a : limit_rules_->Lineage(r.account)) {
    const ParsedLimits* l = limit_rules_->Account(a);
    if (l != nullptr && over(l->raw.grp_submit_jobs, per_account[a])) return refused;
  }
  return absl::OkStatus();
}

void ControllerCore::ChargeUsage(const JobEntry& e, Time until) {
  if (e.alloc().empty()) return;
  const Time from = std::max(e.job.start_time, usage_.charged_to());
  if (until <= from) return;
  double factor = 1.0;
  if (associations_ != nullptr) {
    auto q = associations_->qos_policy.find(e.request->qos);
    if (q != associations_->qos_policy.end()) factor = q->second.usage_factor;
  }
  // What was charged before decays to `until` first: the new usage counts from there.
  const conf::PriorityParams& p = site_.cluster.priority;
  usage_.Advance(until, p.decay_half_life_s, p.usage_reset);
  const std::string& account = e.request->account;
  const double billing = BillingOf(e);
  const double seconds = static_cast<double>(until - from) * factor;
  usage_.Charge(account, e.job.user, billing * seconds);
  // GrpTRESMins: what it held, billing included, for its association, its QOS and its
  // partition's QOS.
  core::TresVector tres = TresOf(e);
  tres.Set(core::kTresBilling, std::llround(billing));
  usage_.ChargeTres(account, e.job.user, tres, seconds);
  usage_.ChargeQosTres(e.request->qos, tres, seconds);
  if (const conf::PartitionConfig* part = site_.cluster.FindPartition(e.job.partition.str())) {
    const std::string partition_qos = core::ToLower(part->qos);
    if (partition_qos != e.request->qos) usage_.ChargeQosTres(partition_qos, tres, seconds);
  }
  usage_changed_ = true;
  fair_share_stale_ = true;
}

void ControllerCore::ComputeFairShare() {
  fair_share_stale_ = false;
  weights_ = sched::WeightsFromConfig(site_.cluster.priority);
  totals_ = sched::ClusterTotals{};
  totals_.nodes = static_cast<int32_t>(cluster_.nodes.size());
  totals_.cpus = 0;
  for (const model::Node& n : cluster_.nodes) totals_.cpus += n.capacity.cpus;
  for (const model::Partition& part : cluster_.partitions) {
    totals_.max_partition_job_factor =
        std::max<int32_t>(totals_.max_partition_job_factor, part.priority_job_factor);
  }
  partition_tres_.assign(cluster_.partitions.size(), core::TresVector{});
  for (size_t i = 0; i < cluster_.partitions.size(); ++i) {
    for (int32_t n : cluster_.partitions[i].nodes) {
      const model::Node& node = cluster_.nodes[n];
      core::TresVector& t = partition_tres_[i];
      t.Add(core::kTresCpu, node.capacity.cpus);
      t.Add(core::kTresMem, node.capacity.mem_mb);
      t.Add(core::kTresNode, 1);
      t.Add(core::kTresBilling, node.capacity.cpus);
      t.Add(core::kTresGpu, node.capacity.gpus);
      if (!node.gpu_type.empty()) {
        t.Add(core::StrCat(core::kTresGpu, ":", node.gpu_type), node.capacity.gpus);
      }
    }
  }
  highest_qos_priority_ = 0;
  assoc_factor_.clear();
  if (associations_ == nullptr) {
    fair_share_ = sched::ShareTable{};
    return;
  }
  for (const auto& [name, q] : associations_->qos_policy) {
    highest_qos_priority_ = std::max(highest_qos_priority_, q.priority);
  }
  // An association without a Priority of its own has its account's, up the tree.
  std::map<std::string, const model::AccountAssociation*, std::less<>> account;
  for (const model::AccountAssociation& a : associations_->accounts) account[a.name] = &a;
  auto inherited = [&](std::string name) -> int64_t {
    for (size_t depth = 0; depth <= account.size() && !name.empty(); ++depth) {
      auto it = account.find(name);
      if (it == account.end()) return 0;
      if (it->second->priority > 0) return it->second->priority;
      name = it->second->parent;
    }
    return 0;
  };
  int64_t highest_assoc = 0;
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> assoc_priority;
  for (const model::UserAssociation& u : associations_->associations) {
    const int64_t p = u.priority > 0 ? u.priority : inherited(u.account);
    assoc_priority.push_back({{u.account, u.user}, p});
    highest_assoc = std::max(highest_assoc, p);
  }
  for (const model::AccountAssociation& a : associations_->accounts) {
    highest_assoc = std::max(highest_assoc, a.priority);
  }
  for (const auto& [key, p] : assoc_priority) {
    if (highest_assoc > 0 && p > 0) {
      assoc_factor_[key] = static_cast<double>(p) / static_cast<double>(highest_assoc);
    }
  }
  fair_share_ = sched::BuildShareTable(*associations_, usage_,
                                       site_.cluster.priority.no_fair_tree
                                           ? sched::FairShareAlgorithm::kClassic
                                           : sched::FairShareAlgorithm::kFairTree);
}

PriorityFactors ControllerCore::FactorsOf(const JobEntry& e) const {
  PriorityFactors f;
  const conf::PriorityParams& p = site_.cluster.priority;
  const model::JobRequest& r = *e.request;
  f.age = sched::AgeFactor(calculated_at_, e.job.eligible_time, p.max_age_s);
  if (auto it = fair_share_.factor.find({r.account, e.job.user}); it != fair_share_.factor.end()) {
    f.fairshare = it->second;
  }
  sched::PriorityInputs in;
  in.eligible_since = e.job.eligible_time;
  in.nodes = std::max(1, r.shape.min_nodes);
  in.cpus = std::max<int64_t>(1, r.shape.TotalCpus());
  if (e.partition >= 0 && static_cast<size_t>(e.partition) < cluster_.partitions.size()) {
    in.partition_job_factor = cluster_.partitions[e.partition].priority_job_factor;
  }
  if (associations_ != nullptr && highest_qos_priority_ > 0) {
    auto q = associations_->qos_policy.find(r.qos);
    if (q != associations_->qos_policy.end()) {
      in.qos_factor =
          static_cast<double>(q->second.priority) / static_cast<double>(highest_qos_priority_);
    }
  }
  in.fairshare_factor = f.fairshare;
  if (auto it = assoc_factor_.find({r.account, e.job.user}); it != assoc_factor_.end()) {
    in.assoc_factor = it->second;
  }
  if (!weights_.tres.empty() && e.partition >= 0 &&
      static_cast<size_t>(e.partition) < partition_tres_.size()) {
    in.tres_factors =
        sched::TresFactors(weights_.tres, RequestTres(r.shape), partition_tres_[e.partition]);
  }
  in.nice = r.nice;
  f.job_size = sched::JobSizeFactor(in, totals_, p.favor_small);
  f.partition = sched::PartitionFactor(in, totals_);
  f.qos = in.qos_factor;
  f.assoc = in.assoc_factor;
  f.tres = in.tres_factors;
  f.nice = r.nice;
  f.priority = sched::MultifactorPriority(weights_, in, totals_, calculated_at_);
  return f;
}

int64_t ControllerCore::InitialPriority(const JobEntry& e) const {
  if (e.request->priority) return *e.request->priority;
  if (!multifactor()) return DefaultPriority(*e.request, e.submission_id());
  return std::clamp<int64_t>(FactorsOf(e).priority, 1, kMaxJobPriority);
}

void ControllerCore::Recalculate(Time now, bool period, Effects* fx) {
  const conf::PriorityParams& p = site_.cluster.priority;
  if (period) {
    if (usage_.Advance(now, p.decay_half_life_s, p.usage_reset)) fair_share_stale_ = true;
    for (JobEntry* e : LiveMutable()) {
      if (e->job.state == JobState::kRunning) ChargeUsage(*e, now);
    }
    usage_.set_charged_to(now);
    usage_changed_ = true;
    // Age counts at the calculations only, as in Slurm: between them priorities move with
    // fair share alone.
    calculated_at_ = now;
  }
  if (fair_share_stale_) ComputeFairShare();
  if (!multifactor()) return;
  for (JobEntry* e : LiveMutable()) {
    if (e->job.state != JobState::kPending || e->job.priority == 0 || e->request->priority) {
      continue;
    }
    const int64_t priority = InitialPriority(*e);
    if (priority == e->job.priority) continue;
    e->job.priority = priority;
    pass_due_ = true;
    if (fx) fx->touched.push_back(e->job.id);
  }
}

}  // namespace loom::ctld
