#include "ctld/service.h"

#include <grpcpp/server_context.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "auth/identity.h"
#include "conf/show_config.h"
#include "core/hostlist.h"
#include "core/log.h"
#include "core/mutex.h"
#include "core/strings.h"
#include "core/version.h"
#include "ctld/controller.h"
#include "ctld/job_modify.h"
#include "ctld/wire.h"
#include "policy/job_desc.h"
#include "rpc/call_auth.h"
#include "rpc/convert.h"
#include "rpc/credential.h"
#include "rpc/reply.h"

namespace loom::ctld {
namespace {

// The jobs `node` reports that the controller does not run there are killed there (see
// ControllerCore::NodeReportsJobs), and the controller's log says so.
void KillOrphans(ControllerCore& core, const std::string& node,
                 const google::protobuf::RepeatedField<uint64_t>& running, Time now, Effects* fx) {
  const std::vector<JobId> reported(running.begin(), running.end());
  for (JobId id : core.NodeReportsJobs(node, reported, fx)) {
    core::LogError("node {} still runs {}, which does not run there; killing it", node,
                   core::JobId{id});
  }
  for (JobId id : core.NodeMissesJobs(node, reported, now, fx)) {
    core::LogError("{} is missing from its batch node {}; requeued, or ended NODE_FAIL",
                   core::JobId{id}, node);
  }
}

// Node daemons report three times per SlurmdTimeout.
int64_t HeartbeatInterval(int64_t slurmd_timeout_s) {
  return std::max<int64_t>(1, slurmd_timeout_s / 3);
}

// What scancel names: a job, one task of an array ("123_4") or one step ("123.4").
struct JobRef {
  JobId job = 0;
  std::optional<int64_t> task;
  std::optional<uint32_t> step;
};

// "123", "123_4" or "123.4": the job, the array task, the step.
StatusOr<JobRef> ParseJobRef(std::string_view text) {
  std::optional<uint32_t> step;
  if (size_t dot = text.find('.'); dot != std::string_view::npos) {
    auto s = core::ParseInt(text.substr(dot + 1));
    if (!s || *s < 0 || *s > 0xfffffff0LL)
      return absl::InvalidArgumentError("Invalid job id specified");
    step = static_cast<uint32_t>(*s);
    text = text.substr(0, dot);
  }
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
  return JobRef{static_cast<JobId>(*id), task, step};
}

}  // namespace

ControllerApi::ControllerApi(Controller* c) : c_(c) {
  const conf::ClusterConfig& cfg = c->site().cluster;
  auto slurm_user = auth::LookupUserByName(cfg.slurm_user);
  slurm_user_uid_ = slurm_user.ok() ? slurm_user->uid : 0;
  controller_name_ = cfg.controllers.empty() ? "" : cfg.controllers.front().name;
  heartbeat_interval_s_ = HeartbeatInterval(cfg.slurmd_timeout_s);
}

Caller ControllerApi::Identify(const auth::Identity& id) const {
  Caller who{id.uid, id.gid, ""};
  const auto now = c_->clock().Monotonic();
  {
    core::MutexLock lock(&names_mu_);
    auto it = names_.find(id.uid);
    if (it != names_.end() && now < it->second.until) {
      who.user = it->second.name;
      return who;
    }
  }
  auto user = auth::LookupUserById(id.uid);
  if (!user.ok()) {
    who.user = std::to_string(id.uid);  // not kept: the user may be created any moment
    return who;
  }
  who.user = user->name;
  core::MutexLock lock(&names_mu_);
  if (names_.size() >= 4096) names_.clear();  // a bound; refilled by who calls next
  names_[id.uid] = KnownName{user->name, now + std::chrono::minutes(1)};
  return who;
}

auth::MungeCredentials& ControllerApi::munge() { return c_->munge(); }

bool ControllerApi::Daemon(const Caller& who) const {
  return who.uid == 0 || who.uid == slurm_user_uid_;
}

Status ControllerApi::Submit(const Caller& who, const v1::SubmitRequest& req,
                           v1::SubmitReply* reply) {
  auto request = rpc::FromWire(req.spec());
  if (!request.ok()) return request.status();
  // job_submit.lua sees the submission before the controller's rules do, as in Slurm; it
  // runs in a helper process, never on the owner thread.
  std::string unloaded;
  if (std::shared_ptr<JobSubmitPool> policy = c_->job_submit(&unloaded)) {
    JobSubmitOutcome outcome;
    const policy::Submitter submitter{who.uid, who.gid, who.user};
    Status call = policy->Submit(submitter, &*request, &outcome);
    reply->set_user_msg(core::Join(outcome.user_msgs, "\n"));
    if (!call.ok()) {
      core::LogError("job_submit.lua, submission by {}: {}", who.user, call.message());
      return absl::Status(call.code(),
                          core::StrCat("job_submit.lua: ", std::string(call.message())));
    }
    if (!outcome.status.ok()) return outcome.status;
  } else if (!unloaded.empty()) {
    return absl::FailedPreconditionError(unloaded);
  }
  if (req.test_only()) {
    WillRun answer;
    Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) -> Status {
      ASSIGN_OR_RETURN(answer, core.TestOnly(*request, now, &fx));
      return absl::OkStatus();
    });
    reply->set_job_id(answer.job_id);
    reply->set_expected_start(answer.start);
    reply->set_expected_nodes(answer.nodes);
    reply->set_expected_cpus(answer.cpus);
    reply->set_expected_partition(answer.partition);
    return s;
  }
  JobId id = 0;
  Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) -> Status {
    ASSIGN_OR_RETURN(id, core.Submit(std::move(*request), who, now, &fx));
    return absl::OkStatus();
  });
  reply->set_job_id(id);
  return s;
}

