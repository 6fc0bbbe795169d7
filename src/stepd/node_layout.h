// The node as task binding sees it (model::BindNode): its CPU layout and its GPUs, from what
// hwloc found on the host or, for an emulated node or one whose configuration is trusted over
// its hardware, from slurm.conf and gres.conf. Pure functions; thread-safe.
#pragma once

#include <optional>

#include "conf/site_config.h"
#include "hw/hardware.h"
#include "model/binding.h"
#include "stepd/job_env.h"

namespace loom::stepd {

// The layout of node `node` of `site`: the CPUs hwloc found (`hardware`) when the
// configuration does not override them (SlurmdParameters=config_overrides) and they are the
// CPUs slurm.conf gives the node; else slurm.conf's sockets, cores and threads numbered as
// Linux numbers them, each CPU on the NUMA node gres.conf's topology puts it on (or one per
// socket). GPUs come from the node's GPU topology (gres.conf, or a plain one for GPUs
// gres.conf does not describe).
model::BindNode NodeLayout(const conf::SiteConfig& site, const conf::NodeConfig& node,
                           const std::optional<hw::CpuLayout>& hardware);

// The binding settings slurm.conf gives: auto binding with task/affinity in TaskPlugin, and
// TaskPluginParam's type (Cores, Sockets, Threads, Ldoms or None; none by default).
void ApplyTaskPlugin(const conf::ClusterConfig& config, NodeSettings* settings);

}  // namespace loom::stepd
