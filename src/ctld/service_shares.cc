// The controller API's fair-share rpcs: Shares (sshare) and Priorities (sprio). Both read
// the owner thread's state (the fair-share values and the jobs' factors as last calculated)
// in a batch of their own, which changes nothing.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/strings.h"
#include "ctld/controller.h"
#include "ctld/service.h"

namespace loom::ctld {
namespace {

bool Admin(const Caller& who, uint32_t slurm_user_uid) {
  return who.uid == 0 || who.uid == slurm_user_uid;
}

// TRES-minutes as sshare's TRESRunMins lists them: Slurm's built-in TRES in id order, then
// the GPUs when the cluster has any; memory in megabyte-minutes.
struct RunMins {
  int64_t cpu = 0, mem = 0, node = 0, billing = 0, gpu = 0;
  void Add(const RunMins& o) {
    cpu += o.cpu;
    mem += o.mem;
    node += o.node;
    billing += o.billing;
    gpu += o.gpu;
  }
  std::string ToString(bool gpus) const {
    std::string s = core::StrCat("cpu=", cpu, ",mem=", mem, ",energy=0,node=", node,
                                 ",billing=", billing, ",fs/disk=0,vmem=0,pages=0");
    if (gpus) s += core::StrCat(",gres/gpu=", gpu);
    return s;
  }
};

// What each (account, user) association's running jobs still hold, TRES x minutes left of
// their time limits.
std::map<std::pair<std::string, std::string>, RunMins> RunningMins(const ControllerCore& core,
                                                                   Time now) {
  std::map<std::pair<std::string, std::string>, RunMins> out;
  for (const JobEntry* e : core.LiveEntries()) {
    if (e->job.state != model::JobState::kRunning || e->alloc().empty()) continue;
    const Time end = sched::SaturatingAdd(e->job.start_time, e->job.time_limit_s);
    const int64_t minutes = std::max<int64_t>(0, (end - now) / 60);
    RunMins m;
    for (const sched::NodeAlloc& a : e->alloc()) {
      m.cpu += a.amount.cpus * minutes;
      m.mem += a.amount.mem_mb * minutes;
      m.gpu += a.amount.gpus * minutes;
    }
    m.node = static_cast<int64_t>(e->alloc().size()) * minutes;
    m.billing = static_cast<int64_t>(core.BillingOf(*e)) * minutes;
    out[{e->request->account, e->job.user}].Add(m);
  }
  return out;
}

}  // namespace

Status ControllerApi::Shares(const Caller& who, const v1::SharesRequest& req,
                             v1::SharesReply* reply) {
  (void)req;
  const conf::ClusterConfig& cfg = c_->site().cluster;
  // PrivateData=usage: a user sees the accounts and their own associations only.
  const bool private_usage = cfg.Private("usage") && !Admin(who, slurm_user_uid_);
  const bool gpus =
      std::find(cfg.gres_types.begin(), cfg.gres_types.end(), "gpu") != cfg.gres_types.end();
  reply->set_fair_tree(!cfg.priority.no_fair_tree);
  return c_->Post([&](ControllerCore& core, Effects&, Time now) -> Status {
    const sched::ShareTable& t = core.fair_share();
    const auto running = RunningMins(core, now);
    // Each row's running minutes: its own (users), or its descendants' (accounts).
    std::vector<RunMins> mins(t.tree.size());
    for (size_t i = t.tree.size(); i-- > 0;) {
      const sched::ShareAssoc& a = t.tree[i];
      if (!a.user.empty()) {
        if (auto it = running.find({a.account, a.user}); it != running.end()) mins[i] = it->second;
      }
      if (a.parent >= 0) mins[a.parent].Add(mins[i]);
    }
    for (size_t i = 0; i < t.tree.size(); ++i) {
      const sched::ShareAssoc& a = t.tree[i];
      if (private_usage && !a.user.empty() && a.user != who.user) continue;
      const sched::ShareValues& v = t.values[i];
      v1::ShareRow* row = reply->add_rows();
      row->set_account(a.account);
      row->set_user(a.user);
      row->set_depth(t.depth[i]);
      row->set_raw_shares(a.shares);
      row->set_norm_shares(v.norm_shares);
      row->set_raw_usage(v.raw_usage);
      row->set_norm_usage(v.norm_usage);
      row->set_effective_usage(v.effective_usage);
      row->set_fairshare(v.fairshare);
      row->set_level_fs(v.level_fs);
      row->set_tres_run_mins(mins[i].ToString(gpus));
    }
    return absl::OkStatus();
  });
}

Status ControllerApi::Priorities(const Caller& who, const v1::PrioritiesRequest& req,
                                 v1::PrioritiesReply* reply) {
  const conf::ClusterConfig& cfg = c_->site().cluster;
  const conf::PriorityParams& p = cfg.priority;
  reply->set_multifactor(p.type == conf::PriorityType::kMultifactor);
  reply->set_weight_age(p.weight_age);
  reply->set_weight_assoc(p.weight_assoc);
  reply->set_weight_fairshare(p.weight_fairshare);
  reply->set_weight_job_size(p.weight_job_size);
  reply->set_weight_partition(p.weight_partition);
  reply->set_weight_qos(p.weight_qos);
  reply->set_weight_tres(p.weight_tres_text);
  if (!reply->multifactor()) return absl::OkStatus();
  // PrivateData=jobs: a user sees their own jobs only.
  const bool private_jobs = cfg.Private("jobs") && !Admin(who, slurm_user_uid_);
  const std::set<uint64_t> ids(req.job_ids().begin(), req.job_ids().end());
  const std::set<std::string> users(req.users().begin(), req.users().end());
  return c_->Post([&](ControllerCore& core, Effects&, Time now) -> Status {
    for (const JobEntry* e : core.LiveEntries()) {
      const model::Job& j = e->job;
      // Held jobs and jobs whose begin time is still ahead are not ranked yet.
      if (j.state != model::JobState::kPending || j.priority == 0 || j.eligible_time > now) {
        continue;
      }
      if (!ids.empty() && !ids.count(j.id) && !ids.count(e->submission_id())) continue;
      if (!users.empty() && !users.count(j.user)) continue;
      if (private_jobs && j.uid != who.uid) continue;
      const PriorityFactors f = core.FactorsOf(*e);
      v1::PriorityRow* row = reply->add_rows();
      row->set_job_id(j.id);
      row->set_partition(j.partition);
      row->set_user(j.user);
      row->set_account(e->request->account);
      row->set_priority(j.priority);
      row->set_age(f.age);
      row->set_assoc(f.assoc);
      row->set_fairshare(f.fairshare);
      row->set_job_size(f.job_size);
      row->set_partition_factor(f.partition);
      row->set_qos(f.qos);
      row->set_nice(f.nice);
      std::string tres;
      for (const auto& [name, factor] : f.tres) {
        char value[32];
        std::snprintf(value, sizeof value, "%.6f", factor);
        tres += core::StrCat(tres.empty() ? "" : ",", name, "=", value);
      }
      row->set_tres(tres);
    }
    return absl::OkStatus();
  });
}

}  // namespace loom::ctld
