#include "ctld/limits_plan.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace loom::ctld {
namespace {

using model::PendingReason;

ParsedLimits Parse(const model::Limits& l) {
  ParsedLimits p;
  p.raw = l;
  auto caps = [](const std::string& text) {
    StatusOr<std::vector<sched::TresCap>> c = sched::ParseTresCaps(text);
    return c.ok() ? *std::move(c) : std::vector<sched::TresCap>{};
  };
  p.grp_tres = caps(l.grp_tres);
  p.max_tres_per_job = caps(l.max_tres_per_job);
  p.max_tres_per_user = caps(l.max_tres_per_user);
  p.min_tres_per_job = caps(l.min_tres_per_job);
  p.grp_tres_mins = caps(l.grp_tres_mins);
  return p;
}

// A limit of `l` on the job alone that it goes over, as a reason of `kind`.
PendingReason PerJobOf(const ParsedLimits* l, sched::LimitKind kind, int64_t time_limit_s,
                       const core::TresVector& tres) {
  if (l == nullptr) return PendingReason::kNone;
  for (const sched::TresCap& c : l->min_tres_per_job) {
    if (tres.Get(c.name) < c.max) {
      return sched::LimitReason(sched::LimitKind::kQosMinPerJob, c.name);
    }
  }
  if (const sched::TresCap* c = sched::FirstExceeded(l->max_tres_per_job, {}, tres)) {
    return sched::LimitReason(kind, c->name);
  }
  if (l->raw.max_wall_s >= 0 && time_limit_s > l->raw.max_wall_s) {
    return sched::LimitReason(kind, "wall");
  }
  return PendingReason::kNone;
}

// Decayed TRES-seconds as whole counts.
core::TresVector Rounded(const sched::UsageLedger::TresSeconds& seconds) {
  core::TresVector out;
  for (const auto& [name, value] : seconds) out.Set(name, std::llround(value));
  return out;
}

}  // namespace

core::TresVector RequestTres(const model::JobShape& s) {
  core::TresVector t;
  const int64_t cpus = s.TotalCpus();
  const int64_t nodes = std::max(1, s.min_nodes);
  const int64_t gpus = int64_t{s.gpus_per_node} * nodes + int64_t{s.gpus_per_task} * s.ntasks;
  int64_t mem = 0;
  if (s.mem_per_node_mb > 0) {
    mem = s.mem_per_node_mb * nodes;
  } else if (s.mem_per_cpu_mb > 0) {
    mem = s.mem_per_cpu_mb * cpus;
  } else if (s.mem_per_gpu_mb > 0) {
    mem = s.mem_per_gpu_mb * gpus;
  }
  t.Set(core::kTresCpu, cpus);
  t.Set(core::kTresMem, mem);
  t.Set(core::kTresNode, nodes);
  t.Set(core::kTresBilling, cpus);
  t.Set(core::kTresGpu, gpus);
  if (!s.gpu_type.empty()) t.Set(core::StrCat(core::kTresGpu, ":", s.gpu_type), gpus);
  return t;
}

LimitRules::LimitRules(const model::AssociationTable& table, const conf::ClusterConfig& cluster) {
  for (const conf::PartitionConfig& p : cluster.partitions) {
    if (!p.qos.empty()) partition_qos_[p.name] = core::ToLower(p.qos);
  }
  for (const auto& [name, q] : table.qos_policy) {
    if (q.limits.any()) qos_[name] = Parse(q.limits);
    deny_[name] = q.deny_on_limit;
  }
  std::map<std::string, std::string, std::less<>> parent;
  for (const model::AccountAssociation& a : table.accounts) {
    parent[a.name] = a.parent;
    if (a.limits.any()) accounts_[a.name] = Parse(a.limits);
  }
  for (const auto& [name, up] : parent) {
    std::vector<std::string>& line = lineage_[name];
    std::string at = name;
    // Bounded by the number of accounts: a cycle cannot loop.
    for (size_t k = 0; k <= parent.size() && !at.empty(); ++k) {
      line.push_back(at);
      auto it = parent.find(at);
      at = it == parent.end() ? "" : it->second;
    }
  }
  for (const model::UserAssociation& u : table.associations) {
    if (!u.partition.empty() || !u.limits.any()) continue;
    users_.emplace(std::make_pair(u.account, u.user), Parse(u.limits));
  }
}

const ParsedLimits* LimitRules::Qos(const std::string& name) const {
  auto it = qos_.find(name);
  return it == qos_.end() ? nullptr : &it->second;
}

const ParsedLimits* LimitRules::User(const std::string& account, const std::string& user) const {
  auto it = users_.find({account, user});
  return it == users_.end() ? nullptr : &it->second;
}

const ParsedLimits* LimitRules::Account(const std::string& name) const {
  auto it = accounts_.find(name);
  return it == accounts_.end() ? nullptr : &it->second;
}

const std::vector<std::string>& LimitRules::Lineage(const std::string& account) const {
  static const std::vector<std::string> kNone;
  auto it = lineage_.find(account);
  return it == lineage_.end() ? kNone : it->second;
}

const std::string& LimitRules::PartitionQos(const std::string& partition) const {
  static const std::string kNone;
  auto it = partition_qos_.find(partition);
  return it == partition_qos_.end() ? kNone : it->second;
}

