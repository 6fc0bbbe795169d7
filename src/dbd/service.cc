#include "dbd/service.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "auth/identity.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "dbd/internal/entities.h"
#include "dbd/usage.h"
#include "rpc/convert.h"
#include "rpc/credential.h"

namespace loom::dbd {
namespace {

using core::StrCat;
using internal::AssocKey;
using internal::Entity;
using internal::NewAssoc;
using internal::NewQos;

using internal::kRpcVersion;

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
  // An archive load leaves the controller's address as its controller last gave it.
  const std::string host =
      req.archive() && known != nullptr ? known->control_host() : req.control_host();
  const int32_t port =
      req.archive() && known != nullptr ? known->control_port() : req.control_port();
  // Its history: from its registration or the earliest record it sent (records wait in
  // the controller while loomdbd is away, or come from an archive); for a cluster no
  // controller ever registered, to its records' last end.
  int64_t since = known != nullptr ? known->since() : clock_->UnixSeconds();
  int64_t until = known != nullptr ? known->until() : 0;
  int64_t earliest = INT64_MAX, latest = 0;
  for (const v1::AcctJob& a : req.jobs()) {
    const v1::JobInfo& j = a.job();
    if (j.submit_time() > 0) earliest = std::min(earliest, j.submit_time());
    latest = std::max({latest, j.submit_time(), j.start_time(), j.end_time()});
  }
  if (earliest != INT64_MAX && (since == 0 || earliest < since)) since = earliest;
  until = req.archive() && host.empty() && port == 0 ? std::max(until, latest) : 0;
  if (known != nullptr && known->control_host() == host && known->control_port() == port &&
      known->tres() == tres && known->since() == since && known->until() == until) {
    return absl::OkStatus();
  }
  v1::AcctCluster c;
  c.set_name(req.cluster());
  c.set_control_host(host);
  c.set_control_port(port);
  c.set_rpc_version(kRpcVersion);
  c.set_tres(tres);
  c.set_since(since);
  c.set_until(until);
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
    if (req.archive()) {
      core::LogInfo("registered cluster {} from an archive load", c.name());
    } else {
      core::LogInfo("registered cluster {} (controller at {}:{})", c.name(), c.control_host(),
                    c.control_port());
    }
  }
  return store_->ChangeEntities(put, {});
}

