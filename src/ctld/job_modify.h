// job_submit.lua's slurm_job_modify for `scontrol update job`: the update written as the
// job_desc a script reads (the fields it sets, the others nil or NO_VAL), the job as job_rec,
// and the update as the script left it. The mapping goes through model::JobRequest, so the
// field names and encodings are job_submit's (policy/job_desc.h). Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "ctld/controller_core.h"
#include "loom/v1/loom.pb.h"
#include "model/job_request.h"

namespace loom::ctld {

// A request holding only what `edit` sets.
model::JobRequest RequestOfEdit(const JobEdit& edit);

// `edit` as `r` (RequestOfEdit's, after the script) now says: a field the script set joins
// the update, one it set to nil or NO_VAL leaves it.
void EditFromRequest(const model::JobRequest& r, JobEdit* edit);

// job_rec: the job's submission as job_desc reads it, with job_id, job_state, priority,
// nodes, total_nodes, total_cpus, and the time_limit in effect (minutes).
nlohmann::json JobRecOf(const v1::JobInfo& job);

}  // namespace loom::ctld
