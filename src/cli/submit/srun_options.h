// The submission layer of `srun` outside an allocation: its command line (and the few SLURM_*
// input variables it reads) into a model::JobRequest whose `srun` field describes the step,
// plus what srun itself does with the tasks' output. The options srun shares with sbatch are
// resolved by the same code as sbatch's, with the same checks, and errors speak as srun
// ("srun: error: ..."). Pure: it reads nothing but its arguments. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/submit/sbatch_options.h"
#include "core/status.h"
#include "model/job_request.h"

namespace loom::cli::submit {

// Where one of srun's --output/--error/--input values sends a stream, by Slurm's rules.
struct IoTarget {
  enum class Kind {
    kSrun,     // srun's own stdout/stderr (no value, "all" or "-")
    kFile,     // one file srun opens and writes every task's stream to (%j %J %s %u %x %%)
    kPerTask,  // a file per task, opened on the nodes (the pattern has %t, %n or %N; "none")
    kOneTask,  // only task `task`'s stream reaches srun's own stdout/stderr
  };
  Kind kind = Kind::kSrun;
  std::string pattern;  // kFile, kPerTask ("none" becomes /dev/null)
  int32_t task = -1;    // kOneTask
  friend bool operator==(const IoTarget&, const IoTarget&) = default;
};

// Classifies an --output/--error/--input value for a step of `ntasks` tasks: "none" is
// /dev/null on the nodes; a task number below ntasks is that task alone; a pattern with %t,
// %n or %N is per task; anything else is one file on srun's side.
IoTarget ClassifyIo(std::string_view value, int32_t ntasks);

// srun inside an allocation (SLURM_JOB_ID set, or --jobid): the step to ask the job for.
// Counts of 0 were not given (on the command line, or by SLURM_NTASKS, SLURM_NTASKS_PER_NODE
// and SLURM_CPUS_PER_TASK, which srun reads only when the command line gives no task or
// node count).
struct StepOptions {
  model::JobId job_id = 0;
  int32_t ntasks = 0;
  int32_t nodes = 0;
  int32_t ntasks_per_node = 0;
  int32_t cpus_per_task = 0;
  std::string distribution = "block";  // block or cyclic (-m)
  bool exclusive = false;              // --exclusive
  bool kill_on_bad_exit = false;       // -K
  std::string cpu_bind, gpu_bind, gpus_per_task;
  std::optional<int32_t> threads_per_core;  // --hint, --threads-per-core; unset: the job's
};

struct SrunInput {
  enum class Action { kRun, kHelp, kUsage, kVersion, kCpuBindHelp, kMpiList };
  Action action = Action::kRun;
  // The job: options as for sbatch, `name` the command's base name unless -J, no requeue (an
  // interactive job is never requeued), and `srun` holding argv, -u and the per-task patterns;
  // srun fills in io_host, io_port and io_key once it listens.
  model::JobRequest request;
  bool label = false;              // -l: each line prefixed with its task's number
  bool quiet = false;              // -Q: no informational messages
  bool quit_on_interrupt = false;  // --quit-on-interrupt: one Ctrl-C cancels
  bool kill_on_bad_exit = false;   // -K: a task that exits non-zero ends the others
  bool kill_on_bad_exit_given = false;  // -K or -K0 was given (else ResolveMpi may set it)
  // --mpi, else SLURM_MPI_TYPE, as given (one of conf::kMpiTypes); empty: MpiDefault.
  std::string mpi;
  // --prolog and --epilog (else SLURM_PROLOG, SLURM_EPILOG): run by srun itself before the
  // job or step is asked for and after it ended; empty: slurm.conf's SrunProlog and
  // SrunEpilog; "none": nothing.
  std::string prolog, epilog;
  bool test_only = false;          // --test-only: say when it would start, run nothing
  int verbose = 0;
  int error_exit = 1;  // $SLURM_EXIT_ERROR, else 1
  IoTarget out, err;   // where srun sends the tasks' stdout and stderr
  int32_t ntasks = 1;  // the step's task count as far as the options say (at least 1)
  std::vector<std::string> warnings;  // "srun: warning: ..." lines for stderr
  std::optional<StepOptions> step;    // set inside an allocation: run a step of that job
};

// Resolves srun's command line. `argv` as main() receives it; `env` srun's environment;
// `now` Unix seconds (for --begin and --deadline). Errors are InvalidArgumentError whose
// message is what srun prints (lines, no trailing newline) and carry the exit status
// (SbatchExitCode): an unknown option, a missing command, a bad value. Inside an allocation
// (SLURM_JOB_ID set, or --jobid) the result's `step` says which step to ask for; the job
// options (partition, time, ...) then do not apply.
StatusOr<SrunInput> ParseSrun(std::span<const std::string> argv,
                              const std::map<std::string, std::string>& env, int64_t now,
                              const SbatchSettings& settings = {});

// Settles the step's MPI wire-up once slurm.conf's MpiDefault is known: SLURM_MPI_TYPE in
// the tasks' environment says it to the nodes, and a step with wire-up ends when one of
// its tasks exits non-zero (as -K), unless -K was given either way: one rank that fails
// would otherwise leave the others waiting in a collective until the time limit.
void ResolveMpi(std::string_view mpi_default, SrunInput* in);
// What `srun --mpi=list` prints.
std::string MpiListText();
// What `srun --cpu-bind=help` prints.
std::string CpuBindHelpText();

// What `srun --help` prints.
std::string SrunHelpText();

}  // namespace loom::cli::submit
