// sbatch's and srun's option tables, scanned with glibc's getopt_long rules (cli/getopt.h) as
// they use them: scanning stops at "--" or at the first word that is not an option (the
// script), whatever POSIXLY_CORRECT says. Error texts are glibc's, as sbatch prints them. Pure
// functions over immutable tables; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/getopt.h"
#include "core/status.h"

namespace loom::cli::submit::internal {

using ::loom::cli::ArgKind;

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

using OptionSpec = ::loom::cli::OptionSpec<Opt>;
using ParsedOption = ::loom::cli::ParsedOption<Opt>;
using ScanResult = ::loom::cli::ScanResult<Opt>;

// sbatch's table, in sbatch's order (which decides how ambiguous abbreviations are listed).
std::span<const OptionSpec> OptionTable();
// srun's table (Slurm 22.05's srun options), in srun's order.
std::span<const OptionSpec> SrunOptionTable();

// The long name of an option ("time" for Opt::kTime), from either table.
std::string_view LongName(Opt id);

// Scans `words` (without the program name) against sbatch's table.
ScanResult ScanOptions(std::span<const std::string> words);
// Scans `words` against `table`; errors name `program` ("srun: invalid option -- 'y'").
ScanResult ScanOptions(std::span<const std::string> words, std::span<const OptionSpec> table,
                       std::string_view program);

}  // namespace loom::cli::submit::internal
