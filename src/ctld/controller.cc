#include "ctld/controller.h"

#include <chrono>
#include <csignal>
#include <ctime>
#include <set>

#include "auth/identity.h"
#include "core/strings.h"
#include "ctld/persist.h"
#include "rpc/call_auth.h"
#include "rpc/convert.h"
#include "rpc/reply.h"
#include "store/sqlite_store.h"

namespace loom::ctld {
namespace {

Time Now() { return static_cast<Time>(std::time(nullptr)); }

using rpc::Answer;

// Inside a handler: `lhs` = the value of a StatusOr, or answer with its error.
#define LOOM_CTLD_CAT_(a, b) a##b
#define LOOM_CTLD_CAT(a, b) LOOM_CTLD_CAT_(a, b)
#define ASSIGN_OR_ANSWER(lhs, expr, reply)                                  \
  auto LOOM_CTLD_CAT(answer_, __LINE__) = (expr);                           \
  if (!LOOM_CTLD_CAT(answer_, __LINE__).ok()) {                             \
    return Answer(reply, LOOM_CTLD_CAT(answer_, __LINE__).status());        \
  }                                                                         \
  lhs = std::move(*LOOM_CTLD_CAT(answer_, __LINE__))

// "123" or "123_4": the job and the array task.
StatusOr<std::pair<JobId, std::optional<int64_t>>> ParseJobRef(std::string_view text) {
  std::optional<int64_t> task;
  std::string_view job = text;
  if (size_t u = text.find('_'); u != std::string_view::npos) {
    job = text.substr(0, u);
    auto t = core::ParseInt(text.substr(u + 1));
    if (!t) return absl::InvalidArgumentError("Invalid job id specified");
    task = *t;
  }
  auto id = core::ParseInt(job);
  if (!id || *id <= 0) return absl::InvalidArgumentError("Invalid job id specified");
  return std::make_pair(static_cast<JobId>(*id), task);
}

class Service final : public v1::Controller::Service {
 public:
  explicit Service(Controller* c) : c_(c) {
    auto slurm_user = auth::LookupUserByName(c->site().cluster.slurm_user);
    slurm_user_uid_ = slurm_user.ok() ? slurm_user->uid : 0;
  }

