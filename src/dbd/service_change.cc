// loomdbd's sacctmgr changes (DbdService::AcctChange): Slurm's grammar of names, `where`
// conditions and `set` values, the settings of accounts, users, associations and QOS, and
// the checks before anything is stored. Split from service.cc by concept; same class.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <utility>

#include "core/strings.h"
#include "core/time_format.h"
#include "core/tres.h"
#include "dbd/internal/entities.h"
#include "dbd/service.h"

namespace loom::dbd {
namespace {

using core::StrCat;
using internal::AssocKey;
using internal::Entity;
using internal::kRpcVersion;
using internal::NewAssoc;
using internal::NewQos;

std::string Upper(std::string_view v) {
  std::string s(v);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Capitalized(std::string_view v) {
  std::string s(v);
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}  // Slurm 22.05's protocol number, as sacctmgr shows it

// ------------------------------------------------------------------- sacctmgr's grammar

// The words after `sacctmgr VERB ENTITY`: bare names (or Name=), conditions after `where`,
// values after `set` (add: every Key=Value is a value).
struct Words {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> where;
  std::vector<std::pair<std::string, std::string>> set;
};

Words SplitWords(const v1::AcctChangeRequest& req) {
  Words w;
  enum { kNames, kWhere, kSet } part = kNames;
  const bool add = req.verb() == "add";
  for (const std::string& word : req.words()) {
    if (core::EqualsIgnoreCase(word, "where")) {
      part = kWhere;
      continue;
    }
    if (core::EqualsIgnoreCase(word, "set")) {
      part = kSet;
      continue;
    }
    const size_t eq = word.find('=');
    if (eq == std::string::npos) {
      for (std::string_view n : core::Split(word, ',')) {
        if (!n.empty()) w.names.emplace_back(n);
      }
      continue;
    }
    std::string key = word.substr(0, eq);
    std::string value = word.substr(eq + 1);
    if (core::EqualsIgnoreCase(key, "name") || core::EqualsIgnoreCase(key, "names")) {
      if (part != kSet) {
        for (std::string_view n : core::Split(value, ',')) {
          if (!n.empty()) w.names.emplace_back(n);
        }
        continue;
      }
    }
    (part == kSet || (add && part == kNames) ? w.set : w.where)
        .emplace_back(std::move(key), std::move(value));
  }
  return w;
}

bool Is(const std::string& key, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (core::EqualsIgnoreCase(key, n)) return true;
  }
  return false;
}

Status BadValue(const std::string& key, const std::string& value, std::string_view expected) {
  return absl::InvalidArgumentError(
      StrCat(" Invalid value '", value, "' for ", key, ": expected ", expected));
}

StatusOr<int64_t> Number(const std::string& key, const std::string& value) {
  if (value == "-1" || core::EqualsIgnoreCase(value, "unlimited")) return -1;
  int64_t v = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return BadValue(key, value, "a whole number, or -1 for none");
    v = v * 10 + (c - '0');
  }
  if (value.empty()) return BadValue(key, value, "a whole number, or -1 for none");
  return v;
}

StatusOr<int64_t> WallMinutes(const std::string& key, const std::string& value) {
  if (value == "-1" || core::EqualsIgnoreCase(value, "unlimited")) return -1;
  auto s = core::ParseDuration(value);
  if (!s.ok()) return BadValue(key, value, "a time such as 60, 1:00:00 or 2-00:00:00");
  return *s / 60;
}

// A TRES list as sacctmgr takes it: name=count pairs ("cpu=16,gres/gpu=2,mem=100G").
StatusOr<std::string> TresList(const std::string& key, const std::string& value) {
  if (value == "-1") return std::string();
  if (StatusOr<std::vector<core::TresCap>> caps = core::ParseTresCaps(value); !caps.ok()) {
    return BadValue(key, value,
                    core::StrCat("TRES as name=count pairs, e.g. cpu=16,gres/gpu=2 (",
                                 std::string(caps.status().message()), ")"));
  }
  return value;
}

// `modify account NAME set Parent=PARENT`: refused for the root, and for a parent in NAME's
// own subtree, which would cut the subtree from the root in a cycle.
Status CheckMove(const v1::AcctShowReply& have, const std::string& name,
                 const std::string& parent) {
  if (name == "root") return absl::InvalidArgumentError(" The root account cannot be moved");
  auto parent_of = [&have](const std::string& account) -> std::string {
    for (const v1::AcctAssoc& as : have.assocs()) {
      if (as.account() == account && as.user().empty()) return as.parent();
    }
    return "";
  };
  int depth = 0;
  for (std::string up = parent; !up.empty() && depth < 10000; up = parent_of(up), ++depth) {
    if (up == name) {
      return absl::InvalidArgumentError(core::StrCat(
          " Account '", name, "' cannot move under '", parent, "': ",
          parent == name ? "an account cannot be its own parent"
                         : "it is one of its sub-accounts, so the move would make a cycle",
          "; move that sub-account elsewhere first"));
    }
  }
  return absl::OkStatus();
}

// Association settings shared by `add account` and `add user` (and their modify): true
// when `key` is one of them.
StatusOr<bool> ApplyAssocSetting(const std::string& key, const std::string& value,
                                 v1::AcctAssoc* a) {
  if (Is(key, {"Fairshare", "Shares"})) {
    if (core::EqualsIgnoreCase(value, "parent")) {
      a->set_shares(-1);
    } else {
      ASSIGN_OR_RETURN(int64_t v, Number(key, value));
      a->set_shares(static_cast<int32_t>(v < 0 ? 1 : v));
    }
  } else if (Is(key, {"Priority"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    a->set_priority(std::max<int64_t>(v, 0));
  } else if (Is(key, {"QOS", "QOSLevel"})) {
    a->clear_qos();
    for (std::string_view q : core::Split(value, ',')) {
      if (!q.empty()) a->add_qos(core::ToLower(q));
    }
  } else if (Is(key, {"DefaultQOS", "DefQOS"})) {
    a->set_default_qos(core::ToLower(value));
  } else if (Is(key, {"GrpTRES"})) {
    ASSIGN_OR_RETURN(std::string t, TresList(key, value));
    a->set_grp_tres(t);
  } else if (Is(key, {"GrpTRESMins"})) {
    ASSIGN_OR_RETURN(std::string t, TresList(key, value));
    a->set_grp_tres_mins(t);
  } else if (Is(key, {"GrpJobs"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    a->set_grp_jobs(static_cast<int32_t>(v));
  } else if (Is(key, {"GrpSubmitJobs", "GrpSubmit"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    a->set_grp_submit_jobs(static_cast<int32_t>(v));
  } else if (Is(key, {"MaxJobs"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    a->set_max_jobs(static_cast<int32_t>(v));
  } else if (Is(key, {"MaxSubmitJobs", "MaxSubmit"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    a->set_max_submit_jobs(static_cast<int32_t>(v));
  } else if (Is(key, {"MaxTRESPerJob", "MaxTRES"})) {
    ASSIGN_OR_RETURN(std::string t, TresList(key, value));
    a->set_max_tres_per_job(t);
  } else if (Is(key, {"MaxWall", "MaxWallDurationPerJob"})) {
    ASSIGN_OR_RETURN(int64_t m, WallMinutes(key, value));
    a->set_max_wall_min(m);
  } else {
    return false;
  }
  return true;
}

Status ApplyQosSetting(const std::string& key, const std::string& value, v1::AcctQos* q) {
  if (Is(key, {"Description"})) {
    q->set_description(value);
  } else if (Is(key, {"Priority"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    q->set_priority(std::max<int64_t>(v, 0));
  } else if (Is(key, {"MaxWall", "MaxWallDurationPerJob"})) {
    ASSIGN_OR_RETURN(int64_t m, WallMinutes(key, value));
    q->set_max_wall_min(m);
  } else if (Is(key, {"MaxTRESPerJob", "MaxTRES"})) {
    ASSIGN_OR_RETURN(std::string t, TresList(key, value));
    q->set_max_tres_per_job(t);
  } else if (Is(key, {"GrpTRESMins"})) {
    ASSIGN_OR_RETURN(std::string t, TresList(key, value));
    q->set_grp_tres_mins(t);
  } else if (Is(key, {"MinTRESPerJob", "MinTRES"})) {
    ASSIGN_OR_RETURN(std::string t, TresList(key, value));
    q->set_min_tres_per_job(t);
  } else if (Is(key, {"MaxTRESPerUser", "MaxTRESPU"})) {
    ASSIGN_OR_RETURN(std::string t, TresList(key, value));
    q->set_max_tres_per_user(t);
  } else if (Is(key, {"MaxJobsPerUser", "MaxJobsPU"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    q->set_max_jobs_per_user(static_cast<int32_t>(v));
  } else if (Is(key, {"MaxSubmitJobsPerUser", "MaxSubmitJobsPU", "MaxSubmitPU"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    q->set_max_submit_jobs_per_user(static_cast<int32_t>(v));
  } else if (Is(key, {"GrpTRES"})) {
    ASSIGN_OR_RETURN(std::string t, TresList(key, value));
    q->set_grp_tres(t);
  } else if (Is(key, {"GrpJobs"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    q->set_grp_jobs(static_cast<int32_t>(v));
  } else if (Is(key, {"GrpSubmitJobs", "GrpSubmit"})) {
    ASSIGN_OR_RETURN(int64_t v, Number(key, value));
    q->set_grp_submit_jobs(static_cast<int32_t>(v));
  } else if (Is(key, {"UsageFactor"})) {
    char* end = nullptr;
    const double f = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || f < 0) {
      return BadValue(key, value, "a factor such as 1 or 0.5");
    }
    q->set_usage_factor(f);
  } else if (Is(key, {"Flags"})) {
    q->clear_flags();
    for (std::string_view f : core::Split(value, ',')) {
      if (!f.empty()) q->add_flags(std::string(f));
    }
  } else if (Is(key, {"Preempt"})) {
    q->clear_preempt();
    for (std::string_view p : core::Split(value, ',')) {
      if (!p.empty()) q->add_preempt(core::ToLower(p));
    }
  } else if (Is(key, {"PreemptMode"})) {
    const std::string m = Upper(value);
    if (m != "OFF" && m != "CANCEL" && m != "REQUEUE" && m != "SUSPEND" && m != "CLUSTER") {
      return BadValue(key, value, "OFF, CANCEL, REQUEUE, SUSPEND or CLUSTER");
    }
    q->set_preempt_mode(m == "CLUSTER" ? "" : m);
  } else if (Is(key, {"GraceTime"})) {
    auto s = core::ParseDuration(value);
    if (!s.ok()) return BadValue(key, value, "a time such as 120 or 00:02:00");
    q->set_grace_time_s(*s);
  } else {
    return absl::InvalidArgumentError(
        StrCat(" Unknown option: ", key, "=", value, "\n Use keyword 'where' to modify condition"));
  }
  return absl::OkStatus();
}

// Whether `account` is `top` or lies below it in `cluster`'s tree.
bool Under(const v1::AcctShowReply& have, const std::string& cluster, std::string account,
           const std::string& top) {
  for (int depth = 0; depth < 64 && !account.empty(); ++depth) {
    if (account == top) return true;
    std::string parent;
    for (const v1::AcctAssoc& a : have.assocs()) {
      if (a.cluster() == cluster && a.user().empty() && a.account() == account) parent = a.parent();
    }
    if (account == "root") return false;
    account = parent.empty() ? "root" : parent;
  }
  return false;
}

// What a user who is no operator may change as an account coordinator (Slurm's rule): the
// users of the accounts they coordinate and of the accounts below them, and new accounts
// below them; never anyone's AdminLevel.
Status CoordinatorMay(const DbdCaller& who, const v1::AcctChangeRequest& req, const Words& w,
                      const v1::AcctShowReply& have, const std::string& cluster) {
  const Status denied = absl::PermissionDeniedError(
      " Your user/uid doesn't have privileges for this action: ask an administrator "
      "(AdminLevel=Operator or Administrator) or a coordinator of the account");
  std::vector<std::string> mine;
  for (const v1::AcctUser& u : have.users()) {
    if (u.name() == who.user) mine.assign(u.coordinates().begin(), u.coordinates().end());
  }
  if (mine.empty()) return denied;
  auto coordinated = [&](const std::string& account) {
    for (const std::string& top : mine) {
      if (Under(have, cluster, account, top)) return true;
    }
    return false;
  };
  std::vector<std::string> accounts;
  for (const auto* list : {&w.set, &w.where}) {
    for (const auto& [k, v] : *list) {
      if (Is(k, {"AdminLevel", "Admin"})) return denied;
      const bool account_key =
          req.entity() == "user" ? Is(k, {"Account", "Accounts"}) : Is(k, {"Parent"});
      if (!account_key) continue;
      for (std::string_view a : core::Split(v, ',')) {
        if (!a.empty()) accounts.emplace_back(core::ToLower(a));
      }
    }
  }
  if (req.entity() == "user") {
    if (accounts.empty()) {
      return absl::PermissionDeniedError(
          StrCat(" A coordinator changes the users of their accounts only: name the account, "
                 "e.g. sacctmgr ",
                 req.verb(), " user NAME ", req.verb() == "add" ? "" : "where ",
                 "Account=", mine.front()));
    }
  } else if (req.entity() == "account" && req.verb() == "add") {
    if (accounts.empty()) accounts.push_back("root");
  } else {
    return denied;
  }
  for (const std::string& a : accounts) {
    if (!coordinated(a)) {
      return absl::PermissionDeniedError(
          StrCat(" You coordinate ", core::Join(mine, ","), ", not account '", a, "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Status DbdService::AcctChange(const DbdCaller& who, const v1::AcctChangeRequest& req,
                              v1::AcctChangeReply* reply) {
  core::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(v1::AcctShowReply have, Load(""));
  const Words w = SplitWords(req);
  if (!IsAdmin(who, "Operator")) {
    const std::string cluster = !req.cluster().empty()     ? req.cluster()
                                : have.clusters_size() > 0 ? have.clusters(0).name()
                                                           : "";
    RETURN_IF_ERROR(CoordinatorMay(who, req, w, have, cluster));
  }
  const std::string& verb = req.verb();
  const std::string& entity = req.entity();
  std::vector<store::AcctEntity> put;
  std::vector<store::AcctEntityKey> remove;
  std::string message;
  uint32_t next_assoc_id = 1;
  uint32_t next_qos_id = 1;
  for (const v1::AcctAssoc& a : have.assocs()) next_assoc_id = std::max(next_assoc_id, a.id() + 1);
  for (const v1::AcctQos& q : have.qos()) next_qos_id = std::max(next_qos_id, q.id() + 1);
  auto find_account = [&](const std::string& n) -> const v1::AcctAccount* {
    for (const v1::AcctAccount& a : have.accounts()) {
      if (a.name() == n) return &a;
    }
    return nullptr;
  };
  auto find_user = [&](const std::string& n) -> const v1::AcctUser* {
    for (const v1::AcctUser& u : have.users()) {
      if (u.name() == n) return &u;
    }
    return nullptr;
  };
  auto find_qos = [&](const std::string& n) -> const v1::AcctQos* {
    for (const v1::AcctQos& q : have.qos()) {
      if (q.name() == n) return &q;
    }
    return nullptr;
  };
  auto where_value = [&](std::initializer_list<std::string_view> keys) -> std::string {
    for (const auto& [k, v] : w.where) {
      if (Is(k, keys)) return v;
    }
    return "";
  };
  auto check_qos_names = [&](const v1::AcctAssoc& a) -> Status {
    for (const std::string& q : a.qos()) {
      if (find_qos(q) == nullptr) return absl::NotFoundError(StrCat(" Unknown QOS name '", q, "'"));
    }
    if (!a.default_qos().empty() && find_qos(a.default_qos()) == nullptr) {
      return absl::NotFoundError(StrCat(" Unknown QOS name '", a.default_qos(), "'"));
    }
    return absl::OkStatus();
  };
  const std::string default_cluster = !req.cluster().empty()     ? req.cluster()
                                      : have.clusters_size() > 0 ? have.clusters(0).name()
                                                                 : "";
  std::vector<std::string> names = w.names;
  if (names.empty() && verb != "add") {
    // The list outlives the views Split makes of it.
    const std::string listed = where_value({"Name", "Names", "User", "Users"});
    for (std::string_view n : core::Split(listed, ',')) {
      if (!n.empty()) names.emplace_back(n);
    }
  }
  if (names.empty()) {
    return absl::InvalidArgumentError(StrCat(" No ", entity, " name given: name the ", entity,
                                             "(s), e.g. sacctmgr ", verb, " ", entity, " NAME"));
  }

  if (entity == "qos") {
    for (const std::string& raw : names) {
      const std::string name = core::ToLower(raw);
      const v1::AcctQos* q = find_qos(name);
      if (verb == "add") {
        if (q != nullptr) continue;
        v1::AcctQos nq = NewQos(name, next_qos_id++);
        for (const auto& [k, v] : w.set) RETURN_IF_ERROR(ApplyQosSetting(k, v, &nq));
        put.push_back(Entity("qos", name, nq));
      } else if (q == nullptr) {
        continue;
      } else if (verb == "modify") {
        v1::AcctQos nq = *q;
        for (const auto& [k, v] : w.set) RETURN_IF_ERROR(ApplyQosSetting(k, v, &nq));
        put.push_back(Entity("qos", name, nq));
      } else {
        remove.push_back({"qos", name});
      }
    }
  } else if (entity == "account") {
    std::string cluster = default_cluster;
    v1::AcctAccount settings;
    std::string parent = "root";
    bool parent_given = false;
    v1::AcctAssoc limits = NewAssoc("", "", "", 0);
    limits.clear_qos();
    bool limits_given = false;
    for (const auto& [k, v] : w.set) {
      if (Is(k, {"Description"})) {
        settings.set_description(v);
      } else if (Is(k, {"Organization"})) {
        settings.set_organization(v);
      } else if (Is(k, {"Parent"})) {
        parent = core::ToLower(v);
        parent_given = true;
      } else if (Is(k, {"Cluster", "Clusters"})) {
        cluster = v;
      } else {
        ASSIGN_OR_RETURN(bool known, ApplyAssocSetting(k, v, &limits));
        if (!known) {
          return absl::InvalidArgumentError(
              StrCat(" Unknown option: ", k, "=", v, "\n Use keyword 'where' to modify condition"));
        }
        limits_given = true;
      }
    }
    if (find_account(parent) == nullptr) {
      return absl::NotFoundError(StrCat(" The parent account '", parent, "' doesn't exist"));
    }
    RETURN_IF_ERROR(check_qos_names(limits));
    for (const std::string& raw : names) {
      const std::string name = core::ToLower(raw);
      const v1::AcctAccount* a = find_account(name);
      if (verb == "add") {
        if (a != nullptr) continue;
        v1::AcctAccount na = settings;
        na.set_name(name);
        if (na.description().empty()) na.set_description(name);
        if (na.organization().empty()) na.set_organization(parent == "root" ? name : parent);
        put.push_back(Entity("account", name, na));
        v1::AcctAssoc assoc = NewAssoc(cluster, name, "", next_assoc_id++);
        assoc.set_parent(parent);
        for (const auto& [k, v] : w.set) ApplyAssocSetting(k, v, &assoc).IgnoreError();
        if (assoc.qos().empty()) assoc.add_qos("normal");
        put.push_back(Entity("assoc", AssocKey(assoc), assoc));
      } else if (a == nullptr) {
        continue;
      } else if (verb == "modify") {
        if (parent_given) RETURN_IF_ERROR(CheckMove(have, name, parent));
        v1::AcctAccount na = *a;
        if (!settings.description().empty()) na.set_description(settings.description());
        if (!settings.organization().empty()) na.set_organization(settings.organization());
        put.push_back(Entity("account", name, na));
        if (limits_given || parent_given) {
          for (const v1::AcctAssoc& as : have.assocs()) {
            if (as.account() != name || !as.user().empty()) continue;
            v1::AcctAssoc changed = as;
            for (const auto& [k, v] : w.set) ApplyAssocSetting(k, v, &changed).IgnoreError();
            if (parent_given) changed.set_parent(parent);  // the account moves, its subtree with it
            put.push_back(Entity("assoc", AssocKey(changed), changed));
          }
        }
      } else {
        if (name == "root") {
          return absl::InvalidArgumentError(" The root account cannot be deleted");
        }
        for (const v1::AcctAssoc& as : have.assocs()) {
          if ((as.account() == name && !as.user().empty()) || as.parent() == name) {
            return absl::FailedPreconditionError(StrCat(
                " Account '", name, "' still has users or sub-accounts (e.g. ",
                as.user().empty() ? as.account() : as.user(), "): delete or move them first"));
          }
        }
        remove.push_back({"account", name});
        for (const v1::AcctAssoc& as : have.assocs()) {
          if (as.account() == name) remove.push_back({"assoc", AssocKey(as)});
        }
      }
    }
  } else if (entity == "user") {
    std::string cluster = default_cluster;
    std::vector<std::string> accounts;
    std::string default_account, admin_level, partition;
    const std::string listed = where_value({"Account", "Accounts"});
    for (std::string_view a : core::Split(listed, ',')) {
      if (!a.empty()) accounts.emplace_back(core::ToLower(a));
    }
    v1::AcctAssoc limits = NewAssoc("", "", "", 0);
    bool limits_given = false;
    for (const auto& [k, v] : w.set) {
      if (Is(k, {"Account", "Accounts"})) {
        for (std::string_view a : core::Split(v, ',')) {
          if (!a.empty()) accounts.emplace_back(core::ToLower(a));
        }
      } else if (Is(k, {"DefaultAccount", "DefAccount"})) {
        default_account = core::ToLower(v);
      } else if (Is(k, {"AdminLevel", "Admin"})) {
        if (Is(v, {"None"})) {
          admin_level = "None";
        } else if (Is(v, {"Operator", "Oper"})) {
          admin_level = "Operator";
        } else if (Is(v, {"Administrator", "Admin"})) {
          admin_level = "Administrator";
        } else {
          return BadValue(k, v, "None, Operator or Administrator");
        }
        if (admin_level == "Administrator" && !IsAdmin(who, "Administrator")) {
          return absl::PermissionDeniedError(
              " Only an Administrator may make another user an Administrator");
        }
      } else if (Is(k, {"Partition", "Partitions"})) {
        partition = v;
      } else if (Is(k, {"Cluster", "Clusters"})) {
        cluster = v;
      } else {
        ASSIGN_OR_RETURN(bool known, ApplyAssocSetting(k, v, &limits));
        if (!known) {
          return absl::InvalidArgumentError(
              StrCat(" Unknown option: ", k, "=", v, "\n Use keyword 'where' to modify condition"));
        }
        limits_given = true;
      }
    }
    RETURN_IF_ERROR(check_qos_names(limits));
    if (verb == "add") {
      if (accounts.empty() && !default_account.empty()) accounts.push_back(default_account);
      if (accounts.empty()) {
        return absl::InvalidArgumentError(
            " You need to specify an account to add the user to: Account=NAME");
      }
    }
    for (const std::string& a : accounts) {
      if (find_account(a) == nullptr) {
        return absl::NotFoundError(StrCat(" This account '", a,
                                          "' doesn't exist.\n"
                                          "        Contact your admin to add this account."));
      }
    }
    for (const std::string& name : names) {
      const v1::AcctUser* u = find_user(name);
      if (verb == "add") {
        v1::AcctUser nu;
        if (u != nullptr) nu = *u;
        nu.set_name(name);
        if (!default_account.empty()) nu.set_default_account(default_account);
        if (nu.default_account().empty()) nu.set_default_account(accounts.front());
        if (!admin_level.empty()) nu.set_admin_level(admin_level);
        if (nu.admin_level().empty()) nu.set_admin_level("None");
        bool added = u == nullptr || nu.SerializeAsString() != u->SerializeAsString();
        put.push_back(Entity("user", name, nu));
        for (const std::string& account : accounts) {
          v1::AcctAssoc assoc = NewAssoc(cluster, account, name, 0);
          assoc.set_partition(partition);
          assoc.set_parent(account);
          bool exists = false;
          for (const v1::AcctAssoc& as : have.assocs())
            exists = exists || AssocKey(as) == AssocKey(assoc);
          if (exists) continue;
          assoc.set_id(next_assoc_id++);
          for (const auto& [k, v] : w.set) ApplyAssocSetting(k, v, &assoc).IgnoreError();
          if (assoc.qos().empty()) assoc.add_qos("normal");
          put.push_back(Entity("assoc", AssocKey(assoc), assoc));
          added = true;
        }
        if (!added) put.pop_back();
      } else if (u == nullptr) {
        continue;
      } else if (verb == "modify") {
        v1::AcctUser nu = *u;
        if (!default_account.empty()) {
          bool member = false;
          for (const v1::AcctAssoc& as : have.assocs()) {
            member = member || (as.user() == name && as.account() == default_account);
          }
          if (!member) {
            return absl::FailedPreconditionError(StrCat(
                " User '", name, "' has no association with account '", default_account,
                "': add it first (sacctmgr add user ", name, " Account=", default_account, ")"));
          }
          nu.set_default_account(default_account);
        }
        if (!admin_level.empty()) nu.set_admin_level(admin_level);
        put.push_back(Entity("user", name, nu));
        if (limits_given) {
          for (const v1::AcctAssoc& as : have.assocs()) {
            if (as.user() != name) continue;
            if (!accounts.empty() &&
                std::find(accounts.begin(), accounts.end(), as.account()) == accounts.end()) {
              continue;
            }
            v1::AcctAssoc changed = as;
            for (const auto& [k, v] : w.set) ApplyAssocSetting(k, v, &changed).IgnoreError();
            put.push_back(Entity("assoc", AssocKey(changed), changed));
          }
        }
      } else {
        // delete user NAME [where Account=A]: the user's associations (with those accounts),
        // and the user once none is left.
        int kept = 0;
        for (const v1::AcctAssoc& as : have.assocs()) {
          if (as.user() != name) continue;
          if (accounts.empty() ||
              std::find(accounts.begin(), accounts.end(), as.account()) != accounts.end()) {
            remove.push_back({"assoc", AssocKey(as)});
          } else {
            ++kept;
          }
        }
        if (kept == 0) remove.push_back({"user", name});
      }
    }
  } else if (entity == "coordinator") {
    // add|delete coordinator Account=A[,B] Names=U[,V]: the users coordinate those accounts
    // (and the accounts below them).
    std::vector<std::string> accounts;
    for (const auto* list : {&w.set, &w.where}) {
      for (const auto& [k, v] : *list) {
        if (!Is(k, {"Account", "Accounts"})) {
          return absl::InvalidArgumentError(StrCat(" Unknown option: ", k, "=", v, " (", verb,
                                                   " coordinator Account=A Names=U)"));
        }
        for (std::string_view a : core::Split(v, ',')) {
          if (!a.empty()) accounts.emplace_back(core::ToLower(a));
        }
      }
    }
    if (accounts.empty() || verb == "modify") {
      return absl::InvalidArgumentError(
          StrCat(" ", verb == "modify" ? "Coordinators are added or deleted" : "No account given",
                 ": sacctmgr add|delete coordinator Account=A Names=U"));
    }
    for (const std::string& a : accounts) {
      if (find_account(a) == nullptr) {
        return absl::NotFoundError(StrCat(" This account '", a, "' doesn't exist."));
      }
    }
    for (const std::string& name : names) {
      const v1::AcctUser* u = find_user(name);
      if (u == nullptr) return absl::NotFoundError(StrCat(" User '", name, "' doesn't exist."));
      v1::AcctUser nu = *u;
      std::set<std::string> coords(nu.coordinates().begin(), nu.coordinates().end());
      for (const std::string& a : accounts) {
        if (verb == "add") {
          coords.insert(a);
        } else {
          coords.erase(a);
        }
      }
      if (coords == std::set<std::string>(u->coordinates().begin(), u->coordinates().end())) {
        continue;
      }
      nu.clear_coordinates();
      for (const std::string& a : coords) nu.add_coordinates(a);
      put.push_back(Entity("user", name, nu));
    }
    if (put.empty()) {
      reply->set_changed(false);
      reply->set_message(verb == "add" ? " Nothing new added.\n" : " Nothing deleted\n");
      return absl::OkStatus();
    }
    std::string users;
    for (const store::AcctEntity& e : put) users += StrCat("  ", e.name, "\n");
    reply->set_changed(true);
    reply->set_message(StrCat(verb == "add" ? " Adding" : " Removing", " Coordinator User(s)\n",
                              users, verb == "add" ? " To" : " From",
                              " Account(s) and all sub-accounts\n  ", core::Join(accounts, ","),
                              "\n"));
    if (req.dry_run()) return absl::OkStatus();
    return store_->ChangeEntities(put, remove);
  } else if (entity == "cluster") {
    for (const std::string& name : names) {
      bool exists = false;
      for (const v1::AcctCluster& c : have.clusters()) exists = exists || c.name() == name;
      if (verb == "add") {
        if (exists) continue;
        v1::AcctCluster c;
        c.set_name(name);
        c.set_rpc_version(kRpcVersion);
        put.push_back(Entity("cluster", name, c));
        v1::AcctAssoc root = NewAssoc(name, "root", "", next_assoc_id++);
        v1::AcctAssoc root_user = NewAssoc(name, "root", "root", next_assoc_id++);
        root_user.set_parent("root");
        put.push_back(Entity("assoc", AssocKey(root), root));
        put.push_back(Entity("assoc", AssocKey(root_user), root_user));
      } else if (exists && verb == "delete") {
        remove.push_back({"cluster", name});
        for (const v1::AcctAssoc& as : have.assocs()) {
          if (as.cluster() == name) remove.push_back({"assoc", AssocKey(as)});
        }
      }
    }
  } else {
    return absl::InvalidArgumentError(
        StrCat(" Unknown entity '", entity, "': use cluster, account, user, qos or coordinator"));
  }

  if (put.empty() && remove.empty()) {
    reply->set_changed(false);
    reply->set_message(verb == "add"      ? " Nothing new added.\n"
                       : verb == "delete" ? " Nothing deleted\n"
                                          : " Nothing modified\n");
    return absl::OkStatus();
  }
  const char* doing = verb == "add" ? " Adding " : verb == "delete" ? " Deleting " : " Modified ";
  std::set<std::string> shown;
  message = StrCat(doing, entity == "qos" ? "QOS" : Capitalized(entity), "(s)\n");
  for (const store::AcctEntity& e : put) {
    if ((e.kind == entity || (entity == "qos" && e.kind == "qos")) && shown.insert(e.name).second) {
      message += StrCat("  ", e.name, "\n");
    }
  }
  for (const store::AcctEntityKey& k : remove) {
    if (k.kind == entity && shown.insert(k.name).second) message += StrCat("  ", k.name, "\n");
  }
  std::string assoc_lines;
  for (const store::AcctEntity& e : put) {
    if (e.kind != "assoc" || entity == "assoc") continue;
    v1::AcctAssoc a;
    a.ParseFromString(e.record);
    assoc_lines += StrCat("  C = ", a.cluster(), " A = ", a.account(),
                          a.user().empty() ? "" : StrCat(" U = ", a.user()), "\n");
  }
  if (!assoc_lines.empty() && verb == "add") message += " Associations\n" + assoc_lines;
  reply->set_changed(true);
  reply->set_message(message);
  if (req.dry_run()) return absl::OkStatus();
  return store_->ChangeEntities(put, remove);
}

}  // namespace loom::dbd