namespace {

JobFilter FilterOf(const v1::QueryJobsRequest& req) {
  JobFilter filter;
  filter.ids.insert(req.job_ids().begin(), req.job_ids().end());
  filter.users.insert(req.users().begin(), req.users().end());
  filter.partitions.insert(req.partitions().begin(), req.partitions().end());
  filter.states.insert(req.states().begin(), req.states().end());
  filter.names.insert(req.names().begin(), req.names().end());
  return filter;
}

}  // namespace

Status ControllerApi::QueryJobs(const Caller& who, const v1::QueryJobsRequest& req,
                                v1::QueryJobsReply* reply) {
  (void)who;
  auto snap = c_->snapshot();
  reply->set_snapshot_time(snap->time);
  // The records go out as serialized when published: as unknown fields with the number of
  // QueryJobsReply.jobs, which is what the client parses them as.
  snap->jobs->AppendSerializedTo(FilterOf(req), v1::QueryJobsReply::kJobsFieldNumber,
                                 reply->GetReflection()->MutableUnknownFields(reply));
  return absl::OkStatus();
}

Status ControllerApi::QueryJobsWire(const Caller& who, const v1::QueryJobsRequest& req,
                                    v1::QueryJobsReply* reply, std::string* records) {
  (void)who;
  auto snap = c_->snapshot();
  reply->set_snapshot_time(snap->time);
  snap->jobs->AppendWireTo(FilterOf(req), v1::QueryJobsReply::kJobsFieldNumber, records);
  return absl::OkStatus();
}

Status ControllerApi::QueryNodes(const Caller& who, const v1::QueryNodesRequest& req,
                               v1::QueryNodesReply* reply) {
  (void)who;
  auto snap = c_->snapshot();
  std::set<std::string> names(req.names().begin(), req.names().end());
  for (const auto& n : *snap->nodes) {
    if (names.empty() || names.count(n->name())) *reply->add_nodes() = *n;
  }
  for (const v1::PartitionInfo& p : *snap->partitions) *reply->add_partitions() = p;
  return absl::OkStatus();
}