std::vector<const std::string*> LimitRules::QosOf(const model::JobRequest& r,
                                                  const std::string& partition) const {
  std::vector<const std::string*> out;
  const std::string& own = PartitionQos(partition);
  if (!own.empty()) out.push_back(&own);
  if (!r.qos.empty() && r.qos != own) out.push_back(&r.qos);
  return out;
}

bool LimitRules::deny_on_limit(const model::JobRequest& r, const std::string& partition) const {
  for (const std::string* q : QosOf(r, partition)) {
    auto it = deny_.find(*q);
    if (it != deny_.end() && it->second) return true;
  }
  return false;
}

PendingReason LimitRules::PerJob(const model::JobRequest& r, const std::string& user,
                                 const std::string& partition, int64_t time_limit_s,
                                 const core::TresVector& tres) const {
  using sched::LimitKind;
  for (const std::string* q : QosOf(r, partition)) {
    if (PendingReason why = PerJobOf(Qos(*q), LimitKind::kQosPerJob, time_limit_s, tres);
        why != PendingReason::kNone) {
      return why;
    }
  }
  if (PendingReason why =
          PerJobOf(User(r.account, user), LimitKind::kAssocPerJob, time_limit_s, tres);
      why != PendingReason::kNone) {
    return why;
  }
  for (const std::string& a : Lineage(r.account)) {
    if (PendingReason why = PerJobOf(Account(a), LimitKind::kAssocPerJob, time_limit_s, tres);
        why != PendingReason::kNone) {
      return why;
    }
  }
  return PendingReason::kNone;
}

LimitsPlan::LimitsPlan(const LimitRules* rules, const sched::UsageLedger* usage, bool safe)
    : rules_(rules), usage_(usage) {
  table_.safe = safe;
}

int32_t LimitsPlan::Scope(const std::string& key, sched::LimitKind kind,
                          const std::vector<sched::TresCap>& tres, int64_t max_jobs) {
  auto [it, added] = index_.emplace(key, static_cast<int32_t>(table_.scopes.size()));
  if (added) table_.scopes.push_back(sched::LimitScope{kind, tres, max_jobs, {}});
  return it->second;
}

int32_t LimitsPlan::Scope(const std::string& key, sched::LimitKind kind, const ParsedLimits& limits,
                          const std::function<core::TresVector()>& used) {
  auto [it, added] = index_.emplace(key, static_cast<int32_t>(table_.scopes.size()));
  if (added) {
    table_.scopes.push_back(
        sched::LimitScope{kind, limits.grp_tres, limits.raw.grp_jobs, limits.grp_tres_mins});
    if (!limits.grp_tres_mins.empty() && usage_ != nullptr) table_.AddUsed(it->second, used());
  }
  return it->second;
}

core::TresVector LimitsPlan::AccountUsage(const std::string& account) const {
  core::TresVector out;
  for (const auto& [key, seconds] : usage_->tres_usage()) {
    const std::vector<std::string>& up = rules_->Lineage(key.first);
    if (std::find(up.begin(), up.end(), account) != up.end()) out += Rounded(seconds);
  }
  return out;
}

std::vector<int32_t> LimitsPlan::ScopesOf(const model::JobRequest& r, const std::string& user,
                                          const std::string& partition) {
  using sched::LimitKind;
  std::vector<int32_t> scopes;
  // A partition's QOS counts the jobs of its partitions and those that ask for it alike.
  for (const std::string* name : rules_->QosOf(r, partition)) {
    const ParsedLimits* q = rules_->Qos(*name);
    if (q == nullptr) continue;
    if (q->group()) {
      scopes.push_back(Scope(core::StrCat("q/", *name), LimitKind::kQosGroup, *q, [&] {
        auto it = usage_->qos_tres_usage().find(*name);
        return it == usage_->qos_tres_usage().end() ? core::TresVector{} : Rounded(it->second);
      }));
    }
    if (!q->max_tres_per_user.empty() || q->raw.max_jobs >= 0) {
      scopes.push_back(Scope(core::StrCat("qu/", *name, "/", user), LimitKind::kQosPerUser,
                             q->max_tres_per_user, q->raw.max_jobs));
    }
  }
  if (const ParsedLimits* u = rules_->User(r.account, user)) {
    if (u->group()) {
      scopes.push_back(
          Scope(core::StrCat("ug/", r.account, "/", user), LimitKind::kAssocGroup, *u, [&] {
            auto it = usage_->tres_usage().find({r.account, user});
            return it == usage_->tres_usage().end() ? core::TresVector{} : Rounded(it->second);
          }));
    }
    if (u->raw.max_jobs >= 0) {
      scopes.push_back(Scope(core::StrCat("um/", r.account, "/", user), LimitKind::kAssocUser, {},
                             u->raw.max_jobs));
    }
  }
  for (const std::string& a : rules_->Lineage(r.account)) {
    const ParsedLimits* l = rules_->Account(a);
    if (l != nullptr && l->group()) {
      scopes.push_back(Scope(core::StrCat("a/", a), LimitKind::kAssocGroup, *l,
                             [&] { return AccountUsage(a); }));
    }
  }
  return scopes;
}

}  // namespace loom::ctld
