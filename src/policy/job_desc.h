// The values job_submit.lua works on, as Slurm 22.05's Lua API names them: `job_desc` (the
// submission, one field per option) and `part_list` (the partitions). JobDescOf writes a
// submission as job_desc; ApplyJobDesc reads back what the script changed. Pure.
//
// Numbers keep Slurm's encodings: time limits in minutes, slurm.NO_VAL (NO_VAL16, NO_VAL64)
// for what was not given, slurm.INFINITE for unlimited, pn_min_memory in MB with the
// slurm.MEM_PER_CPU bit for --mem-per-cpu. GPUs read as TRES strings: tres_per_node
// "gres:gpu:a100:2", tres_bind "gres/gpu:closest"; --hint=nomultithread reads as
// threads_per_core = 1.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "conf/cluster_config.h"
#include "core/status.h"
#include "model/job_request.h"

namespace loom::policy {

// Who submits: job_desc's user_id, group_id and user_name.
struct Submitter {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
};

nlohmann::json JobDescOf(const model::JobRequest& r, const Submitter& who);

// Applies to `r` every field whose value differs between `before` (JobDescOf's) and `after`
// (as the script left it), then derives the job's shape again when a field of it changed.
// A field the script may not change (user_id, script, environment, ...) or that Loom does not
// know is named in `ignored` and left as it was. Errors (InvalidArgument) name the field and
// the value the script gave it, and say what the field takes.
Status ApplyJobDesc(const nlohmann::json& before, const nlohmann::json& after, model::JobRequest* r,
                    std::vector<std::string>* ignored);

// part_list: by partition name, a table for each partition (name, nodes, total_nodes, max_time,
// default_time in minutes, max_nodes, min_nodes, priority_tier, priority_job_factor, flag_default,
// state_up, qos, allow_accounts).
nlohmann::json PartitionListOf(const conf::ClusterConfig& cfg);

}  // namespace loom::policy
