#include "stepd/job_env.h"

#include <algorithm>
#include <bit>

#include "core/cpu_list.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "model/step.h"

namespace loom::stepd {
namespace {

using core::StrCat;

// Variables that describe one particular job and that this job sets only in some cases. A
// script submitted from inside another job carries the outer job's values in its exported
// environment; they are dropped so that they cannot pass for this job's.
constexpr const char* kJobScopedVariables[] = {
    "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_CPUS_PER_GPU",
    "SLURM_CPUS_PER_TASK",
    "SLURM_DISTRIBUTION",
    "SLURM_GPUS_ON_NODE",
    "SLURM_JOB_ACCOUNT",
    "SLURM_JOB_DEPENDENCY",
    "SLURM_JOB_GPUS",
    "SLURM_JOB_QOS",
    "SLURM_JOB_RESERVATION",
    "SLURM_LAUNCH_NODE_IPADDR",
    "SLURM_MEM_PER_CPU",
    "SLURM_MEM_PER_GPU",
    "SLURM_MEM_PER_NODE",
    "SLURM_NPROCS",
    "SLURM_NTASKS",
    "SLURM_NTASKS_PER_NODE",
    "SLURM_RESTART_COUNT",
    "SLURM_STEP_ID",
    "SLURM_STEPID",
    "SLURM_STEP_NODELIST",
    "SLURM_STEP_NUM_NODES",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_STEP_GPUS",
    "SLURM_SRUN_COMM_HOST",
    "SLURM_SRUN_COMM_PORT",
    "SLURM_STEP_LAUNCHER_PORT",
    "SLURM_TASK_PID",
};

}  // namespace

Status ValidateBatchJob(const BatchJob& job) {
  if (job.nodes.empty()) {
    return absl::InvalidArgumentError(StrCat("job ", job.job_id, ": the node list is empty"));
  }
  if (job.node_index < 0 || static_cast<size_t>(job.node_index) >= job.nodes.size()) {
    return absl::InvalidArgumentError(StrCat("job ", job.job_id, ": node_index ", job.node_index,
                                             " is outside its ", job.nodes.size(), " nodes"));
  }
  if (job.nodes[job.node_index] != job.node_name) {
    return absl::InvalidArgumentError(StrCat("job ", job.job_id, ": node_name '", job.node_name,
                                             "' is not node ", job.node_index, " of its list ('",
                                             job.nodes[job.node_index], "')"));
  }
  if (job.cpus_per_node.size() != job.nodes.size()) {
    return absl::InvalidArgumentError(StrCat("job ", job.job_id, ": cpus_per_node has ",
                                             job.cpus_per_node.size(), " entries for ",
                                             job.nodes.size(), " nodes"));
  }
  if (!job.tasks_per_node.empty() && job.tasks_per_node.size() != job.nodes.size()) {
    return absl::InvalidArgumentError(StrCat("job ", job.job_id, ": tasks_per_node has ",
                                             job.tasks_per_node.size(), " entries for ",
                                             job.nodes.size(), " nodes"));
  }
  if (job.array_task_id.has_value() != job.array_job_id.has_value()) {
    return absl::InvalidArgumentError(
        StrCat("job ", job.job_id, ": array_job_id and array_task_id must be set together"));
  }
  return absl::OkStatus();
}


std::vector<int32_t> TasksPerNode(const BatchJob& job) {
  if (!job.tasks_per_node.empty()) return job.tasks_per_node;
  std::vector<int32_t> cpus = job.cpus_per_node;
  cpus.resize(job.nodes.size(), 0);
  return model::TaskCounts({job.ntasks, job.ntasks_per_node, job.cpus_per_task}, cpus);
}

std::string GpuIndexList(model::GpuMask gpus, bool relative) {
  std::string out;
  int position = 0;
  for (model::GpuMask m = gpus; m; m &= m - 1, ++position) {
    if (!out.empty()) out += ',';
    out += std::to_string(relative ? position : std::countr_zero(m));
  }
  return out;
}

int64_t ArrayTaskStep(const model::ArraySpec& spec) {
  std::vector<int64_t> all = spec.Indices();
  if (all.size() < 2) return 1;
  const int64_t step = all[1] - all[0];
  for (size_t i = 2; i < all.size(); ++i) {
    if (all[i] - all[i - 1] != step) return 1;
  }
  return step;
}

std::map<std::string, std::string> BatchEnvironment(const BatchJob& job,
                                                    const NodeSettings& settings,
                                                    const UserInfo& user) {
  std::map<std::string, std::string> env = job.environment;
  for (const char* name : kJobScopedVariables) env.erase(name);
  auto set = [&env](const char* name, const auto& value) { env[name] = StrCat(value); };
  auto set_default = [&env](const char* name, const std::string& value) {
    if (!value.empty()) env.emplace(name, value);
  };

  // Identity.
  set("SLURM_JOB_ID", job.job_id);
  set("SLURM_JOBID", job.job_id);
  set("SLURM_JOB_NAME", job.name);
  const std::string& user_name = job.user.empty() ? user.name : job.user;
  set("SLURM_JOB_USER", user_name);
  set("SLURM_JOB_UID", job.uid);
  set("SLURM_JOB_GID", job.gid);
  set("SLURM_JOB_PARTITION", job.partition);
  if (!job.account.empty()) set("SLURM_JOB_ACCOUNT", job.account);
  if (!job.qos.empty()) set("SLURM_JOB_QOS", job.qos);
  if (!job.reservation.empty()) set("SLURM_JOB_RESERVATION", job.reservation);
  if (!job.dependency.empty()) set("SLURM_JOB_DEPENDENCY", job.dependency);
  if (!job.submit_dir.empty()) set("SLURM_SUBMIT_DIR", job.submit_dir);
  if (!job.submit_host.empty()) set("SLURM_SUBMIT_HOST", job.submit_host);
  if (job.restart_count > 0) set("SLURM_RESTART_COUNT", job.restart_count);
  if (!settings.cluster_name.empty()) set("SLURM_CLUSTER_NAME", settings.cluster_name);
  if (!settings.slurm_conf.empty()) set("SLURM_CONF", settings.slurm_conf);

  // Arrays.
  if (job.array_job_id && job.array_task_id) {
    set("SLURM_ARRAY_JOB_ID", *job.array_job_id);
    set("SLURM_ARRAY_TASK_ID", *job.array_task_id);
    if (job.array) {
      std::vector<int64_t> indices = job.array->Indices();
      if (!indices.empty()) {
        set("SLURM_ARRAY_TASK_COUNT", indices.size());
        set("SLURM_ARRAY_TASK_MIN", indices.front());
        set("SLURM_ARRAY_TASK_MAX", indices.back());
        set("SLURM_ARRAY_TASK_STEP", ArrayTaskStep(*job.array));
      }
    }
  }

  // The allocation.
  const std::string nodelist = core::CompressHostlist(job.nodes);
  set("SLURM_JOB_NODELIST", nodelist);
  set("SLURM_NODELIST", nodelist);
  set("SLURM_JOB_NUM_NODES", job.nodes.size());
  set("SLURM_NNODES", job.nodes.size());
  set("SLURMD_NODENAME", job.node_name);
  set("SLURM_NODEID", job.node_index);
  set("SLURM_JOB_CPUS_PER_NODE", CompressCounts(job.cpus_per_node));
  if (static_cast<size_t>(job.node_index) < job.cpus_per_node.size()) {
    set("SLURM_CPUS_ON_NODE", job.cpus_per_node[job.node_index]);
  }
  std::vector<int32_t> tasks = TasksPerNode(job);
  set("SLURM_TASKS_PER_NODE", CompressCounts(tasks));
  std::optional<int64_t> ntasks;
  if (job.ntasks) {
    ntasks = *job.ntasks;
  } else if (job.ntasks_per_node) {
    ntasks = int64_t{*job.ntasks_per_node} * static_cast<int64_t>(job.nodes.size());
  }
  if (ntasks) {
    set("SLURM_NTASKS", *ntasks);
    set("SLURM_NPROCS", *ntasks);
  }
  if (job.ntasks_per_node) set("SLURM_NTASKS_PER_NODE", *job.ntasks_per_node);
  if (job.cpus_per_task) set("SLURM_CPUS_PER_TASK", *job.cpus_per_task);
  if (job.cpus_per_gpu) set("SLURM_CPUS_PER_GPU", *job.cpus_per_gpu);
  if (job.mem_per_node_mb) set("SLURM_MEM_PER_NODE", *job.mem_per_node_mb);
  if (job.mem_per_cpu_mb) set("SLURM_MEM_PER_CPU", *job.mem_per_cpu_mb);
  if (job.mem_per_gpu_mb) set("SLURM_MEM_PER_GPU", *job.mem_per_gpu_mb);

  // The batch script is task 0 of the job, on its first node.
  set("SLURM_PROCID", 0);
  set("SLURM_LOCALID", 0);
  set("SLURM_GTIDS", 0);

  // GPUs.
  if (job.gpus != 0) {
    set("SLURM_GPUS_ON_NODE", model::GpuCount(job.gpus));
    set("SLURM_JOB_GPUS", GpuIndexList(job.gpus));
    const std::string visible = GpuIndexList(job.gpus, settings.constrain_devices);
    set("CUDA_VISIBLE_DEVICES", visible);
    set("GPU_DEVICE_ORDINAL", visible);
  }

  set("ENVIRONMENT", "BATCH");

  // The login variables, from the passwd entry unless the job brought its own.
  set_default("HOME", user.home);
  set_default("USER", user_name);
  set_default("LOGNAME", user_name);
  set_default("SHELL", user.shell);
  set_default("TMPDIR", settings.tmp_dir);
  return env;
}

StatusOr<model::StepBinding> BindStep(const BatchJob& job, const std::string& node_cpus,
                                      const BindingOptions& options,
                                      const std::vector<int32_t>& task_ids,
                                      const NodeSettings& settings) {
  model::StepOnNode step;
  step.gpus = job.gpus;
  step.task_ids = task_ids;
  step.cpus_per_task = options.cpus_per_task > 0 ? options.cpus_per_task
                                                 : job.cpus_per_task.value_or(1);
  step.constrain_devices = settings.constrain_devices;
  step.default_cpu_bind = settings.default_cpu_bind;
  step.threads_per_core = options.threads_per_core;
  if (!options.cpu_bind.empty()) {
    ASSIGN_OR_RETURN(step.cpu_bind, model::ParseCpuBind(options.cpu_bind));
  } else if (!settings.auto_cpu_bind) {
    step.cpu_bind.type = model::CpuBindType::kNone;
  }
  if (!options.gpu_bind.empty()) {
    ASSIGN_OR_RETURN(step.gpu_bind, model::ParseGpuBind(options.gpu_bind));
  }
  if (!options.gpus_per_task.empty()) {
    // "N" or "TYPE:N": the count is what binding needs.
    const std::string_view v = options.gpus_per_task;
    const size_t colon = v.rfind(':');
    auto n = core::ParseInt(colon == std::string_view::npos ? v : v.substr(colon + 1));
    if (!n || *n < 1 || *n > model::kMaxGpusPerNode) {
      return absl::InvalidArgumentError(
          StrCat("Invalid --gpus-per-task specification: ", v));
    }
    step.gpus_per_task = static_cast<int32_t>(*n);
  }
  const model::BindNode& node = settings.layout;
  std::vector<int32_t> cpus = node_cpus.empty() ? std::vector<int32_t>{}
                                                : core::ParseCpuList(node_cpus).value_or(
                                                      std::vector<int32_t>{});
  if (cpus.empty()) {
    for (int32_t c = 0; c < node.cpus.num_cpus(); ++c) cpus.push_back(c);
  }
  for (int32_t c : cpus) step.cpus.set(c);
  if (node.cpus.cores.empty() || step.cpus.empty()) {
    // No layout to bind by: every task gets all the job holds here.
    model::StepBinding all;
    for (size_t local = 0; local < task_ids.size(); ++local) {
      model::TaskBinding t;
      t.task_id = task_ids[local];
      t.local_id = static_cast<int32_t>(local);
      t.cpus = step.cpus;
      t.gpus = job.gpus;
      t.cuda_visible_devices = GpuIndexList(job.gpus, settings.constrain_devices);
      all.tasks.push_back(std::move(t));
    }
    return all;
  }
  return model::BindTasks(node, step);
}

std::map<std::string, std::string> CpuBindEnvironment(const model::StepBinding& binding,
                                                      bool verbose) {
  std::map<std::string, std::string> env;
  if (binding.cpu_bind == model::CpuBindType::kNone || binding.cpu_bind == model::CpuBindType::kAuto) {
    return env;
  }
  std::vector<std::string> masks;
  for (const model::TaskBinding& t : binding.tasks) {
    masks.push_back(StrCat("0x", model::HexMask(t.cpus)));
  }
  const std::string list = core::Join(masks, ",");
  const char* how = verbose ? "verbose" : "quiet";
  env["SLURM_CPU_BIND_VERBOSE"] = how;
  env["SLURM_CPU_BIND_TYPE"] = "mask_cpu:";
  env["SLURM_CPU_BIND_LIST"] = list;
  env["SLURM_CPU_BIND"] = StrCat(how, ",mask_cpu:", list);
  return env;
}

std::map<std::string, std::string> TaskEnvironment(const BatchJob& job,
                                                   const NodeSettings& settings,
                                                   const UserInfo& user, const StepTask& task) {
  std::map<std::string, std::string> env = BatchEnvironment(job, settings, user);
  env.erase("ENVIRONMENT");  // batch scripts only
  auto set = [&env](const char* name, const auto& value) { env[name] = StrCat(value); };
  std::vector<int32_t> layout;
  std::vector<std::string> step_nodes;
  std::vector<int32_t> here;
  int32_t node_id = job.node_index;
  uint32_t step_id = 0;
  model::Distribution distribution = model::Distribution::kBlock;
  if (const StepPlacement* p = task.placement) {
    layout = p->tasks_per_node;
    step_nodes = p->nodes;
    here = p->task_ids;
    node_id = p->node_index;
    step_id = p->step_id;
    distribution = p->distribution;
  } else {
    layout = TasksPerNode(job);
    step_nodes = job.nodes;
    const int32_t first = model::FirstTask(layout, job.node_index);
    for (int32_t t = first; t < first + layout[job.node_index]; ++t) here.push_back(t);
  }
  std::string gtids;
  for (int32_t t : here) gtids += gtids.empty() ? std::to_string(t) : StrCat(",", t);
  const int32_t ntasks = model::TaskTotal(layout);
  const std::string nodelist = core::CompressHostlist(step_nodes);
  set("SLURM_STEP_ID", step_id);
  set("SLURM_STEPID", step_id);
  set("SLURM_PROCID", task.task_id);
  set("SLURM_LOCALID", task.local_id);
  set("SLURM_NODEID", node_id);
  set("SLURM_GTIDS", gtids);
  set("SLURM_NTASKS", ntasks);
  set("SLURM_NPROCS", ntasks);
  set("SLURM_NNODES", step_nodes.size());
  set("SLURM_NODELIST", nodelist);
  set("SLURM_TASKS_PER_NODE", CompressCounts(layout));
  set("SLURM_STEP_NODELIST", nodelist);
  set("SLURM_STEP_NUM_NODES", step_nodes.size());
  set("SLURM_STEP_NUM_TASKS", ntasks);
  set("SLURM_STEP_TASKS_PER_NODE", CompressCounts(layout));
  set("SLURM_DISTRIBUTION", model::DistributionName(distribution));
  if (!task.srun_host.empty()) {
    set("SLURM_SRUN_COMM_HOST", task.srun_host);
    set("SLURM_LAUNCH_NODE_IPADDR", task.srun_host);
    set("SLURM_SRUN_COMM_PORT", task.srun_port);
  }
  if (task.binding) {
    env.erase("CUDA_VISIBLE_DEVICES");
    env.erase("GPU_DEVICE_ORDINAL");
    if (!task.binding->cuda_visible_devices.empty()) {
      set("CUDA_VISIBLE_DEVICES", task.binding->cuda_visible_devices);
      set("GPU_DEVICE_ORDINAL", task.binding->cuda_visible_devices);
    }
  }
  if (job.gpus != 0) set("SLURM_STEP_GPUS", GpuIndexList(job.gpus));
  for (const char* name : {"SLURM_CPU_BIND", "SLURM_CPU_BIND_LIST", "SLURM_CPU_BIND_TYPE",
                           "SLURM_CPU_BIND_VERBOSE"}) {
    env.erase(name);  // another step's, carried in the job's environment
  }
  if (task.cpu_bind_env) {
    for (const auto& [name, value] : *task.cpu_bind_env) env[name] = value;
  }
  return env;
}

}  // namespace loom::stepd
