// The scheduler's view of a slurm.conf: the cluster (nodes and partitions) and the policy
// options (SchedulerParameters, SchedulerType). Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "conf/cluster_config.h"
#include "conf/site_config.h"
#include "sched/backfill/policy.h"
#include "sched/priority/priority.h"
#include "sched/types.h"

namespace loom::sched {

// Nodes in definition order; a node's GPUs are all its `gpu` GRES (its type is the first
// typed one); partitions keep their node order. Nodes configured DOWN, DRAIN or FUTURE are
// not schedulable.
Cluster ClusterFromConfig(const conf::ClusterConfig& config);
// The same, with each node's inside (gres.conf; a plain one for GPU nodes it does not
// describe) and the network (topology.conf).
Cluster ClusterFromSite(const conf::SiteConfig& site);

// SchedulerParameters as policy options (minutes become seconds).
PolicyOptions PolicyOptionsFromConfig(const conf::ClusterConfig& config);

// The policy SchedulerType names: sched/backfill -> "slurm", sched/builtin -> "fcfs".
std::string_view PolicyNameFromConfig(const conf::ClusterConfig& config);

MultifactorWeights WeightsFromConfig(const conf::PriorityParams& priority);

}  // namespace loom::sched
