// loomd: the node daemon. Registers its node with loomctld, reports in every
// SlurmdTimeout/3, runs the batch scripts the controller sends and its share of the tasks of
// srun's steps, each under a loom-stepd supervisor of its own (which confines it per
// cgroup.conf, talks to srun, and outlives a restart of loomd), passes step launches on to
// the nodes below it (TreeWidth), delivers signals, and reports each script's and step's end
// on this node. A restarted loomd adopts the supervisors still running and reports their
// jobs as running. Several can run on one host with distinct -N names and Port= values
// (emulated nodes). Signals as slurmd's: SIGHUP reads slurm.conf again, SIGUSR2 reopens the
// log file, SIGTERM and SIGINT stop loomd (the supervisors and their jobs go on). It writes
// SlurmdPidFile (%n, %h expanded) when set.
#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "auth/identity.h"
#include "auth/munge_auth.h"
#include "conf/log_settings.h"
#include "conf/site_config.h"
#include "core/clock.h"
#include "core/hostlist.h"
#include "core/log.h"
#include "core/mutex.h"
#include "core/pid_file.h"
#include "core/strings.h"
#include "core/version.h"
#include "hw/hardware.h"
#include "loom/v1/loom.grpc.pb.h"
#include "noded/forwarder.h"
#include "noded/node_scripts.h"
#include "noded/proc_usage.h"
#include "noded/step_relay.h"
#include "noded/stepd_launcher.h"
#include "rpc/call_auth.h"
#include "rpc/convert.h"
#include "rpc/deadline.h"
#include "rpc/reply.h"
#include "stepd/launch_request.h"
#include "stepd/launcher.h"

namespace loom::noded {
namespace {

struct Options {
  std::string slurm_conf;
  std::string node;
  std::string munge_socket;
  std::string spool;
  std::string controller;  // HOST:PORT; default from SlurmctldHost/SlurmctldPort
  std::string stepd;       // the loom-stepd binary: beside loomd
  // What this host has (hwloc, NVML), reported when the node registers.
  hw::CpuLayout hardware;
  int32_t hardware_gpus = 0;
  // The GPUs NVML found, for a node whose gres.conf says AutoDetect=nvml: its supervisors
  // bind tasks and fence devices by them. Null: gres.conf's.
  std::shared_ptr<const model::NodeTopology> discovered_gpus;
  // What heartbeats and samples are timed by.
  const core::Clock* clock = &core::RealClock();
};

class Daemon;

class NodeService final : public v1::NodeDaemon::Service {
 public:
  explicit NodeService(Daemon* d) : d_(d) {}
  grpc::Status LaunchBatch(grpc::ServerContext* ctx, const v1::LaunchBatchRequest* req,
                           v1::LaunchBatchReply* reply) override;
  grpc::Status LaunchTasks(grpc::ServerContext* ctx, const v1::LaunchTasksRequest* req,
                           v1::LaunchTasksReply* reply) override;
  grpc::Status SignalTasks(grpc::ServerContext* ctx, const v1::SignalTasksRequest* req,
                           v1::SignalTasksReply* reply) override;
  grpc::Status StepUsage(grpc::ServerContext* ctx, const v1::StepUsageRequest* req,
                         v1::StepUsageReply* reply) override;
  grpc::Status Ping(grpc::ServerContext* ctx, const v1::PingRequest* req,
                    v1::PingReply* reply) override;
  grpc::Status RelayStep(grpc::ServerContext* ctx, const v1::StepRelay* req,
                         v1::RelayStepReply* reply) override;
  grpc::Status TerminateJob(grpc::ServerContext* ctx, const v1::TerminateJobRequest* req,
                            v1::TerminateJobReply* reply) override;
  grpc::Status RunProlog(grpc::ServerContext* ctx, const v1::RunPrologRequest* req,
                         v1::RunPrologReply* reply) override;