Status DbdService::AcctRecord(const DbdCaller& who, const v1::AcctRecordRequest& req,
                              v1::AcctRecordReply* reply) {
  if (req.cluster().empty()) {
    return absl::InvalidArgumentError("job records without a cluster name");
  }
  core::MutexLock lock(&mu_);
  // The controller's records come from root or SlurmUser; an archive load from an
  // Administrator too.
  if (!(req.archive() ? IsAdmin(who, "Administrator") : IsDaemon(who))) {
    return absl::PermissionDeniedError(
        StrCat("Access/permission denied: only root, SlurmUser (", config_.slurm_user, ")",
               req.archive() ? " or an Administrator" : "", " may ",
               req.archive() ? "load job records" : "send job records", ", not ", who.user));
  }
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
  RETURN_IF_ERROR(RecordEvents(req));
  // Records of hours already rolled up (loomdbd was away, or a job that ran then ended
  // now): those hours are rolled up again at the next report.
  int64_t earliest = 0;
  for (const store::AcctJobRow& r : rows) {
    if (r.start_time > 0 && (earliest == 0 || r.start_time < earliest)) earliest = r.start_time;
  }
  for (const v1::AcctEvent& e : req.events()) {
    if (e.time_start() > 0 && (earliest == 0 || e.time_start() < earliest)) {
      earliest = e.time_start();
    }
  }
  if (earliest == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(v1::AcctRollupState state, RollupState(req.cluster()));
  if (earliest >= state.rolled_until()) return absl::OkStatus();
  const int64_t from = FloorHour(earliest);
  if (state.dirty_from() != 0 && state.dirty_from() <= from) return absl::OkStatus();
  state.set_dirty_from(from);
  return store_->ChangeEntities({Entity("rollup", req.cluster(), state)}, {});
}

StatusOr<std::vector<v1::AcctEvent>> DbdService::Events(const std::string& cluster) {
  // Exactly `cluster`'s: names cluster/node/start, and '0' follows '/'.
  ASSIGN_OR_RETURN(std::vector<store::AcctEntity> stored,
                   store_->ListEntitiesBetween("event", cluster + "/", cluster + "0"));
  std::vector<v1::AcctEvent> events(stored.size());
  for (size_t i = 0; i < stored.size(); ++i) {
    if (!events[i].ParseFromString(stored[i].record)) {
      return absl::DataLossError(StrCat("the stored event ", stored[i].name, " cannot be read"));
    }
  }
  return events;
}

Status DbdService::RecordEvents(const v1::AcctRecordRequest& req) {
  if (req.events().empty()) return absl::OkStatus();
  std::vector<store::AcctEntity> put;
  std::vector<store::AcctEntityKey> remove;
  // A node's open event, if any, is also kept under "node_state" cluster/node: a change of
  // state or reason closes it where the next begins.
  std::map<std::string, std::optional<v1::AcctEvent>> open;
  std::set<std::string> changed;
  for (const v1::AcctEvent& in : req.events()) {
    const std::string key = StrCat(req.cluster(), "/", in.node());
    auto it = open.find(key);
    if (it == open.end()) {
      ASSIGN_OR_RETURN(std::vector<store::AcctEntity> stored,
                       store_->ListEntitiesBetween("node_state", key, key + '\x01'));
      std::optional<v1::AcctEvent> now;
      if (!stored.empty() && !now.emplace().ParseFromString(stored.front().record)) now.reset();
      it = open.emplace(key, std::move(now)).first;
    }
    std::optional<v1::AcctEvent>& cur = it->second;
    if (cur && cur->state() == in.state() && cur->reason() == in.reason()) continue;
    if (!cur && in.state().empty()) continue;
    changed.insert(key);
    if (cur) {
      v1::AcctEvent closed = *cur;
      closed.set_time_end(std::max(in.time_start(), closed.time_start()));
      put.push_back(
          Entity("event", EventName(req.cluster(), in.node(), closed.time_start()), closed));
      cur.reset();
    }
    if (in.state().empty()) continue;
    v1::AcctEvent e = in;
    e.set_cluster(req.cluster());
    e.set_time_end(0);
    put.push_back(Entity("event", EventName(req.cluster(), e.node(), e.time_start()), e));
    cur = std::move(e);
  }
  for (const std::string& key : changed) {
    const std::optional<v1::AcctEvent>& cur = open[key];
    if (cur) {
      put.push_back(Entity("node_state", key, *cur));
    } else {
      remove.push_back({"node_state", key});
    }
  }
  return store_->ChangeEntities(put, remove);
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
  const int64_t now = clock_->UnixSeconds();
  const int64_t to = FloorHour(now);
  int64_t from = state.rolled_until() > 0 ? state.rolled_until() : to;
  if (state.dirty_from() > 0) from = std::min(from, state.dirty_from());
  if (from >= to) return state.rolled_until();
  ASSIGN_OR_RETURN(v1::AcctShowReply clusters, Load("cluster"));
  std::map<std::string, double> capacity;
  int64_t first = from, last = to;  // the hours the cluster existed in
  for (const v1::AcctCluster& c : clusters.clusters()) {
    if (c.name() != cluster) continue;
    capacity = ParseTres(c.tres());
    if (c.since() > 0) first = std::max(first, FloorHour(c.since()));
    if (c.until() > 0) last = std::min(last, FloorHour(c.until()) + kHour);
  }
  ASSIGN_OR_RETURN(std::vector<v1::AcctEvent> events, Events(cluster));
  // A week of hours at a time: the records of a week are what memory holds at once.
  constexpr int64_t kChunk = 7 * 24 * kHour;
  for (int64_t begin = first; begin < last; begin += kChunk) {
    const int64_t end = std::min(last, begin + kChunk);
    store::AcctJobFilter f;
    f.cluster = cluster;
    f.active_from = begin;
    f.active_to = end;
    ASSIGN_OR_RETURN(std::vector<store::AcctJobRow> rows, store_->FindJobs(f));
    std::vector<v1::AcctJob> jobs(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!jobs[i].ParseFromString(rows[i].record)) {
        return absl::DataLossError(
            StrCat("the stored record of job ", rows[i].job_id, " cannot be read"));
      }
    }
    rows.clear();
    std::vector<store::AcctEntity> put;
    for (const v1::AcctUsageHour& h : dbd::RollUp(jobs, events, capacity, begin, end, now)) {
      put.push_back(Entity("usage", UsageName(cluster, h.hour()), h));
    }
    RETURN_IF_ERROR(store_->ChangeEntities(put, {}));
  }
  v1::AcctRollupState done;
  done.set_rolled_until(std::max(to, state.rolled_until()));
  RETURN_IF_ERROR(store_->ChangeEntities({Entity("rollup", cluster, done)}, {}));
  return done.rolled_until();
}

Status DbdService::RollUpAll() {
  core::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(v1::AcctShowReply clusters, Load("cluster"));
  for (const v1::AcctCluster& c : clusters.clusters()) {
    RETURN_IF_ERROR(RollUp(c.name()).status());
  }
  return absl::OkStatus();
}

StatusOr<int64_t> DbdService::PurgeJobs() {
  if (config_.purge_job_after_s <= 0) return int64_t{0};
  core::MutexLock lock(&mu_);
  return store_->PurgeJobs(clock_->UnixSeconds() - config_.purge_job_after_s);
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
  f.users.assign(req.user_names().begin(), req.user_names().end());
  if (f.uids.empty() && f.users.empty() && !req.all_users() && !admin) {
    f.uids.push_back(who.uid);
  }
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
  if (req.kind() == "event") {
    // Events in the window: not ended before its start, begun by its end.
    const int64_t end = req.end() > 0 ? req.end() : clock_->UnixSeconds();
    ASSIGN_OR_RETURN(std::vector<store::AcctEntity> stored, store_->ListEntities("event"));
    for (const store::AcctEntity& s : stored) {
      v1::AcctEvent e;
      if (!e.ParseFromString(s.record)) {
        return absl::DataLossError(StrCat("the stored event ", s.name, " cannot be read"));
      }
      if (e.time_start() > end || (e.time_end() > 0 && e.time_end() < req.start())) continue;
      *reply->add_events() = std::move(e);
    }
    return absl::OkStatus();
  }
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
