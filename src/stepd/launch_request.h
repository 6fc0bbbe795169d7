// What a launch request from the controller says about a job on this node, as the value
// types the node code works with: the job (BatchJob) and its cgroup limits. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conf/cgroup_conf.h"
#include "conf/site_config.h"
#include "core/status.h"
#include "loom/v1/loom.pb.h"
#include "model/gpu_topology.h"
#include "noded/cgroup/cgroup.h"
#include "noded/job_env.h"
#include "noded/step_launcher.h"

namespace loom::stepd {

// The job of a launch of either kind on node `node`: identity, allocation (this node in
// it), the GPUs it holds here (`gpu_ids`, "0,2"), and the options its environment reports.
StatusOr<noded::BatchJob> JobFromInfo(const v1::JobInfo& info, uint32_t uid, uint32_t gid,
                                      const std::string& gpu_ids, const std::string& node);

// The batch job `req` starts on `node`: JobFromInfo plus the script, its files, working
// directory, environment and time limit.
StatusOr<noded::BatchJob> BatchJobOf(const v1::LaunchBatchRequest& req, const std::string& node);

// The cgroup limits of `job` on this node under `config`: its CPUs (`cpu_ids`, a cpuset
// list), its memory on the node, and, with ConstrainDevices, the device files of the node's
// GPUs (`gpus`, from gres.conf File=) that the job was not given. A GPU the job was not
// given whose File= cannot be read as a device is an error naming it.
StatusOr<noded::StepLimits> LimitsOf(const conf::CgroupConfig& config, const noded::BatchJob& job,
                                     const std::string& cpu_ids,
                                     const std::vector<model::Gpu>& gpus);

// What confines jobs on one node: cgroup.conf, the node's GPUs (gres.conf) and the cgroup
// system (under "loom/<node>").
struct NodeCgroups {
  conf::CgroupConfig config;
  std::vector<model::Gpu> gpus;
  std::unique_ptr<noded::CgroupSystem> system;
};

// Reads the cgroup.conf beside `slurm_conf` for `node`; nullopt when there is none (nothing
// is confined, as in Slurm). Errors name the file (and line) at fault, or what the cgroup
// system lacks.
StatusOr<std::optional<NodeCgroups>> LoadNodeCgroups(const conf::SiteConfig& site,
                                                     const std::string& slurm_conf,
                                                     const std::string& node);

// How loomd confines srun's steps: each gets a cgroup with the job's limits on the node
// (LimitsOf), like the batch script's. Thread-safe.
noded::ConfineStep StepConfinement(std::shared_ptr<NodeCgroups> cgroups);

// Everything a job's supervisor needs before it starts the script.
struct PreparedLaunch {
  noded::BatchJob job;
  noded::NodeSettings settings;
  std::unique_ptr<noded::CgroupSystem> cgroups;  // null without cgroup.conf: not confined
  noded::StepLimits limits;
};

// The job `req` starts on `node`, with the site's configuration read from `slurm_conf` and
// the gres.conf and cgroup.conf beside it: the node settings (ClusterName, KillWait), and,
// when cgroup.conf exists, the cgroup system (under "loom/<node>") and the job's limits.
// Errors name the file (and line) at fault.
StatusOr<PreparedLaunch> PrepareLaunch(const v1::LaunchBatchRequest& req, const std::string& node,
                                       const std::string& slurm_conf);

}  // namespace loom::stepd
