#include "ctld/job_modify.h"

#include "core/strings.h"
#include "core/time_format.h"
#include "policy/job_desc.h"
#include "policy/lua_script.h"
#include "rpc/convert.h"

namespace loom::ctld {
namespace {

// A text field of the update after the script: its value when it has one; dropped when the
// script emptied a value the update gave; as it was otherwise (absent, or set to "").
void TakeText(const std::string& now, std::optional<std::string>* field) {
  if (!now.empty()) {
    *field = now;
  } else if (*field && !(*field)->empty()) {
    field->reset();
  }
}

}  // namespace

model::JobRequest RequestOfEdit(const JobEdit& edit) {
  model::JobRequest r;
  r.time_limit_s = edit.time_limit_s;
  r.priority = edit.priority;
  r.name = edit.name.value_or("");
  r.comment = edit.comment.value_or("");
  r.account = edit.account.value_or("");
  r.qos = edit.qos.value_or("");
  if (edit.partition) {
    for (std::string_view p : core::Split(*edit.partition, ',')) r.partitions.emplace_back(p);
  }
  r.constraint = edit.features.value_or("");
  r.nodelist = edit.nodelist.value_or("");
  r.exclude = edit.exclude.value_or("");
  if (edit.nodes) {
    r.min_nodes = edit.nodes->first;
    r.max_nodes = edit.nodes->second;
  }
  r.ntasks = edit.ntasks;
  r.mem_per_node_mb = edit.mem_per_node_mb;
  r.mem_per_cpu_mb = edit.mem_per_cpu_mb;
  r.requeue = edit.requeue;
  r.begin_time = edit.begin_time.value_or(0);
  if (edit.dependency) r.dependency = *edit.dependency;
  return r;
}

void EditFromRequest(const model::JobRequest& r, JobEdit* edit) {
  edit->time_limit_s = r.time_limit_s;
  edit->priority = r.priority;
  TakeText(r.name, &edit->name);
  TakeText(r.comment, &edit->comment);
  TakeText(r.account, &edit->account);
  TakeText(r.qos, &edit->qos);
  TakeText(core::Join(r.partitions, ","), &edit->partition);
  TakeText(r.constraint, &edit->features);
  TakeText(r.nodelist, &edit->nodelist);
  TakeText(r.exclude, &edit->exclude);
  if (r.min_nodes) {
    edit->nodes = std::make_pair(*r.min_nodes, r.max_nodes.value_or(*r.min_nodes));
  } else {
    edit->nodes.reset();
  }
  edit->ntasks = r.ntasks;
  edit->mem_per_node_mb = r.mem_per_node_mb;
  edit->mem_per_cpu_mb = r.mem_per_cpu_mb;
  edit->requeue = r.requeue;
  if (r.begin_time != 0) {
    edit->begin_time = r.begin_time;
  } else if (edit->begin_time && *edit->begin_time != 0) {
    edit->begin_time.reset();
  }
}

nlohmann::json JobRecOf(const v1::JobInfo& job) {
  StatusOr<model::JobRequest> submitted = rpc::FromWire(job.spec());
  nlohmann::json rec = policy::JobDescOf(submitted.ok() ? *submitted : model::JobRequest{},
                                         policy::Submitter{job.uid(), job.gid(), job.user()});
  rec["job_id"] = job.job_id();
  rec["job_state"] = job.state();
  rec["priority"] = job.priority();
  rec["partition"] = job.partition();
  rec["nodes"] = job.node_list();
  rec["total_nodes"] = job.num_nodes();
  rec["total_cpus"] = job.num_cpus();
  rec["time_limit"] = job.time_limit_s() == core::kUnlimitedSeconds
                          ? nlohmann::json(policy::kInfinite)
                          : nlohmann::json((job.time_limit_s() + 59) / 60);
  return rec;
}

}  // namespace loom::ctld
