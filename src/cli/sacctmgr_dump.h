// sacctmgr dump: a cluster's association tree as a file of Cluster, Parent, Account and User
// lines (`Kind - 'NAME':Key=Value:...`), the form Slurm's sacctmgr dump writes. `loom sim
// --shares FILE` reads it, so a site's tree drives fair share in the simulator.
#pragma once

#include <string>
#include <vector>

#include "cli/client.h"
#include "loom/v1/loom.pb.h"

namespace loom::cli {

// The dump of `cluster` from `tree` (accounts depth first, each Parent line followed by the
// users, then the accounts, under it). Fails when `tree` does not know `cluster`.
StatusOr<std::string> DumpCluster(const v1::AcctShowReply& tree, const std::string& cluster);

// `words` after "dump": the cluster's name (default: ClusterName), File=PATH (default: the
// standard output). Returns the exit status.
int RunDump(Client& client, const std::vector<std::string>& words, bool quiet);

// `words` after "load": File=PATH (or a bare path), Cluster=NAME (default: the file's Cluster
// line). Adds the accounts and users the file has and the cluster lacks, and sets those it
// has to the file's settings (sacctmgr's own add and modify, in file order); settings loomdbd
// does not keep are listed, not loaded. With `ask`, shows the changes and asks first.
int RunLoad(Client& client, const std::vector<std::string>& words, bool ask, bool quiet);

}  // namespace loom::cli