 private:
  Daemon* d_;
};

class Daemon {
 public:
  Daemon(Options o, conf::SiteConfig site)
      : opt_(std::move(o)),
        site_(std::move(site)),
        launcher_(noded::StepdLauncherOptions{opt_.stepd, opt_.spool, opt_.node, opt_.slurm_conf}),
        scripts_(ScriptOptions(opt_, site_.cluster)) {
    auth::MungeOptions mo;
    mo.socket_path = opt_.munge_socket;
    munge_ = std::make_unique<auth::MungeCredentials>(mo);
    forwarder_ = std::make_unique<LaunchForwarder>(munge_.get());
    relay_ = std::make_unique<StepRelayHub>(
        stepd::RelaySocketPath(opt_.spool, opt_.node),
        [this](const std::string& address, const v1::StepRelay& message) {
          return forwarder_->Relay(address, message, rpc::DeadlineIn(std::chrono::seconds(10)));
        });
    auto slurm_user = auth::LookupUserByName(site_.cluster.slurm_user);
    controller_uid_ = slurm_user.ok() ? slurm_user->uid : 0;
    stub_ = v1::Controller::NewStub(
        grpc::CreateChannel(opt_.controller, grpc::InsecureChannelCredentials()));
    // What the host has, for the supervisors started from now on.
    stepd::NodeHardware found;
    if (opt_.hardware.cpus > 0) found.cpus = opt_.hardware;
    found.gpus = opt_.discovered_gpus;
    hardware_ = stepd::HardwareToWire(found);
    if (Status s = launcher_.WriteHardware(hardware_); !s.ok()) {
      core::LogError("{}; jobs are bound by the configuration alone", s.message());
    }
    // Scripts and steps an earlier run of loomd started carry on under their supervisors:
    // adopt them before any request about them can come.
    for (const stepd::StepRef& ref : launcher_.Recover()) {
      core::LogInfo("{}: supervisor found from an earlier run", stepd::Describe(ref));
    }
  }

  Status CheckController(const grpc::ServerContext& ctx, std::string_view method,
                         const google::protobuf::Message& req) {
    ASSIGN_OR_RETURN(auth::Identity id, rpc::VerifyCall(ctx, *munge_, method, req));
    if (id.uid != 0 && id.uid != controller_uid_) {
      return absl::PermissionDeniedError("Access/permission denied: only the controller may ask");
    }
    return absl::OkStatus();
  }

  LaunchForwarder& forwarder() { return *forwarder_; }
  StepRelayHub& relay() { return *relay_; }

  // What the job's batch script and step tasks here use (sstat): CPU now, and the largest
  // memory and page counts seen, now or at the samples the daemon takes (SamplePeaks).
  void Usage(uint64_t job, v1::StepUsageReply* reply) {
    for (const auto& [task, u] : MeasureTasks(job)) {
      v1::TaskUsage* t = reply->add_tasks();
      t->set_step(std::get<1>(task));
      t->set_task(std::get<2>(task));
      t->set_node(opt_.node);
      t->set_cpu_usec(u.cpu_usec);
      t->set_rss_bytes(u.rss_bytes);
      t->set_vsize_bytes(u.vsize_bytes);
      t->set_major_faults(u.major_faults);
    }
  }

  // Every running task's usage, so that sstat's maxima cover the time between its calls.
  void SamplePeaks() { (void)MeasureTasks(0); }

  // The job's batch script, after the job's prolog here (its first launch runs it).
  Status Launch(const v1::LaunchBatchRequest& req) {
    RETURN_IF_ERROR(scripts_.Prolog(req.job()));
    return launcher_.Start(req);
  }

  // This node's share of a step, under a supervisor of its own, after the job's prolog
  // here; a malformed request is refused before either.
  Status LaunchTasks(const v1::LaunchTasksRequest& req) {
    RETURN_IF_ERROR(stepd::StepJobOf(req, opt_.node).status());
    RETURN_IF_ERROR(scripts_.Prolog(req.job()));
    return launcher_.StartStep(req);
  }

  // slurm.conf read again: the prolog and epilog from now on.
  void Reconfigure(const conf::ClusterConfig& cluster) {
    scripts_.Reconfigure(ScriptOptions(opt_, cluster));
  }

  // PrologFlags=Alloc: the job's prolog, at allocation.
  Status Prolog(const v1::RunPrologRequest& req) { return scripts_.Prolog(req.job()); }

  // The job's allocation ended: on a thread of its own, what is left of the job here is
  // terminated (SIGTERM, SIGKILL after KillWait), the epilog runs once it is gone, and the
  // controller hears of it (Run) so that the node leaves COMPLETING.
  void Terminate(const v1::TerminateJobRequest& req) {
    core::MutexLock lock(&enders_mu_);
    if (enders_.contains(req.job_id())) return;  // already ending here
    enders_.emplace(req.job_id(), std::thread([this, job = req.job()] { EndJob(job); }));
  }

