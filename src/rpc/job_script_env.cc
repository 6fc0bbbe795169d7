#include "rpc/job_script_env.h"

#include "core/strings.h"

namespace loom::rpc {

std::vector<std::string> JobScriptEnvironment(const v1::JobInfo& job, std::string_view context,
                                              std::string_view cluster,
                                              std::string_view slurm_conf) {
  std::vector<std::string> env;
  auto set = [&env](std::string_view name, const auto& value) {
    env.push_back(core::StrCat(name, "=", value));
  };
  set("SLURM_SCRIPT_CONTEXT", context);
  set("SLURM_JOB_ID", job.job_id());
  set("SLURM_JOBID", job.job_id());
  if (job.array_task_id() >= 0 && job.array_job_id() != 0) {
    set("SLURM_ARRAY_JOB_ID", job.array_job_id());
    set("SLURM_ARRAY_TASK_ID", job.array_task_id());
  }
  set("SLURM_JOB_NAME", job.name());
  set("SLURM_JOB_USER", job.user());
  set("SLURM_JOB_UID", job.uid());
  set("SLURM_UID", job.uid());
  set("SLURM_JOB_GID", job.gid());
  if (!job.group_name().empty()) set("SLURM_JOB_GROUP", job.group_name());
  set("SLURM_JOB_NODELIST", job.node_list());
  set("SLURM_JOB_PARTITION", job.partition());
  if (!job.spec().account().empty()) set("SLURM_JOB_ACCOUNT", job.spec().account());
  if (!job.spec().constraint().empty()) set("SLURM_JOB_CONSTRAINTS", job.spec().constraint());
  if (!job.spec().wckey().empty()) set("SLURM_WCKEY", job.spec().wckey());
  if (!cluster.empty()) set("SLURM_CLUSTER_NAME", cluster);
  set("SLURM_CONF", slurm_conf);
  // A root program's usual search path: Slurm gives its prologs no PATH of their own either.
  set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  return env;
}

}  // namespace loom::rpc
