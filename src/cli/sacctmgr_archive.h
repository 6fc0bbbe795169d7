// sacctmgr archive load: job records from a file into loomdbd, as `loom sim --accounting-out`
// writes them or `sacct -a -P -o ...` prints them on a Slurm or Loom cluster
// (sim/accounting_records.h has the format).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/client.h"

namespace loom::cli {

// One word of sacctmgr's file commands: KEY=VALUE as (KEY, VALUE), a bare word as ("", word).
std::pair<std::string, std::string> OptionWord(const std::string& word);

// The words of a command that reads a file: File=PATH (or a bare path) and Cluster=NAME,
// into `*path` and `*cluster` (left as they are when not given); an error names the word
// and `command`'s usage.
Status FileAndCluster(const std::vector<std::string>& words, std::string_view command,
                      std::string* path, std::string* cluster);

// sacctmgr's question before it commits a change, on the terminal; whether the answer is yes.
bool AskToCommit();

// `words` are those after "archive load": File=PATH (or a bare path), Cluster=NAME (the
// records' cluster when the file names none; default: ClusterName). Prints what was loaded
// unless `quiet`; returns the exit status.
int RunArchiveLoad(Client& client, const std::vector<std::string>& words, bool quiet);

}  // namespace loom::cli