  // A signal for the job (every script and step of it here) or for one step of it.
  Status Signal(const v1::SignalTasksRequest& req) {
    std::vector<stepd::StepRef> refs;
    if (req.has_step_id()) {
      const stepd::StepRef step = stepd::StepRef::Step(req.job_id(), req.step_id());
      if (launcher_.IsRunning(step)) refs.push_back(step);
    } else {
      refs = launcher_.Of(req.job_id());
    }
    if (refs.empty()) {
      return absl::NotFoundError(
          req.has_step_id()
              ? core::StrCat("step ", req.job_id(), ".", req.step_id(), " is not running on this node")
              : core::StrCat("job ", req.job_id(), " is not running on this node"));
    }
    const bool terminate = req.signal() == SIGTERM && req.kill_wait_s() > 0;
    Status first_error;
    bool delivered = false;
    for (const stepd::StepRef& ref : refs) {
      Status s = terminate ? launcher_.Terminate(ref, req.kill_wait_s())
                           : launcher_.Signal(ref, req.signal());
      if (s.ok()) {
        delivered = true;
      } else if (first_error.ok()) {
        first_error = s;
      }
    }
    return delivered ? absl::OkStatus() : first_error;
  }

  // Registration, heartbeats, and reports of ended scripts, until stopped.
  void Run() {
    int64_t interval = 1;
    bool registered = false;
    const core::Clock& clock = *opt_.clock;
    auto last_beat = clock.Monotonic() - std::chrono::hours(1);
    // How often the running tasks' memory is sampled for sstat's maxima
    // (JobAcctGatherFrequency's task interval; 0: never between sstat's own calls).
    const auto sample_every = std::chrono::seconds(site_.cluster.acct_gather_task_s);
    auto last_sample = clock.Monotonic();
    std::vector<noded::StepdLauncher::Ended> unreported;
    while (!stop_) {
      ReportEpilogs();
      for (noded::StepdLauncher::Ended& e : launcher_.Reap()) unreported.push_back(e);
      for (auto it = unreported.begin(); it != unreported.end();) {
        const stepd::FinishedJob& how = it->how;
        const std::optional<uint32_t> step = it->ref.reported_step();
        v1::JobCompleteRequest req;
        req.set_node(opt_.node);
        req.set_job_id(how.job_id);
        // Killed by the OOM killer: Slurm's OUT_OF_MEMORY with ExitCode 0:125.
        // A step inside an allocation keeps its tasks' statuses; the flag marks it.
        req.set_exit_code(how.out_of_memory && !step ? 125 : how.wait_status);
        req.set_out_of_memory(how.out_of_memory);
        if (step) req.set_step_id(*step);
        req.set_user_cpu_usec(how.user_cpu_us);
        req.set_system_cpu_usec(how.system_cpu_us);
        req.set_max_rss_bytes(how.max_rss_bytes);
        v1::JobCompleteReply reply;
        if (Call("JobComplete", req, &reply, &v1::Controller::Stub::JobComplete)) {
          launcher_.Forget(it->ref);  // the controller has it: the result may go
          it = unreported.erase(it);
        } else {
          ++it;  // the controller is away: tell it when it is back
        }
      }
      const auto now = clock.Monotonic();
      if (sample_every.count() > 0 && now - last_sample >= sample_every) {
        last_sample = now;
        SamplePeaks();
      }
      if (now - last_beat >= std::chrono::seconds(registered ? interval : 1)) {
        last_beat = now;
        if (!registered) {
          v1::RegisterNodeRequest req;
          req.set_name(opt_.node);
          req.set_cpus(opt_.hardware.cpus);
          req.set_sockets(opt_.hardware.sockets);
          req.set_cores_per_socket(opt_.hardware.cores_per_socket);
          req.set_threads_per_core(opt_.hardware.threads_per_core);
          req.set_real_memory_mb(opt_.hardware.memory_mb);
          if (opt_.discovered_gpus) {
            *req.mutable_gpus() = hardware_.gpus();  // what NVML found, whole
          } else {
            for (int32_t g = 0; g < opt_.hardware_gpus; ++g) req.add_gpus()->set_index(g);
          }
          for (uint64_t job : RunningJobs()) req.add_running_jobs(job);
          for (const noded::StepdLauncher::Ended& e : unreported) {
            if (!e.ref.reported_step()) req.add_running_jobs(e.how.job_id);
          }
          v1::RegisterNodeReply reply;
          if (Call("RegisterNode", req, &reply, &v1::Controller::Stub::RegisterNode)) {
            registered = true;
            interval = std::max<int64_t>(1, reply.heartbeat_interval_s());
          }
        } else {
          v1::HeartbeatRequest req;
          req.set_name(opt_.node);
          for (uint64_t job : RunningJobs()) req.add_running_jobs(job);
          // Ended here but not yet told: still this node's, as far as the controller knows.
          for (const noded::StepdLauncher::Ended& e : unreported) {
            if (!e.ref.reported_step()) req.add_running_jobs(e.how.job_id);
          }
          v1::HeartbeatReply reply;
          registered = Call("Heartbeat", req, &reply, &v1::Controller::Stub::Heartbeat);
        }
      }
      // A supervisor that exits (its result written) ends the wait: its end is reported at
      // once, not at the next tick.
      launcher_.WaitForEnd(std::chrono::milliseconds(100));
    }
  }
  // Stops Run; an epilog still running is left to the process's exit.
  void Stop() {
    stop_ = true;
    core::MutexLock lock(&enders_mu_);
    for (auto& [job, thread] : enders_) thread.detach();
    enders_.clear();
  }