Status ControllerApi::SignalJob(const Caller& who, const v1::SignalJobRequest& req,
                              v1::SignalJobReply* reply) {
  std::vector<JobRef> targets;
  std::vector<std::string> names;  // how each target is named in the reply
  for (const std::string& text : req.job_ids()) {
    auto ref = ParseJobRef(text);
    if (!ref.ok()) return ref.status();
    targets.push_back(*ref);
    names.push_back(text);
  }
  // scancel -u/-p/-n/-t: the matching jobs of the snapshot.
  if (req.job_ids().empty()) {
    JobFilter filter;
    if (!req.user().empty()) filter.users.insert(req.user());
    if (!req.partition().empty()) filter.partitions.insert(req.partition());
    if (!req.name().empty()) filter.names.insert(req.name());
    // Only pending and running jobs are signalled; -t narrows that down.
    filter.states = {"PENDING", "RUNNING"};
    bool any = true;
    if (!req.state().empty()) {
      any = filter.states.count(req.state()) > 0;
      filter.states = {req.state()};
    }
    google::protobuf::RepeatedPtrField<v1::JobInfo> jobs;
    if (any) c_->snapshot()->jobs->AppendTo(filter, &jobs);
    for (const v1::JobInfo& j : jobs) {
      targets.push_back(JobRef{j.job_id(), std::nullopt, {}});
      names.push_back(std::to_string(j.job_id()));
    }
  }
  // One batch for all of them: a scancel of many jobs costs one commit.
  std::vector<Status> results(targets.size());
  Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
    for (size_t i = 0; i < targets.size(); ++i) {
      const JobRef& t = targets[i];
      results[i] = t.step ? core.SignalStep(t.job, *t.step, req.signal(), who, now, &fx)
                          : core.Signal(t.job, t.task, req.signal(), who, now, &fx);
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  Status first = absl::OkStatus();
  for (size_t i = 0; i < results.size(); ++i) {
    *reply->add_per_job() = rpc::ToWire(results[i]);
    reply->add_per_job_id(names[i]);
    if (first.ok() && !results[i].ok()) first = results[i];
  }
  return first;
}

Status ControllerApi::ModifyByPolicy(JobId id, const Caller& who, JobEdit* edit) {
  std::string unloaded;
  std::shared_ptr<JobSubmitPool> policy = c_->job_submit(&unloaded);
  if (policy == nullptr) return absl::OkStatus();
  // The job as the last snapshot lists it; an unknown id is the core's to answer.
  JobFilter filter;
  filter.ids.insert(id);
  std::string records;
  c_->snapshot()->jobs->AppendWireTo(filter, v1::QueryJobsReply::kJobsFieldNumber, &records);
  v1::QueryJobsReply listed;
  if (!listed.ParseFromString(records) || listed.jobs().empty()) return absl::OkStatus();
  model::JobRequest update = RequestOfEdit(*edit);
  const nlohmann::json before =
      policy::JobDescOf(update, policy::Submitter{who.uid, who.gid, who.user});
  JobSubmitOutcome outcome;
  StatusOr<nlohmann::json> after =
      policy->Modify(before, JobRecOf(listed.jobs(0)), who.uid, &outcome);
  if (!after.ok()) {
    core::LogError("job_submit.lua, update of {} by {}: {}", core::JobId{id}, who.user,
                   after.status().message());
    return absl::Status(after.status().code(),
                        core::StrCat("job_submit.lua: ", std::string(after.status().message())));
  }
  if (!outcome.status.ok()) {
    // The script's messages go with its verdict: an update has no other way back.
    std::string why(outcome.status.message());
    for (const std::string& m : outcome.user_msgs) why += core::StrCat("; ", m);
    return absl::Status(outcome.status.code(), why);
  }
  std::vector<std::string> ignored;
  RETURN_IF_ERROR(policy::ApplyJobDesc(before, *after, &update, &ignored));
  EditFromRequest(update, edit);
  return absl::OkStatus();
}

Status ControllerApi::UpdateJob(const Caller& who, const v1::UpdateJobRequest& req,
                              v1::UpdateJobReply* reply) {
  const JobId id = req.job_id();
  Status s;
  switch (req.action()) {
    case v1::UpdateJobRequest::HOLD:
      s = c_->Post([&](ControllerCore& core, Effects& fx, Time) { return core.Hold(id, who, &fx); });
      break;
    case v1::UpdateJobRequest::RELEASE:
      s = c_->Post(
          [&](ControllerCore& core, Effects& fx, Time) { return core.Release(id, who, &fx); });
      break;
    case v1::UpdateJobRequest::UPDATE: {
      // In key order, so that one request reads the same however the map iterates.
      std::vector<std::pair<std::string, std::string>> fields(req.fields().begin(),
                                                              req.fields().end());
      std::sort(fields.begin(), fields.end());
      ASSIGN_OR_RETURN(JobEdit edit, ParseJobEdit(fields));
      RETURN_IF_ERROR(ModifyByPolicy(id, who, &edit));
      s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
        return core.UpdateJob(id, edit, who, now, &fx);
      });
      break;
    }
    case v1::UpdateJobRequest::REQUEUE:
    case v1::UpdateJobRequest::REQUEUE_HOLD:
      s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
        return core.Requeue(id, req.action() == v1::UpdateJobRequest::REQUEUE_HOLD, who, now, &fx);
      });
      break;
    default:
      s = absl::InvalidArgumentError("unknown job action");
  }
  return s;
}