  grpc::Status Submit(grpc::ServerContext* ctx, const v1::SubmitRequest* req,
                      v1::SubmitReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "Submit", *req), reply);
    auto request = rpc::FromWire(req->spec());
    if (!request.ok()) return Answer(reply, request.status());
    if (req->test_only()) {
      return Answer(reply, absl::UnimplementedError(
                               "--test-only is not supported by this controller yet"));
    }
    JobId id = 0;
    Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) -> Status {
      ASSIGN_OR_RETURN(id, core.Submit(*request, who, now, &fx));
      return absl::OkStatus();
    });
    reply->set_job_id(id);
    return Answer(reply, s);
  }

  grpc::Status QueryJobs(grpc::ServerContext* ctx, const v1::QueryJobsRequest* req,
                         v1::QueryJobsReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "QueryJobs", *req), reply);
    (void)who;
    auto snap = c_->snapshot();
    reply->set_snapshot_time(snap->time);
    std::set<uint64_t> ids(req->job_ids().begin(), req->job_ids().end());
    std::set<std::string> users(req->users().begin(), req->users().end());
    std::set<std::string> parts(req->partitions().begin(), req->partitions().end());
    std::set<std::string> states(req->states().begin(), req->states().end());
    std::set<std::string> names(req->names().begin(), req->names().end());
    for (const v1::JobInfo& j : snap->jobs) {
      if (!ids.empty() && !ids.count(j.job_id()) && !ids.count(j.array_job_id())) continue;
      if (!users.empty() && !users.count(j.user())) continue;
      if (!parts.empty() && !parts.count(j.partition())) continue;
      if (!states.empty() && !states.count(j.state())) continue;
      if (!names.empty() && !names.count(j.name())) continue;
      *reply->add_jobs() = j;
    }
    return Answer(reply, absl::OkStatus());
  }

  grpc::Status QueryNodes(grpc::ServerContext* ctx, const v1::QueryNodesRequest* req,
                          v1::QueryNodesReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "QueryNodes", *req), reply);
    (void)who;
    auto snap = c_->snapshot();
    std::set<std::string> names(req->names().begin(), req->names().end());
    for (const v1::NodeInfo& n : snap->nodes) {
      if (names.empty() || names.count(n.name())) *reply->add_nodes() = n;
    }
    for (const v1::PartitionInfo& p : snap->partitions) *reply->add_partitions() = p;
    return Answer(reply, absl::OkStatus());
  }

  grpc::Status SignalJob(grpc::ServerContext* ctx, const v1::SignalJobRequest* req,
                         v1::SignalJobReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "SignalJob", *req), reply);
    std::vector<std::pair<JobId, std::optional<int64_t>>> targets;
    for (const std::string& text : req->job_ids()) {
      auto ref = ParseJobRef(text);
      if (!ref.ok()) return Answer(reply, ref.status());
      targets.push_back(*ref);
    }
    // scancel -u/-p/-n/-t: the matching jobs of the snapshot.
    if (req->job_ids().empty()) {
      for (const v1::JobInfo& j : c_->snapshot()->jobs) {
        if (!req->user().empty() && j.user() != req->user()) continue;
        if (!req->partition().empty() && j.partition() != req->partition()) continue;
        if (!req->name().empty() && j.name() != req->name()) continue;
        if (!req->state().empty() && j.state() != req->state()) continue;
        if (j.state() != "PENDING" && j.state() != "RUNNING") continue;
        targets.emplace_back(j.job_id(), std::nullopt);
      }
    }
    Status first = absl::OkStatus();
    for (const auto& [id, task] : targets) {
      Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
        return core.Signal(id, task, req->signal(), who, now, &fx);
      });
      *reply->add_per_job() = rpc::ToWire(s);
      if (first.ok() && !s.ok()) first = s;
    }
    return Answer(reply, first);
  }

  grpc::Status UpdateJob(grpc::ServerContext* ctx, const v1::UpdateJobRequest* req,
                         v1::UpdateJobReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "UpdateJob", *req), reply);
    const JobId id = req->job_id();
    Status s;
    switch (req->action()) {
      case v1::UpdateJobRequest::HOLD:
        s = c_->Post([&](ControllerCore& core, Effects& fx, Time) { return core.Hold(id, who, &fx); });
        break;
      case v1::UpdateJobRequest::RELEASE:
        s = c_->Post(
            [&](ControllerCore& core, Effects& fx, Time) { return core.Release(id, who, &fx); });
        break;
      case v1::UpdateJobRequest::UPDATE: {
        for (const auto& [key, value] : req->fields()) {
          if (!core::EqualsIgnoreCase(key, "TimeLimit")) {
            return Answer(reply, absl::UnimplementedError(
                                     core::StrCat("updating ", key, " is not supported yet")));
          }
          auto seconds = core::ParseDuration(value);
          if (!seconds.ok()) return Answer(reply, absl::InvalidArgumentError("Invalid time limit specification"));
          s = c_->Post([&](ControllerCore& core, Effects& fx, Time) {
            return core.SetTimeLimit(id, *seconds, who, &fx);
          });
        }
        break;
      }
      default:
        s = absl::UnimplementedError("requeue is not supported by this controller yet");
    }
    return Answer(reply, s);
  }

  grpc::Status Ping(grpc::ServerContext* ctx, const v1::PingRequest* req,
                    v1::PingReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "Ping", *req), reply);
    (void)who;
    const auto& hosts = c_->site().cluster.controllers;
    reply->set_controller(hosts.empty() ? "" : hosts.front().name);
    reply->set_server_time(Now());
    return Answer(reply, absl::OkStatus());
  }

  grpc::Status Diag(grpc::ServerContext* ctx, const v1::DiagRequest* req,
                    v1::DiagReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "Diag", *req), reply);
    (void)who;
    auto snap = c_->snapshot();
    reply->set_jobs_submitted(snap->submitted);
    reply->set_jobs_started(snap->started);
    reply->set_jobs_completed(snap->completed);
    reply->set_jobs_canceled(snap->cancelled);
    reply->set_jobs_failed(snap->failed);
    reply->set_main_cycles(snap->passes);
    reply->set_main_cycle_last_us(snap->last_pass_us);
    reply->set_main_cycle_max_us(snap->max_pass_us);
    reply->set_main_cycle_mean_us(snap->passes ? snap->total_pass_us / snap->passes : 0);
    reply->set_backfilled_jobs(snap->backfilled);
    reply->set_start_time(snap->start_time);
    reply->set_server_time(Now());
    int64_t pending = 0, running = 0;
    for (const v1::JobInfo& j : snap->jobs) {
      pending += j.state() == "PENDING";
      running += j.state() == "RUNNING";
    }
    reply->set_jobs_pending(pending);
    reply->set_jobs_running(running);
    return Answer(reply, absl::OkStatus());
  }

  grpc::Status RegisterNode(grpc::ServerContext* ctx, const v1::RegisterNodeRequest* req,
                            v1::RegisterNodeReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "RegisterNode", *req), reply);
    if (!Daemon(who)) return Answer(reply, absl::PermissionDeniedError("Access/permission denied"));
    Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
      core.NodeAlive(req->name(), now, &fx);
      return absl::OkStatus();
    });
    reply->set_heartbeat_interval_s(std::max<int64_t>(1, c_->site().cluster.slurmd_timeout_s / 3));
    return Answer(reply, s);
  }

  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                         v1::HeartbeatReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "Heartbeat", *req), reply);
    if (!Daemon(who)) return Answer(reply, absl::PermissionDeniedError("Access/permission denied"));
    Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
      core.NodeAlive(req->name(), now, &fx);
      return absl::OkStatus();
    });
    return Answer(reply, s);
  }

  grpc::Status JobComplete(grpc::ServerContext* ctx, const v1::JobCompleteRequest* req,
                           v1::JobCompleteReply* reply) override {
    ASSIGN_OR_ANSWER(Caller who, Identify(*ctx, "JobComplete", *req), reply);
    if (!Daemon(who)) return Answer(reply, absl::PermissionDeniedError("Access/permission denied"));
    Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
      if (!req->message().empty()) {
        core.LaunchFailed(req->job_id(), req->message(), now, &fx);
      } else {
        core.JobEnded(req->job_id(), req->exit_code(), req->out_of_memory(), now, &fx);
      }
      return absl::OkStatus();
    });
    return Answer(reply, s);
  }

 private:
  // The caller a credential proves, with its user name.
  StatusOr<Caller> Identify(const grpc::ServerContext& ctx, std::string_view method,
                            const google::protobuf::Message& req) {
    ASSIGN_OR_RETURN(auth::Identity id, rpc::VerifyCall(ctx, c_->munge(), method, req));
    Caller who{id.uid, id.gid, ""};
    auto user = auth::LookupUserById(id.uid);
    who.user = user.ok() ? user->name : std::to_string(id.uid);
    return who;
  }
  bool Daemon(const Caller& who) const { return who.uid == 0 || who.uid == slurm_user_uid_; }

  Controller* c_;
  uint32_t slurm_user_uid_ = 0;
};

}  // namespace

