// `scontrol show config`: the controller's configuration as Slurm lists it, one "Key = value"
// per setting, Slurm's key names and value forms ("300 sec", "UNLIMITED", "(null)", "root(0)"),
// sorted by key as Slurm sorts them (case-insensitively). Keys Loom reads but does not act on
// are listed with their value as written.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "conf/cluster_config.h"

namespace loom::conf {

using ConfigEntries = std::vector<std::pair<std::string, std::string>>;

// `slurm_user_uid` is SlurmUser's uid (shown as "root(0)").
ConfigEntries ShowConfigEntries(const ClusterConfig& config, uint32_t slurm_user_uid);

// The lines Slurm prints for `entries`: the key padded to 23 columns, " = ", the value.
std::string RenderConfigEntries(const ConfigEntries& entries);

}  // namespace loom::conf
