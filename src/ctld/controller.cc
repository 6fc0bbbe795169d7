#include "ctld/controller.h"

#include <grpcpp/server_posix.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "auth/identity.h"
#include "core/log.h"
#include "core/mutex.h"
#include "core/strings.h"
#include "ctld/durable.h"
#include "ctld/persist.h"
#include "ctld/service.h"
#include "ctld/wire.h"
#include "rpc/call_auth.h"
#include "rpc/convert.h"
#include "rpc/deadline.h"
#include "rpc/launch_tree.h"
#include "store/sqlite_store.h"

namespace loom::ctld {
namespace {

// The store's value that keeps fair share's usage (sched::UsageLedger's text form).
constexpr std::string_view kUsageKey = "fairshare_usage";

CoreOptions CoreOptionsOf(const conf::ClusterConfig& cfg) {
  auto slurm_user = auth::LookupUserByName(cfg.slurm_user);
  CoreOptions co;
  co.kill_wait_s = cfg.kill_wait_s;
  co.slurmd_timeout_s = cfg.slurmd_timeout_s;
  co.min_job_age_s = cfg.min_job_age_s;
  co.slurm_user_uid = slurm_user.ok() ? slurm_user->uid : 0;
  co.slurm_user_name = cfg.slurm_user;
  co.config_overrides = cfg.ConfigOverrides();
  co.max_array_size = cfg.max_array_size;
  co.node_scripts = !cfg.prolog.empty() || !cfg.epilog.empty();
  co.nohold_on_prolog_fail = cfg.scheduler.nohold_on_prolog_fail;
  co.zone = absl::LocalTimeZone();
  co.resv_over_run_s = cfg.resv_over_run_s;
  return co;
}

// "host:port" of each node's daemon, in the cluster's node order.
std::vector<std::string> NodeAddressesOf(const conf::SiteConfig& site,
                                         const sched::Cluster& cluster) {
  std::vector<std::string> out;
  out.reserve(cluster.nodes.size());
  for (const model::Node& node : cluster.nodes) {
    std::string address;
    for (const conf::NodeConfig& n : site.cluster.nodes) {
      if (n.name != node.name) continue;
      address = core::StrCat(n.addr.empty() ? n.name : n.addr, ":",
                             n.port > 0 ? n.port : site.cluster.slurmd_port);
      break;
    }
    out.push_back(std::move(address));
  }
  return out;
}

}  // namespace

Status Controller::Reconfigure(std::vector<conf::Diagnostic>* warnings,
                               int64_t* slurmd_timeout_s, conf::ClusterConfig* applied) {
  ASSIGN_OR_RETURN(conf::SiteConfig site, conf::LoadSiteConfig(slurm_conf_, warnings));
  *slurmd_timeout_s = site.cluster.slurmd_timeout_s;
  if (applied != nullptr) *applied = site.cluster;
  const conf::SiteConfig loaded = site;
  RETURN_IF_ERROR(Post([&](ControllerCore& core, Effects&, Time) -> Status {
    RETURN_IF_ERROR(core.Reconfigure(site, CoreOptionsOf(site.cluster)));
    if (!site_before_batch_) site_before_batch_ = std::move(site_);
    site_ = std::move(site);
    node_addresses_ = NodeAddressesOf(site_, core.cluster());
    publish_all_ = true;  // node indices and names, partitions may all have changed
    return absl::OkStatus();
  }));
  LoadJobSubmit(loaded);
  return absl::OkStatus();
}

StatusOr<std::unique_ptr<ControllerCore>> Controller::RecoverCore(
    std::vector<AcctRecord>* acct_queued) {
  store::Snapshot snap;
  std::string location;
  {
    core::MutexLock lock(&store_mu_);
    ASSIGN_OR_RETURN(snap, store_->Recover());
    location = store_->Location();
  }
  auto core = std::make_unique<ControllerCore>(site_, CoreOptionsOf(site_.cluster), 1);
  ASSIGN_OR_RETURN(std::vector<JobEntry> entries, EntriesFrom(snap, core->cluster(), location));
  core->Restore(std::move(entries), std::max<JobId>(1, snap.next_job_id));
  // The steps of running jobs: they go on on the nodes, whose reports end them.
  for (const auto& [key, bytes] : snap.values) {
    if (std::optional<AcctRecord> r = AcctRecordOf(key)) {
      r->bytes = bytes;
      if (acct_queued != nullptr) acct_queued->push_back(*std::move(r));
      continue;
    }
    if (const std::string_view name = ReservationOfKey(key); !name.empty()) {
      v1::ReservationInfo info;
      StatusOr<ReservationRecord> r = info.ParseFromString(bytes)
                                          ? ReservationFromInfo(info)
                                          : absl::DataLossError("not a reservation record");
      if (!r.ok()) {
        core::LogError("reservation {} in {} cannot be read ({}); it is dropped", name, location,
                       r.status().message());
      } else {
        core->RestoreReservation(*std::move(r));
      }
      continue;
    }
    if (key == kUsageKey) {
      StatusOr<sched::UsageLedger> usage =
          sched::UsageLedger::Parse(bytes, core::StrCat("the fair-share usage in ", location));
      if (!usage.ok()) {
        core::LogError("{}; usage starts again from zero", usage.status().message());
      } else {
        core->RestoreUsage(*std::move(usage));
      }
      continue;
    }
    if (key == kAcctTreeKey) {
      v1::AcctShowReply tree;
      if (associations_ == nullptr && site_.cluster.AccountingEnabled() &&
          tree.ParseFromString(bytes)) {
        associations_ = AssociationsOf(tree, site_.cluster.cluster_name);
        acct_tree_bytes_ = bytes;
      }
      continue;
    }
    const std::optional<JobId> job = JobOfStepsKey(key);
    if (!job) continue;
    StatusOr<StoredSteps> steps =
        DecodeSteps(bytes, core::StrCat("the steps of job ", *job, " in ", location));
    if (!steps.ok()) {
      core::LogError("{}; they are forgotten", steps.status().message());
      continue;
    }
    core->RestoreSteps(*job, std::move(steps->steps), std::move(steps->srun));
  }
  if (associations_ != nullptr) core->SetAssociations(associations_);
  for (const store::NodeRecord& n : snap.nodes) {
    auto user = auth::LookupUserById(n.reason_uid);
    core->RestoreNode(n.name, n.drain, n.state == model::NodeState::kDown, n.reason, n.reason_uid,
                      user.ok() ? user->name : std::to_string(n.reason_uid), n.reason_time);
  }
  return core;
}

StatusOr<std::unique_ptr<Controller>> Controller::Start(const ControllerOptions& options) {
  std::unique_ptr<Controller> c(new Controller());
  if (options.clock != nullptr) c->clock_ = options.clock;
  std::vector<conf::Diagnostic> warnings;
  ASSIGN_OR_RETURN(c->site_, conf::LoadSiteConfig(options.slurm_conf, &warnings));
  const conf::ClusterConfig& cfg = c->site_.cluster;

  std::unique_ptr<store::Store> store;
  if (options.open_store) {
    ASSIGN_OR_RETURN(store, options.open_store(cfg));
  } else {
    store::SqliteStoreOptions so;
    so.state_save_location = cfg.state_save_location;
    ASSIGN_OR_RETURN(store, store::OpenSqliteStore(so));
  }
  {
    core::MutexLock lock(&c->store_mu_);
    c->store_ = std::move(store);
  }
  c->slurm_conf_ = options.slurm_conf;
  c->lua_helper_ = options.lua_helper;
  if (c->lua_helper_.empty()) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    c->lua_helper_ = (self.parent_path() / "loom-lua-helper").string();
  }
  c->LoadJobSubmit(c->site_);
  std::vector<AcctRecord> acct_queued;
  ASSIGN_OR_RETURN(c->core_, c->RecoverCore(&acct_queued));
  // Job records and node events share one sequence: send them in its order.
  std::sort(acct_queued.begin(), acct_queued.end(),
            [](const AcctRecord& a, const AcctRecord& b) { return a.seq < b.seq; });