StatusOr<std::unique_ptr<Controller>> Controller::Start(const ControllerOptions& options) {
  std::unique_ptr<Controller> c(new Controller());
  std::vector<conf::Diagnostic> warnings;
  ASSIGN_OR_RETURN(c->site_, conf::LoadSiteConfig(options.slurm_conf, &warnings));
  const conf::ClusterConfig& cfg = c->site_.cluster;

  store::SqliteStoreOptions so;
  so.state_save_location = cfg.state_save_location;
  ASSIGN_OR_RETURN(auto sqlite, store::OpenSqliteStore(so));
  c->store_ = std::move(sqlite);
  ASSIGN_OR_RETURN(store::Snapshot snap, c->store_->Recover());

  auto slurm_user = auth::LookupUserByName(cfg.slurm_user);
  CoreOptions co;
  co.kill_wait_s = cfg.kill_wait_s;
  co.slurmd_timeout_s = cfg.slurmd_timeout_s;
  co.min_job_age_s = cfg.min_job_age_s;
  co.slurm_user_uid = slurm_user.ok() ? slurm_user->uid : 0;
  co.max_array_size = cfg.max_array_size;
  c->core_ = std::make_unique<ControllerCore>(c->site_, co, 1);
  std::vector<JobEntry> entries;
  for (const store::JobRecord& r : snap.jobs) {
    v1::JobSpec spec;
    if (!spec.ParseFromString(r.request)) {
      return absl::DataLossError(core::StrCat("job ", r.id, " in ", c->store_->Location(),
                                              ": its stored submission cannot be read"));
    }
    ASSIGN_OR_RETURN(model::JobRequest request, rpc::FromWire(spec));
    ASSIGN_OR_RETURN(JobEntry e,
                     FromRecord(r, c->core_->cluster(),
                                std::make_shared<const model::JobRequest>(std::move(request))));
    entries.push_back(std::move(e));
  }
  c->core_->Restore(std::move(entries), std::max<JobId>(1, snap.next_job_id));

  auth::MungeOptions mo;
  mo.socket_path = options.munge_socket.empty() ? conf::MungeSocketOf(cfg) : options.munge_socket;
  c->munge_ = std::make_unique<auth::MungeCredentials>(mo);

  c->address_ = options.listen_address;
  if (c->address_.empty()) {
    const std::string host = cfg.controllers.empty() ? "127.0.0.1" : cfg.controllers.front().addr;
    c->address_ = core::StrCat(host, ":", cfg.slurmctld_port);
  }
  c->stats_.start_time = Now();
  c->Publish(Now());
  c->service_ = std::make_unique<Service>(c.get());
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(c->address_, grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(c->service_.get());
  c->server_ = builder.BuildAndStart();
  if (!c->server_ || bound == 0) {
    return absl::UnavailableError(core::StrCat("cannot listen on ", c->address_,
                                               "; is another controller running there?"));
  }
  c->worker_ = std::thread([p = c.get()] { p->WorkerLoop(); });
  c->owner_ = std::thread([p = c.get()] { p->OwnerLoop(); });
  return c;
}

Controller::~Controller() { Shutdown(); }

void Controller::Enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(workers_mu_);
    tasks_.push_back(std::move(task));
  }
  workers_cv_.notify_one();
}

