// sacctmgr archive load: job records from a file into loomdbd, as `loom sim --accounting-out`
// writes them or `sacct -a -P -o ...` prints them on a Slurm or Loom cluster
// (sim/accounting_records.h has the format).
#pragma once

#include <string>
#include <vector>

#include "cli/client.h"

namespace loom::cli {

// `words` are those after "archive load": File=PATH (or a bare path), Cluster=NAME (the
// records' cluster when the file names none; default: ClusterName). Prints what was loaded
// unless `quiet`; returns the exit status.
int RunArchiveLoad(Client& client, const std::vector<std::string>& words, bool quiet);

}  // namespace loom::cli