  auth::MungeOptions mo;
  mo.socket_path = options.munge_socket.empty() ? conf::MungeSocketOf(cfg) : options.munge_socket;
  c->munge_ = std::make_unique<auth::MungeCredentials>(mo);

  c->address_ = options.listen_address;
  if (c->address_.empty()) {
    const std::string host = cfg.controllers.empty() ? "127.0.0.1" : cfg.controllers.front().addr;
    c->address_ = core::StrCat(host, ":", cfg.slurmctld_port);
  }
  c->node_addresses_ = NodeAddressesOf(c->site_, c->core_->cluster());
  NodeLinksOptions lo;
  // A prolog at allocation (PrologFlags=Alloc) may take as long as PrologEpilogTimeout lets it.
  if (cfg.prolog_epilog_timeout_s != conf::ClusterConfig::kNoPrologEpilogTimeout) {
    lo.prolog_deadline = std::chrono::seconds(cfg.prolog_epilog_timeout_s + 10);
  } else {
    lo.prolog_deadline = std::chrono::minutes(5);
  }
  lo.launch_failed = [p = c.get()](JobId id, const std::string& node, const Status& why) {
    if (absl::IsDeadlineExceeded(why)) {
      // The job may run: the node's next report says so, or NodeMissesJobs requeues it.
      core::LogError("{} launch on {}: no answer ({}); the node's next report decides",
                     core::JobId{id}, node, why.message());
      return;
    }
    core::LogError("{} launch on {} failed: {}", core::JobId{id}, node, why.message());
    // Unavailable: the node's daemon did not answer; AlreadyExists: an earlier run of the job
    // is still there; PROLOG_FAILED: the job's prolog failed there; anything else: it
    // refused the job.
    p->PostNoWait([id, node, message = std::string(why.message()),
                   unreachable = absl::IsUnavailable(why), collided = absl::IsAlreadyExists(why),
                   prolog = rpc::ErrorCodeFor(why) == v1::PROLOG_FAILED](ControllerCore& core,
                                                                         Effects& fx, Time now) {
      if (prolog) {
        core.PrologFailed(id, node, message, now, &fx);
      } else if (collided) {
        core.LaunchCollided(id, node, now, &fx);
      } else {
        core.LaunchFailed(id, message, now, &fx, unreachable, node);
      }
      return absl::OkStatus();
    });
  };
  lo.tasks_failed = [p = c.get()](JobId id, std::optional<uint32_t> step, const std::string& node,
                                  const Status& why) {
    core::LogError("{} launch on {} failed: {}", core::JobId{id}, node, why.message());
    p->PostNoWait([id, step, node, message = std::string(why.message()),
                   unreachable = absl::IsUnavailable(why),
                   prolog = rpc::ErrorCodeFor(why) == v1::PROLOG_FAILED](ControllerCore& core,
                                                                         Effects& fx, Time now) {
      // The node drains, and a batch job's script goes back to the queue; the step (or
      // the job srun submitted) fails as for any launch failure.
      if (prolog) core.PrologFailed(id, node, message, now, &fx);
      if (step) {
        core.StepNodeEnded(id, *step, node, 1 << 8, message, now, &fx);
        return absl::OkStatus();
      }
      core.LaunchFailed(id, message, now, &fx, unreachable, node);
      return absl::OkStatus();
    });
  };
  c->links_ = std::make_unique<NodeLinks>(c->munge_.get(), std::move(lo));

