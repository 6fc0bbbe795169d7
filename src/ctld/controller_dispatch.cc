// The controller's dispatch side: what the owner thread decided (launches, signals, steps)
// carried out towards the nodes by the dispatcher thread, over the launch tree; and
// StepUsage, which asks the nodes. Split from controller.cc, which holds the owner loop.
#include <csignal>

#include "core/cpu_list.h"
#include "core/log.h"
#include "core/run_program.h"
#include "core/strings.h"
#include "ctld/controller.h"
#include "ctld/durable.h"
#include "ctld/wire.h"
#include "rpc/convert.h"
#include "rpc/job_script_env.h"
#include "rpc/launch_tree.h"

namespace loom::ctld {
namespace {

// A node's GPU ids as launches carry them: "0,2,3".
std::string GpuIdList(model::GpuMask gpus) {
  std::string out;
  for (int g = 0; g < model::kMaxGpusPerNode; ++g) {
    if (!(gpus >> g & 1)) continue;
    if (!out.empty()) out.push_back(',');
    out.append(std::to_string(g));
  }
  return out;
}

// Whether a step's environment asks for MPI wire-up (srun sets SLURM_MPI_TYPE from --mpi or
// MpiDefault): its supervisors then need every node's loomd to exchange their ranks' data.
bool WantsWireUp(const v1::LaunchTasksRequest& req) {
  auto it = req.environment().find("SLURM_MPI_TYPE");
  return it != req.environment().end() && !it->second.empty() && it->second != "none";
}

}  // namespace

void Controller::CarryOut(const Effects& fx) {
  CheckOwner("CarryOut");
  std::vector<Outgoing> work;
  for (const ctld::Launch& l : fx.launches) {
    auto it = core_->jobs().find(l.job_id);
    if (it == core_->jobs().end() || it->second.alloc().empty()) continue;
    const JobEntry& e = it->second;
    // PrologSlurmctld first: the launch goes out once it succeeded (CtldPrologDone).
    if (!site_.cluster.prolog_slurmctld.empty() && !e.history().ctld_prolog_done) {
      RunCtldScript(/*prolog=*/true, FromEntry(e, core_->cluster(), InfoOptions()));
      continue;
    }
    if (site_.cluster.prolog_flags.alloc && !site_.cluster.prolog.empty() && !e.request->srun) {
      // PrologFlags=Alloc: every node runs the prolog now; the batch host's runs with the
      // script's launch. (srun's own job launches on all its nodes at once anyway.)
      const int32_t head = e.request->allocation_only ? -1 : e.alloc().front().node;
      v1::RunPrologRequest prolog;
      prolog.set_job_id(e.job.id);
      *prolog.mutable_job() = FromEntry(e, core_->cluster(), InfoOptions());
      for (const sched::NodeAlloc& a : e.alloc()) {
        if (a.node == head) continue;
        Outgoing& out = work.emplace_back();
        out.job = e.job.id;
        out.prolog = prolog;
        out.node = core_->cluster().nodes[a.node].name;
        out.address = NodeAddress(a.node);
      }
    }
    if (e.request->allocation_only) continue;  // salloc's: nothing runs until srun asks
    if (e.request->srun) {
      work.push_back(TaskLaunches(e));
      continue;
    }
    const model::JobRequest& r = *e.request;
    Outgoing& out = work.emplace_back();
    out.job = e.job.id;
    out.submission = e.submission_id();
    v1::LaunchBatchRequest& lr = out.batch.emplace();
    lr.set_job_id(e.job.id);
    *lr.mutable_job() = FromEntry(e, core_->cluster(), InfoOptions());
    lr.set_std_out(r.EffectiveStdout());
    lr.set_std_err(r.EffectiveStderr());
    lr.set_std_in(r.stdin_pattern);
    lr.set_work_dir(r.work_dir);
    lr.set_uid(e.job.uid);
    lr.set_gid(e.job.gid);
    const sched::NodeAlloc& head = e.alloc().front();
    lr.set_gpu_ids(GpuIdList(head.gpu_ids));
    lr.set_cpu_ids(head.cpu_ids.ToList());
    lr.set_time_limit_s(e.job.time_limit_s);
    out.node = core_->cluster().nodes[head.node].name;
    out.address = NodeAddress(head.node);
  }
  for (const SignalJob& s : fx.signals) {
    Outgoing& out = work.emplace_back();
    out.job = s.job_id;
    v1::SignalTasksRequest& req = out.signal.emplace();
    req.set_job_id(s.job_id);
    req.set_signal(s.signal);
    req.set_kill_wait_s(s.signal == SIGTERM ? site_.cluster.kill_wait_s : 0);
    if (s.step) req.set_step_id(*s.step);
    for (int32_t n : s.nodes) out.addresses.push_back(NodeAddress(n));
  }
  if (!site_.cluster.epilog_slurmctld.empty()) {
    for (JobId id : fx.finished) {
      auto it = core_->jobs().find(id);
      // Only an allocation's end: a job cancelled while it waited never had one.
      if (it == core_->jobs().end() || it->second.placement().empty()) continue;
      RunCtldScript(/*prolog=*/false, FromEntry(it->second, core_->cluster(), InfoOptions()));
    }
  }
  for (JobId id : fx.terminations) {
    auto it = core_->jobs().find(id);
    if (it == core_->jobs().end() || it->second.history().epilog_nodes.empty()) continue;
    const JobEntry& e = it->second;
    Outgoing& out = work.emplace_back();
    out.job = id;
    v1::TerminateJobRequest& req = out.terminate.emplace();
    req.set_job_id(id);
    *req.mutable_job() = FromEntry(e, core_->cluster(), InfoOptions());
    for (int32_t n : e.history().epilog_nodes) out.addresses.push_back(NodeAddress(n));
  }
  if (work.empty()) return;
  core::MutexLock lock(&dispatch_mu_);
  for (Outgoing& out : work) dispatch_.push_back(std::move(out));
}

void Controller::RunCtldScript(bool prolog, v1::JobInfo job) {
  CheckOwner("RunCtldScript");
  const std::string setting =
      prolog ? site_.cluster.prolog_slurmctld : site_.cluster.epilog_slurmctld;
  core::ProgramRun run;
  run.env = rpc::JobScriptEnvironment(job, prolog ? "prolog_slurmctld" : "epilog_slurmctld",
                                      site_.cluster.cluster_name, slurm_conf_);
  if (!prolog) {
    // The job's end: the script's wait() status, and exit:signal as sacct shows it.
    const int status = job.exit_signal() != 0 ? job.exit_signal() : job.exit_code() << 8;
    run.env.push_back(core::StrCat("SLURM_JOB_EXIT_CODE=", status));
    run.env.push_back(
        core::StrCat("SLURM_JOB_EXIT_CODE2=", job.exit_code(), ":", job.exit_signal()));
  }
  if (site_.cluster.prolog_epilog_timeout_s != conf::ClusterConfig::kNoPrologEpilogTimeout) {
    run.timeout_ms = int64_t{site_.cluster.prolog_epilog_timeout_s} * 1000;
  }
  const JobId id = job.job_id();
  ctld_scripts_.Run([this, setting, run = std::move(run), id, prolog] {
    const std::optional<std::string> failed = core::RunPrograms(setting, run);
    if (!prolog) {
      if (failed) core::LogError("{}: EpilogSlurmctld failed: {}", core::JobId{id}, *failed);
      return;
    }
    PostNoWait([id, failed](ControllerCore& core, Effects& fx, Time now) {
      core.CtldPrologDone(id, !failed, failed.value_or(""), now, &fx);
      return absl::OkStatus();
    });
  });
}

void Controller::DispatchLoop() {
  while (true) {
    Outgoing out;
    {
      core::MutexLock lock(&dispatch_mu_);
      dispatch_mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(dispatch_mu_) {
        return dispatch_stop_ || !dispatch_.empty();
      });
      if (dispatch_.empty()) return;  // stopped, and all sent
      out = std::move(dispatch_.front());
      dispatch_.pop_front();
    }
    Send(out);
  }
}