Status ControllerApi::Reservation(const Caller& who, const v1::ReservationRequest& req,
                                  v1::ReservationReply* reply) {
  // In key order, so that one request reads the same however the map iterates.
  ControllerCore::Words words(req.fields().begin(), req.fields().end());
  std::sort(words.begin(), words.end());
  switch (req.action()) {
    case v1::ReservationRequest::CREATE:
      return c_->Post([&](ControllerCore& core, Effects& fx, Time now) -> Status {
        StatusOr<std::string> name = core.CreateReservation(words, who, now, &fx);
        if (name.ok()) reply->set_name(*name);
        return name.status();
      });
    case v1::ReservationRequest::UPDATE:
      return c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
        return core.UpdateReservation(words, who, now, &fx);
      });
    case v1::ReservationRequest::DELETE: {
      std::string name;
      for (const auto& [key, value] : words) name = value;  // ReservationName=, the only word
      return c_->Post([&](ControllerCore& core, Effects& fx, Time) {
        return core.DeleteReservation(name, who, &fx);
      });
    }
    default:
      return absl::InvalidArgumentError("unknown reservation action");
  }
}

Status ControllerApi::QueryReservations(const Caller& who, const v1::QueryReservationsRequest& req,
                                        v1::QueryReservationsReply* reply) {
  (void)who;
  return c_->Post([&](ControllerCore& core, Effects&, Time now) {
    reply->set_server_time(now);
    for (const auto& [name, r] : core.reservations()) {
      if (!req.name().empty() && name != req.name()) continue;
      v1::ReservationInfo* info = reply->add_reservations();
      *info = ReservationToInfo(r, now);
      int64_t cores = 0;
      for (const model::Node& n : core.cluster().nodes) {
        if (std::find(r.nodes.begin(), r.nodes.end(), n.name) != r.nodes.end()) {
          cores += n.capacity.cpus;
        }
      }
      info->set_core_count(static_cast<int32_t>(cores));
    }
    if (!req.name().empty() && reply->reservations().empty()) {
      return absl::NotFoundError(core::StrCat("Reservation ", req.name(), " not found"));
    }
    return absl::OkStatus();
  });
}

Status ControllerApi::UpdateNode(const Caller& who, const v1::UpdateNodeRequest& req,
                                 v1::UpdateNodeReply* reply) {
  (void)reply;
  std::vector<std::string> names;
  for (const std::string& expr : req.names()) {
    auto expanded = core::ExpandHostlist(expr);
    if (!expanded.ok()) {
      return absl::InvalidArgumentError(core::StrCat("Invalid node name specified: ", expr));
    }
    names.insert(names.end(), expanded->begin(), expanded->end());
  }
  if (names.empty()) return absl::InvalidArgumentError("No node name specified");
  return c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
    return core.UpdateNodes(names, req.state(), req.reason(), who, now, &fx);
  });
}