  c->stats_.start_time = c->clock_->UnixSeconds();
  c->Publish(c->clock_->UnixSeconds(), nullptr);
  // One port for both transports: gRPC has no listening port of its own and is handed
  // each connection that opens with HTTP/2's preface.
  c->api_ = std::make_unique<ControllerApi>(c.get());
  c->service_ = MakeGrpcService(c->api_.get());
  grpc::ServerBuilder builder;
  builder.RegisterService(c->service_.get());
  c->server_ = builder.BuildAndStart();
  if (!c->server_) return absl::InternalError("the gRPC server did not start");
  rpc::FrameServerOptions fo;
  fo.address = c->address_;
  fo.max_unauthenticated_connections = cfg.max_unauthenticated_connections;
  fo.frame_deadline_ms = cfg.unauthenticated_deadline_s * 1000;
  ASSIGN_OR_RETURN(
      c->frames_,
      rpc::FrameServer::Start(
          fo,
          [api = c->api_.get()](std::string_view frame, const std::any& admitted) {
            return AnswerFrame(*api, frame, admitted);
          },
          RefuseFrame,
          [server = c->server_.get()](int fd) { grpc::AddInsecureChannelFromFd(server, fd); },
          [api = c->api_.get()](std::string_view prefix) { return AdmitFrame(*api, prefix); }));
  std::optional<std::future<void>> acct_tree_wait;
  if (cfg.AccountingEnabled()) {
    AcctAgentOptions ao;
    ao.cluster = cfg.cluster_name;
    const std::string controller_host =
        cfg.controllers.empty() ? "127.0.0.1" : cfg.controllers.front().addr;
    ao.host = cfg.accounting_storage_host.empty() ? controller_host : cfg.accounting_storage_host;
    ao.port = cfg.accounting_storage_port;
    ao.control_host = controller_host;
    ao.control_port = c->port();
    ao.cluster_tres = ClusterTres(cfg);
    ao.munge = c->munge_.get();
    ao.clock = c->clock_;
    // Submissions need the tree (a job's default account): a controller that has none
    // stored waits a little for loomdbd's at the start, as `loom cluster up` starts both.
    auto first_tree = std::make_shared<std::promise<void>>();
    auto got_first = std::make_shared<std::once_flag>();
    std::future<void> tree_ready = first_tree->get_future();
    ao.associations = [p = c.get(), first_tree, got_first](const v1::AcctShowReply& tree) {
      std::call_once(*got_first, [&] { first_tree->set_value(); });
      std::string bytes = tree.SerializeAsString();
      p->PostNoWait([p, tree, bytes = std::move(bytes)](ControllerCore& core, Effects&, Time) {
        if (bytes == p->acct_tree_bytes_) return absl::OkStatus();
        p->associations_ = AssociationsOf(tree, p->site_.cluster.cluster_name);
        p->acct_tree_bytes_ = bytes;
        p->acct_tree_unstored_ = true;
        core.SetAssociations(p->associations_);
        return absl::OkStatus();
      });
    };
    if (c->associations_ == nullptr) acct_tree_wait = std::move(tree_ready);
    const uint64_t next_seq = acct_queued.empty() ? 1 : acct_queued.back().seq + 1;
    c->acct_outbox_ = std::make_unique<AcctOutbox>(next_seq);
    c->acct_agent_ = std::make_unique<AcctAgent>(
        std::move(ao), std::move(acct_queued), [p = c.get()](std::vector<std::string> keys) {
          p->PostNoWait([p, keys = std::move(keys)](ControllerCore&, Effects&, Time) {
            p->acct_acked_.insert(p->acct_acked_.end(), keys.begin(), keys.end());
            return absl::OkStatus();
          });
        });
  }
  c->dispatcher_ = std::thread([p = c.get()] { p->DispatchLoop(); });
  if (acct_tree_wait) {
    if (acct_tree_wait->wait_for(kFirstTreeWait) != std::future_status::ready) {
      core::LogError(
          "accounting: no association tree from loomdbd yet; jobs get no default "
          "account until it answers");
    }
  }
  c->owner_ = std::thread([p = c.get()] { p->OwnerLoop(); });
  return c;
}

