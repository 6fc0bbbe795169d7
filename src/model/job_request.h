// What a batch submission asks for, once every source (command line, SBATCH_* variables,
// #SBATCH directives) has been resolved: the value `sbatch` hands to the controller and the
// controller stores with the job. Also the parsed forms of the Slurm syntaxes a submission
// carries (--array, --dependency, output file patterns). Pure values and pure functions;
// thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/job.h"
#include "model/resources.h"

namespace loom::model {

// ---------------------------------------------------------------------------------------
// --array

// One element of an --array list: first..last every `step` (a single index has
// first == last, step 1).
struct ArrayRange {
  int64_t first = 0;
  int64_t last = 0;
  int64_t step = 1;
  friend bool operator==(const ArrayRange&, const ArrayRange&) = default;
};

// `--array=0-15:4,20%5`: the ranges as written and the `%N` throttle (0: none).
struct ArraySpec {
  std::vector<ArrayRange> ranges;
  int32_t max_running = 0;

  friend bool operator==(const ArraySpec&, const ArraySpec&) = default;
  // The task indices, ascending, without duplicates.
  std::vector<int64_t> Indices() const;
  int64_t Count() const;  // of Indices()
  int64_t MaxIndex() const;
  // The canonical form, ranges merged the way Slurm prints ArrayTaskId ("0-3,5,7-9:2%4").
  std::string ToString() const;
};

// Parses an --array value. Every index must be below `max_array_size` (slurm.conf's
// MaxArraySize, 1001 by default). Errors say which element is wrong and why.
StatusOr<ArraySpec> ParseArraySpec(std::string_view text, int64_t max_array_size = 1001);

// ---------------------------------------------------------------------------------------
// --dependency

enum class DependencyType {
  kAfter,       // after the job starts (or is cancelled), plus an optional delay
  kAfterAny,    // after the job ends in any state
  kAfterOk,     // after the job completes with exit code 0
  kAfterNotOk,  // after the job fails (non-zero exit, node failure, timeout, ...)
  kAfterCorr,   // array task N after task N of the other array completes successfully
  kAfterBurstBuffer,
  kSingleton,  // after every earlier job of the same name and user has ended
};

// The name Slurm uses for the type ("afterok", "singleton", ...).
std::string_view DependencyTypeName(DependencyType type);

// One job a dependency waits on: `123`, `123_4` (one array task), `123_*` (every task),
// `123+10` (for `after`: 10 minutes after it starts).
struct DependencyTarget {
  JobId job_id = 0;
  std::optional<int64_t> array_task;  // set for `123_4`
  bool all_tasks = false;             // `123_*`
  int64_t delay_s = 0;                // `after:123+10`: 600
  friend bool operator==(const DependencyTarget&, const DependencyTarget&) = default;
};

struct DependencyClause {
  DependencyType type = DependencyType::kAfterAny;
  std::vector<DependencyTarget> jobs;  // empty for singleton
  friend bool operator==(const DependencyClause&, const DependencyClause&) = default;
};

// A whole --dependency value: clauses joined by `,` (all must hold) or `?` (any suffices);
// Slurm allows only one of the two separators in a value.
struct Dependency {
  enum class Combine { kAll, kAny };
  Combine combine = Combine::kAll;
  std::vector<DependencyClause> clauses;

  friend bool operator==(const Dependency&, const Dependency&) = default;
  bool empty() const { return clauses.empty(); }
  // The canonical form: "afterok:1:2,afterany:3", "afterok:1?afterok:2", "after:5+10".
  std::string ToString() const;
};

// Parses a --dependency value (also Slurm's old form, a bare `jobid[:jobid...]`, which means
// afterany). Type names are case-insensitive. Errors say which clause is wrong and why.
StatusOr<Dependency> ParseDependency(std::string_view text);

// ---------------------------------------------------------------------------------------
// Output file patterns (--output, --error, --input)

// What the replacement symbols of a file name pattern stand for when a job's I/O file is
// opened.
struct OutputPatternContext {
  JobId job_id = 0;
  std::optional<JobId> array_job_id;     // set for array tasks
  std::optional<int64_t> array_task_id;  // set for array tasks
  std::string job_name;
  std::string user;
  std::string node_name;           // %N: the node opening the file
  int64_t node_index = 0;          // %n: that node's index within the job
  int64_t task_id = 0;             // %t
  std::optional<int64_t> step_id;  // %s; unset for the batch script ("batch")
};

// Expands `pattern`: %j job id, %A array master job id (the job id outside arrays), %a array
// task id (4294967294 outside arrays, as Slurm prints it), %x job name, %u user, %N node name,
// %n node index, %t task id, %s step id, %J job id and step ("123.batch"), %% a '%'. A number
// after the '%' zero-pads numeric fields ("%4a" -> "0007", at most 10 wide). A pattern that
// contains a backslash is not expanded: its backslashes are dropped ("\\" keeps one).
// Unknown symbols are kept as written.
std::string ExpandOutputPattern(std::string_view pattern, const OutputPatternContext& context);

// Slurm's default --output (and --error) pattern: "slurm-%j.out", or "slurm-%A_%a.out" for
// job arrays.
std::string_view DefaultOutputPattern(bool is_array);

// ---------------------------------------------------------------------------------------
// --export

struct ExportPolicy {
  enum class Mode {
    kAll,   // the whole submission environment (the default)
    kNone,  // only SLURM_* variables
    kList,  // SLURM_* plus the named variables; with `ALL,` also everything else
  };
  Mode mode = Mode::kAll;
  bool with_all = false;  // kList written as "ALL,VAR,..."
  // The listed variables in order: a name alone exports its current value; NAME=value sets it.
  std::vector<std::pair<std::string, std::optional<std::string>>> vars;