Status ControllerApi::Reconfigure(const Caller& who, const v1::ReconfigureRequest& req,
                                  v1::ReconfigureReply* reply) {
  (void)req;
  if (!Daemon(who)) return absl::PermissionDeniedError("Access/permission denied");
  std::vector<conf::Diagnostic> warnings;
  int64_t slurmd_timeout_s = 0;
  RETURN_IF_ERROR(c_->Reconfigure(&warnings, &slurmd_timeout_s));
  heartbeat_interval_s_ = HeartbeatInterval(slurmd_timeout_s);
  for (const conf::Diagnostic& w : warnings) reply->add_warnings(w.ToString());
  return absl::OkStatus();
}

Status ControllerApi::SetDebug(const Caller& who, const v1::SetDebugRequest& req,
                               v1::SetDebugReply* reply) {
  (void)reply;
  if (!Daemon(who)) return absl::PermissionDeniedError("Access/permission denied");
  core::Logger& log = core::Log();
  if (!req.level().empty()) {
    std::optional<core::LogLevel> level = core::ParseLogLevel(req.level());
    if (!level) return absl::InvalidArgumentError(core::StrCat("invalid debug level: ", req.level()));
    log.SetLevel(*level);
    core::LogInfo("set debug level to {}", core::LogLevelName(*level));
  }
  if (!req.flag_changes().empty()) {
    ASSIGN_OR_RETURN(uint32_t flags,
                     core::ApplyDebugFlagChanges(log.debug_flags(), req.flag_changes()));
    log.SetDebugFlags(flags);
    core::LogInfo("set DebugFlags to '{}'", core::DebugFlagsString(flags));
  }
  return absl::OkStatus();
}

Status ControllerApi::QueryConfig(const Caller& who, const v1::QueryConfigRequest& req,
                                  v1::QueryConfigReply* reply) {
  (void)who;
  (void)req;
  // The configuration in force, as the last batch published it.
  const std::shared_ptr<const Snapshot> snap = c_->snapshot();
  conf::ConfigEntries entries = *snap->config;
  entries.emplace_back("NEXT_JOB_ID", std::to_string(snap->submitted + 1));
  // The level and flags in force: scontrol setdebug and setdebugflags change them live.
  for (auto& [k, v] : entries) {
    if (k == "SlurmctldDebug") v = core::LogLevelName(core::Log().level());
    if (k == "DebugFlags") {
      v = core::DebugFlagsString(core::Log().debug_flags());
      if (v.empty()) v = "(null)";
    }
  }
  entries.emplace_back("SLURM_CONF", c_->slurm_conf());
  entries.emplace_back("SLURM_VERSION", std::string(core::kSlurmVersionValue));
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return core::ToLower(a.first) < core::ToLower(b.first);
  });
  for (const auto& [k, v] : entries) {
    v1::ConfigEntry* e = reply->add_entries();
    e->set_key(k);
    e->set_value(v);
  }
  reply->set_server_time(c_->clock().UnixSeconds());
  return absl::OkStatus();
}

Status ControllerApi::Ping(const Caller& who, const v1::PingRequest& req,
                         v1::PingReply* reply) {
  (void)who;
  reply->set_controller(controller_name_);
  reply->set_server_time(c_->clock().UnixSeconds());
  return absl::OkStatus();
}

Status ControllerApi::Diag(const Caller& who, const v1::DiagRequest& req,
                         v1::DiagReply* reply) {
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
  reply->set_server_time(c_->clock().UnixSeconds());
  const JobListing::Counts counts = snap->jobs->CountStates();
  reply->set_jobs_pending(counts.pending);
  reply->set_jobs_running(counts.running);
  if (std::optional<size_t> queued = c_->acct_queued()) reply->set_dbd_agent_queue_size(*queued);
  return absl::OkStatus();
}

Status ControllerApi::RegisterNode(const Caller& who, const v1::RegisterNodeRequest& req,
                                 v1::RegisterNodeReply* reply) {
  if (!Daemon(who)) return absl::PermissionDeniedError("Access/permission denied");
  // What the daemon found (a daemon that reports no CPUs reports nothing to compare).
  model::Resources found{req.cpus(), req.gpus_size(), req.real_memory_mb()};
  Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
    if (found.cpus > 0) {
      core.NodeRegistered(req.name(), found, now, &fx);
    } else {
      core.NodeAlive(req.name(), now, &fx);
    }
    KillOrphans(core, req.name(), req.running_jobs(), now, &fx);
    return absl::OkStatus();
  });
  reply->set_heartbeat_interval_s(heartbeat_interval_s_.load());
  return s;
}