Controller::~Controller() { Shutdown(); }

void Controller::Shutdown() {
  // Also after the owner thread stopped by itself (stop_ already set): its threads are
  // joined all the same.
  std::call_once(shutdown_once_, [this] {
    {
      core::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (frames_) frames_->Shutdown();
    if (server_) server_->Shutdown(rpc::DeadlineIn(std::chrono::seconds(2)));
    if (owner_.joinable()) owner_.join();
    // What the last batches made is sent before the dispatcher stops.
    {
      core::MutexLock lock(&dispatch_mu_);
      dispatch_stop_ = true;
    }
    if (dispatcher_.joinable()) dispatcher_.join();
    // PrologSlurmctld and EpilogSlurmctld that still run are waited for.
    ctld_scripts_.Stop();
    // Records not yet sent stay queued in the store for the next start.
    if (acct_agent_) acct_agent_->Stop();
    // What the last batches started still reaches the nodes.
    if (links_) links_->Drain();
  });
}

void Controller::Wait() {
  core::MutexLock lock(&mu_);
  mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; });
}

Status Controller::Post(Command fn) {
  std::future<Status> done;
  {
    core::MutexLock lock(&mu_);
    if (stop_) return absl::UnavailableError("the controller is shutting down");
    queue_.push_back(Pending{std::move(fn), {}});
    done = queue_.back().done.get_future();
  }
  return done.get();
}

