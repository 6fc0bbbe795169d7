// A site's whole configuration as Slurm lays it out: slurm.conf, with gres.conf and
// topology.conf beside it. gres.conf is read when present; topology.conf when slurm.conf's
// TopologyPlugin is topology/tree or topology/block (then it must be present).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "conf/cluster_config.h"
#include "conf/diagnostic.h"
#include "conf/gres_conf.h"
#include "core/status.h"
#include "model/cluster_topology.h"
#include "model/gpu_topology.h"

namespace loom::conf {

struct SiteConfig {
  ClusterConfig cluster;
  // By node, in slurm.conf order: the node's inside, null where gres.conf says nothing.
  std::vector<std::shared_ptr<const model::NodeTopology>> node_topologies;
  // By node: gres.conf's AutoDetect= for it (kNotSet without gres.conf), which its daemon
  // acts on when it starts.
  std::vector<GresAutoDetect> gpu_autodetect;
  model::ClusterTopology network;  // flat without topology.conf
  std::vector<std::string> files;  // every file read
};

// Reads slurm.conf at `path` and the files beside it. Warnings of all three files go to
// `warnings`; the first error fails the load.
StatusOr<SiteConfig> LoadSiteConfig(const std::string& path, std::vector<Diagnostic>* warnings);

// The munged socket slurm.conf names in AuthInfo=socket=PATH, or "" (libmunge's default).
std::string MungeSocketOf(const ClusterConfig& config);

}  // namespace loom::conf