 private:
  static noded::NodeScriptsOptions ScriptOptions(const Options& opt,
                                                 const conf::ClusterConfig& cluster) {
    noded::NodeScriptsOptions o;
    o.prolog = cluster.prolog;
    o.epilog = cluster.epilog;
    o.serial = cluster.prolog_flags.serial;
    if (cluster.prolog_epilog_timeout_s != conf::ClusterConfig::kNoPrologEpilogTimeout) {
      o.timeout_s = cluster.prolog_epilog_timeout_s;
    }
    o.node = opt.node;
    o.slurm_conf = opt.slurm_conf;
    o.cluster_name = cluster.cluster_name;
    return o;
  }

  // Terminate's thread: see there.
  void EndJob(const v1::JobInfo& job) {
    const uint64_t id = job.job_id();
    for (const stepd::StepRef& ref : launcher_.Of(id)) {
      (void)launcher_.Terminate(ref, site_.cluster.kill_wait_s);
    }
    // Its supervisors end once their processes have; one that outlives KillWait by much is
    // left, and the epilog runs anyway.
    const auto give_up =
        opt_.clock->Monotonic() + std::chrono::seconds(site_.cluster.kill_wait_s + 10);
    // (Run reaps them; this thread only looks.)
    while (!stop_ && !launcher_.Of(id).empty() && opt_.clock->Monotonic() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    v1::EpilogCompleteRequest report;
    report.set_node(opt_.node);
    report.set_job_id(id);
    if (std::optional<std::string> failed = scripts_.Epilog(job)) {
      report.set_failed(true);
      report.set_message(*failed);
    }
    // Told at once, from this thread: the node is the controller's to give again only then.
    // While the controller is away, Run tells it later.
    v1::EpilogCompleteReply reply;
    const bool told = Call("EpilogComplete", report, &reply, &v1::Controller::Stub::EpilogComplete);
    core::MutexLock lock(&enders_mu_);
    if (!told) epilog_reports_.push_back(std::move(report));
    ended_.push_back(id);
  }

  // The epilogs' ends their threads could not tell the controller (again at the next turn
  // while it is away); and the threads that ran them, joined.
  void ReportEpilogs() {
    std::vector<v1::EpilogCompleteRequest> reports;
    std::vector<std::thread> done;
    {
      core::MutexLock lock(&enders_mu_);
      reports.swap(epilog_reports_);
      for (uint64_t job : ended_) {
        auto it = enders_.find(job);
        if (it == enders_.end()) continue;
        done.push_back(std::move(it->second));
        enders_.erase(it);
      }
      ended_.clear();
    }
    for (std::thread& t : done) t.join();
    std::vector<v1::EpilogCompleteRequest> again;
    for (v1::EpilogCompleteRequest& r : reports) {
      v1::EpilogCompleteReply reply;
      if (!Call("EpilogComplete", r, &reply, &v1::Controller::Stub::EpilogComplete)) {
        again.push_back(std::move(r));
      }
    }
    if (again.empty()) return;
    core::MutexLock lock(&enders_mu_);
    epilog_reports_.insert(epilog_reports_.begin(), again.begin(), again.end());
  }

  // A task here: its job, step ("batch" or the step id) and task id.
  using TaskKey = std::tuple<uint64_t, std::string, int32_t>;

  // The usage of the running tasks of `job` (every job's for 0), with memory and pages the
  // largest seen of each task; the peaks of tasks no longer running are forgotten.
  std::map<TaskKey, ProcessUsage> MeasureTasks(uint64_t job) {
    std::map<TaskKey, pid_t> tasks;
    {
      for (const stepd::StepRef& ref : job != 0 ? launcher_.Of(job) : launcher_.Running()) {
        if (ref.is_batch()) {
          if (pid_t pid = launcher_.ScriptPid(ref.job_id); pid > 0) {
            tasks[{ref.job_id, "batch", 0}] = pid;
          }
          continue;
        }
        // The tasks of a job srun submitted are its step 0.
        const std::string step = core::StrCat(ref.reported_step().value_or(0));
        for (const stepd::TaskRecord& t : launcher_.StepTasks(ref)) {
          tasks[{ref.job_id, step, t.task}] = t.process.pid;
        }
      }
    }
    std::set<pid_t> sids;
    for (const auto& [key, pid] : tasks) sids.insert(pid);
    const std::map<pid_t, ProcessUsage> now = SessionsUsage(sids);
    std::map<TaskKey, ProcessUsage> out;
    core::MutexLock lock(&peaks_mu_);
    for (const auto& [key, pid] : tasks) {
      auto it = now.find(pid);
      if (it == now.end()) continue;  // it ended meanwhile
      ProcessUsage& peak = peaks_[key];
      peak.rss_bytes = std::max(peak.rss_bytes, it->second.rss_bytes);
      peak.vsize_bytes = std::max(peak.vsize_bytes, it->second.vsize_bytes);
      peak.major_faults = std::max(peak.major_faults, it->second.major_faults);
      ProcessUsage u = it->second;
      u.rss_bytes = peak.rss_bytes;
      u.vsize_bytes = peak.vsize_bytes;
      u.major_faults = peak.major_faults;
      out[key] = u;
    }
    if (job == 0) std::erase_if(peaks_, [&](const auto& p) { return !tasks.contains(p.first); });
    return out;
  }

  // The jobs with a script or a step here, which the controller checks against its own.
  std::vector<uint64_t> RunningJobs() { return launcher_.RunningJobs(); }

  template <typename Req, typename Reply, typename Method>
  bool Call(std::string_view name, const Req& req, Reply* reply, Method method) {
    grpc::ClientContext ctx;
    ctx.set_deadline(rpc::DeadlineIn(std::chrono::seconds(5)));
    if (!rpc::AttachCredential(&ctx, *munge_, name, req).ok()) return false;
    grpc::Status s = ((*stub_).*method)(&ctx, req, reply);
    return s.ok() && reply->error().code() == v1::OK;
  }

  Options opt_;
  conf::SiteConfig site_;
  std::unique_ptr<auth::MungeCredentials> munge_;
  uint32_t controller_uid_ = 0;
  std::unique_ptr<v1::Controller::Stub> stub_;
  noded::StepdLauncher launcher_;  // thread-safe
  v1::NodeHardware hardware_;      // what the host has, as its supervisors get it
  std::unique_ptr<LaunchForwarder> forwarder_;  // thread-safe
  std::unique_ptr<StepRelayHub> relay_;         // thread-safe; uses forwarder_
  noded::NodeScripts scripts_;                  // thread-safe
  core::Mutex enders_mu_;
  // The jobs ending here (Terminate), each on its thread; those whose thread is done.
  std::map<uint64_t, std::thread> enders_ ABSL_GUARDED_BY(enders_mu_);
  std::vector<uint64_t> ended_ ABSL_GUARDED_BY(enders_mu_);
  std::vector<v1::EpilogCompleteRequest> epilog_reports_ ABSL_GUARDED_BY(enders_mu_);
  core::Mutex peaks_mu_;
  // The largest memory seen of each running task.
  std::map<TaskKey, ProcessUsage> peaks_ ABSL_GUARDED_BY(peaks_mu_);
  std::atomic<bool> stop_{false};
};

using rpc::Answer;

grpc::Status NodeService::LaunchBatch(grpc::ServerContext* ctx, const v1::LaunchBatchRequest* req,
                                      v1::LaunchBatchReply* reply) {
  Status s = d_->CheckController(*ctx, "LaunchBatch", *req);
  if (s.ok()) s = d_->Launch(*req);
  return Answer(reply, s);
}

grpc::Status NodeService::LaunchTasks(grpc::ServerContext* ctx, const v1::LaunchTasksRequest* req,
                                      v1::LaunchTasksReply* reply) {
  Status s = d_->CheckController(*ctx, "LaunchTasks", *req);
  if (!s.ok()) return Answer(reply, s);
  // The nodes below this one first (TreeWidth), in parallel with this node's own tasks; the
  // answer waits for theirs, leaving a second of the caller's deadline (which grows with the
  // nodes below) for the way back.
  std::vector<v1::NodeLaunchError> below;
  std::thread forwarding;
  if (!req->forward().empty()) {
    const auto deadline = std::min(ctx->deadline(), rpc::DeadlineIn(std::chrono::minutes(5))) -
                          std::chrono::seconds(1);
    // `deadline` by value: this block ends while the thread runs.
    forwarding = std::thread(
        [&below, this, req, deadline] { below = d_->forwarder().Forward(req->forward(), deadline); });
  }
  s = d_->LaunchTasks(*req);
  if (forwarding.joinable()) forwarding.join();
  for (v1::NodeLaunchError& e : below) *reply->add_forwarded() = std::move(e);
  return Answer(reply, s);
}

grpc::Status NodeService::SignalTasks(grpc::ServerContext* ctx, const v1::SignalTasksRequest* req,
                                      v1::SignalTasksReply* reply) {
  Status s = d_->CheckController(*ctx, "SignalTasks", *req);
  if (s.ok()) s = d_->Signal(*req);
  return Answer(reply, s);
}

grpc::Status NodeService::StepUsage(grpc::ServerContext* ctx, const v1::StepUsageRequest* req,
                                    v1::StepUsageReply* reply) {
  Status s = d_->CheckController(*ctx, "StepUsage", *req);
  if (s.ok()) d_->Usage(req->job_id(), reply);
  return Answer(reply, s);
}

grpc::Status NodeService::Ping(grpc::ServerContext* ctx, const v1::PingRequest* req,
                               v1::PingReply* reply) {
  return Answer(reply, d_->CheckController(*ctx, "Ping", *req));
}

grpc::Status NodeService::RelayStep(grpc::ServerContext* ctx, const v1::StepRelay* req,
                                    v1::RelayStepReply* reply) {
  Status s = d_->CheckController(*ctx, "RelayStep", *req);
  if (s.ok()) d_->relay().Deliver(*req);
  return Answer(reply, s);
}

grpc::Status NodeService::TerminateJob(grpc::ServerContext* ctx, const v1::TerminateJobRequest* req,
                                       v1::TerminateJobReply* reply) {
  Status s = d_->CheckController(*ctx, "TerminateJob", *req);
  if (s.ok()) d_->Terminate(*req);
  return Answer(reply, s);
}

grpc::Status NodeService::RunProlog(grpc::ServerContext* ctx, const v1::RunPrologRequest* req,
                                    v1::RunPrologReply* reply) {
  Status s = d_->CheckController(*ctx, "RunProlog", *req);
  if (s.ok()) s = d_->Prolog(*req);
  return Answer(reply, s);
}

}  // namespace
// loomd -C: what this node has, as the slurm.conf line an administrator would write.
int PrintDiscoveredConfig() {
  auto cpus = hw::DiscoverCpus();
  if (!cpus.ok()) {
    std::fprintf(stderr, "loomd: %s\n", std::string(cpus.status().message()).c_str());
    return 1;
  }
  auto gpus = hw::DiscoverGpus();
  if (!gpus.ok() && !absl::IsNotFound(gpus.status())) {
    std::fprintf(stderr, "loomd: GPUs not counted: %s\n", std::string(gpus.status().message()).c_str());
  }
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  struct sysinfo si {};
  ::sysinfo(&si);
  std::fputs(
      hw::NodeConfigLine(host, *cpus, gpus.ok() ? *gpus : std::vector<hw::GpuInfo>{}, si.uptime)
          .c_str(),
      stdout);
  return 0;
}

}  // namespace loom::noded

int main(int argc, char** argv) {
  using namespace loom;
  noded::Options opt;
  bool foreground = false;
  int louder = 0;  // -v, once per v
  if (const char* env = std::getenv("SLURM_CONF")) opt.slurm_conf = env;
  if (opt.slurm_conf.empty()) opt.slurm_conf = "/etc/slurm/slurm.conf";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "loomd: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-f") opt.slurm_conf = value();
    else if (a == "-N") opt.node = value();
    else if (a == "--munge-socket") opt.munge_socket = value();
    else if (a == "--spool") opt.spool = value();
    else if (a == "--controller") opt.controller = value();
    else if (a == "-C") return noded::PrintDiscoveredConfig();
    else if (a == "-D") {
      foreground = true;  // stderr too when SlurmdLogFile names a file, as slurmd -D
    } else if (a.size() > 1 && a[0] == '-' && a.find_first_not_of('v', 1) == std::string::npos) {
      louder += static_cast<int>(a.size()) - 1;
    } else if (a == "-V" || a == "--version") {
      std::printf("%s\n", std::string(core::kVersionLine).c_str());
      return 0;
    } else {
      std::fprintf(stderr, "loomd: unknown option '%s' (usage: loomd [-D] [-v...] [-V] [-f slurm.conf] -N NODE "
                           "[--spool DIR] [--munge-socket PATH] [--controller HOST:PORT]; "
                           "loomd -C prints this node's hardware as a slurm.conf line)\n",
                   a.c_str());
      return 2;
    }
  }
  if (opt.node.empty()) {
    char host[256] = {0};
    ::gethostname(host, sizeof(host) - 1);
    opt.node = host;
  }
  std::vector<conf::Diagnostic> warnings;
  auto site = conf::LoadSiteConfig(opt.slurm_conf, &warnings);
  if (!site.ok()) {
    core::LogAt(core::LogLevel::kFatal, "{}", site.status().message());
    return 1;
  }
  const conf::NodeConfig* me = nullptr;
  for (const conf::NodeConfig& n : site->cluster.nodes) {
    if (n.name == opt.node) me = &n;
  }
  if (!me) {
    core::LogAt(core::LogLevel::kFatal,
                "node {} is not in {}; start loomd with -N and a NodeName of it", opt.node,
                opt.slurm_conf);
    return 1;
  }
  // The log as slurm.conf says, -v levels louder; again on SIGHUP.
  auto configure_log = [&](const conf::ClusterConfig& cluster) {
    core::LogSettings log = conf::SlurmdLogSettings(cluster, opt.node, foreground);
    log.level = core::RaiseLogLevel(log.level, louder);
    return core::ConfigureLog(core::Log(), log, "loomd");
  };
  if (absl::Status s = configure_log(site->cluster); !s.ok()) {
    core::LogAt(core::LogLevel::kFatal, "{}", s.message());
    return 1;
  }
  if (opt.controller.empty()) {
    const auto& hosts = site->cluster.controllers;
    opt.controller = core::StrCat(hosts.empty() ? "127.0.0.1" : hosts.front().addr, ":",
                                  site->cluster.slurmctld_port);
  }
  if (opt.spool.empty()) opt.spool = "/var/spool/loomd/" + opt.node;
  {
    // Scripts and steps run under loom-stepd, installed beside loomd.
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    opt.stepd = (self.parent_path() / "loom-stepd").string();
    if (ec || ::access(opt.stepd.c_str(), X_OK) != 0) {
      core::LogAt(core::LogLevel::kFatal,
                  "cannot run {}, which supervises batch jobs and steps; install loom-stepd "
                  "beside loomd",
                  opt.stepd);
      return 1;
    }
  }
  // What the host has, for the controller to compare with the configuration (it trusts the
  // configuration instead under SlurmdParameters=config_overrides, as for emulated nodes).
  if (auto cpus = hw::DiscoverCpus(); cpus.ok()) {
    opt.hardware = *cpus;
  } else {
    core::LogError("hardware not discovered: {}", cpus.status().message());
  }
  const size_t my_index = static_cast<size_t>(me - site->cluster.nodes.data());
  const conf::GresAutoDetect autodetect = my_index < site->gpu_autodetect.size()
                                              ? site->gpu_autodetect[my_index]
                                              : conf::GresAutoDetect::kNotSet;
  const bool use_nvml = autodetect == conf::GresAutoDetect::kNvml ||
                        autodetect == conf::GresAutoDetect::kNvidia;
  // GPUs: gres.conf's unless its AutoDetect= asks NVML, as slurmd does. With NVML the count
  // is checked against the configuration by the controller, and inside the node tasks are
  // bound and devices fenced by what NVML found.
  opt.hardware_gpus = static_cast<int32_t>(me->GpuCount());
  if (use_nvml) {
    const std::string mechanism(conf::GresAutoDetectName(autodetect));
    if (auto gpus = hw::DiscoverGpus(); gpus.ok()) {
      opt.hardware_gpus = static_cast<int32_t>(gpus->size());
      if (!gpus->empty()) {
        const auto by_type = me->GpusByType();
        opt.discovered_gpus = std::make_shared<const model::NodeTopology>(hw::TopologyFromHardware(
            *gpus, opt.hardware, by_type.empty() ? "" : by_type.front().first));
        core::LogInfo("AutoDetect={}: {} GPUs ({}), {} NVLink domains", mechanism, gpus->size(),
                      gpus->front().name, opt.discovered_gpus->num_domains());
      } else {
        core::LogInfo("AutoDetect={}: NVML finds no GPU", mechanism);
      }
    } else {
      core::LogError("AutoDetect={}: {}; gres.conf's GPUs are used", mechanism,
                     absl::IsNotFound(gpus.status()) ? "NVML (libnvidia-ml.so.1) cannot be loaded"
                                                     : std::string(gpus.status().message()));
    }
  }
  if (opt.munge_socket.empty()) opt.munge_socket = conf::MungeSocketOf(site->cluster);
  const int32_t port = me->port > 0 ? me->port : site->cluster.slurmd_port;
  const std::string listen = core::StrCat(me->addr.empty() ? me->name : me->addr, ":", port);

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR2);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  // The supervisors read cgroup.conf for every script and step: a broken one stops loomd
  // here, not each launch.
  if (auto cgroups = stepd::LoadNodeCgroups(*site, opt.slurm_conf, opt.node); !cgroups.ok()) {
    core::LogAt(core::LogLevel::kFatal, "{}", cgroups.status().message());
    return 1;
  }
  noded::Daemon daemon(opt, *site);
  // Steps' supervisors reach each other through it (MPI wire-up).
  if (Status s = daemon.relay().Start(); !s.ok()) {
    core::LogAt(core::LogLevel::kFatal, "{}", s.message());
    return 1;
  }
  noded::NodeService service(&daemon);
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  if (!server || bound == 0) {
    core::LogAt(core::LogLevel::kFatal, "cannot listen on {}; is another loomd using Port={}?",
                listen, port);
    return 1;
  }
  std::unique_ptr<core::PidFile> pid_file;
  if (!site->cluster.slurmd_pid_file.empty()) {
    char host[256] = {0};
    ::gethostname(host, sizeof(host) - 1);
    auto written = core::PidFile::Write(
        core::ExpandLogFileName(site->cluster.slurmd_pid_file, opt.node, host));
    if (!written.ok()) {
      core::LogAt(core::LogLevel::kFatal, "{}", written.status().message());
      return 1;
    }
    pid_file = *std::move(written);
  }
  core::LogInfo("node {} serving on {}", opt.node, listen);
  std::thread loop([&] { daemon.Run(); });
  // Signals are taken here, not in a handler: SIGHUP reads slurm.conf again, SIGUSR2 reopens
  // the log file, SIGTERM and SIGINT stop the daemon (the jobs' supervisors go on).
  for (int sig = 0; sigwait(&set, &sig) == 0 && (sig == SIGUSR2 || sig == SIGHUP);) {
    if (sig == SIGUSR2) {
      if (absl::Status s = core::Log().Reopen(); !s.ok()) core::LogError("{}", s.message());
      core::LogInfo("log file reopened on SIGUSR2");
      continue;
    }
    // Each loom-stepd reads slurm.conf and cgroup.conf as it starts, so new jobs follow the
    // files from now on; what loomd itself acts on is its log, the Prolog and the Epilog. A file
    // with errors is said and changes nothing.
    std::vector<conf::Diagnostic> ignored;
    StatusOr<conf::SiteConfig> again = conf::LoadSiteConfig(opt.slurm_conf, &ignored);
    if (!again.ok()) {
      core::LogError("reconfigure on SIGHUP refused: {}", again.status().message());
      continue;
    }
    if (auto cgroups = stepd::LoadNodeCgroups(*again, opt.slurm_conf, opt.node); !cgroups.ok()) {
      core::LogError("reconfigure on SIGHUP: {}; new jobs cannot start until it is fixed",
                     cgroups.status().message());
    }
    if (absl::Status s = configure_log(again->cluster); !s.ok()) {
      core::LogError("{}; the log stays as it was", s.message());
    }
    daemon.Reconfigure(again->cluster);
    core::LogInfo("reconfigured on SIGHUP from {}: new jobs follow it", opt.slurm_conf);
  }
  daemon.Stop();
  loop.join();
  server->Shutdown(rpc::DeadlineIn(std::chrono::seconds(2)));
  return 0;
}