void Controller::WorkerLoop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(workers_mu_);
      workers_cv_.wait(lock, [&] { return workers_stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void Controller::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  if (owner_.joinable()) owner_.join();
  {
    std::lock_guard<std::mutex> lock(workers_mu_);
    workers_stop_ = true;
  }
  workers_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Controller::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stop_; });
}

Status Controller::Post(Command fn) {
  std::future<Status> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return absl::UnavailableError("the controller is shutting down");
    queue_.push_back(Pending{std::move(fn), {}});
    done = queue_.back().done.get_future();
  }
  cv_.notify_all();
  return done.get();
}

std::shared_ptr<const Snapshot> Controller::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

void Controller::OwnerLoop() {
  Time last_tick = 0;
  while (true) {
    std::deque<Pending> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1), [&] { return stop_ || !queue_.empty(); });
      batch.swap(queue_);
      if (stop_ && batch.empty()) break;
    }
    const Time now = Now();
    Effects fx;
    std::vector<Status> results;
    for (Pending& p : batch) results.push_back(p.fn(*core_, fx, now));
    if (now != last_tick) {
      core_->Tick(now, &fx);
      last_tick = now;
    }
    const auto t0 = std::chrono::steady_clock::now();
    core_->Schedule(now, &fx);
    const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::steady_clock::now() - t0)
                           .count();
    ++stats_.passes;
    stats_.last_pass_us = us;
    stats_.max_pass_us = std::max(stats_.max_pass_us, us);
    stats_.total_pass_us += us;
    stats_.started += static_cast<int64_t>(fx.launches.size());
    stats_.backfilled += core_->last_pass().backfilled;
    Status persisted = Persist(fx);
    if (!persisted.ok()) {
      // What is in memory is ahead of the store: answer every command with the store's
      // error and stop, so a restart recovers exactly what was acknowledged.
      for (Pending& p : batch) p.done.set_value(persisted);
      std::fprintf(stderr, "loomctld: %s; stopping\n", std::string(persisted.message()).c_str());
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_all();
      break;
    }
    // Publish before answering: a client that got its answer sees its change in the
    // next query.
    Publish(now);
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done.set_value(results[i]);
    CarryOut(fx);
  }
  // Anything posted after the last batch is refused, not lost silently.
  std::lock_guard<std::mutex> lock(mu_);
  for (Pending& p : queue_) p.done.set_value(absl::UnavailableError("the controller stopped"));
  queue_.clear();
}

Status Controller::Persist(const Effects& fx) {
  store::Batch batch;
  std::set<uint64_t> seen;
  for (uint64_t key : fx.changed) {
    if (!seen.insert(key).second) continue;
    auto it = core_->jobs().find(key);
    if (it == core_->jobs().end()) continue;
    const JobEntry& e = it->second;
    batch.Add(store::PutJob{ToRecord(e, core_->cluster(),
                                     rpc::DeterministicBytes(rpc::ToWire(*e.request)))});
  }
  for (model::JobState st : fx.ended) {
    switch (st) {
      case model::JobState::kCompleted: ++stats_.completed; break;
      case model::JobState::kCancelled: ++stats_.cancelled; break;
      default: ++stats_.failed; break;
    }
  }
  for (JobId id : fx.deleted) batch.Add(store::DeleteJob{id});
  if (fx.next_id_changed) batch.Add(store::SetNextJobId{core_->next_job_id()});
  if (batch.empty()) return absl::OkStatus();
  return store_->Commit(batch);
}