void Controller::Send(Outgoing& out) {
  if (out.signal) {
    for (const std::string& address : out.addresses) links_->Signal(address, *out.signal);
    return;
  }
  if (out.terminate) {
    for (const std::string& address : out.addresses) links_->Terminate(address, *out.terminate);
    return;
  }
  if (out.prolog) {
    links_->RunProlog(out.address, out.node, std::move(*out.prolog));
    return;
  }
  // The script and environment are only in the store. The lock is held for the read alone:
  // a commit waits for one row at most, never for the decoding.
  StatusOr<std::string> bytes;
  std::string location;
  {
    core::MutexLock lock(&store_mu_);
    bytes = store_->ReadRequest(out.submission);
    location = store_->Location();
  }
  StatusOr<model::JobRequest> full =
      bytes.ok()
          ? DecodeSubmission(*bytes, core::StrCat("submission ", out.submission, " in ", location))
          : StatusOr<model::JobRequest>(bytes.status());
  if (!full.ok()) {
    core::LogError("{} cannot launch: {}", core::JobId{out.job}, full.status().message());
    PostNoWait([id = out.job, why = std::string(full.status().message())](ControllerCore& core,
                                                                          Effects& fx, Time now) {
      core.LaunchFailed(id, why, now, &fx);
      return absl::OkStatus();
    });
    return;
  }
  if (out.batch) {
    out.batch->mutable_environment()->insert(full->environment.begin(), full->environment.end());
    out.batch->set_script(full->script);
    links_->Launch(out.address, out.node, std::move(*out.batch));
    return;
  }
  for (v1::ForwardedLaunch& l : out.tasks) {
    l.mutable_request()->mutable_environment()->insert(full->environment.begin(),
                                                       full->environment.end());
  }
  SendLaunches(std::move(out.tasks), out.tree_width);
}