  friend bool operator==(const ExportPolicy&, const ExportPolicy&) = default;
  std::string ToString() const;
};

// Parses an --export value ("ALL", "NONE", "ALL,EDITOR=/bin/emacs", "A,B=x").
StatusOr<ExportPolicy> ParseExportPolicy(std::string_view text);

// The environment a job starts with under `policy`, from the submission environment `env`.
// ALL: everything; NONE: SLURM_* only; a list: SLURM_* and the listed variables (a name
// alone takes its value from `env` and is left out when `env` lacks it, NAME=value sets it);
// ALL with a list: everything, and listed NAME=value only where `env` lacks NAME.
std::map<std::string, std::string> ResolveExport(const ExportPolicy& policy,
                                                 const std::map<std::string, std::string>& env);

// ---------------------------------------------------------------------------------------
// The request

// GPUs or another generic resource as written in --gres/--gpus*: `[type:]count`.
struct TypedCount {
  std::string name = "gpu";  // the GRES name (always "gpu" for --gpus*)
  std::string type;          // empty: any type
  int64_t count = 0;
  friend bool operator==(const TypedCount&, const TypedCount&) = default;
};

// --priority=TOP: the highest priority a job can be given.
inline constexpr int64_t kPriorityTop = 4294967293;

enum class SharingMode {
  kDefault,        // the partition decides
  kExclusive,      // --exclusive: whole nodes
  kExclusiveUser,  // --exclusive=user: nodes shared only with the same user's jobs
  kExclusiveMcs,   // --exclusive=mcs
  kOversubscribe,  // -s / --oversubscribe
};

enum class OpenMode { kDefault, kAppend, kTruncate };

// A job srun submits: its command runs as one step of tasks on every node of the job, and the
// nodes send the tasks' output and exit statuses back to srun, which listens at io_host:io_port.
struct SrunStep {
  std::vector<std::string> argv;  // the command and its arguments
  std::string io_host;
  int32_t io_port = 0;
  std::string io_key;           // proves a connection comes from the job's nodes (a secret)
  bool unbuffered = false;      // -u: output goes to srun as it comes, not line by line
  std::string stdout_pattern;   // -o/-e/-i patterns a node opens for each of its tasks;
  std::string stderr_pattern;   // empty: the stream goes to (or, for stdin, comes from) srun
  std::string stdin_pattern;
  // How the tasks are placed and bound, as srun's options say (validated by srun): empty
  // for none given.
  std::string cpu_bind;       // --cpu-bind
  std::string gpu_bind;       // --gpu-bind
  std::string gpus_per_task;  // --gpus-per-task as given: "N" or "TYPE:N"
  std::string distribution;   // -m: "block" or "cyclic"
  // --hint, --threads-per-core: threads used per core; 0: all; unset: not given.
  std::optional<int32_t> threads_per_core;
  friend bool operator==(const SrunStep&, const SrunStep&) = default;
};

struct JobRequest {
  // Identity and accounting.
  std::string name;                     // -J; defaults to the script's base name, "sbatch"
                                        // for a script read from stdin, "wrap" for --wrap
  std::vector<std::string> partitions;  // -p a,b: any of them; empty: the default partition
  std::string account;
  std::string qos;
  std::string reservation;
  std::string wckey;
  std::string comment;
  std::string licenses;         // -L as written
  std::optional<uint32_t> uid;  // --uid (the command checks the caller may)
  std::optional<uint32_t> gid;

  // Time.
  std::optional<int64_t> time_limit_s;  // -t; core::kUnlimitedSeconds when unlimited;
                                        // unset: the partition's default
  std::optional<int64_t> time_min_s;    // --time-min
  int64_t begin_time = 0;               // --begin, Unix seconds; 0: eligible at once
  int64_t deadline = 0;                 // --deadline, Unix seconds; 0: none

