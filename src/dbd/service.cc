#include "dbd/service.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "auth/identity.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "dbd/usage.h"
#include "rpc/convert.h"
#include "rpc/credential.h"

namespace loom::dbd {
namespace {

using core::StrCat;

constexpr int kRpcVersion = 9728;

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

std::string AssocKey(const v1::AcctAssoc& a) {
  return StrCat(a.cluster(), "/", a.account(), "/", a.user(), "/", a.partition());
}

template <typename M>
store::AcctEntity Entity(std::string kind, std::string name, const M& m) {
  return {std::move(kind), std::move(name), m.SerializeAsString()};
}

// Slurm's terminal states, and the ones sacct's time window counts by their end.
bool Ended(const std::string& state) {
  return state != "PENDING" && state != "RUNNING" && state != "SUSPENDED" && state != "REQUEUED";
}

// sacct's selection, exactly: without states, the jobs eligible before the window's end that
// had not ended before its start; with states, those that were in one of them during the
// window (an ended state by its end time, RUNNING by its run, PENDING by its wait).
bool InWindow(const store::AcctJobRow& r, const v1::AcctQueryJobsRequest& q) {
  if (q.start() == 0 && q.end() == 0) return true;
  const int64_t from = q.start();
  const int64_t to = q.end() > 0 ? q.end() : INT64_MAX;
  if (q.states().empty()) {
    return r.eligible_time > 0 && r.eligible_time <= to && (r.end_time == 0 || r.end_time >= from);
  }
  if (Ended(r.state)) return r.end_time >= from && r.end_time <= to;
  if (r.state == "RUNNING" || r.state == "SUSPENDED") {
    return r.start_time > 0 && r.start_time <= to && (r.end_time == 0 || r.end_time >= from);
  }
  return r.submit_time <= to && (r.start_time == 0 || r.start_time >= from);
}

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
  for (std::string_view part : core::Split(value, ',')) {
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == part.size()) {
      return BadValue(key, value, "TRES as name=count pairs, e.g. cpu=16,gres/gpu=2");
    }
  }
  return value;
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

v1::AcctQos NewQos(const std::string& name, uint32_t id) {
  v1::AcctQos q;
  q.set_name(name);
  q.set_max_wall_min(-1);
  q.set_max_jobs_per_user(-1);
  q.set_max_submit_jobs_per_user(-1);
  q.set_grp_jobs(-1);
  q.set_grp_submit_jobs(-1);
  q.set_usage_factor(1);
  q.set_id(id);
  return q;
}

v1::AcctAssoc NewAssoc(const std::string& cluster, const std::string& account,
                       const std::string& user, uint32_t id) {
  v1::AcctAssoc a;
  a.set_cluster(cluster);
  a.set_account(account);
  a.set_user(user);
  a.set_shares(1);
  a.set_grp_jobs(-1);
  a.set_grp_submit_jobs(-1);
  a.set_max_jobs(-1);
  a.set_max_submit_jobs(-1);
  a.set_max_wall_min(-1);
  a.add_qos("normal");
  a.set_id(id);
  return a;
}

// What Admit learnt from a large frame's first bytes.
struct Admission {
  std::string credential;
  auth::OpenedCredential opened;
};

template <typename Req, typename Reply>
rpc::FrameAnswer Serve(DbdService& svc, auth::MungeCredentials& munge, const v1::Frame& frame,
                       const std::any& admitted,
                       Status (DbdService::*fn)(const DbdCaller&, const Req&, Reply*)) {
  Req req;
  Reply reply;
  rpc::FrameAnswer answer;
  Status s;
  if (!req.ParseFromString(frame.body())) {
    s = absl::InvalidArgumentError(
        StrCat("corrupt request: the body of a ", frame.method(), " request cannot be read"));
  } else {
    StatusOr<auth::Identity> id = absl::UnauthenticatedError("no credential");
    if (const auto* a = std::any_cast<Admission>(&admitted)) {
      id = a->credential != frame.credential()
               ? StatusOr<auth::Identity>(absl::UnauthenticatedError(
                     "corrupt request: the frame's credential changed after it was admitted"))
               : rpc::CheckOpenedCredential(a->opened, frame.method(), frame.body());
    } else {
      id = rpc::CheckCredential(munge, frame.credential(), frame.method(), frame.body());
    }
    answer.authenticated = id.ok();
    if (id.ok()) {
      DbdCaller who{id->uid, ""};
      auto user = auth::LookupUserById(id->uid);
      who.user = user.ok() ? user->name : StrCat(id->uid);
      s = (svc.*fn)(who, req, &reply);
    } else {
      s = id.status();
    }
  }
  if (!s.ok()) reply.Clear();
  *reply.mutable_error() = rpc::ToWire(s);
  answer.reply = reply.SerializeAsString();
  return answer;
}

}  // namespace

