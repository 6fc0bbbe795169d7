// A site's slurm.conf made to run on one host: what `loom cluster up --config` runs. The
// cluster keeps its nodes, partitions and policies; what ties it to a place is replaced:
// the controller and every node's daemon listen on 127.0.0.1, each at a port of its own,
// the controller keeps its state in a directory of the caller's, and MUNGE credentials go
// through the caller's munged. Pure functions (the resolver reads Include files); thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "conf/include_resolver.h"
#include "core/status.h"

namespace loom::conf {

// Where the local cluster lives.
struct LocalPlacement {
  int32_t controller_port = 0;
  std::string state_dir;     // StateSaveLocation
  std::string munge_socket;  // AuthInfo=socket=...
  // loomdbd's port, when the file keeps accounting (AccountingStorageType=
  // accounting_storage/slurmdbd): AccountingStorageHost becomes 127.0.0.1 and
  // AccountingStoragePort this. 0: the accounting keys are kept as written.
  int32_t dbd_port = 0;
  // A port for the next node's daemon, called once per node in slurm.conf order.
  std::function<int32_t()> node_port;
};

// Rewrites the slurm.conf `text` (named `file_name`, Include lines read through `resolver`
// and inlined) for `place`: SlurmctldHost (and the older ControlMachine, ControlAddr,
// BackupController, BackupAddr), SlurmctldPort, AuthType, AuthInfo and StateSaveLocation are
// replaced by the local ones; every NodeName line gets NodeAddr=127.0.0.1 and one port per
// node in place of its own NodeAddr and Port. Everything else is kept, comments aside.
// `source` names the original in the header comment of the result. Errors are the
// reader's (a missing Include file, an unterminated quote) and a NodeName that is not a
// valid hostlist, each "file:line: error: ...".
StatusOr<std::string> LocalizeSlurmConf(std::string_view text, std::string_view file_name,
                                        const IncludeResolver& resolver,
                                        const LocalPlacement& place);

}  // namespace loom::conf
