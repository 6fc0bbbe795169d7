// The controller API's step rpcs: CreateStep (srun inside an allocation) and QuerySteps
// (scontrol show step, squeue -s). Steps live in the owner thread's state; both rpcs read
// or change it there.
#include <algorithm>

#include "core/hostlist.h"
#include "core/strings.h"
#include "ctld/controller.h"
#include "ctld/service.h"

namespace loom::ctld {
namespace {

v1::StepInfo StepInfoOf(const JobEntry& e, const StepRecord& step, const sched::Cluster& cluster,
                        const std::string& partition) {
  v1::StepInfo info;
  info.set_job_id(e.job.id);
  info.set_step_id(step.id);
  info.set_name(step.name);
  info.set_state(std::string(model::JobStateName(step.state)));
  info.set_user(e.job.user);
  info.set_uid(e.job.uid);
  info.set_partition(partition);
  const sched::Allocation& alloc = e.placement();
  std::vector<std::string> names;
  int32_t cpus = 0;
  for (size_t i = 0; i < step.nodes.size(); ++i) {
    const int32_t n = step.nodes[i];
    if (static_cast<size_t>(n) < alloc.size()) names.push_back(cluster.nodes[alloc[n].node].name);
    info.add_tasks_per_node(step.tasks_per_node[i]);
    cpus += step.tasks_per_node[i] * step.cpus_per_task;
  }
  for (const std::string& n : names) info.add_nodes(n);
  info.set_node_list(core::CompressHostlist(names));
  info.set_num_tasks(model::TaskTotal(step.tasks_per_node));
  info.set_num_cpus(cpus);
  info.set_start_time(step.start_time);
  info.set_end_time(step.end_time);
  info.set_exit_code(step.status.wait_status());
  info.set_distribution(model::DistributionName(step.distribution));
  info.set_time_limit_s(e.job.time_limit_s);
  info.set_cpu_bind(step.cpu_bind);
  info.set_gpu_bind(step.gpu_bind);
  info.set_gpus_per_task(step.gpus_per_task);
  info.set_cpus_per_task(step.cpus_per_task);
  info.set_launch_failed_node(step.launch_failed_node);
  info.set_launch_error(step.launch_error);
  info.set_command(step.command);
  return info;
}

std::string PartitionOf(const JobEntry& e, const sched::Cluster& cluster) {
  if (e.partition >= 0 && static_cast<size_t>(e.partition) < cluster.partitions.size()) {
    return cluster.partitions[e.partition].name;
  }
  return "";
}

}  // namespace

Status ControllerApi::CreateStep(const Caller& who, const v1::CreateStepRequest& req,
                                 v1::CreateStepReply* reply) {
  const v1::StepRequest& r = req.step();
  if (r.argv().empty()) return absl::InvalidArgumentError("the step has no command to run");
  if (r.ntasks() < 0 || r.nodes() < 0 || r.ntasks_per_node() < 0 || r.cpus_per_task() < 0) {
    return absl::InvalidArgumentError("a step's task, node and CPU counts cannot be negative");
  }
  std::optional<model::Distribution> d =
      model::ParseDistribution(r.distribution().empty() ? std::string("block") : r.distribution());
  if (!d) {
    return absl::InvalidArgumentError(core::StrCat(
        "distribution '", r.distribution(), "' is not supported by Loom (block and cyclic are)"));
  }
  StepAsk ask;
  ask.job_id = r.job_id();
  ask.name = r.name();
  for (const std::string& a : r.argv()) ask.command += ask.command.empty() ? a : " " + a;
  ask.ntasks = r.ntasks();
  ask.nodes = r.nodes();
  ask.ntasks_per_node = r.ntasks_per_node();
  ask.cpus_per_task = r.cpus_per_task();
  ask.distribution = *d;
  ask.exclusive = r.exclusive();
  ask.cpu_bind = r.cpu_bind();
  ask.gpu_bind = r.gpu_bind();
  ask.gpus_per_task = r.gpus_per_task();
  return c_->Post([&](ControllerCore& core, Effects& fx, Time now) -> Status {
    ASSIGN_OR_RETURN(std::optional<StepRecord> step, core.CreateStep(ask, who, now, &fx));
    if (!step) {
      reply->set_busy(true);
      return absl::OkStatus();
    }
    const JobEntry& e = *core.Find(ask.job_id);
    *reply->mutable_step() = StepInfoOf(e, *step, core.cluster(), PartitionOf(e, core.cluster()));
    c_->LaunchStep(e, reply->step(), r);
    return absl::OkStatus();
  });
}

Status ControllerApi::ReleaseAllocation(const Caller& who, const v1::ReleaseAllocationRequest& req,
                                        v1::ReleaseAllocationReply* reply) {
  (void)reply;
  return c_->Post([&](ControllerCore& core, Effects& fx, Time now) {
    return core.ReleaseAllocation(req.job_id(), req.exit_code(), who, now, &fx);
  });
}

Status ControllerApi::QuerySteps(const Caller& who, const v1::QueryStepsRequest& req,
                                 v1::QueryStepsReply* reply) {
  (void)who;
  std::vector<JobId> jobs(req.job_ids().begin(), req.job_ids().end());
  if (jobs.empty()) jobs.push_back(0);
  return c_->Post([&](ControllerCore& core, Effects&, Time) {
    for (JobId job : jobs) {
      for (const auto& [e, step] : core.Steps(job)) {
        *reply->add_steps() =
            StepInfoOf(*e, *step, core.cluster(), PartitionOf(*e, core.cluster()));
      }
    }
    return absl::OkStatus();
  });
}

Status ControllerApi::StepUsage(const Caller& who, const v1::StepUsageRequest& req,
                                v1::StepUsageReply* reply) {
  return c_->StepUsage(req.job_id(), who, reply);
}

}  // namespace loom::ctld