void Controller::PostNoWait(Command fn) {
  core::MutexLock lock(&mu_);
  if (stop_) return;
  queue_.push_back(Pending{std::move(fn), {}});
}

std::shared_ptr<const Snapshot> Controller::snapshot() const {
  core::MutexLock lock(&mu_);
  return snapshot_;
}

void Controller::OwnerLoop() {
  owner_id_ = std::this_thread::get_id();
  Time last_tick = 0;
  while (true) {
    std::deque<Pending> batch;
    {
      core::MutexLock lock(&mu_);
      mu_.AwaitFor([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return HasWork(); },
                   std::chrono::seconds(1));
      batch.swap(queue_);
      if (stop_ && batch.empty()) break;
    }
    // One reading of each clock per batch, so that every decision in it agrees on the time.
    const Time now = clock_->UnixSeconds();
    batch_monotonic_ = clock_->Monotonic();
    ++stats_.batches;
    Effects fx;
    std::vector<Status> results;
    for (Pending& p : batch) results.push_back(p.fn(*core_, fx, now));
    if (now != last_tick) {
      core_->Tick(now, &fx);
      last_tick = now;
    }
    // How long the pass took is a measurement of this machine, not a decision: real time.
    const auto t0 = core::RealClock().Monotonic();
    if (core_->Schedule(now, &fx)) {
      const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                             core::RealClock().Monotonic() - t0)
                             .count();
      ++stats_.passes;
      stats_.last_pass_us = us;
      stats_.max_pass_us = std::max(stats_.max_pass_us, us);
      stats_.total_pass_us += us;
      const sched::PassStats& pass = core_->last_pass();
      stats_.backfilled += pass.backfilled;
      core::LogFlagged(core::DebugFlag::kScheduling,
                       "sched: pass tested {} pending jobs, started {}, reserved {} in {} us",
                       pass.jobs_tested, pass.started, pass.reservations, us);
      if (pass.backfilled > 0) {
        core::LogFlagged(core::DebugFlag::kBackfill, "backfill: started {} jobs ahead of others",
                         pass.backfilled);
      }
    }
    Status persisted = Persist(fx);
    if (persisted.ok()) site_before_batch_.reset();
    if (!persisted.ok()) {
      // What is in memory is ahead of the store: every command is answered with the store's
      // error, and the state goes back to what the store holds.
      for (Pending& p : batch) p.done.set_value(persisted);
      if (Status back = ForgetRefusedBatch(persisted, now); !back.ok()) {
        // Not even the store's own contents can be read: a restart recovers exactly what
        // was acknowledged.
        core::LogAt(core::LogLevel::kFatal, "{}; stopping", back.message());
        core::MutexLock lock(&mu_);
        stop_ = true;
        break;
      }
      continue;
    }
    stats_.started += std::count_if(fx.launches.begin(), fx.launches.end(),
                                    [](const Launch& l) { return !l.after_prolog; });
    for (model::JobState st : fx.ended) {
      switch (st) {
        case model::JobState::kCompleted: ++stats_.completed; break;
        case model::JobState::kCancelled: ++stats_.cancelled; break;
        default: ++stats_.failed; break;
      }
    }
    // Publish before answering: a client that got its answer sees its change in the
    // next query.
    Publish(now, &fx);
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done.set_value(results[i]);
    CarryOut(fx);
  }
  // Anything posted after the last batch is refused, not lost silently.
  core::MutexLock lock(&mu_);
  for (Pending& p : queue_) p.done.set_value(absl::UnavailableError("the controller stopped"));
  queue_.clear();
}