Status ControllerApi::Heartbeat(const Caller& who, const v1::HeartbeatRequest& req,
                              v1::HeartbeatReply* reply) {
  if (!Daemon(who)) return absl::PermissionDeniedError("Access/permission denied");
  Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
    core.NodeAlive(req.name(), now, &fx);
    KillOrphans(core, req.name(), req.running_jobs(), now, &fx);
    return absl::OkStatus();
  });
  return s;
}

Status ControllerApi::JobComplete(const Caller& who, const v1::JobCompleteRequest& req,
                                v1::JobCompleteReply* reply) {
  if (!Daemon(who)) return absl::PermissionDeniedError("Access/permission denied");
  Status s = c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
    if (req.message().empty()) {
      core.RecordUsage(req.job_id(),
                       req.has_step_id() ? std::optional<uint32_t>(req.step_id()) : std::nullopt,
                       req.node(), req.user_cpu_usec(), req.system_cpu_usec(), req.max_rss_bytes());
    }
    if (req.has_step_id()) {
      core.StepNodeEnded(req.job_id(), req.step_id(), req.node(), req.exit_code(),
                         req.message(), now, &fx, req.out_of_memory());
    } else if (!req.message().empty()) {
      core.LaunchFailed(req.job_id(), req.message(), now, &fx, false, req.node());
    } else {
      core.JobEnded(req.job_id(), req.exit_code(), req.out_of_memory(), now, &fx, req.node());
    }
    return absl::OkStatus();
  });
  return s;
}

Status ControllerApi::EpilogComplete(const Caller& who, const v1::EpilogCompleteRequest& req,
                                     v1::EpilogCompleteReply* reply) {
  if (!Daemon(who)) return absl::PermissionDeniedError("Access/permission denied");
  return c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
    core.EpilogComplete(req.job_id(), req.node(), req.failed(), req.message(), now, &fx);
    return absl::OkStatus();
  });
}