DbdService::DbdService(conf::DbdConfig config, std::unique_ptr<store::AcctStore> store,
                       auth::MungeCredentials* munge, const core::Clock* clock)
    : config_(std::move(config)), munge_(munge), clock_(clock), store_(std::move(store)) {
  auto u = auth::LookupUserByName(config_.slurm_user);
  slurm_user_uid_ = u.ok() ? u->uid : 0;
}

Status DbdService::Bootstrap() {
  core::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(std::vector<store::AcctEntity> qos, store_->ListEntities("qos"));
  std::vector<store::AcctEntity> put;
  if (qos.empty()) put.push_back(Entity("qos", "normal", NewQos("normal", 1)));
  ASSIGN_OR_RETURN(std::vector<store::AcctEntity> users, store_->ListEntities("user"));
  if (users.empty()) {
    v1::AcctUser root;
    root.set_name("root");
    root.set_default_account("root");
    root.set_admin_level("Administrator");
    put.push_back(Entity("user", "root", root));
    v1::AcctAccount account;
    account.set_name("root");
    account.set_description("default root account");
    account.set_organization("root");
    put.push_back(Entity("account", "root", account));
  }
  return store_->ChangeEntities(put, {});
}

bool DbdService::IsDaemon(const DbdCaller& who) const {
  return who.uid == 0 || who.uid == slurm_user_uid_;
}

bool DbdService::IsAdmin(const DbdCaller& who, std::string_view level) {
  if (IsDaemon(who)) return true;
  auto users = store_->ListEntities("user");
  if (!users.ok()) return false;
  for (const store::AcctEntity& e : *users) {
    if (e.name != who.user) continue;
    v1::AcctUser u;
    u.ParseFromString(e.record);
    if (u.admin_level() == "Administrator") return true;
    return level == "Operator" && u.admin_level() == "Operator";
  }
  return false;
}

