// What the controller fills in at submission that a job left to the cluster, as slurmctld
// does: memory, from DefMemPerCPU or DefMemPerNode, the partition's before the cluster's.
// Pure functions; thread-safe.
#pragma once

#include "conf/cluster_config.h"
#include "model/job_request.h"

namespace loom::ctld {

// For a job that asked for no memory (none of --mem, --mem-per-cpu, --mem-per-gpu): per
// CPU when DefMemPerCPU applies, per node when DefMemPerNode does; the partition's setting
// wins over the cluster's. Sets the request's option and its shape alike, so the job
// shows it (MinMemoryCPU=, TRES mem=), holds it and finds it in SLURM_MEM_PER_CPU or
// SLURM_MEM_PER_NODE. A job with a memory option, or a cluster with neither setting, is
// left as it is. DefMemPerGPU is not applied yet.
void ApplyMemoryDefault(const conf::ClusterConfig& cluster, const conf::PartitionConfig& partition,
                        model::JobRequest* request);

}  // namespace loom::ctld