void Controller::Publish(int64_t now) {
  auto snap = std::make_shared<Snapshot>(stats_);
  snap->time = now;
  rpc::JobInfoOptions o;
  o.cluster_name = site_.cluster.cluster_name;
  snap->jobs = rpc::JobsOf(*core_, o);
  snap->nodes = rpc::NodesOf(*core_);
  snap->partitions = rpc::PartitionsOf(*core_);
  snap->last_pass = core_->last_pass();
  snap->submitted = static_cast<int64_t>(core_->next_job_id()) - 1;
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(snap);
}

std::string Controller::NodeAddress(int32_t node) const {
  const std::string& name = core_->cluster().nodes[node].name;
  for (const conf::NodeConfig& n : site_.cluster.nodes) {
    if (n.name != name) continue;
    const int32_t port = n.port > 0 ? n.port : site_.cluster.slurmd_port;
    return core::StrCat(n.addr.empty() ? n.name : n.addr, ":", port);
  }
  return "";
}

void Controller::CarryOut(const Effects& fx) {
  for (const ctld::Launch& l : fx.launches) {
    auto it = core_->jobs().find(l.key);
    if (it == core_->jobs().end() || it->second.alloc.empty()) continue;
    const JobEntry& e = it->second;
    const model::JobRequest& r = *e.request;
    v1::LaunchBatchRequest lr;
    lr.set_job_id(e.job.id);
    rpc::JobInfoOptions o;
    o.cluster_name = site_.cluster.cluster_name;
    o.with_script = true;
    o.with_environment = true;
    *lr.mutable_job() = rpc::FromEntry(e, core_->cluster(), o);
    for (const auto& [k, v] : r.environment) (*lr.mutable_environment())[k] = v;
    lr.set_script(r.script);
    lr.set_std_out(r.EffectiveStdout());
    lr.set_std_err(r.EffectiveStderr());
    lr.set_std_in(r.stdin_pattern);
    lr.set_work_dir(r.work_dir);
    lr.set_uid(e.job.uid);
    lr.set_gid(e.job.gid);
    const sched::NodeAlloc& head = e.alloc.front();
    std::string gpus;
    for (int g = 0; g < model::kMaxGpusPerNode; ++g) {
      if (!(head.gpu_ids >> g & 1)) continue;
      if (!gpus.empty()) gpus.push_back(',');
      gpus.append(std::to_string(g));
    }
    lr.set_gpu_ids(gpus);
    lr.set_cpu_ids(head.cpu_ids.ToList());
    lr.set_time_limit_s(e.time_limit_s);
    Launch(e.job.id, std::move(lr), NodeAddress(head.node));
  }
  for (const SignalJob& s : fx.signals) {
    std::vector<std::string> addresses;
    for (int32_t n : s.nodes) addresses.push_back(NodeAddress(n));
    SendSignal(s.job_id, s.signal, std::move(addresses));
  }
}

void Controller::Launch(JobId id, v1::LaunchBatchRequest request, std::string node_address) {
  Enqueue([this, id, request = std::move(request), node_address] {
    auto channel = grpc::CreateChannel(node_address, grpc::InsecureChannelCredentials());
    auto stub = v1::NodeDaemon::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::LaunchBatchReply reply;
    Status s = rpc::AttachCredential(&ctx, *munge_, "LaunchBatch", request);
    if (s.ok()) {
      grpc::Status g = stub->LaunchBatch(&ctx, request, &reply);
      if (!g.ok()) {
        s = absl::UnavailableError(core::StrCat("node ", node_address, ": ", g.error_message()));
      } else {
        s = rpc::FromWire(reply.error());
      }
    }
    if (!s.ok()) {
      std::fprintf(stderr, "loomctld: job %llu: launch failed: %s\n",
                   static_cast<unsigned long long>(id), std::string(s.message()).c_str());
      (void)Post([id, s](ControllerCore& core, Effects& fx, Time now) {
        core.LaunchFailed(id, std::string(s.message()), now, &fx);
        return absl::OkStatus();
      });
    }
  });
}

void Controller::SendSignal(JobId id, int32_t signal, std::vector<std::string> node_addresses) {
  const int64_t kill_wait = site_.cluster.kill_wait_s;
  Enqueue([this, id, signal, kill_wait, node_addresses] {
    for (const std::string& address : node_addresses) {
      v1::SignalTasksRequest req;
      req.set_job_id(id);
      req.set_signal(signal);
      req.set_kill_wait_s(signal == SIGTERM ? kill_wait : 0);
      auto stub = v1::NodeDaemon::NewStub(
          grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::SignalTasksReply reply;
      if (rpc::AttachCredential(&ctx, *munge_, "SignalTasks", req).ok()) {
        (void)stub->SignalTasks(&ctx, req, &reply);
      }
    }
  });
}

}  // namespace loom::ctld