namespace {

// gRPC: each rpc checks the credential in the call's metadata, then runs the API method.
class GrpcService final : public v1::Controller::Service {
 public:
  explicit GrpcService(ControllerApi* api) : api_(api) {}

#define LOOM_GRPC_METHOD(Name)                                                           \
  grpc::Status Name(grpc::ServerContext* ctx, const v1::Name##Request* req,              \
                    v1::Name##Reply* reply) override {                                   \
    return Serve(*ctx, #Name, *req, reply, &ControllerApi::Name);                        \
  }
  LOOM_CONTROLLER_METHODS(LOOM_GRPC_METHOD)
#undef LOOM_GRPC_METHOD

 private:
  template <typename Req, typename Reply>
  grpc::Status Serve(const grpc::ServerContext& ctx, std::string_view method, const Req& req,
                     Reply* reply, Status (ControllerApi::*fn)(const Caller&, const Req&, Reply*)) {
    auto id = rpc::VerifyCall(ctx, api_->munge(), method, req);
    Status s = id.ok() ? (api_->*fn)(api_->Identify(*id), req, reply) : id.status();
    return rpc::Answer(reply, s);
  }

  ControllerApi* api_;
};

// Frames: the credential covers the body exactly as it arrived.
// Reads a request frame, checks its credential and answers it with `fn`, which may also
// leave bytes of its reply already in wire form (`tail`): they go first, then the reply
// message (a protobuf reader takes the fields in any order).
// What AdmitFrame learnt from a large frame's first bytes.
struct FrameAdmission {
  std::string credential;
  auth::OpenedCredential opened;
};

// The frame's credential checked against its body: decoded here, or already decoded when the
// frame was admitted.
StatusOr<auth::Identity> FrameCaller(ControllerApi& api, const v1::Frame& frame,
                                     const std::any& admitted) {
  if (const auto* a = std::any_cast<FrameAdmission>(&admitted)) {
    if (a->credential != frame.credential()) {
      return absl::UnauthenticatedError(
          "corrupt request: the frame's credential changed after it was admitted");
    }
    return rpc::CheckOpenedCredential(a->opened, frame.method(), frame.body());
  }
  return rpc::CheckCredential(api.munge(), frame.credential(), frame.method(), frame.body());
}

template <typename Req, typename Reply, typename Fn>
rpc::FrameAnswer ServeFrameWith(ControllerApi& api, const v1::Frame& frame,
                                const std::any& admitted, Fn fn) {
  Req req;
  Reply reply;
  rpc::FrameAnswer answer;
  std::string& bytes = answer.reply;
  Status s;
  if (!req.ParseFromString(frame.body())) {
    s = absl::InvalidArgumentError(core::StrCat(
        "corrupt request: the body of a ", frame.method(), " request cannot be read"));
  } else {
    auto id = FrameCaller(api, frame, admitted);
    answer.authenticated = id.ok();
    if (id.ok()) {
      const Caller who = api.Identify(*id);
      core::LogDebug2("Processing RPC: {} from UID={}", frame.method(), who.uid);
      s = fn(who, req, &reply, &bytes);
    } else {
      s = id.status();
    }
  }
  if (!s.ok()) bytes.clear();
  *reply.mutable_error() = rpc::ToWire(s);
  reply.AppendToString(&bytes);
  return answer;
}

template <typename Req, typename Reply>
rpc::FrameAnswer ServeFrame(ControllerApi& api, const v1::Frame& frame, const std::any& admitted,
                            Status (ControllerApi::*fn)(const Caller&, const Req&, Reply*)) {
  return ServeFrameWith<Req, Reply>(
      api, frame, admitted, [&](const Caller& who, const Req& req, Reply* reply, std::string*) {
        return (api.*fn)(who, req, reply);
      });
}

}  // namespace

std::unique_ptr<grpc::Service> MakeGrpcService(ControllerApi* api) {
  return std::make_unique<GrpcService>(api);
}

// Every reply's field 1 is its Error, so one reply type can carry an error to a client
// expecting any of them.
std::string RefuseFrame(const Status& why) {
  v1::PingReply reply;
  *reply.mutable_error() = rpc::ToWire(why);
  return reply.SerializeAsString();
}

rpc::FrameAnswer AnswerFrame(ControllerApi& api, std::string_view bytes,
                             const std::any& admitted) {
  v1::Frame frame;
  if (!frame.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return {RefuseFrame(absl::InvalidArgumentError("corrupt request: the frame cannot be read"))};
  }
  // squeue's records go out as the listing keeps them, not copied into the reply first.
  if (frame.method() == "QueryJobs") {
    return ServeFrameWith<v1::QueryJobsRequest, v1::QueryJobsReply>(
        api, frame, admitted,
        [&api](const Caller& who, const v1::QueryJobsRequest& req, v1::QueryJobsReply* reply,
               std::string* records) { return api.QueryJobsWire(who, req, reply, records); });
  }
#define LOOM_FRAME_METHOD(Name) \
  if (frame.method() == #Name) return ServeFrame(api, frame, admitted, &ControllerApi::Name);
  LOOM_CONTROLLER_METHODS(LOOM_FRAME_METHOD)
#undef LOOM_FRAME_METHOD
  return {RefuseFrame(absl::UnimplementedError(core::StrCat(
      "the controller has no method '", frame.method(), "'; is the command newer than loomctld?")))};
}

StatusOr<std::any> AdmitFrame(ControllerApi& api, std::string_view prefix) {
  std::optional<rpc::FrameHead> head = rpc::ReadFrameHead(prefix);
  if (!head) {
    return absl::UnauthenticatedError(core::StrCat(
        "a frame of over ", prefix.size(),
        " bytes must begin with its method and MUNGE credential; send it with a Loom client"));
  }
  FrameAdmission a;
  ASSIGN_OR_RETURN(a.opened, api.munge().Open(head->credential));
  a.credential = std::move(head->credential);
  return std::any(std::move(a));
}

}  // namespace loom::ctld
