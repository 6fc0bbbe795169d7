#include "stepd/launch_request.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "conf/site_config.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "model/binding.h"
#include "rpc/convert.h"
#include "stepd/node_layout.h"
#include "stepd/records.h"

namespace loom::stepd {

using core::StrCat;

v1::NodeUser KnownUserToWire(const stepd::KnownUser& known) {
  v1::NodeUser wire;
  wire.set_name(known.user.name);
  wire.set_uid(known.user.uid);
  wire.set_gid(known.user.gid);
  wire.set_home(known.user.home);
  wire.set_shell(known.user.shell);
  wire.mutable_groups()->Add(known.groups.begin(), known.groups.end());
  return wire;
}

stepd::KnownUser KnownUserFromWire(const v1::NodeUser& wire) {
  stepd::KnownUser known;
  known.user.name = wire.name();
  known.user.uid = wire.uid();
  known.user.gid = wire.gid();
  known.user.home = wire.home();
  known.user.shell = wire.shell();
  known.groups.assign(wire.groups().begin(), wire.groups().end());
  return known;
}

StatusOr<stepd::BatchJob> JobFromInfo(const v1::JobInfo& info, uint32_t uid, uint32_t gid,
                                      const std::string& gpu_ids, const std::string& node) {
  stepd::BatchJob job;
  job.job_id = info.job_id();
  job.name = info.name();
  job.user = info.user();
  job.uid = uid;
  job.gid = gid;
  job.partition = info.partition();
  job.account = info.spec().account();
  if (info.array_task_id() >= 0 && info.array_job_id() != 0) {
    job.array_job_id = info.array_job_id();
    job.array_task_id = info.array_task_id();
  }
  for (const v1::NodeAllocation& a : info.allocation()) {
    job.nodes.push_back(a.node());
    job.cpus_per_node.push_back(a.cpus());
  }
  if (job.nodes.empty()) {
    ASSIGN_OR_RETURN(job.nodes, core::ExpandHostlist(info.node_list()));
    job.cpus_per_node.assign(job.nodes.size(),
                             info.num_cpus() / std::max<int32_t>(1, info.num_nodes()));
  }
  job.node_name = node;
  job.node_index = 0;
  for (size_t i = 0; i < job.nodes.size(); ++i) {
    if (job.nodes[i] == node) job.node_index = static_cast<int32_t>(i);
  }
  if (!info.allocation().empty()) job.mem_mb = info.allocation(job.node_index).mem_mb();
  for (std::string_view g : core::Split(gpu_ids, ',')) {
    if (auto v = core::ParseInt(g); v && *v >= 0 && *v < model::kMaxGpusPerNode) {
      job.gpus |= model::GpuMask{1} << *v;
    }
  }
  if (auto r = rpc::FromWire(info.spec()); r.ok()) {
    job.ntasks = r->ntasks;
    job.ntasks_per_node = r->ntasks_per_node;
    job.cpus_per_task = r->cpus_per_task;
    job.mem_per_node_mb = r->mem_per_node_mb;
    job.mem_per_cpu_mb = r->mem_per_cpu_mb;
    job.script_args = r->script_args;
    job.open_mode = r->open_mode;
    job.submit_dir = r->work_dir;
    if (r->array) job.array = *r->array;
  }
  return job;
}

StatusOr<stepd::BatchJob> BatchJobOf(const v1::LaunchBatchRequest& req, const std::string& node) {
  ASSIGN_OR_RETURN(stepd::BatchJob job,
                   JobFromInfo(req.job(), req.uid(), req.gid(), req.gpu_ids(), node));
  if (req.has_node_user()) job.known_user = KnownUserFromWire(req.node_user());
  job.time_limit_s = req.time_limit_s();
  job.work_dir = req.work_dir().empty() ? "/tmp" : req.work_dir();
  job.stdout_pattern = req.std_out();
  job.stderr_pattern = req.std_err();
  job.stdin_pattern = req.std_in();
  job.script = req.script();
  job.environment.insert(req.environment().begin(), req.environment().end());
  return job;
}

namespace {

// The command and I/O of a step as either request says them: srun's own (v1::SrunStep, a
// job srun submitted) or a step's inside an allocation (v1::StepRequest).
template <typename Command>
void TakeCommandAndIo(const Command& c, stepd::StepJob* step) {
  step->argv.assign(c.argv().begin(), c.argv().end());
  step->io_host = c.io_host();
  step->io_port = c.io_port();
  step->unbuffered = c.unbuffered();
  step->stdout_pattern = c.std_out();
  step->stderr_pattern = c.std_err();
  step->stdin_pattern = c.std_in();
}

// The threads per core a job's steps use unless they say: its --hint or --threads-per-core.
int32_t JobThreadsPerCore(const v1::JobSpec& spec) {
  if (spec.srun().has_threads_per_core()) return spec.srun().threads_per_core();
  return model::StepThreadsPerCore(
      spec.hint(),
      spec.has_threads_per_core() ? std::optional<int32_t>(spec.threads_per_core()) : std::nullopt);
}

}  // namespace

StatusOr<stepd::StepJob> StepJobOf(const v1::LaunchTasksRequest& req, const std::string& node) {
  stepd::StepJob step;
  ASSIGN_OR_RETURN(step.job, JobFromInfo(req.job(), req.uid(), req.gid(), req.gpu_ids(), node));
  if (req.has_node_user()) step.job.known_user = KnownUserFromWire(req.node_user());
  step.job.time_limit_s = req.time_limit_s();
  step.job.environment.insert(req.environment().begin(), req.environment().end());
  step.io_key = req.io_key();
  step.node_addresses.assign(req.step_addresses().begin(), req.step_addresses().end());
  step.tree_width = req.tree_width();
  if (!req.has_step_id()) {
    // The job's only step: srun's command and I/O come with the job's submission.
    const v1::SrunStep& srun = req.job().spec().srun();
    if (srun.argv().empty()) {
      return absl::InvalidArgumentError(
          StrCat("job ", req.job_id(), ": LaunchTasks without srun's command"));
    }
    step.job.node_index = req.node_index();
    if (req.node_index() >= 0 && req.node_index() < req.job().allocation_size()) {
      step.job.mem_mb = req.job().allocation(req.node_index()).mem_mb();
    }
    step.job.work_dir = req.work_dir().empty() ? "/tmp" : req.work_dir();
    TakeCommandAndIo(srun, &step);
    step.binding = stepd::BindingOptions{srun.cpu_bind(), srun.gpu_bind(), srun.gpus_per_task(), 0,
                                         JobThreadsPerCore(req.job().spec())};
    step.node_cpus = req.cpu_ids();
    step.distribution = model::ParseDistribution(srun.distribution()).value_or(step.distribution);
    return step;
  }
  // A step inside the job's allocation: its command, layout and I/O come with the request.
  const v1::StepRequest& r = req.step();
  const v1::StepInfo& info = req.step_info();
  if (r.argv().empty() || info.nodes().empty()) {
    return absl::InvalidArgumentError(StrCat("step ", req.job_id(), ".", req.step_id(),
                                             ": LaunchTasks without its command or nodes"));
  }
  step.job.work_dir = r.work_dir().empty() ? "/tmp" : r.work_dir();
  TakeCommandAndIo(r, &step);
  stepd::StepPlacement& p = step.placement.emplace();
  p.step_id = req.step_id();
  p.nodes.assign(info.nodes().begin(), info.nodes().end());
  p.tasks_per_node.assign(info.tasks_per_node().begin(), info.tasks_per_node().end());
  p.node_index = req.step_node_index();
  p.task_ids.assign(req.task_ids().begin(), req.task_ids().end());
  p.distribution = model::ParseDistribution(info.distribution()).value_or(p.distribution);
  // What srun did not say, the job's submission may (sbatch --gpu-bind, --hint, ...).
  const v1::JobSpec& spec = req.job().spec();
  step.binding = stepd::BindingOptions{
      r.cpu_bind().empty() ? spec.cpu_bind() : r.cpu_bind(),
      r.gpu_bind().empty() ? spec.gpu_bind() : r.gpu_bind(), r.gpus_per_task(), r.cpus_per_task(),
      r.has_threads_per_core() ? r.threads_per_core() : JobThreadsPerCore(spec)};
  step.node_cpus = req.cpu_ids();
  return step;
}

v1::HostCpus HostCpusToWire(const hw::CpuLayout& cpus) {
  v1::HostCpus w;
  w.set_sockets(cpus.sockets);
  w.set_cores_per_socket(cpus.cores_per_socket);
  w.set_threads_per_core(cpus.threads_per_core);
  w.set_cpus(cpus.cpus);
  w.set_memory_mb(cpus.memory_mb);
  for (const std::vector<int32_t>& numa : cpus.numa_cpus) {
    w.add_numa_cpus()->mutable_ids()->Add(numa.begin(), numa.end());
  }
  for (const model::CpuCore& core : cpus.cores) {
    v1::HostCore* c = w.add_cores();
    c->set_socket(core.socket);
    c->mutable_threads()->Add(core.threads.begin(), core.threads.end());
  }
  return w;
}

hw::CpuLayout HostCpusFromWire(const v1::HostCpus& w) {
  hw::CpuLayout cpus;
  cpus.sockets = w.sockets();
  cpus.cores_per_socket = w.cores_per_socket();
  cpus.threads_per_core = w.threads_per_core();
  cpus.cpus = w.cpus();
  cpus.memory_mb = w.memory_mb();
  for (const v1::CpuIdList& numa : w.numa_cpus()) {
    cpus.numa_cpus.emplace_back(numa.ids().begin(), numa.ids().end());
  }
  for (const v1::HostCore& c : w.cores()) {
    cpus.cores.push_back(model::CpuCore{c.socket(), {c.threads().begin(), c.threads().end()}});
  }
  return cpus;
}

v1::NodeHardware HardwareToWire(const NodeHardware& hardware) {
  v1::NodeHardware w;
  if (hardware.cpus) *w.mutable_cpus() = HostCpusToWire(*hardware.cpus);
  if (hardware.gpus) {
    for (const model::Gpu& g : hardware.gpus->gpus) {
      v1::GpuDevice* d = w.add_gpus();
      d->set_index(g.index);
      d->set_type(g.type);
      d->set_file(g.file);
      d->set_domain(g.domain);
      d->set_pcie_switch(g.pcie_switch);
      d->set_numa(g.numa);
      d->set_nic(g.nic);
    }
  }
  return w;
}

NodeHardware HardwareFromWire(const v1::NodeHardware& w) {
  NodeHardware out;
  if (w.has_cpus()) out.cpus = HostCpusFromWire(w.cpus());
  if (w.gpus_size() > 0) {
    auto t = std::make_shared<model::NodeTopology>();
    t->name = "discovered";
    if (out.cpus) {
      t->numa_cpus = out.cpus->numa_cpus;
      t->sockets = std::max(1, out.cpus->sockets);
    }
    for (const v1::GpuDevice& d : w.gpus()) {
      t->gpus.push_back(model::Gpu{d.index(), d.type(), d.file(), d.domain(), d.pcie_switch(),
                                   d.numa(), d.nic()});
    }
    out.gpus = std::move(t);
  }
  return out;
}

StatusOr<NodeHardware> ReadNodeHardware(const std::string& spool, const std::string& node) {
  const std::string path = HardwarePath(spool, node);
  StatusOr<std::string> bytes = ReadFile(path);
  if (absl::IsNotFound(bytes.status())) return NodeHardware{};
  RETURN_IF_ERROR(bytes.status());
  v1::NodeHardware w;
  if (!w.ParseFromString(*bytes)) {
    return absl::DataLossError(StrCat(path, " is not what loomd found on the host; restart loomd, "
                                            "which writes it anew"));
  }
  return HardwareFromWire(w);
}

void ApplyHardware(const NodeHardware& hardware, const std::string& node, conf::SiteConfig* site) {
  if (!hardware.gpus) return;
  for (size_t n = 0; n < site->cluster.nodes.size() && n < site->node_topologies.size(); ++n) {
    if (site->cluster.nodes[n].name == node) site->node_topologies[n] = hardware.gpus;
  }
}

StatusOr<stepd::NodeSettings> NodeSettingsOf(const conf::SiteConfig& site,
                                             const std::string& slurm_conf, const std::string& node,
                                             const std::optional<hw::CpuLayout>& hardware) {
  const conf::NodeConfig* me = nullptr;
  for (const conf::NodeConfig& n : site.cluster.nodes) {
    if (n.name == node) me = &n;
  }
  if (me == nullptr) {
    return absl::NotFoundError(StrCat("node ", node, " is not in ", slurm_conf));
  }
  stepd::NodeSettings settings;
  settings.cluster_name = site.cluster.cluster_name;
  settings.slurm_conf = slurm_conf;
  settings.kill_wait_s = site.cluster.kill_wait_s;
  settings.task_prolog = site.cluster.task_prolog;
  settings.task_epilog = site.cluster.task_epilog;
  settings.layout = stepd::NodeLayout(site, *me, hardware);
  stepd::ApplyTaskPlugin(site.cluster, &settings);
  return settings;
}

StatusOr<stepd::StepLimits> LimitsOf(const conf::CgroupConfig& config, const stepd::BatchJob& job,
                                     const std::string& cpu_ids,
                                     const std::vector<model::Gpu>& gpus) {
  std::vector<stepd::DeviceId> denied;
  if (config.constrain_devices) {
    // A device file two GPUs share stays open to the job when it holds either of them.
    std::vector<stepd::DeviceId> allowed;
    for (const model::Gpu& gpu : gpus) {
      if (gpu.index < 0 || gpu.index >= model::kMaxGpusPerNode || gpu.file.empty()) continue;
      const bool given = job.gpus >> gpu.index & 1;
      StatusOr<stepd::DeviceId> device = stepd::DeviceOf(gpu.file);
      if (!device.ok()) {
        if (given) continue;  // nothing to fence; the job will find out when it opens it
        return absl::FailedPreconditionError(
            StrCat("ConstrainDevices: GPU ", gpu.index, " of node ", job.node_name,
                   " (File=", gpu.file, " in gres.conf): ", std::string(device.status().message()),
                   "; fix File= or set ConstrainDevices=no in cgroup.conf"));
      }
      std::vector<stepd::DeviceId>& into = given ? allowed : denied;
      if (std::find(into.begin(), into.end(), *device) == into.end()) into.push_back(*device);
    }
    std::erase_if(denied, [&](const stepd::DeviceId& d) {
      return std::find(allowed.begin(), allowed.end(), d) != allowed.end();
    });
  }
  return stepd::LimitsFor(config, cpu_ids, job.mem_mb * (int64_t{1} << 20), std::move(denied));
}

StatusOr<std::optional<NodeCgroups>> LoadNodeCgroups(const conf::SiteConfig& site,
                                                     const std::string& slurm_conf,
                                                     const std::string& node) {
  // Without cgroup.conf nothing is confined, as in Slurm.
  const std::string cgroup_conf =
      (std::filesystem::path(slurm_conf).parent_path() / "cgroup.conf").string();
  std::error_code ec;
  if (!std::filesystem::exists(cgroup_conf, ec)) return std::nullopt;
  std::vector<conf::Diagnostic> warnings;
  NodeCgroups out;
  ASSIGN_OR_RETURN(out.config, conf::LoadCgroupConf(slurm_conf, &warnings));
  for (size_t n = 0; n < site.cluster.nodes.size(); ++n) {
    if (site.cluster.nodes[n].name != node) continue;
    if (n < site.node_topologies.size() && site.node_topologies[n]) {
      out.gpus = site.node_topologies[n]->gpus;
    }
  }
  ASSIGN_OR_RETURN(out.system, stepd::CgroupSystem::Open(out.config, StrCat("loom/", node)));
  return out;
}

namespace {

// `loaded` when the caller has read it already, else the configuration read from `slurm_conf`.
StatusOr<conf::SiteConfig> SiteOf(const std::string& slurm_conf, const conf::SiteConfig* loaded) {
  if (loaded != nullptr) return *loaded;
  std::vector<conf::Diagnostic> warnings;
  return conf::LoadSiteConfig(slurm_conf, &warnings);
}

}  // namespace

StatusOr<PreparedLaunch> PrepareLaunch(const v1::LaunchBatchRequest& req, const std::string& node,
                                       const std::string& slurm_conf, const NodeHardware& hardware,
                                       const conf::SiteConfig* loaded) {
  ASSIGN_OR_RETURN(conf::SiteConfig site, SiteOf(slurm_conf, loaded));
  ApplyHardware(hardware, node, &site);
  PreparedLaunch p;
  ASSIGN_OR_RETURN(p.job, BatchJobOf(req, node));
  p.settings.cluster_name = site.cluster.cluster_name;
  p.settings.slurm_conf = slurm_conf;
  p.settings.kill_wait_s = site.cluster.kill_wait_s;
  p.settings.task_prolog = site.cluster.task_prolog;
  p.settings.task_epilog = site.cluster.task_epilog;
  ASSIGN_OR_RETURN(std::optional<NodeCgroups> cgroups, LoadNodeCgroups(site, slurm_conf, node));
  if (!cgroups) return p;
  p.settings.constrain_devices = cgroups->config.constrain_devices;
  ASSIGN_OR_RETURN(p.limits, LimitsOf(cgroups->config, p.job, req.cpu_ids(), cgroups->gpus));
  p.cgroups = std::move(cgroups->system);
  return p;
}

StatusOr<PreparedStep> PrepareStep(const v1::LaunchTasksRequest& req, const std::string& node,
                                   const std::string& slurm_conf, const NodeHardware& hardware,
                                   const conf::SiteConfig* loaded) {
  ASSIGN_OR_RETURN(conf::SiteConfig site, SiteOf(slurm_conf, loaded));
  ApplyHardware(hardware, node, &site);
  PreparedStep p;
  ASSIGN_OR_RETURN(p.step, StepJobOf(req, node));
  ASSIGN_OR_RETURN(p.settings, NodeSettingsOf(site, slurm_conf, node, hardware.cpus));
  ASSIGN_OR_RETURN(std::optional<NodeCgroups> cgroups, LoadNodeCgroups(site, slurm_conf, node));
  if (!cgroups) return p;
  p.settings.constrain_devices = cgroups->config.constrain_devices;
  p.cgroup_version = cgroups->system->version();
  p.confine = StepConfinement(std::make_shared<NodeCgroups>(*std::move(cgroups)));
  return p;
}

stepd::ConfineStep StepConfinement(std::shared_ptr<NodeCgroups> cgroups) {
  auto mu = std::make_shared<std::mutex>();
  return [cgroups, mu](const stepd::StepJob& step,
                       const std::string& name) -> StatusOr<std::unique_ptr<stepd::StepCgroup>> {
    ASSIGN_OR_RETURN(stepd::StepLimits limits,
                     LimitsOf(cgroups->config, step.job, step.node_cpus, cgroups->gpus));
    std::lock_guard<std::mutex> lock(*mu);  // one step's directories at a time
    return cgroups->system->Create(step.job.job_id, name, limits);
  };
}

}  // namespace loom::stepd
