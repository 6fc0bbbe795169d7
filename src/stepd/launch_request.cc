#include "stepd/launch_request.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "conf/site_config.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "rpc/convert.h"

namespace loom::stepd {

using core::StrCat;

StatusOr<noded::BatchJob> JobFromInfo(const v1::JobInfo& info, uint32_t uid, uint32_t gid,
                                      const std::string& gpu_ids, const std::string& node) {
  noded::BatchJob job;
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

StatusOr<noded::BatchJob> BatchJobOf(const v1::LaunchBatchRequest& req, const std::string& node) {
  ASSIGN_OR_RETURN(noded::BatchJob job,
                   JobFromInfo(req.job(), req.uid(), req.gid(), req.gpu_ids(), node));
  job.time_limit_s = req.time_limit_s();
  job.work_dir = req.work_dir().empty() ? "/tmp" : req.work_dir();
  job.stdout_pattern = req.std_out();
  job.stderr_pattern = req.std_err();
  job.stdin_pattern = req.std_in();
  job.script = req.script();
  job.environment.insert(req.environment().begin(), req.environment().end());
  return job;
}

StatusOr<noded::StepLimits> LimitsOf(const conf::CgroupConfig& config, const noded::BatchJob& job,
                                     const std::string& cpu_ids,
                                     const std::vector<model::Gpu>& gpus) {
  std::vector<noded::DeviceId> denied;
  if (config.constrain_devices) {
    // A device file two GPUs share stays open to the job when it holds either of them.
    std::vector<noded::DeviceId> allowed;
    for (const model::Gpu& gpu : gpus) {
      if (gpu.index < 0 || gpu.index >= model::kMaxGpusPerNode || gpu.file.empty()) continue;
      const bool given = job.gpus >> gpu.index & 1;
      StatusOr<noded::DeviceId> device = noded::DeviceOf(gpu.file);
      if (!device.ok()) {
        if (given) continue;  // nothing to fence; the job will find out when it opens it
        return absl::FailedPreconditionError(
            StrCat("ConstrainDevices: GPU ", gpu.index, " of node ", job.node_name,
                   " (File=", gpu.file, " in gres.conf): ", std::string(device.status().message()),
                   "; fix File= or set ConstrainDevices=no in cgroup.conf"));
      }
      std::vector<noded::DeviceId>& into = given ? allowed : denied;
      if (std::find(into.begin(), into.end(), *device) == into.end()) into.push_back(*device);
    }
    std::erase_if(denied, [&](const noded::DeviceId& d) {
      return std::find(allowed.begin(), allowed.end(), d) != allowed.end();
    });
  }
  return noded::LimitsFor(config, cpu_ids, job.mem_mb * (int64_t{1} << 20), std::move(denied));
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
  ASSIGN_OR_RETURN(out.system, noded::CgroupSystem::Open(out.config, StrCat("loom/", node)));
  return out;
}

StatusOr<PreparedLaunch> PrepareLaunch(const v1::LaunchBatchRequest& req, const std::string& node,
                                       const std::string& slurm_conf) {
  std::vector<conf::Diagnostic> warnings;
  ASSIGN_OR_RETURN(conf::SiteConfig site, conf::LoadSiteConfig(slurm_conf, &warnings));
  PreparedLaunch p;
  ASSIGN_OR_RETURN(p.job, BatchJobOf(req, node));
  p.settings.cluster_name = site.cluster.cluster_name;
  p.settings.slurm_conf = slurm_conf;
  p.settings.kill_wait_s = site.cluster.kill_wait_s;
  ASSIGN_OR_RETURN(std::optional<NodeCgroups> cgroups, LoadNodeCgroups(site, slurm_conf, node));
  if (!cgroups) return p;
  p.settings.constrain_devices = cgroups->config.constrain_devices;
  ASSIGN_OR_RETURN(p.limits, LimitsOf(cgroups->config, p.job, req.cpu_ids(), cgroups->gpus));
  p.cgroups = std::move(cgroups->system);
  return p;
}

noded::ConfineStep StepConfinement(std::shared_ptr<NodeCgroups> cgroups) {
  auto mu = std::make_shared<std::mutex>();
  return [cgroups, mu](const noded::StepJob& step,
                       const std::string& name) -> StatusOr<std::unique_ptr<noded::StepCgroup>> {
    ASSIGN_OR_RETURN(noded::StepLimits limits,
                     LimitsOf(cgroups->config, step.job, step.node_cpus, cgroups->gpus));
    std::lock_guard<std::mutex> lock(*mu);  // one step's directories at a time
    return cgroups->system->Create(step.job.job_id, name, limits);
  };
}

}  // namespace loom::stepd