StatusOr<v1::AcctShowReply> DbdService::Load(std::string_view kind) {
  v1::AcctShowReply out;
  store::AcctStore& store = *store_;  // the lambda runs under this call's lock
  auto want = [&](std::string_view k) { return kind.empty() || kind == k; };
  auto each = [&](std::string_view k, auto add) -> Status {
    if (!want(k)) return absl::OkStatus();
    ASSIGN_OR_RETURN(std::vector<store::AcctEntity> es, store.ListEntities(k));
    for (const store::AcctEntity& e : es) {
      if (!add()->ParseFromString(e.record)) {
        return absl::DataLossError(StrCat("the stored ", k, " '", e.name, "' cannot be read"));
      }
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(each("cluster", [&] { return out.add_clusters(); }));
  RETURN_IF_ERROR(each("account", [&] { return out.add_accounts(); }));
  RETURN_IF_ERROR(each("user", [&] { return out.add_users(); }));
  RETURN_IF_ERROR(each("qos", [&] { return out.add_qos(); }));
  RETURN_IF_ERROR(each("assoc", [&] { return out.add_assocs(); }));
  return out;
}

Status DbdService::RegisterCluster(const v1::AcctRecordRequest& req) {
  ASSIGN_OR_RETURN(v1::AcctShowReply have, Load(""));
  std::vector<store::AcctEntity> put;
  const v1::AcctCluster* known = nullptr;
  for (const v1::AcctCluster& c : have.clusters()) {
    if (c.name() == req.cluster()) known = &c;
  }
  const std::string tres = !req.cluster_tres().empty() ? req.cluster_tres()
                           : known != nullptr          ? known->tres()
                                                       : "";
  if (known != nullptr && known->control_host() == req.control_host() &&
      known->control_port() == req.control_port() && known->tres() == tres) {
    return absl::OkStatus();
  }
  v1::AcctCluster c;
  c.set_name(req.cluster());
  c.set_control_host(req.control_host());
  c.set_control_port(req.control_port());
  c.set_rpc_version(kRpcVersion);
  c.set_tres(tres);
  put.push_back(Entity("cluster", c.name(), c));
  if (known == nullptr) {
    // Usage is rolled up from the hour the cluster registered (or the earliest a record
    // later names).
    v1::AcctRollupState state;
    state.set_rolled_until(FloorHour(clock_->UnixSeconds()));
    put.push_back(Entity("rollup", c.name(), state));
  }
  if (known == nullptr) {
    // As `sacctmgr add cluster` does: the cluster's root account, and root in it.
    uint32_t next_id = 1;
    for (const v1::AcctAssoc& a : have.assocs()) next_id = std::max(next_id, a.id() + 1);
    v1::AcctAssoc account = NewAssoc(c.name(), "root", "", next_id++);
    v1::AcctAssoc user = NewAssoc(c.name(), "root", "root", next_id++);
    user.set_parent("root");
    put.push_back(Entity("assoc", AssocKey(account), account));
    put.push_back(Entity("assoc", AssocKey(user), user));
    core::LogInfo("registered cluster {} (controller at {}:{})", c.name(), c.control_host(),
                  c.control_port());
  }
  return store_->ChangeEntities(put, {});
}

Status DbdService::AcctRecord(const DbdCaller& who, const v1::AcctRecordRequest& req,
                              v1::AcctRecordReply* reply) {
  if (!IsDaemon(who)) {
    return absl::PermissionDeniedError(StrCat("Access/permission denied: only root or SlurmUser (",
                                              config_.slurm_user, ") may send job records, not ",
                                              who.user));
  }
  if (req.cluster().empty()) {
    return absl::InvalidArgumentError("job records without a cluster name");
  }
  core::MutexLock lock(&mu_);
  RETURN_IF_ERROR(RegisterCluster(req));
  ASSIGN_OR_RETURN(v1::AcctShowReply have, Load("user"));
  std::map<std::string, std::string> default_account;
  for (const v1::AcctUser& u : have.users()) default_account[u.name()] = u.default_account();
  std::vector<store::AcctJobRow> rows;
  rows.reserve(req.jobs_size());
  for (const v1::AcctJob& in : req.jobs()) {
    v1::AcctJob job = in;
    v1::JobInfo& j = *job.mutable_job();
    job.set_cluster(req.cluster());
    // A job that named no account is the user's default account's, as Slurm records it.
    if (j.spec().account().empty()) {
      auto d = default_account.find(j.user());
      if (d != default_account.end()) j.mutable_spec()->set_account(d->second);
    }
    if (job.qos().empty() && !j.spec().account().empty()) job.set_qos("normal");
    store::AcctJobRow r;
    r.cluster = req.cluster();
    r.job_id = j.job_id();
    r.array_job_id = j.array_job_id() == j.job_id() && j.array_task_id() < 0 ? 0 : j.array_job_id();
    r.array_task_id = j.array_task_id();
    r.submit_time = j.submit_time();
    r.eligible_time = j.eligible_time();
    r.start_time = j.start_time();
    r.end_time = j.end_time();
    r.uid = j.uid();
    r.gid = j.gid();
    r.user = j.user();
    r.account = j.spec().account();
    r.partition = j.partition();
    r.qos = job.qos();
    r.state = j.state();
    r.record = job.SerializeAsString();
    rows.push_back(std::move(r));
  }
  RETURN_IF_ERROR(store_->UpsertJobs(rows));
  // Records of hours already rolled up (loomdbd was away, or a job that ran then ended
  // now): those hours are rolled up again at the next report.
  int64_t earliest = 0;
  for (const store::AcctJobRow& r : rows) {
    if (r.start_time > 0 && (earliest == 0 || r.start_time < earliest)) earliest = r.start_time;
  }
  if (earliest == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(v1::AcctRollupState state, RollupState(req.cluster()));
  if (earliest >= state.rolled_until()) return absl::OkStatus();
  const int64_t from = FloorHour(earliest);
  if (state.dirty_from() != 0 && state.dirty_from() <= from) return absl::OkStatus();
  state.set_dirty_from(from);
  return store_->ChangeEntities({Entity("rollup", req.cluster(), state)}, {});
}

StatusOr<v1::AcctRollupState> DbdService::RollupState(const std::string& cluster) {
  ASSIGN_OR_RETURN(std::vector<store::AcctEntity> states,
                   // Exactly `cluster`: no name sorts between it and it + "\x01".
                   store_->ListEntitiesBetween("rollup", cluster, cluster + '\x01'));
  v1::AcctRollupState state;
  if (!states.empty() && !state.ParseFromString(states.front().record)) {
    return absl::DataLossError(StrCat("the rollup state of cluster ", cluster, " cannot be read"));
  }
  return state;
}

StatusOr<int64_t> DbdService::RollUp(const std::string& cluster) {
  ASSIGN_OR_RETURN(v1::AcctRollupState state, RollupState(cluster));
  const int64_t to = FloorHour(clock_->UnixSeconds());
  int64_t from = state.rolled_until() > 0 ? state.rolled_until() : to;
  if (state.dirty_from() > 0) from = std::min(from, state.dirty_from());
  if (from >= to) return state.rolled_until();
  ASSIGN_OR_RETURN(v1::AcctShowReply clusters, Load("cluster"));
  std::map<std::string, double> capacity;
  for (const v1::AcctCluster& c : clusters.clusters()) {
    if (c.name() == cluster) capacity = ParseTres(c.tres());
  }
  store::AcctJobFilter f;
  f.cluster = cluster;
  f.active_from = from;
  f.active_to = to;
  ASSIGN_OR_RETURN(std::vector<store::AcctJobRow> rows, store_->FindJobs(f));
  std::vector<v1::AcctJob> jobs(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!jobs[i].ParseFromString(rows[i].record)) {
      return absl::DataLossError(
          StrCat("the stored record of job ", rows[i].job_id, " cannot be read"));
    }
  }
  std::vector<store::AcctEntity> put;
  for (const v1::AcctUsageHour& h : dbd::RollUp(jobs, capacity, from, to, clock_->UnixSeconds())) {
    put.push_back(Entity("usage", UsageName(cluster, h.hour()), h));
  }
  v1::AcctRollupState done;
  done.set_rolled_until(std::max(to, state.rolled_until()));
  put.push_back(Entity("rollup", cluster, done));
  RETURN_IF_ERROR(store_->ChangeEntities(put, {}));
  return done.rolled_until();
}

Status DbdService::AcctReport(const DbdCaller& who, const v1::AcctReportRequest& req,
                              v1::AcctReportReply* reply) {
  core::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(v1::AcctShowReply tree, Load(""));
  std::vector<std::string> clusters;
  for (const v1::AcctCluster& c : tree.clusters()) {
    if (req.cluster().empty() || req.cluster() == c.name()) clusters.push_back(c.name());
  }
  const int64_t start = FloorHour(req.start());
  const int64_t end = FloorHour(req.end());
  if (end <= start) {
    return absl::InvalidArgumentError("the report's end must be at least an hour after its start");
  }
  // PrivateData=usage: a user who is no administrator sees only their own usage.
  const bool own_only = config_.Private("usage") && !IsAdmin(who, "Operator");
  if (req.kind() == "sizes") {
    std::vector<int32_t> grouping(req.grouping().begin(), req.grouping().end());
    if (grouping.empty()) grouping = {50, 250, 500, 1000};
    store::AcctJobFilter f;
    f.cluster = req.cluster();
    f.active_from = start;
    f.active_to = end;
    if (own_only) f.uids.push_back(who.uid);
    ASSIGN_OR_RETURN(std::vector<store::AcctJobRow> rows, store_->FindJobs(f));
    std::vector<v1::AcctJob> jobs(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) jobs[i].ParseFromString(rows[i].record);
    for (v1::AcctSizes& s : JobSizes(jobs, grouping, start, end, clock_->UnixSeconds())) {
      *reply->add_sizes() = std::move(s);
    }
  } else {
    for (const std::string& c : clusters) {
      ASSIGN_OR_RETURN(int64_t rolled, RollUp(c));
      reply->set_rolled_until(rolled);
      ASSIGN_OR_RETURN(
          std::vector<store::AcctEntity> hours,
          store_->ListEntitiesBetween("usage", UsageName(c, start), UsageName(c, end)));
      // One line per cluster: the window's hours summed.
      v1::AcctUsageHour& sum = *reply->add_hours();
      sum.set_hour(start);
      std::map<std::pair<std::string, std::string>, v1::AcctUsage> lines;
      for (const store::AcctEntity& e : hours) {
        v1::AcctUsageHour h;
        if (!h.ParseFromString(e.record)) {
          return absl::DataLossError("a usage rollup cannot be read");
        }
        for (const auto& [k, v] : h.capacity()) (*sum.mutable_capacity())[k] += v;
        for (const auto& [k, v] : h.alloc()) (*sum.mutable_alloc())[k] += v;
        for (const auto& [k, v] : h.down()) (*sum.mutable_down())[k] += v;
        for (const v1::AcctUsage& u : h.assocs()) {
          if (own_only && u.user() != who.user) continue;
          v1::AcctUsage& line = lines[{u.account(), u.user()}];
          line.set_account(u.account());
          line.set_user(u.user());
          for (const auto& [k, v] : u.alloc()) (*line.mutable_alloc())[k] += v;
        }
      }
      for (auto& [key, line] : lines) *sum.add_assocs() = std::move(line);
    }
  }
  for (const v1::AcctAssoc& a : tree.assocs()) {
    if (req.cluster().empty() || a.cluster() == req.cluster()) *reply->add_assocs() = a;
  }
  return absl::OkStatus();
}

Status DbdService::AcctQueryJobs(const DbdCaller& who, const v1::AcctQueryJobsRequest& req,
                                 v1::AcctQueryJobsReply* reply) {
  core::MutexLock lock(&mu_);
  const bool admin = IsAdmin(who, "Operator");
  store::AcctJobFilter f;
  f.cluster = req.cluster();
  f.job_ids.assign(req.job_ids().begin(), req.job_ids().end());
  f.uids.assign(req.uids().begin(), req.uids().end());
  if (f.uids.empty() && !req.all_users() && !admin) f.uids.push_back(who.uid);
  f.accounts.assign(req.accounts().begin(), req.accounts().end());
  f.partitions.assign(req.partitions().begin(), req.partitions().end());
  f.states.assign(req.states().begin(), req.states().end());
  if (req.start() > 0) f.active_from = req.start();
  if (req.end() > 0) f.active_to = req.end();
  // The store narrows by columns; the window's exact rule is InWindow. A job pending in a
  // state window may have been submitted before it, so the store's bound is loose there.
  if (!req.states().empty()) f.active_to.reset();
  ASSIGN_OR_RETURN(std::vector<store::AcctJobRow> rows, store_->FindJobs(f));
  const std::set<std::string> qos(req.qos().begin(), req.qos().end());
  const bool private_jobs = config_.Private("jobs") && !admin;
  for (const store::AcctJobRow& r : rows) {
    if (!InWindow(r, req)) continue;
    if (!qos.empty() && !qos.count(r.qos)) continue;
    if (private_jobs && r.uid != who.uid) continue;
    if (!reply->add_jobs()->ParseFromString(r.record)) {
      return absl::DataLossError(StrCat("the stored record of job ", r.job_id, " cannot be read"));
    }
  }
  return absl::OkStatus();
}

Status DbdService::AcctShow(const DbdCaller& who, const v1::AcctShowRequest& req,
                            v1::AcctShowReply* reply) {
  core::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(*reply, Load(req.kind() == "association" ? "assoc" : req.kind()));
  if (IsAdmin(who, "Operator")) return absl::OkStatus();
  // PrivateData=users: a user sees only their own user record; =accounts: only the
  // associations they are in.
  if (config_.Private("users")) {
    auto* users = reply->mutable_users();
    users->erase(std::remove_if(users->begin(), users->end(),
                                [&](const v1::AcctUser& u) { return u.name() != who.user; }),
                 users->end());
  }
  if (config_.Private("accounts")) {
    std::set<std::string> mine;
    for (const v1::AcctAssoc& a : reply->assocs()) {
      if (a.user() == who.user) mine.insert(a.account());
    }
    auto* assocs = reply->mutable_assocs();
    assocs->erase(std::remove_if(assocs->begin(), assocs->end(),
                                 [&](const v1::AcctAssoc& a) { return !mine.count(a.account()); }),
                  assocs->end());
    auto* accounts = reply->mutable_accounts();
    accounts->erase(std::remove_if(accounts->begin(), accounts->end(),
                                   [&](const v1::AcctAccount& a) { return !mine.count(a.name()); }),
                    accounts->end());
  }
  return absl::OkStatus();
}

Status DbdService::AcctChange(const DbdCaller& who, const v1::AcctChangeRequest& req,
                              v1::AcctChangeReply* reply) {
  core::MutexLock lock(&mu_);
  if (!IsAdmin(who, "Operator")) {
    return absl::PermissionDeniedError(
        " Your user/uid doesn't have privileges for this action: ask an administrator "
        "(AdminLevel=Operator or Administrator)");
  }
  ASSIGN_OR_RETURN(v1::AcctShowReply have, Load(""));
  const Words w = SplitWords(req);
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
    for (std::string_view n : core::Split(where_value({"Name", "Names", "User", "Users"}), ',')) {
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
    v1::AcctAssoc limits = NewAssoc("", "", "", 0);
    limits.clear_qos();
    bool limits_given = false;
    for (const auto& [k, v] : w.set) {
      if (Is(k, {"Description"})) {
        settings.set_description(v);
      } else if (Is(k, {"Organization"})) {
        settings.set_organization(v);
      } else if (Is(k, {"Parent"})) {
        parent = v;
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
        v1::AcctAccount na = *a;
        if (!settings.description().empty()) na.set_description(settings.description());
        if (!settings.organization().empty()) na.set_organization(settings.organization());
        put.push_back(Entity("account", name, na));
        if (limits_given) {
          for (const v1::AcctAssoc& as : have.assocs()) {
            if (as.account() != name || !as.user().empty()) continue;
            v1::AcctAssoc changed = as;
            for (const auto& [k, v] : w.set) ApplyAssocSetting(k, v, &changed).IgnoreError();
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
    for (std::string_view a : core::Split(where_value({"Account", "Accounts"}), ',')) {
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
        StrCat(" Unknown entity '", entity, "': use cluster, account, user or qos"));
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

StatusOr<std::any> DbdService::Admit(std::string_view prefix) {
  std::optional<rpc::FrameHead> head = rpc::ReadFrameHead(prefix);
  if (!head) {
    return absl::UnauthenticatedError(StrCat(
        "a frame of over ", prefix.size(),
        " bytes must begin with its method and MUNGE credential; send it with a Loom client"));
  }
  Admission a;
  ASSIGN_OR_RETURN(a.opened, munge_->Open(head->credential));
  a.credential = std::move(head->credential);
  return std::any(std::move(a));
}

rpc::FrameAnswer DbdService::Answer(std::string_view bytes, const std::any& admitted) {
  v1::Frame frame;
  if (!frame.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    v1::AcctRecordReply reply;
    *reply.mutable_error() =
        rpc::ToWire(absl::InvalidArgumentError("corrupt request: the frame cannot be read"));
    return {reply.SerializeAsString()};
  }
  if (frame.method() == "AcctRecord") {
    return Serve(*this, *munge_, frame, admitted, &DbdService::AcctRecord);
  }
  if (frame.method() == "AcctQueryJobs") {
    return Serve(*this, *munge_, frame, admitted, &DbdService::AcctQueryJobs);
  }
  if (frame.method() == "AcctShow") {
    return Serve(*this, *munge_, frame, admitted, &DbdService::AcctShow);
  }
  if (frame.method() == "AcctChange") {
    return Serve(*this, *munge_, frame, admitted, &DbdService::AcctChange);
  }
  if (frame.method() == "AcctReport") {
    return Serve(*this, *munge_, frame, admitted, &DbdService::AcctReport);
  }
  v1::AcctRecordReply reply;
  *reply.mutable_error() = rpc::ToWire(absl::UnimplementedError(
      StrCat("loomdbd has no method '", frame.method(), "'; is the command newer than loomdbd?")));
  return {reply.SerializeAsString()};
}

}  // namespace loom::dbd