Status Controller::Persist(const Effects& fx) {
  CheckOwner("Persist");
  store::Batch batch = BatchFor(fx, *core_);
  std::vector<AcctRecord> acct_records;
  if (acct_outbox_) {
    acct_records = acct_outbox_->AddTo(fx, *core_, InfoOptions(), clock_->UnixSeconds(), &batch);
    for (const std::string& key : acct_acked_) batch.Add(store::DeleteValue{key});
    if (acct_tree_unstored_) {
      batch.Add(store::PutValue{std::string(kAcctTreeKey), acct_tree_bytes_});
    }
  }
  const bool usage = core_->usage_unstored();
  if (usage) batch.Add(store::PutValue{std::string(kUsageKey), core_->usage().Serialize()});
  core::MutexLock lock(&store_mu_);
  RETURN_IF_ERROR(AddResubmissions(fx, *store_, &batch));
  if (batch.empty()) return absl::OkStatus();
  const auto now = batch_monotonic_;
  if (!store_error_.ok() && now < store_retry_at_) {
    const auto wait_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(store_retry_at_ - now).count();
    return Status(store_error_.code(),
                  core::StrCat(std::string(store_error_.message()), " (the controller tries the store again in ",
                               wait_ms, " ms)"));
  }
  Status s = store_->Commit(batch);
  if (s.ok() && usage) core_->UsageStored();
  if (acct_outbox_) {
    acct_outbox_->Committed(s.ok() ? acct_records : std::vector<AcctRecord>{});
    if (s.ok()) {
      acct_acked_.clear();
      acct_tree_unstored_ = false;
      acct_agent_->Enqueue(std::move(acct_records));
    }
  }
  if (s.ok() && !store_error_.ok()) {
    core::LogInfo("the store takes changes again");
    store_error_ = absl::OkStatus();
    store_backoff_ms_ = 0;
  }
  return s;
}

Status Controller::ForgetRefusedBatch(const Status& why, Time now) {
  CheckOwner("ForgetRefusedBatch");
  if (store_error_.ok()) {
    core::LogError("the store refused a change: {}; refusing changes until it takes them "
                   "again, queries are still answered",
                   why.message());
  }
  // A refusal during the pause is the same failure; only a failed try lengthens the pause.
  if (store_error_.ok() || batch_monotonic_ >= store_retry_at_) {
    store_backoff_ms_ = std::clamp(store_backoff_ms_ * 2, 100, kMaxStoreBackoffMs);
    store_retry_at_ = batch_monotonic_ + std::chrono::milliseconds(store_backoff_ms_);
    store_error_ = why;
  }
  if (site_before_batch_) {
    site_ = *std::move(site_before_batch_);
    site_before_batch_.reset();
  }
  ASSIGN_OR_RETURN(core_, RecoverCore());
  node_addresses_ = NodeAddressesOf(site_, core_->cluster());
  publish_all_ = true;
  Publish(now, nullptr);
  return absl::OkStatus();
}

