// The controller API's AssocMgr rpc (scontrol show assoc_mgr): the users, associations and
// QOS of the tree loomdbd gave, each limit next to what counts against it now, in the
// layout of Slurm's assoc_mgr dump: "GrpJobs=LIMIT(USED)", "N" for no limit. Read in a batch
// of its own on the owner thread, which changes nothing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "auth/identity.h"
#include "core/strings.h"
#include "core/tres.h"
#include "ctld/controller.h"
#include "ctld/service.h"

namespace loom::ctld {
namespace {

using core::StrCat;

// What counts against a limit holder now: running jobs and what they hold, and the jobs
// submitted (pending or running).
struct Held {
  int64_t running = 0;
  int64_t submitted = 0;
  core::TresVector tres;
  void Add(const core::TresVector* holding) {
    ++submitted;
    if (holding == nullptr) return;
    ++running;
    for (const auto& [name, count] : holding->entries()) tres.Add(name, count);
  }
};

std::string Count(int64_t limit, int64_t used) {
  return StrCat(limit < 0 ? std::string("N") : std::to_string(limit), "(", used, ")");
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Minutes(int64_t seconds) {
  return seconds < 0 ? std::string() : std::to_string(seconds / 60);
}

// "cpu=N(8),mem=N(8000),node=4(2),...": every TRES of the cluster, then any other the
// limit names, each with its limit ("N": none) and what is held.
std::string TresUse(const std::string& limits, const core::TresVector& held,
                    const std::vector<std::string>& names) {
  std::map<std::string, int64_t> caps;
  if (StatusOr<std::vector<core::TresCap>> parsed = core::ParseTresCaps(limits); parsed.ok()) {
    for (const core::TresCap& c : *parsed) caps[c.name] = c.max;
  }
  std::vector<std::string> all = names;
  for (const auto& [name, _] : caps) {
    if (std::find(all.begin(), all.end(), name) == all.end()) all.push_back(name);
  }
  std::string out;
  for (const std::string& name : all) {
    auto cap = caps.find(name);
    if (!out.empty()) out += ',';
    out += StrCat(name, "=", cap == caps.end() ? std::string("N") : std::to_string(cap->second),
                  "(", held.Get(name), ")");
  }
  return out;
}

// Decayed TRES-seconds as whole minutes, what GrpTRESMins is counted in.
core::TresVector TresMinutes(const sched::UsageLedger::TresSeconds& seconds) {
  core::TresVector out;
  for (const auto& [name, value] : seconds) out.Set(name, std::llround(value / 60));
  return out;
}

std::string UserWithId(const std::string& user) {
  if (user.empty()) return "";
  auto u = auth::LookupUserByName(user);
  return u.ok() ? StrCat(user, "(", u->uid, ")") : user;
}

bool Selected(const std::set<std::string>& wanted, const std::string& name) {
  return wanted.empty() || wanted.count(name) > 0;
}

}  // namespace

Status ControllerApi::AssocMgr(const Caller& who, const v1::AssocMgrRequest& req,
                               v1::AssocMgrReply* reply) {
  const conf::ClusterConfig& cfg = c_->site().cluster;
  std::set<std::string> users(req.users().begin(), req.users().end());
  std::set<std::string> accounts;
  for (const std::string& a : req.accounts()) accounts.insert(core::ToLower(a));
  std::set<std::string> qos_names;
  for (const std::string& q : req.qos()) qos_names.insert(core::ToLower(q));
  std::set<std::string> flags;
  for (const std::string& f : req.flags()) flags.insert(core::ToLower(f));
  const bool all = flags.empty();
  // PrivateData=usage (or users): a user sees their own records only.
  if ((cfg.Private("usage") || cfg.Private("users")) && !(who.uid == 0 || Daemon(who))) {
    users = {who.user};
  }
  std::vector<std::string> tres_names = {"cpu", "mem", "node", "billing"};
  if (std::find(cfg.gres_types.begin(), cfg.gres_types.end(), "gpu") != cfg.gres_types.end()) {
    tres_names.push_back("gres/gpu");
  }
  const std::string cluster = cfg.cluster_name;
  return c_->Post([&](ControllerCore& core, Effects&, Time) -> Status {
    // Without accounting (or before loomdbd answered) the records are empty, as in Slurm.
    static const model::AssociationTable kEmpty;
    const model::AssociationTable* table =
        core.associations() != nullptr ? core.associations() : &kEmpty;
    // What counts against each holder, from the live jobs.
    std::map<std::pair<std::string, std::string>, Held> per_user;  // (account, user)
    std::map<std::string, Held> per_account;                       // each account of the lineage
    std::map<std::string, Held> per_qos;
    std::map<std::pair<std::string, std::string>, Held> per_qos_user;
    std::map<std::string, std::string> parent_of;
    for (const model::AccountAssociation& a : table->accounts) parent_of[a.name] = a.parent;
    for (const JobEntry* e : core.LiveEntries()) {
      if (model::IsFinal(e->job.state)) continue;
      const bool running = e->job.state == model::JobState::kRunning && !e->alloc().empty();
      core::TresVector holding;
      if (running) {
        holding = core.TresOf(*e);
        holding.Set("billing", static_cast<int64_t>(std::llround(core.BillingOf(*e))));
      }
      const core::TresVector* h = running ? &holding : nullptr;
      const std::string& account = e->request->account;
      per_user[{account, e->job.user}].Add(h);
      for (std::string a = account; !a.empty() && per_account.size() < 100000;) {
        per_account[a].Add(h);
        auto up = parent_of.find(a);
        a = up == parent_of.end() ? std::string() : up->second;
      }
      // A partition's QOS= counts its jobs as its own.
      std::string partition_qos;
      if (const conf::PartitionConfig* p =
              core.site().cluster.FindPartition(e->job.partition.str())) {
        partition_qos = core::ToLower(p->qos);
      }
      std::vector<std::string> under;  // the QOS whose limits the job counts against
      if (!partition_qos.empty()) under.push_back(partition_qos);
      if (!e->request->qos.empty() && e->request->qos != partition_qos) {
        under.push_back(e->request->qos);
      }
      for (const std::string& q : under) {
        per_qos[q].Add(h);
        per_qos_user[{q, e->job.user}].Add(h);
      }
    }
    // The decayed TRES-minutes used, by association, account subtree and QOS (GrpTRESMins).
    std::map<std::pair<std::string, std::string>, core::TresVector> mins_user;
    std::map<std::string, core::TresVector> mins_account, mins_qos;
    for (const auto& [key, seconds] : core.usage().tres_usage()) {
      const core::TresVector m = TresMinutes(seconds);
      mins_user[key] = m;
      for (std::string a = key.first; !a.empty() && mins_account.size() < 100000;) {
        mins_account[a] += m;
        auto up = parent_of.find(a);
        a = up == parent_of.end() ? std::string() : up->second;
      }
    }
    for (const auto& [name, seconds] : core.usage().qos_tres_usage()) {
      mins_qos[name] = TresMinutes(seconds);
    }
    std::map<std::pair<std::string, std::string>, size_t> share_row;
    const sched::ShareTable& fs = core.fair_share();
    for (size_t i = 0; i < fs.tree.size(); ++i)
      share_row[{fs.tree[i].account, fs.tree[i].user}] = i;

    std::string out = "Current Association Manager state\n";
    if (all || flags.count("users")) {
      out += "\nUser Records\n\n";
      std::set<std::string> listed;
      for (const model::UserAssociation& u : table->associations) {
        if (!Selected(users, u.user) || !listed.insert(u.user).second) continue;
        auto def = table->default_account.find(u.user);
        out += StrCat("UserName=", UserWithId(u.user),
                      " DefAccount=", def == table->default_account.end() ? "(null)" : def->second,
                      " DefWckey=(null) AdminLevel=None\n");
      }
    }
    auto assoc_lines = [&](const std::string& account, const std::string& user,
                           const std::string& partition, const std::string& parent, int64_t shares,
                           const model::Limits& l, int64_t priority, const Held& held) {
      std::string s =
          StrCat("ClusterName=", cluster, " Account=", account, " UserName=", UserWithId(user),
                 " Partition=", partition, " Priority=", priority, "\n");
      auto row = share_row.find({account, user});
      if (row != share_row.end()) {
        const sched::ShareValues& v = fs.values[row->second];
        s += StrCat(
            "    SharesRaw/Norm/Level/Factor=",
            shares == model::kFairshareParent ? std::string("parent") : std::to_string(shares), "/",
            Fixed(v.norm_shares, 2), "/",
            v.level_fs == std::numeric_limits<double>::infinity() ? std::string("inf")
                                                                  : Fixed(v.level_fs, 2),
            "/", Fixed(v.fairshare, 2), "\n");
        s += StrCat("    UsageRaw/Norm/Efctv=", Fixed(v.raw_usage, 2), "/", Fixed(v.norm_usage, 2),
                    "/", Fixed(v.effective_usage, 2), "\n");
      }
      s += StrCat("    ParentAccount=", parent, "\n");
      s += StrCat("    GrpJobs=", Count(l.grp_jobs, held.running),
                  " GrpSubmitJobs=", Count(l.grp_submit_jobs, held.submitted), "\n");
      s += StrCat("    GrpTRES=", TresUse(l.grp_tres, held.tres, tres_names), "\n");
      const core::TresVector& used_mins =
          user.empty() ? mins_account[account] : mins_user[{account, user}];
      s += StrCat("    GrpTRESMins=", TresUse(l.grp_tres_mins, used_mins, tres_names), "\n");
      s += StrCat("    MaxJobs=", user.empty() ? "" : Count(l.max_jobs, held.running),
                  " MaxSubmitJobs=", user.empty() ? "" : Count(l.max_submit_jobs, held.submitted),
                  " MaxWallPJ=", Minutes(l.max_wall_s), "\n");
      s += StrCat("    MaxTRESPJ=", l.max_tres_per_job, "\n");
      return s;
    };
    if (all || flags.count("assoc")) {
      out += "\nAssociation Records\n\n";
      static const Held kNothing;
      for (const model::AccountAssociation& a : table->accounts) {
        if (!Selected(accounts, a.name) || !users.empty()) continue;
        auto held = per_account.find(a.name);
        out += assoc_lines(a.name, "", "", a.parent, a.shares, a.limits, a.priority,
                           held == per_account.end() ? kNothing : held->second);
      }
      for (const model::UserAssociation& u : table->associations) {
        if (!Selected(accounts, u.account) || !Selected(users, u.user)) continue;
        auto held = per_user.find({u.account, u.user});
        out += assoc_lines(u.account, u.user, u.partition, u.account, u.shares, u.limits,
                           u.priority, held == per_user.end() ? kNothing : held->second);
      }
    }
    if (all || flags.count("qos")) {
      out += "\nQOS Records\n\n";
      static const Held kNothing;
      for (const auto& [name, q] : table->qos_policy) {
        if (!Selected(qos_names, name)) continue;
        auto held = per_qos.find(name);
        const Held& h = held == per_qos.end() ? kNothing : held->second;
        const model::Limits& l = q.limits;
        out += StrCat("QOS=", name, "\n");
        out += StrCat("    GrpJobs=", Count(l.grp_jobs, h.running),
                      " GrpSubmitJobs=", Count(l.grp_submit_jobs, h.submitted), "\n");
        out += StrCat("    GrpTRES=", TresUse(l.grp_tres, h.tres, tres_names), "\n");
        out +=
            StrCat("    GrpTRESMins=", TresUse(l.grp_tres_mins, mins_qos[name], tres_names), "\n");
        out += StrCat("    MaxWallPJ=", Minutes(l.max_wall_s), "\n");
        out += StrCat("    MaxTRESPJ=", l.max_tres_per_job, "\n");
        out += StrCat("    MaxTRESPU=", l.max_tres_per_user, "\n");
        out += StrCat("    MinTRESPJ=", l.min_tres_per_job, "\n");
        out += StrCat("    Priority=", q.priority, " UsageFactor=", Fixed(q.usage_factor, 6), "\n");
        out += "    User Limits\n";
        bool any = false;
        for (const auto& [key, uh] : per_qos_user) {
          if (key.first != name || !Selected(users, key.second)) continue;
          any = true;
          out += StrCat("      [", UserWithId(key.second), "]\n");
          out += StrCat("        MaxJobsPU=", Count(l.max_jobs, uh.running),
                        " MaxSubmitJobsPU=", Count(l.max_submit_jobs, uh.submitted), "\n");
          out +=
              StrCat("        MaxTRESPU=", TresUse(l.max_tres_per_user, uh.tres, tres_names), "\n");
        }
        if (!any) out += "      No Users\n";
      }
    }
    reply->set_text(std::move(out));
    return absl::OkStatus();
  });
}

}  // namespace loom::ctld
