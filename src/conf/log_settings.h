// How each daemon logs, from slurm.conf: the controller from the Slurmctld* keys, the node
// daemon and its supervisors from the Slurmd* keys (LogFile's %n and %h expanded). Pure.
#pragma once

#include <string_view>

#include "conf/cluster_config.h"
#include "core/log.h"

namespace loom::conf {

// `foreground`: started with -D, so stderr too when a log file is set.
core::LogSettings SlurmctldLogSettings(const ClusterConfig& c, bool foreground);
// For node `node` on this host (its name from gethostname).
core::LogSettings SlurmdLogSettings(const ClusterConfig& c, std::string_view node,
                                    bool foreground);

}  // namespace loom::conf