  // Shape as the scheduler reads it, derived from the options below.
  JobShape shape;
  // The options as given (unset: not given), for the controller and `scontrol show job`.
  std::optional<int32_t> min_nodes, max_nodes;  // -N min[-max]
  std::optional<int32_t> ntasks;                // -n
  std::optional<int32_t> ntasks_per_node;
  std::optional<int32_t> cpus_per_task;  // -c
  std::optional<int32_t> cpus_per_gpu;
  std::optional<int64_t> mem_per_node_mb;  // --mem (0: all of each node's memory)
  std::optional<int64_t> mem_per_cpu_mb;
  std::optional<int64_t> mem_per_gpu_mb;
  std::vector<TypedCount> gres;  // --gres, per node
  std::vector<TypedCount> gpus;  // --gpus / -G, for the whole job
  std::vector<TypedCount> gpus_per_node;
  std::vector<TypedCount> gpus_per_task;
  std::vector<TypedCount> gpus_per_socket;
  std::optional<int32_t> ntasks_per_core, ntasks_per_socket, ntasks_per_gpu;
  std::optional<int32_t> mincpus;
  std::optional<int64_t> tmp_mb;
  SharingMode sharing = SharingMode::kDefault;
  int32_t switches = 0;  // --switches=N[@max-time]
  std::optional<int64_t> switches_wait_s;
  std::optional<int32_t> segment;  // --segment=N (topology/block)
  std::string constraint;          // -C, validated
  std::string prefer;              // --prefer
  std::string nodelist;            // -w
  std::string exclude;             // -x
  bool contiguous = false;
  bool overcommit = false;
  bool spread_job = false;
  bool use_min_nodes = false;

  // Scheduling.
  bool hold = false;  // -H: submitted with priority 0
  Dependency dependency;
  std::optional<bool> kill_on_invalid_dep;
  std::optional<ArraySpec> array;
  int32_t nice = 0;
  std::optional<int64_t> priority;  // --priority=N; TOP is kPriorityTop
  std::optional<bool> requeue;      // --requeue / --no-requeue; unset: JobRequeue
  bool no_kill = false;
  std::string signal;      // --signal as written ("[R|B:]SIG[@time]")
  bool test_only = false;  // --test-only: ask when it would start

  // Execution.
  std::string work_dir;        // -D, absolute when the submit dir is known
  std::string stdout_pattern;  // -o; empty: DefaultOutputPattern
  std::string stderr_pattern;  // -e; empty: same file as stdout
  std::string stdin_pattern;   // -i; empty: /dev/null
  OpenMode open_mode = OpenMode::kDefault;
  ExportPolicy export_policy;
  bool get_user_env = false;
  std::string export_file;                         // --export-file (read by the submitting command)
  std::map<std::string, std::string> environment;  // what the job starts with
  std::string script;                              // the batch script text (--wrap: generated)
  std::vector<std::string> script_args;            // arguments after the script name
  std::string wrap;                                // the --wrap command, if used
  // The script and its arguments as sbatch records them (scontrol's Command=); empty for
  // --wrap and a script read from standard input.
  std::string command;
  std::string alloc_node;  // the host it was submitted from
  uint32_t alloc_sid = 0;  // the session of the submitting process
  std::optional<SrunStep> srun;  // set for a job srun submitted
  // salloc: an allocation only; nothing runs on its nodes until srun starts steps there, and
  // it ends when salloc releases it.
  bool allocation_only = false;
  // Defaults of the job's steps (sbatch/salloc --cpu-bind, --gpu-bind, --hint,
  // --threads-per-core), as given; a step's own options win. model::StepThreadsPerCore reads
  // the last two.
  std::string cpu_bind;
  std::string gpu_bind;
  std::string hint;
  std::optional<int32_t> threads_per_core;

  // Options Loom accepts but does not act on, by long name, as given.
  std::map<std::string, std::string> ignored_options;

  friend bool operator==(const JobRequest&, const JobRequest&) = default;

  // The stdout pattern in effect (the default when -o was not given).
  std::string EffectiveStdout() const;
  // The stderr pattern in effect (stdout's when -e was not given).
  std::string EffectiveStderr() const;
};

// Derives the scheduler's JobShape (r->shape) from the options as given (see
// docs/user/sbatch.md): what sbatch, srun and salloc send, and what the controller derives
// again when a job_submit.lua script changed those options. Warnings start with `command`
// ("sbatch: warning: ...").
void DeriveShape(JobRequest* r, std::string_view command, std::vector<std::string>* warnings);

}  // namespace loom::model
