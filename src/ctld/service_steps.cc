// The controller API's step rpcs: CreateStep (srun inside an allocation) and QuerySteps
// (scontrol show step, squeue -s). Steps live in the owner thread's state: CreateStep
// changes them there, QuerySteps reads the published snapshot.
#include <algorithm>

#include "core/strings.h"
#include "ctld/controller.h"
#include "ctld/service.h"

namespace loom::ctld {
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
  // From the published snapshot: a storm of `scontrol show step` never waits for a batch.
  const std::shared_ptr<const Snapshot> snap = c_->snapshot();
  const StepListing& listing = *snap->steps;
  auto add = [reply](const std::vector<v1::StepInfo>& steps) {
    for (const v1::StepInfo& s : steps) *reply->add_steps() = s;
  };
  if (req.job_ids().empty()) {
    for (const auto& [id, steps] : listing) add(*steps);
  }
  for (JobId job : req.job_ids()) {
    if (job == 0) {  // every job's
      for (const auto& [id, steps] : listing) add(*steps);
    } else if (auto it = listing.find(job); it != listing.end()) {
      add(*it->second);
    }
  }
  return absl::OkStatus();
}

Status ControllerApi::StepUsage(const Caller& who, const v1::StepUsageRequest& req,
                                v1::StepUsageReply* reply) {
  return c_->StepUsage(req.job_id(), who, reply);
}

}  // namespace loom::ctld