void Controller::CheckOwner(const char* what) const {
  const std::thread::id owner = owner_id_.load();
  if (owner == std::thread::id() || owner == std::this_thread::get_id()) return;
  // A bug, not a condition to recover from: the state below is the owner thread's alone.
  core::LogAt(core::LogLevel::kFatal, "BUG: {} called off the owner thread; aborting", what);
  std::abort();
}

JobInfoOptions Controller::InfoOptions() const {
  JobInfoOptions o;
  o.cluster_name = site_.cluster.cluster_name;
  o.gpu_tres = TracksGpuTres(site_.cluster);
  return o;
}

template <typename Environment>
v1::LaunchTasksRequest Controller::TaskLaunch(const JobEntry& e, const v1::JobInfo& job,
                                              const sched::NodeAlloc& a, int32_t node_index,
                                              const Environment& environment,
                                              const std::string& work_dir,
                                              const std::string& io_key) {
  v1::LaunchTasksRequest req;
  req.set_job_id(e.job.id);
  *req.mutable_job() = job;
  req.mutable_environment()->insert(environment.begin(), environment.end());
  req.set_work_dir(work_dir);
  req.set_uid(e.job.uid);
  req.set_gid(e.job.gid);
  req.set_node_index(node_index);
  req.set_gpu_ids(GpuIdList(a.gpu_ids));
  req.set_cpu_ids(a.cpu_ids.ToList());
  req.set_time_limit_s(e.job.time_limit_s);
  req.set_io_key(io_key);
  return req;
}

