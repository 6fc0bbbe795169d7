// Sites for tests and benchmarks: a slurm.conf given as text, written to a directory of
// its own (with any files beside it that it names, e.g. gres.conf), then loaded as the
// daemons load /etc/slurm/slurm.conf. Not for production code.
#pragma once

#include <map>
#include <string>

#include "conf/site_config.h"
#include "core/status.h"

namespace loom::conf::testing {

// Writes `slurm_conf`, and each of `beside` (file name -> text), to a fresh directory named
// after `name` and this process under the system's temporary directory, loads the site from
// it and removes the directory. Processes running at once never share a directory.
StatusOr<SiteConfig> SiteFromText(const std::string& name, const std::string& slurm_conf,
                                  const std::map<std::string, std::string>& beside = {});

}  // namespace loom::conf::testing
