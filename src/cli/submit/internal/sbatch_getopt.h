// sbatch's and srun's option tables and an argument scanner with the rules of glibc's
// getopt_long as they use it: short options may be bundled ("-Hv", "-N2"); long options may be
// abbreviated to any unambiguous prefix; a required argument is "=value" or the next word;
// an optional one only "=value" (or attached, for short options); scanning stops at "--"
// or at the first word that is not an option (the script). Error texts are glibc's, as
// sbatch prints them. Pure functions over an immutable table; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::cli::submit::internal {

enum class ArgKind { kNone, kRequired, kOptional };

// Every option sbatch 22.05 knows (`--cluster` and `--clusters` are one option, as are
// `--tasks-per-node` and `--ntasks-per-node`), and `--segment`, which later Slurm releases
// added for topology/block and Loom's scheduler honours.
enum class Opt {
  kAccount,
  kAcctgFreq,
  kArray,
  kBatch,
  kBegin,
  kBb,
  kBbf,
  kClusterConstraint,
  kChdir,
  kClusters,
  kComment,
  kContainer,
  kContext,
  kContiguous,
  kConstraint,
  kCoreSpec,
  kCoresPerSocket,
  kCpuFreq,
  kCpusPerGpu,
  kCpusPerTask,
  kDeadline,
  kDelayBoot,
  kDependency,
  kDistribution,
  kError,
  kExclude,
  kExclusive,
  kExport,
  kExportFile,
  kExtraNodeInfo,
  kGetUserEnv,
  kGid,
  kGpuBind,
  kGpuFreq,
  kGpus,
  kGpusPerNode,
  kGpusPerSocket,
  kGpusPerTask,
  kGres,
  kGresFlags,
  kHelp,
  kHint,
  kHold,
  kIgnorePbs,
  kInput,
  kJobName,
  kKillOnInvalidDep,
  kLicenses,
  kMailType,
  kMailUser,
  kMcsLabel,
  kMem,
  kMemBind,
  kMemPerCpu,
  kMemPerGpu,
  kMincpus,
  kNetwork,
  kNice,
  kNoKill,
  kNoRequeue,
  kNodefile,
  kNodelist,
  kNodes,
  kNtasks,
  kNtasksPerCore,
  kNtasksPerGpu,
  kNtasksPerNode,
  kNtasksPerSocket,
  kNtasksPerTres,
  kOpenMode,
  kOutput,
  kOvercommit,
  kOversubscribe,
  kParsable,
  kPartition,
  kPower,
  kPrefer,
  kPriority,
  kProfile,
  kPropagate,
  kQos,
  kQuiet,
  kReboot,
  kRequeue,
  kReservation,
  kSegment,
  kSignal,
  kSocketsPerNode,
  kSpreadJob,
  kSwitches,
  kTestOnly,
  kThreadSpec,
  kThreadsPerCore,
  kTime,
  kTimeMin,
  kTmp,
  kUid,
  kUseMinNodes,
  kUsage,
  kVerbose,
  kVersion,
  kWait,
  kWaitAllNodes,
  kWckey,
  kWrap,
  // srun's own options (SrunOptionTable). srun's --output, --error and --input share sbatch's
  // names but mean per-task streams; srun's -W takes seconds (kWaitSeconds).
  kBcast,
  kCompress,
  kCpuBind,
  kDisableStatus,
  kEpilog,
  kExact,
  kImmediate,
  kJobid,
  kKillOnBadExit,
  kLabel,
  kMpi,
  kMultiProg,
  kNoAllocate,
  kOverlap,
  kProlog,
  kPty,
  kQuitOnInterrupt,
  kRelative,
  kResvPorts,
  kSendLibs,
  kSlurmdDebug,
  kTaskEpilog,
  kTaskProlog,
  kThreads,
  kUnbuffered,
  kWaitSeconds,
};

struct OptionSpec {
  std::string_view name;  // long name without "--"
  char short_name;        // 0: none
  ArgKind arg;
  Opt id;
};

// sbatch's table, in sbatch's order (which decides how ambiguous abbreviations are listed).
std::span<const OptionSpec> OptionTable();
// srun's table (Slurm 22.05's srun options), in srun's order.
std::span<const OptionSpec> SrunOptionTable();

// The long name of an option ("time" for Opt::kTime), from either table.
std::string_view LongName(Opt id);

struct ParsedOption {
  Opt id;
  std::optional<std::string> value;  // unset: no argument given
  friend bool operator==(const ParsedOption&, const ParsedOption&) = default;
};

struct ScanResult {
  // The options in order, up to a malformed one or to --help, --usage or --version (which
  // end the scan, as sbatch acts on them at once).
  std::vector<ParsedOption> options;
  std::vector<std::string> rest;  // the first non-option word and everything after it
  // A malformed option after `options`: InvalidArgumentError whose message is the line
  // glibc prints, e.g. "sbatch: unrecognized option '--foo'".
  Status error;
};

// Scans `words` (without the program name) against sbatch's table.
ScanResult ScanOptions(std::span<const std::string> words);
// Scans `words` against `table`; errors name `program` ("srun: invalid option -- 'y'").
ScanResult ScanOptions(std::span<const std::string> words, std::span<const OptionSpec> table,
                       std::string_view program);

}  // namespace loom::cli::submit::internal
