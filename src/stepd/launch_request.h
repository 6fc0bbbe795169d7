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
#include "hw/hardware.h"
#include "loom/v1/loom.pb.h"
#include "model/gpu_topology.h"
#include "stepd/cgroup/cgroup.h"
#include "stepd/job_env.h"
#include "stepd/step_launcher.h"

namespace loom::stepd {

// The job of a launch of either kind on node `node`: identity, allocation (this node in
// it), the GPUs it holds here (`gpu_ids`, "0,2"), and the options its environment reports.
StatusOr<stepd::BatchJob> JobFromInfo(const v1::JobInfo& info, uint32_t uid, uint32_t gid,
                                      const std::string& gpu_ids, const std::string& node);

// The batch job `req` starts on `node`: JobFromInfo plus the script, its files, working
// directory, environment and time limit.
StatusOr<stepd::BatchJob> BatchJobOf(const v1::LaunchBatchRequest& req, const std::string& node);

// This node's share of the step `req` launches: the tasks of a job srun submitted (no
// step_id: its only step, a block of the job's layout) or of a step inside the job's
// allocation (its layout, binding and the job's CPUs here come with the request).
// InvalidArgument naming the job or step when the command or the step's nodes are missing.
StatusOr<stepd::StepJob> StepJobOf(const v1::LaunchTasksRequest& req, const std::string& node);

// The job's user as loomd resolved it for loom-stepd (LaunchBatchRequest.node_user), and back.
v1::NodeUser KnownUserToWire(const stepd::KnownUser& known);
stepd::KnownUser KnownUserFromWire(const v1::NodeUser& wire);

// The host's CPUs as loomd hands them to loom-stepd, and back.
v1::HostCpus HostCpusToWire(const hw::CpuLayout& cpus);
hw::CpuLayout HostCpusFromWire(const v1::HostCpus& cpus);

// What loomd found on its host: the CPUs (hwloc), and the GPUs when NVML found them for a
// node whose gres.conf says AutoDetect=nvml (null: gres.conf's).
struct NodeHardware {
  std::optional<hw::CpuLayout> cpus;
  std::shared_ptr<const model::NodeTopology> gpus;
};
v1::NodeHardware HardwareToWire(const NodeHardware& hardware);
NodeHardware HardwareFromWire(const v1::NodeHardware& wire);
// What loomd left in its spool (HardwarePath); empty when it left nothing. DataLoss naming
// the file when it cannot be read.
StatusOr<NodeHardware> ReadNodeHardware(const std::string& spool, const std::string& node);
// Puts the GPUs `hardware` found in place of the configuration's for `node` of `site`, so
// that binding (NodeLayout) and device confinement (LoadNodeCgroups) go by them.
void ApplyHardware(const NodeHardware& hardware, const std::string& node, conf::SiteConfig* site);

// The settings that reach the jobs of node `node` of `site` (read from `slurm_conf`):
// ClusterName, KillWait, the node's layout for binding (from `hardware`, what
// hwloc found, or from the configuration; stepd::NodeLayout) and TaskPlugin's binding.
// NotFound when `site` has no such node.
StatusOr<stepd::NodeSettings> NodeSettingsOf(const conf::SiteConfig& site,
                                             const std::string& slurm_conf, const std::string& node,
                                             const std::optional<hw::CpuLayout>& hardware);

// The cgroup limits of `job` on this node under `config`: its CPUs (`cpu_ids`, a cpuset
// list), its memory on the node, and, with ConstrainDevices, the device files of the node's
// GPUs (`gpus`, from gres.conf File=) that the job was not given. A GPU the job was not
// given whose File= cannot be read as a device is an error naming it.
StatusOr<stepd::StepLimits> LimitsOf(const conf::CgroupConfig& config, const stepd::BatchJob& job,
                                     const std::string& cpu_ids,
                                     const std::vector<model::Gpu>& gpus);

// What confines jobs on one node: cgroup.conf, the node's GPUs (gres.conf) and the cgroup
// system (under "loom/<node>").
struct NodeCgroups {
  conf::CgroupConfig config;
  std::vector<model::Gpu> gpus;
  std::unique_ptr<stepd::CgroupSystem> system;
};

// Reads the cgroup.conf beside `slurm_conf` for `node`; nullopt when there is none (nothing
// is confined, as in Slurm). Errors name the file (and line) at fault, or what the cgroup
// system lacks.
StatusOr<std::optional<NodeCgroups>> LoadNodeCgroups(const conf::SiteConfig& site,
                                                     const std::string& slurm_conf,
                                                     const std::string& node);

// How loomd confines srun's steps: each gets a cgroup with the job's limits on the node
// (LimitsOf), like the batch script's. Thread-safe.
stepd::ConfineStep StepConfinement(std::shared_ptr<NodeCgroups> cgroups);

// Everything a job's supervisor needs before it starts the script.
struct PreparedLaunch {
  stepd::BatchJob job;
  stepd::NodeSettings settings;
  std::unique_ptr<stepd::CgroupSystem> cgroups;  // null without cgroup.conf: not confined
  stepd::StepLimits limits;
};

// The job `req` starts on `node`, with the site's configuration read from `slurm_conf` and
// the gres.conf and cgroup.conf beside it: the node settings (ClusterName, KillWait), and,
// when cgroup.conf exists, the cgroup system (under "loom/<node>") and the job's limits.
// Errors name the file (and line) at fault. `loaded`, when set, is slurm_conf's configuration
// as the caller has read it already (it is then not read again).
StatusOr<PreparedLaunch> PrepareLaunch(const v1::LaunchBatchRequest& req, const std::string& node,
                                       const std::string& slurm_conf,
                                       const NodeHardware& hardware = {},
                                       const conf::SiteConfig* loaded = nullptr);

// Everything the supervisor of a step's tasks on this node needs before it starts them: the
// tasks, the node's settings and, when cgroup.conf exists, how the step is confined.
struct PreparedStep {
  stepd::StepJob step;
  stepd::NodeSettings settings;
  stepd::ConfineStep confine;  // empty without cgroup.conf: not confined
  std::string cgroup_version;  // "v1", "v2"; empty when not confined
};

// The step `req` starts on `node`, with the site's configuration read from `slurm_conf`
// and the gres.conf and cgroup.conf beside it (or `loaded`, as PrepareLaunch), and what
// loomd found on the host. Errors name the file (and line) at fault.
StatusOr<PreparedStep> PrepareStep(const v1::LaunchTasksRequest& req, const std::string& node,
                                   const std::string& slurm_conf, const NodeHardware& hardware,
                                   const conf::SiteConfig* loaded = nullptr);

}  // namespace loom::stepd
