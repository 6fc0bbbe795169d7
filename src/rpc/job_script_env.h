// The environment of a site's program run for a job (Prolog, Epilog, PrologSlurmctld,
// EpilogSlurmctld): Slurm's variables, from the job as the wire describes it
// (docs/admin/prolog-epilog.md has the table). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loom/v1/loom.pb.h"

namespace loom::rpc {

// "NAME=value" entries: SLURM_SCRIPT_CONTEXT=`context`, the job's identity, owner, nodes,
// partition, account, SLURM_CLUSTER_NAME=`cluster`, SLURM_CONF=`slurm_conf`, and a root
// program's usual PATH.
std::vector<std::string> JobScriptEnvironment(const v1::JobInfo& job, std::string_view context,
                                              std::string_view cluster,
                                              std::string_view slurm_conf);

}  // namespace loom::rpc