void Controller::LaunchStep(const JobEntry& e, const v1::StepInfo& info,
                            const v1::StepRequest& step) {
  const v1::JobInfo job = FromEntry(e, core_->cluster(), InfoOptions());
  const model::Distribution d =
      info.distribution() == "cyclic" ? model::Distribution::kCyclic : model::Distribution::kBlock;
  const std::vector<int32_t> counts(info.tasks_per_node().begin(), info.tasks_per_node().end());
  const std::vector<std::vector<int32_t>> ids = model::TaskIds(counts, d);
  std::vector<v1::ForwardedLaunch> launches;
  for (int i = 0; i < info.nodes_size(); ++i) {
    const sched::NodeAlloc* a = nullptr;
    for (const sched::NodeAlloc& n : e.alloc()) {
      if (core_->cluster().nodes[n.node].name == info.nodes(i)) a = &n;
    }
    if (a == nullptr) continue;
    int32_t node_index = 0;
    for (int32_t n = 0; n < job.allocation_size(); ++n) {
      if (job.allocation(n).node() == info.nodes(i)) node_index = n;
    }
    v1::LaunchTasksRequest req =
        TaskLaunch(e, job, *a, node_index, step.environment(), step.work_dir(), step.io_key());
    req.set_step_id(info.step_id());
    if (!info.resv_ports().empty()) {
      (*req.mutable_environment())["SLURM_STEP_RESV_PORTS"] = info.resv_ports();
    }
    *req.mutable_step() = step;
    *req.mutable_step_info() = info;
    req.set_step_node_index(i);
    for (int32_t t : ids[i]) req.add_task_ids(t);
    v1::ForwardedLaunch& l = launches.emplace_back();
    l.set_node(info.nodes(i));
    l.set_address(NodeAddress(a->node));
    *l.mutable_request() = std::move(req);
  }
  SendLaunches(std::move(launches), site_.cluster.tree_width);
}

Status Controller::StepUsage(JobId id, const Caller& who, v1::StepUsageReply* reply) {
  std::vector<std::pair<std::string, std::string>> nodes;  // name, address
  RETURN_IF_ERROR(Post([&](ControllerCore& core, Effects&, Time) -> Status {
    ASSIGN_OR_RETURN(std::vector<int32_t> indices, core.RunningNodes(id, who));
    for (int32_t n : indices) nodes.emplace_back(core.cluster().nodes[n].name, NodeAddress(n));
    return absl::OkStatus();
  }));
  v1::StepUsageRequest req;
  req.set_job_id(id);
  std::vector<std::string> silent;
  for (const auto& [name, address] : nodes) {
    StatusOr<v1::StepUsageReply> part = links_->StepUsage(address, req);
    if (!part.ok()) {
      silent.push_back(name);
      continue;
    }
    for (v1::TaskUsage& t : *part->mutable_tasks()) *reply->add_tasks() = std::move(t);
  }
  if (!nodes.empty() && silent.size() == nodes.size()) {
    return absl::UnavailableError(
        core::StrCat("no node of job ", id, " answered (", core::Join(silent, ","), ")"));
  }
  return absl::OkStatus();
}

void Controller::SendLaunches(std::vector<v1::ForwardedLaunch> launches, int32_t tree_width) {
  if (!launches.empty() && WantsWireUp(launches.front().request())) {
    std::vector<std::string> addresses;
    for (const v1::ForwardedLaunch& l : launches) addresses.push_back(l.address());
    for (v1::ForwardedLaunch& l : launches) {
      l.mutable_request()->mutable_step_addresses()->Assign(addresses.begin(), addresses.end());
      l.mutable_request()->set_tree_width(tree_width);
    }
  }
  // At most TreeWidth nodes hear from the controller; they pass the launch on.
  for (v1::ForwardedLaunch& root : rpc::LaunchTree(std::move(launches), tree_width)) {
    links_->LaunchTasks(root.address(), root.node(), std::move(*root.mutable_request()));
  }
}

Controller::Outgoing Controller::TaskLaunches(const JobEntry& e) {
  Outgoing out;
  out.job = e.job.id;
  out.submission = e.submission_id();
  out.tree_width = site_.cluster.tree_width;
  const model::JobRequest& r = *e.request;
  const v1::JobInfo info = FromEntry(e, core_->cluster(), InfoOptions());
  std::map<std::string, std::string> environment;  // the stored submission's is added later
  if (!e.history().resv_ports.empty()) {
    environment["SLURM_STEP_RESV_PORTS"] = core::FormatCpuList(e.history().resv_ports);
  }
  for (size_t i = 0; i < e.alloc().size(); ++i) {
    const sched::NodeAlloc& a = e.alloc()[i];
    v1::ForwardedLaunch& l = out.tasks.emplace_back();
    l.set_node(core_->cluster().nodes[a.node].name);
    l.set_address(NodeAddress(a.node));
    *l.mutable_request() =
        TaskLaunch(e, info, a, static_cast<int32_t>(i), environment, r.work_dir, r.srun->io_key);
  }
  return out;
}

}  // namespace loom::ctld