void Controller::Publish(int64_t now, const Effects* fx) {
  CheckOwner("Publish");
  const JobInfoOptions o = InfoOptions();
  bool nodes_stale = fx == nullptr || publish_all_ || !fx->nodes_changed.empty() ||
                     core_->cluster().generation != nodes_generation_;
  bool holders_changed = false;
  if (fx == nullptr || publish_all_ || listing_ == nullptr) {
    listing_ = JobListing::Build(*core_, o);
    partitions_ = std::make_shared<const std::vector<v1::PartitionInfo>>(PartitionsOf(*core_));
    config_ = std::make_shared<const conf::ConfigEntries>(
        conf::ShowConfigEntries(core_->site().cluster, core_->options().slurm_user_uid));
    steps_ = nullptr;
    nodes_stale = true;
    publish_all_ = false;
  } else if (!fx->changed.empty() || !fx->touched.empty()) {
    std::vector<JobId> ids(fx->changed);
    ids.insert(ids.end(), fx->touched.begin(), fx->touched.end());
    listing_ = listing_->Update(*core_, ids, o, &holders_changed);
  }
  PublishSteps(fx);
  if (nodes_stale || nodes_ == nullptr || holders_changed) {
    std::vector<NodeUsage> usage = NodeUsageOf(core_->LiveEntries(), core_->cluster().nodes.size());
    MarkReservations(core_->cluster(), now, &usage);
    // Where each node's daemon listens, as slurm.conf says (scontrol show node).
    const std::vector<conf::NodeConfig>& configured = site_.cluster.nodes;
    auto listens = [&](int32_t i, v1::NodeInfo* n) {
      const conf::NodeConfig* c =
          static_cast<size_t>(i) < configured.size() && configured[i].name == n->name()
              ? &configured[i]
              : site_.cluster.FindNode(n->name());
      if (c == nullptr) return;
      n->set_address(c->addr);
      n->set_hostname(c->hostname);
      n->set_port(c->port > 0 ? c->port : site_.cluster.slurmd_port);
    };
    nodes_ = std::make_shared<const NodeInfos>(RefreshNodes(
        *core_, usage, nodes_stale ? nullptr : nodes_.get(), node_usage_, o.gpu_tres, listens));
    node_usage_ = std::move(usage);
    nodes_generation_ = core_->cluster().generation;
  }
  auto snap = std::make_shared<Snapshot>(stats_);
  snap->time = now;
  snap->jobs = listing_;
  snap->nodes = nodes_;
  snap->partitions = partitions_;
  snap->steps = steps_;
  snap->config = config_;
  snap->last_pass = core_->last_pass();
  snap->submitted = static_cast<int64_t>(core_->next_job_id()) - 1;
  core::MutexLock lock(&mu_);
  snapshot_ = std::move(snap);
}

std::shared_ptr<const std::vector<v1::StepInfo>> Controller::StepsOfJob(JobId job) const {
  std::vector<std::pair<const JobEntry*, const StepRecord*>> steps = core_->Steps(job);
  if (steps.empty()) return nullptr;
  auto out = std::make_shared<std::vector<v1::StepInfo>>();
  out->reserve(steps.size());
  for (const auto& [e, step] : steps) {
    out->push_back(StepInfoOf(*e, *step, core_->cluster(), PartitionOf(*e, core_->cluster())));
  }
  return out;
}

void Controller::PublishSteps(const Effects* fx) {
  if (steps_ == nullptr || fx == nullptr) {
    auto all = std::make_shared<StepListing>();
    for (const auto& [id, table] : core_->step_tables()) {
      if (auto steps = StepsOfJob(id)) all->emplace(id, std::move(steps));
    }
    steps_ = std::move(all);
    return;
  }
  // Only the jobs the batch changed may list other steps; most batches touch none that has
  // any, and then the listing is shared as it is.
  std::vector<JobId> ids(fx->steps_changed);
  ids.insert(ids.end(), fx->changed.begin(), fx->changed.end());
  ids.insert(ids.end(), fx->touched.begin(), fx->touched.end());
  std::shared_ptr<StepListing> next;
  for (JobId id : ids) {
    if (!steps_->contains(id) && core_->StepsOf(id) == nullptr) continue;
    if (next == nullptr) next = std::make_shared<StepListing>(*steps_);
    if (auto steps = StepsOfJob(id)) {
      (*next)[id] = std::move(steps);
    } else {
      next->erase(id);
    }
  }
  if (next != nullptr) steps_ = std::move(next);
}

}  // namespace loom::ctld
