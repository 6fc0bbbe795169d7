// ControllerCore's `scontrol update job`: the fields a job's owner or an administrator may
// change, checked whole before any job changes (see core.h, UpdateJob).
#include <algorithm>

#include "core/hostlist.h"
#include "core/mem_size.h"
#include "core/strings.h"
#include "ctld/controller_core.h"
#include "model/constraint.h"

namespace loom::ctld {
namespace {

using model::JobState;
using model::PendingReason;

// Slurm's limit on a priority an administrator may set (NO_VAL - 2).

// One of `names`, ignoring case.
bool IsKey(std::string_view key, std::initializer_list<std::string_view> names) {
  return std::any_of(names.begin(), names.end(),
                     [&](std::string_view n) { return core::EqualsIgnoreCase(key, n); });
}

// A positive count, or "MIN-MAX" when `range`; what scontrol takes for NumNodes and NumTasks.
StatusOr<std::pair<int32_t, int32_t>> ParseCount(std::string_view value, bool range,
                                                 std::string_view field) {
  std::string_view lo = value, hi = value;
  if (range) {
    if (size_t dash = value.find('-'); dash != std::string_view::npos) {
      lo = value.substr(0, dash);
      hi = value.substr(dash + 1);
    }
  }
  auto a = core::ParseInt(lo), b = core::ParseInt(hi);
  if (!a || !b || *a <= 0 || *b < *a || *b > 1'000'000) {
    return absl::InvalidArgumentError(core::StrCat("Invalid ", field, " value: ", value));
  }
  return std::pair<int32_t, int32_t>(static_cast<int32_t>(*a), static_cast<int32_t>(*b));
}

}  // namespace

StatusOr<JobEdit> ParseJobEdit(const std::vector<std::pair<std::string, std::string>>& fields) {
  JobEdit edit;
  for (const auto& [key, value] : fields) {
    if (IsKey(key, {"TimeLimit"})) {
      auto seconds = core::ParseDuration(value);
      if (!seconds.ok()) return absl::InvalidArgumentError("Invalid time limit specification");
      edit.time_limit_s = *seconds;
    } else if (IsKey(key, {"Priority"})) {
      auto priority = core::ParseInt(value);
      if (!priority || *priority < 0 || *priority > kMaxJobPriority) {
        return absl::InvalidArgumentError(core::StrCat("Invalid priority: ", value));
      }
      edit.priority = *priority;
    } else if (IsKey(key, {"Nice"})) {
      auto nice = core::ParseInt(value);
      if (!nice || *nice < -2147483645 || *nice > 2147483645) {
        return absl::InvalidArgumentError(core::StrCat("Invalid nice value: ", value));
      }
      edit.nice = static_cast<int32_t>(*nice);
    } else if (IsKey(key, {"JobName", "Name"})) {
      edit.name = value;
    } else if (IsKey(key, {"Comment"})) {
      edit.comment = value;
    } else if (IsKey(key, {"QOS"})) {
      if (value.empty()) return absl::InvalidArgumentError("Invalid qos specification");
      edit.qos = core::ToLower(value);
    } else if (IsKey(key, {"Account"})) {
      edit.account = value;
    } else if (IsKey(key, {"Partition"})) {
      if (value.empty()) return absl::InvalidArgumentError("Invalid partition name specified");
      edit.partition = value;
    } else if (IsKey(key, {"Features", "Constraints"})) {
      if (!model::FeatureExpr::Parse(value).ok()) {
        return absl::InvalidArgumentError("Invalid feature specification");
      }
      edit.features = value;
    } else if (IsKey(key, {"ReqNodeList", "NodeList", "ExcNodeList"})) {
      if (!value.empty() && !core::ExpandHostlist(value).ok()) {
        return absl::InvalidArgumentError("Invalid node name specified");
      }
      (IsKey(key, {"ExcNodeList"}) ? edit.exclude : edit.nodelist) = value;
    } else if (IsKey(key, {"Dependency"})) {
      model::Dependency dep;
      if (!value.empty()) {
        auto parsed = model::ParseDependency(value);
        if (!parsed.ok()) return absl::InvalidArgumentError("Job dependency problem");
        dep = *std::move(parsed);
      }
      edit.dependency = std::move(dep);
    } else if (IsKey(key, {"NumNodes", "ReqNodes"})) {
      ASSIGN_OR_RETURN(edit.nodes, ParseCount(value, true, "NumNodes"));
    } else if (IsKey(key, {"NumTasks", "ReqProcs"})) {
      ASSIGN_OR_RETURN(auto n, ParseCount(value, false, "NumTasks"));
      edit.ntasks = n.first;
    } else if (IsKey(key, {"MinMemoryNode", "MinMemoryCPU", "MinMemoryCpu"})) {
      auto mb = core::ParseMemoryMb(value);
      if (!mb.ok() || *mb < 0) {
        return absl::InvalidArgumentError(core::StrCat("Invalid ", key, " value: ", value));
      }
      (IsKey(key, {"MinMemoryNode"}) ? edit.mem_per_node_mb : edit.mem_per_cpu_mb) = *mb;
    } else if (IsKey(key, {"Requeue"})) {
      if (value != "0" && value != "1") {
        return absl::InvalidArgumentError(core::StrCat("Invalid Requeue value: ", value));
      }
      edit.requeue = value == "1";
    } else if (IsKey(key, {"StartTime", "BeginTime"})) {
      // scontrol sends the time as Unix seconds (it parses Slurm's forms itself).
      auto t = core::ParseInt(value);
      if (!t || *t < 0) return absl::InvalidArgumentError("Invalid time specification");
      edit.begin_time = *t;
    } else {
      return absl::InvalidArgumentError(
          core::StrCat("Update of this parameter is not supported: ", key, "=", value));
    }
  }
  return edit;
}

Status ControllerCore::UpdateJob(JobId id, const JobEdit& edit, const Caller& who, Time now,
                                 Effects* fx) {
  const bool admin = who.uid == 0 || who.uid == opt_.slurm_user_uid;
  const std::vector<const JobEntry*> found = JobsWithId(id);
  if (found.empty()) return absl::NotFoundError("Invalid job id specified");
  if (edit.priority && !admin) return absl::PermissionDeniedError("Access/permission denied");
  if (edit.nice && *edit.nice < 0 && !admin) {
    return absl::PermissionDeniedError("Access/permission denied");  // only admins raise it
  }

  // First every check, on every job the id names; then the changes: all or none.
  const bool changes_request = edit.name || edit.comment || edit.account || edit.partition ||
                               edit.qos || edit.features || edit.dependency || edit.nodes ||
                               edit.ntasks || edit.mem_per_node_mb || edit.mem_per_cpu_mb ||
                               edit.requeue || edit.nodelist || edit.exclude || edit.nice ||
                               // Under priority/multifactor an administrator's priority
                               // stays with the request, so recalculations leave it.
                               (edit.priority && multifactor());
  const bool pending_only = edit.priority || edit.account || edit.partition || edit.qos ||
                            edit.features || edit.dependency || edit.nodes || edit.ntasks ||
                            edit.mem_per_node_mb || edit.mem_per_cpu_mb || edit.begin_time ||
                            edit.nodelist || edit.exclude || edit.nice;
  std::vector<JobEntry*> targets;
  for (const JobEntry* f : found) {
    JobEntry& e = jobs_.at(f->job.id);
    if (!MayActOn(who, e)) return absl::PermissionDeniedError("Access/permission denied");
    if (edit.time_limit_s && !admin && *edit.time_limit_s > e.job.time_limit_s) {
      return absl::PermissionDeniedError("Access/permission denied");  // users may only lower it
    }
    if (model::IsFinal(e.job.state)) continue;
    if (pending_only && e.job.state != JobState::kPending) continue;
    targets.push_back(&e);
  }
  if (targets.empty()) {
    return absl::FailedPreconditionError(pending_only ? "Job is no longer pending execution"
                                                      : "Job has already finished");
  }
  // An array's tasks share one stored submission: it changes for all its waiting tasks at
  // once (the array's id), never for one of them alone.
  if (changes_request && targets.front()->array_job_id() != 0) {
    const JobId array = targets.front()->array_job_id();
    for (const JobEntry* t : JobsWithId(array)) {
      if (!model::IsFinal(t->job.state) &&
          std::find(targets.begin(), targets.end(), t) == targets.end()) {
        return absl::FailedPreconditionError(core::StrCat(
            "this field applies to the whole array; update JobId=", array,
            " (its tasks share one submission)"));
      }
    }
  }

  // The changed submission, checked as a new one would be.
  std::shared_ptr<const model::JobRequest> request;
  int32_t partition = -1;
  if (changes_request) {
    model::JobRequest r = *targets.front()->request;
    if (edit.name) r.name = *edit.name;
    if (edit.comment) r.comment = *edit.comment;
    if (edit.account) r.account = *edit.account;
    if (edit.qos) r.qos = *edit.qos;
    if (edit.partition) r.partitions = {*edit.partition};
    if (edit.features) r.constraint = *edit.features;
    if (edit.nodelist) r.nodelist = *edit.nodelist;
    if (edit.exclude) r.exclude = *edit.exclude;
    if (edit.nice) r.nice = *edit.nice;
    if (edit.priority && multifactor()) {
      r.priority = *edit.priority > 0 ? std::optional<int64_t>(*edit.priority) : std::nullopt;
    }
    if (edit.dependency) r.dependency = *edit.dependency;
    if (edit.requeue) r.requeue = *edit.requeue;
    if (edit.nodes) {
      r.min_nodes = edit.nodes->first;
      r.max_nodes = edit.nodes->second;
      r.shape.min_nodes = edit.nodes->first;
      r.shape.max_nodes = edit.nodes->second;
      if (r.shape.ntasks < r.shape.min_nodes && !r.ntasks) r.shape.ntasks = r.shape.min_nodes;
    }
    if (edit.ntasks) {
      r.ntasks = *edit.ntasks;
      r.shape.ntasks = *edit.ntasks;
      if (r.shape.ntasks < r.shape.min_nodes) {
        return absl::InvalidArgumentError("Requested node configuration is not available");
      }
    }
    if (edit.mem_per_node_mb) {
      r.mem_per_node_mb = *edit.mem_per_node_mb;
      r.mem_per_cpu_mb.reset();
      r.shape.mem_per_node_mb = *edit.mem_per_node_mb;
      r.shape.mem_per_cpu_mb = 0;
    }
    if (edit.mem_per_cpu_mb) {
      r.mem_per_cpu_mb = *edit.mem_per_cpu_mb;
      r.mem_per_node_mb.reset();
      r.shape.mem_per_cpu_mb = *edit.mem_per_cpu_mb;
      r.shape.mem_per_node_mb = 0;
    }
    ASSIGN_OR_RETURN(Admitted admitted, Admit(std::move(r)));
    partition = admitted.partition;
    // A new account, QOS or partition is checked as at submission, for the job's owner: the
    // association, the partition's lists, and DenyOnLimit and the submission limits.
    if (edit.account || edit.qos || edit.partition) {
      const JobEntry& first = *targets.front();
      const Caller owner{first.job.uid, first.job.gid, first.job.user};
      const std::string& name = cluster_.partitions[partition].name;
      RETURN_IF_ERROR(ApplyAssociation(owner, name, admitted.request.get()));
      RETURN_IF_ERROR(CheckPartitionAccess(*admitted.request, name));
      const model::JobRequest& next = *admitted.request;
      const bool moves = next.qos != first.request->qos || next.account != first.request->account ||
                         partition != first.partition;
      if (moves) {
        RETURN_IF_ERROR(CheckSubmitLimits(next, name, owner, first.job.time_limit_s,
                                          static_cast<int64_t>(targets.size())));
      }
    }
    request = Intern(std::shared_ptr<const model::JobRequest>(std::move(admitted.request)));
  }

  for (JobEntry* target : targets) {
    JobEntry& e = *target;
    if (edit.time_limit_s) {
      e.job.time_limit_s = *edit.time_limit_s;
      if (e.job.state == JobState::kRunning) {
        e.job.end_time = sched::SaturatingAdd(e.job.start_time, *edit.time_limit_s);
      }
    }
    if (edit.priority) {
      e.job.priority = *edit.priority;
      // Priority=0 holds the job, as an administrator's hold; a positive one releases it.
      e.job.reason = *edit.priority == 0 ? PendingReason::kJobHeldAdmin : PendingReason::kNone;
    }
    if (edit.begin_time) e.job.eligible_time = std::max<int64_t>(now, *edit.begin_time);
    if (request) {
      e.request = request;
      // A new nice moves a waiting job that was not held or given a priority.
      // So does a new QOS (its priority factor).
      if ((edit.nice || edit.qos) && e.job.priority != 0 && !edit.priority) {
        e.job.priority = InitialPriority(e);
      }
      if (e.job.state == JobState::kPending && partition != e.partition) {
        const model::Partition& p = cluster_.partitions[partition];
        e.partition = partition;
        e.job.partition = p.name;
        if (!request->time_limit_s && !edit.time_limit_s) {
          e.job.time_limit_s = p.default_time_s >= 0 ? p.default_time_s : p.max_time_s;
        }
      }
    }
    if (e.job.state == JobState::kPending) pass_due_ = true;
    Changed(e, fx);
  }
  if (request && fx) {
    fx->resubmitted.push_back(Submission{targets.front()->submission_id(), request, {}, {}});
  }
  return absl::OkStatus();
}

}  // namespace loom::ctld
