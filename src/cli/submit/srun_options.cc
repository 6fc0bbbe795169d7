#include "cli/submit/srun_options.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "cli/submit/internal/cli_filter_options.h"
#include "cli/submit/internal/sbatch_apply.h"
#include "cli/submit/internal/sbatch_checks.h"
#include "cli/submit/internal/sbatch_getopt.h"
#include "cli/submit/internal/sbatch_values.h"
#include "conf/cluster_config.h"
#include "core/strings.h"
#include "model/binding.h"
#include "model/step.h"

namespace loom::cli::submit {
namespace {

using core::StrCat;
using internal::Absolute;
using internal::BaseName;
using internal::Fail;
using internal::Opt;
using internal::ParsedOption;
using internal::Source;

constexpr char kTryHelp[] = "Try \"srun --help\" for more information";

// The options srun shares with sbatch speak as sbatch in the shared code; srun says the same
// as itself.
std::string AsSrun(std::string_view text) {
  std::string out;
  for (std::string_view line : core::Split(text, '\n')) {
    if (!out.empty()) out += '\n';
    if (line.starts_with("sbatch:")) {
      out += "srun:";
      line.remove_prefix(7);
    }
    out += line;
  }
  for (size_t at = out.find("\"sbatch --help\""); at != std::string::npos;
       at = out.find("\"sbatch --help\"", at)) {
    out.replace(at, 15, "\"srun --help\"");
  }
  return out;
}

Status AsSrun(const Status& s) {
  if (s.ok()) return s;
  return Fail(AsSrun(std::string(s.message())), SbatchExitCode(s));
}

// srun options Loom accepts and does not act on; each earns one warning.
bool IsIgnoredBySrun(Opt id) {
  switch (id) {
    case Opt::kBcast:
    case Opt::kCompress:
    case Opt::kDisableStatus:
    case Opt::kExact:
    case Opt::kImmediate:
    case Opt::kOverlap:
    case Opt::kRelative:
    case Opt::kResvPorts:
    case Opt::kSendLibs:
    case Opt::kSlurmdDebug:
    case Opt::kThreads:
    case Opt::kWaitSeconds:
      return true;
    default:
      return false;
  }
}

// Options that need what Loom's srun does not do: a step in an existing allocation, a
// pseudo-terminal, several programs.
std::optional<std::string> Unsupported(Opt id) {
  switch (id) {
    case Opt::kNoAllocate:
      return "--no-allocate is not supported by Loom";
    case Opt::kPty:
      return "--pty is not supported by Loom yet; the tasks' output still comes to srun";
    case Opt::kMultiProg:
      return "--multi-prog is not supported by Loom yet; run one program per srun";
    default:
      return std::nullopt;
  }
}

// The SLURM_* input variables srun reads outside an allocation, as options.
struct EnvVar {
  const char* name;
  Opt id;
  bool flag;
};
constexpr EnvVar kSrunEnv[] = {
    {"SLURM_ACCOUNT", Opt::kAccount, false},
    {"SLURM_CONSTRAINT", Opt::kConstraint, false},
    {"SLURM_EXPORT_ENV", Opt::kExport, false},
    {"SLURM_LABELIO", Opt::kLabel, true},
    {"SLURM_PARTITION", Opt::kPartition, false},
    {"SLURM_QOS", Opt::kQos, false},
    {"SLURM_RESERVATION", Opt::kReservation, false},
    {"SLURM_TIMELIMIT", Opt::kTime, false},
    {"SLURM_UNBUFFEREDIO", Opt::kUnbuffered, true},
    {"SLURM_WCKEY", Opt::kWckey, false},
    {"SLURM_MPI_TYPE", Opt::kMpi, false},
    {"SLURM_PROLOG", Opt::kProlog, false},
    {"SLURM_EPILOG", Opt::kEpilog, false},
    {"SLURM_TASK_PROLOG", Opt::kTaskProlog, false},
    {"SLURM_TASK_EPILOG", Opt::kTaskEpilog, false},
};

// A node-side pattern: relative paths are the submitting directory's, as Slurm's srun makes
// them (tasks may start elsewhere).
std::string NodePattern(const IoTarget& t, std::string_view work_dir) {
  return t.pattern == "/dev/null" ? t.pattern : Absolute(t.pattern, work_dir);
}

// The options that mean something for a step inside an allocation; the job's own options
// (partition, time limit, memory, node names, ...) are the job's, already granted.
bool AppliesToStep(Opt id) {
  switch (id) {
    case Opt::kNtasks:
    case Opt::kNodes:
    case Opt::kNtasksPerNode:
    case Opt::kCpusPerTask:
    case Opt::kDistribution:
    case Opt::kExclusive:
    case Opt::kOverlap:
    case Opt::kExact:
    case Opt::kCpuBind:
    case Opt::kGpuBind:
    case Opt::kGpusPerTask:
    case Opt::kHint:
    case Opt::kThreadsPerCore:
    case Opt::kKillOnBadExit:
    case Opt::kMpi:
    case Opt::kJobid:
    case Opt::kJobName:
    case Opt::kLabel:
    case Opt::kUnbuffered:
    case Opt::kOutput:
    case Opt::kError:
    case Opt::kInput:
    case Opt::kOpenMode:
    case Opt::kChdir:
    case Opt::kExport:
    case Opt::kQuiet:
    case Opt::kVerbose:
    case Opt::kQuitOnInterrupt:
    case Opt::kProlog:
    case Opt::kEpilog:
    case Opt::kTaskProlog:
    case Opt::kTaskEpilog:
      return true;
    default:
      return false;
  }
}

// The message of a binding check, empty when the value is good: the nodes parse the values
// with the same functions (model/binding.h) when they bind the step's tasks.
std::string ValidateCpuBindText(std::string_view value) {
  Status s = model::ParseCpuBind(value).status();
  return s.ok() ? "" : core::StrCat("srun: error: ", std::string(s.message()));
}
std::string ValidateGpuBindText(std::string_view value) {
  Status s = model::ParseGpuBind(value).status();
  return s.ok() ? "" : core::StrCat("srun: error: ", std::string(s.message()));
}

}  // namespace

IoTarget ClassifyIo(std::string_view value, int32_t ntasks) {
  IoTarget t;
  if (value.empty() || core::EqualsIgnoreCase(value.substr(0, 3), "all") || value[0] == '-') {
    return t;
  }
  if (core::EqualsIgnoreCase(value, "none")) {
    t.kind = IoTarget::Kind::kPerTask;
    t.pattern = "/dev/null";
    return t;
  }
  if (std::optional<int64_t> task = core::ParseInt(value); task && *task >= 0 && *task < ntasks) {
    t.kind = IoTarget::Kind::kOneTask;
    t.task = static_cast<int32_t>(*task);
    return t;
  }
  t.pattern = std::string(value);
  t.kind = IoTarget::Kind::kFile;
  if (value.find('\\') != std::string_view::npos) return t;  // not expanded at all
  for (size_t i = 0; i + 1 < value.size(); ++i) {
    if (value[i] != '%') continue;
    size_t j = i + 1;
    while (j < value.size() && value[j] >= '0' && value[j] <= '9') ++j;  // "%4t"
    if (j < value.size() && (value[j] == 't' || value[j] == 'n' || value[j] == 'N')) {
      t.kind = IoTarget::Kind::kPerTask;
    }
    i = j;  // "%%" and the symbol just read are skipped
  }
  return t;
}

StatusOr<SrunInput> ParseSrun(std::span<const std::string> argv,
                              const std::map<std::string, std::string>& env, int64_t now,
                              const SbatchSettings& settings) {
  SrunInput in;
  if (auto it = env.find("SLURM_EXIT_ERROR"); it != env.end()) {
    std::optional<int64_t> code = internal::SlurmInt(it->second);
    if (code && *code != 0) {
      in.error_exit = static_cast<int>(*code);
    } else {
      in.warnings.push_back("srun: error: SLURM_EXIT_ERROR has zero value");
    }
  }
  const int error_exit = in.error_exit;
  internal::ScanResult cli = internal::ScanOptions(argv.empty() ? argv : argv.subspan(1),
                                                   internal::SrunOptionTable(), "srun");
  for (const ParsedOption& o : cli.options) {
    if (o.id == Opt::kHelp || o.id == Opt::kUsage || o.id == Opt::kVersion) {
      in.action = o.id == Opt::kHelp    ? SrunInput::Action::kHelp
                  : o.id == Opt::kUsage ? SrunInput::Action::kUsage
                                        : SrunInput::Action::kVersion;
      return in;
    }
    if (o.id == Opt::kMpi && o.value && core::EqualsIgnoreCase(*o.value, "list")) {
      in.action = SrunInput::Action::kMpiList;  // needs no command
      return in;
    }
  }
  if (!cli.error.ok()) {
    return Fail(StrCat(std::string(cli.error.message()), "\n", kTryHelp), error_exit);
  }
  for (const ParsedOption& o : cli.options) {
    if (std::optional<std::string> why = Unsupported(o.id)) {
      return Fail(StrCat("srun: error: ", *why), error_exit);
    }
  }
  // Inside an allocation: --jobid, else SLURM_JOB_ID (SLURM_JOBID), as Slurm's srun.
  std::optional<std::string> jobid_text;
  for (const char* name : {"SLURM_JOBID", "SLURM_JOB_ID"}) {
    if (auto it = env.find(name); it != env.end() && !it->second.empty()) jobid_text = it->second;
  }
  for (const ParsedOption& o : cli.options) {
    if (o.id == Opt::kJobid) jobid_text = o.value.value_or("");
  }
  if (jobid_text) {
    std::optional<int64_t> id = core::ParseInt(*jobid_text);
    if (!id || *id <= 0) {
      return Fail(StrCat("srun: error: Invalid job id specified: ", *jobid_text), error_exit);
    }
    in.step.emplace().job_id = static_cast<model::JobId>(*id);
  }
  if (cli.rest.empty()) return Fail("srun: fatal: No command given to execute.", error_exit);

  internal::Resolver resolver(now, settings);
  internal::State st;
  st.warnings = std::move(in.warnings);
  bool unbuffered = false;
  bool kill_on_bad_exit = false;
  std::string cpu_bind, gpu_bind, distribution = "block";
  std::string task_prolog, task_epilog;  // --task-prolog, --task-epilog (or their variables)
  auto apply = [&](const ParsedOption& o, Source source) -> Status {
    switch (o.id) {
      case Opt::kLabel:
        in.label = true;
        return absl::OkStatus();
      case Opt::kUnbuffered:
        unbuffered = true;
        return absl::OkStatus();
      case Opt::kQuitOnInterrupt:
        in.quit_on_interrupt = true;
        return absl::OkStatus();
      case Opt::kJobid:
        return absl::OkStatus();  // read above
      case Opt::kCpuBind:
        if (o.value && core::EqualsIgnoreCase(*o.value, "help")) {
          in.action = SrunInput::Action::kCpuBindHelp;
          return absl::OkStatus();
        }
        if (std::string why = ValidateCpuBindText(o.value.value_or("")); !why.empty()) {
          return Fail(why, error_exit);
        }
        cpu_bind = o.value.value_or("");
        return absl::OkStatus();
      case Opt::kGpuBind:
        if (std::string why = ValidateGpuBindText(o.value.value_or("")); !why.empty()) {
          return Fail(why, error_exit);
        }
        gpu_bind = o.value.value_or("");
        return absl::OkStatus();
      case Opt::kDistribution:
        distribution = o.value.value_or("");
        if (!model::ParseDistribution(distribution)) {
          const bool slurms = distribution.starts_with("plane") ||
                              distribution.starts_with("arbitrary") || distribution[0] == '*';
          return Fail(slurms ? StrCat("srun: error: --distribution=", distribution,
                                      " is not supported by Loom (block and cyclic are)")
                             : "srun: error: Invalid --distribution specification",
                      error_exit);
        }
        return absl::OkStatus();
      case Opt::kKillOnBadExit:
        kill_on_bad_exit = !o.value || o.value->empty() || *o.value != "0";
        in.kill_on_bad_exit = kill_on_bad_exit;
        in.kill_on_bad_exit_given = true;
        return absl::OkStatus();
      case Opt::kMpi: {
        const std::string type = o.value.value_or("");
        if (std::find(std::begin(conf::kMpiTypes), std::end(conf::kMpiTypes), type) ==
            std::end(conf::kMpiTypes)) {
          return Fail(
              StrCat("srun: error: Invalid MPI type '", type, "', --mpi=list for acceptable types"),
              error_exit);
        }
        in.mpi = type;
        return absl::OkStatus();
      }
      case Opt::kProlog:
        in.prolog = o.value.value_or("");
        return absl::OkStatus();
      case Opt::kEpilog:
        in.epilog = o.value.value_or("");
        return absl::OkStatus();
      case Opt::kTaskProlog:
        task_prolog = o.value.value_or("");
        return absl::OkStatus();
      case Opt::kTaskEpilog:
        task_epilog = o.value.value_or("");
        return absl::OkStatus();
      case Opt::kOverlap:
      case Opt::kExact:
        if (in.step) return absl::OkStatus();  // steps share CPUs unless --exclusive
        break;
      default:
        break;
    }
    if (IsIgnoredBySrun(o.id)) {
      st.r.ignored_options[std::string(internal::LongName(o.id))] = o.value.value_or("");
      if (st.warned.insert(o.id).second) {
        st.warnings.push_back(StrCat("srun: warning: ", internal::OptName(o.id),
                                     " is accepted but has no effect in Loom"));
      }
      return absl::OkStatus();
    }
    return AsSrun(resolver.Apply(o, source, &st));
  };
  // cli_filter.lua's defaults, then the environment, the command line, and the filter's
  // last word over them.
  std::map<std::string, std::string> given;
  if (settings.cli_filter != nullptr) {
    StatusOr<std::vector<ParsedOption>> defaults =
        internal::DefaultsPass(*settings.cli_filter, internal::SrunOptionTable(), "srun");
    if (!defaults.ok()) return internal::WithExit(defaults.status(), error_exit);
    for (const ParsedOption& o : *defaults) RETURN_IF_ERROR(apply(o, Source::kScript));
    internal::AddToOptionMap(*defaults, &given);
  }
  for (const EnvVar& e : kSrunEnv) {
    auto it = env.find(e.name);
    if (it == env.end()) continue;
    if (e.flag && !internal::EnvFlagSet(it->second)) continue;
    const ParsedOption o{e.id, e.flag ? std::nullopt : std::optional<std::string>(it->second)};
    RETURN_IF_ERROR(apply(o, Source::kEnvironment));
    internal::AddToOptionMap({&o, 1}, &given);
  }
  for (const ParsedOption& o : cli.options) RETURN_IF_ERROR(apply(o, Source::kCommandLine));
  internal::AddToOptionMap(cli.options, &given);
  if (settings.cli_filter != nullptr) {
    StatusOr<std::vector<ParsedOption>> changed =
        internal::PreSubmitPass(*settings.cli_filter, given, internal::SrunOptionTable(), "srun");
    if (!changed.ok()) return internal::WithExit(changed.status(), error_exit);
    for (const ParsedOption& o : *changed) RETURN_IF_ERROR(apply(o, Source::kCommandLine));
  }
  if (in.action == SrunInput::Action::kCpuBindHelp) return in;
  if (in.step) {
    // Checked above like any srun's; said once each when they cannot act on a step.
    std::set<Opt> said;
    for (const ParsedOption& o : cli.options) {
      if (AppliesToStep(o.id) || IsIgnoredBySrun(o.id) || !said.insert(o.id).second) continue;
      st.warnings.push_back(StrCat("srun: warning: ", internal::OptName(o.id),
                                   " has no effect on a step inside an allocation in Loom (the "
                                   "job's own applies)"));
    }
  }
  // What a step reads from its allocation's environment when the command line does not say.
  bool shape_given = false;
  for (const ParsedOption& o : cli.options) {
    shape_given =
        shape_given || o.id == Opt::kNtasks || o.id == Opt::kNodes || o.id == Opt::kNtasksPerNode;
  }
  std::optional<int32_t> env_ntasks, env_per_node, env_cpt;
  if (in.step) {
    auto number = [&env](const char* name) -> std::optional<int32_t> {
      auto it = env.find(name);
      if (it == env.end()) return std::nullopt;
      std::optional<int64_t> n = core::ParseInt(it->second);
      if (!n || *n <= 0 || *n > 1 << 24) return std::nullopt;
      return static_cast<int32_t>(*n);
    };
    if (!shape_given) {
      env_ntasks = number("SLURM_NTASKS");
      env_per_node = number("SLURM_NTASKS_PER_NODE");
    }
    env_cpt = number("SLURM_CPUS_PER_TASK");
  }
  if (st.verbose > 0 && st.quiet) {
    return Fail("srun: error: don't specify both --verbose (-v) and --quiet (-Q)", error_exit);
  }
  RETURN_IF_ERROR(AsSrun(internal::CheckRequest(settings, error_exit, &st)));

  model::JobRequest& r = st.r;
  std::string submit_dir = settings.submit_dir;
  if (submit_dir.empty()) {
    if (auto it = env.find("PWD"); it != env.end()) submit_dir = it->second;
  }
  r.work_dir = st.chdir ? Absolute(*st.chdir, submit_dir) : submit_dir;
  r.name = st.job_name ? *st.job_name : BaseName(cli.rest[0]);
  r.requeue = false;  // an interactive job is never requeued
  r.environment = model::ResolveExport(r.export_policy, env);
  // The task prolog and epilog reach the nodes as Slurm's input variables for them, whatever
  // --export says; relative paths are the submitting directory's.
  for (auto [name, path] :
       {std::pair{"SLURM_TASK_PROLOG", task_prolog}, std::pair{"SLURM_TASK_EPILOG", task_epilog}}) {
    if (path.empty()) {
      r.environment.erase(name);
    } else {
      r.environment[name] = std::filesystem::path(Absolute(path, submit_dir)).lexically_normal();
    }
  }
  model::DeriveShape(&r, "srun", &st.warnings);
  // --hint or --threads-per-core given: the step's own (0: every thread), over the job's.
  std::optional<int32_t> threads_per_core;
  if (!r.hint.empty() || r.threads_per_core) {
    threads_per_core = model::StepThreadsPerCore(r.hint, r.threads_per_core);
  }

  if (in.step) {
    StepOptions& so = *in.step;
    so.ntasks = r.ntasks.value_or(env_ntasks.value_or(0));
    so.nodes = r.min_nodes.value_or(0);
    so.ntasks_per_node = r.ntasks_per_node.value_or(env_per_node.value_or(0));
    so.cpus_per_task = r.cpus_per_task.value_or(env_cpt.value_or(0));
    so.distribution = distribution;
    so.exclusive = r.sharing == model::SharingMode::kExclusive;
    so.kill_on_bad_exit = kill_on_bad_exit;
    so.cpu_bind = cpu_bind;
    so.gpu_bind = gpu_bind;
    so.gpus_per_task = st.gpus_per_task.value_or("");
    so.threads_per_core = threads_per_core;
  }
  model::SrunStep& step = r.srun.emplace();
  step.unbuffered = unbuffered;
  step.argv = cli.rest;
  if (!in.step) {
    // The job's only step is placed and bound as a step inside an allocation would be.
    step.cpu_bind = cpu_bind;
    step.gpu_bind = gpu_bind;
    step.distribution = distribution;
    step.gpus_per_task = st.gpus_per_task.value_or("");
    step.threads_per_core = threads_per_core;
  }
  in.ntasks = in.step && in.step->ntasks > 0
                  ? in.step->ntasks
                  : std::max(1, r.ntasks.value_or(r.ntasks_per_node
                                                      ? *r.ntasks_per_node * r.min_nodes.value_or(1)
                                                      : r.min_nodes.value_or(1)));
  in.out = ClassifyIo(st.output.value_or(""), in.ntasks);
  in.err = st.error ? ClassifyIo(*st.error, in.ntasks) : in.out;
  if (in.out.kind == IoTarget::Kind::kPerTask) {
    step.stdout_pattern = NodePattern(in.out, r.work_dir);
  }
  if (in.err.kind == IoTarget::Kind::kPerTask) {
    step.stderr_pattern = NodePattern(in.err, r.work_dir);
  }
  if (st.input) {
    // Standard input is not forwarded from srun: "all" and a task number read /dev/null.
    const IoTarget input = ClassifyIo(*st.input, in.ntasks);
    if (input.kind == IoTarget::Kind::kFile || input.kind == IoTarget::Kind::kPerTask) {
      step.stdin_pattern = NodePattern(input, r.work_dir);
    }
  }
  for (IoTarget* t : {&in.out, &in.err}) {
    if (t->kind == IoTarget::Kind::kFile) t->pattern = Absolute(t->pattern, submit_dir);
  }

  in.request = std::move(r);
  in.quiet = st.quiet;
  in.verbose = st.verbose;
  in.test_only = in.request.test_only;
  in.warnings = std::move(st.warnings);
  for (std::string& w : in.warnings) w = AsSrun(w);
  return in;
}

void ResolveMpi(std::string_view mpi_default, SrunInput* in) {
  const std::string type = in->mpi.empty() ? std::string(mpi_default) : in->mpi;
  in->request.environment["SLURM_MPI_TYPE"] = type;
  if (type.empty() || type == "none" || in->kill_on_bad_exit_given) return;
  in->kill_on_bad_exit = true;
  if (in->step) in->step->kill_on_bad_exit = true;
}

std::string MpiListText() {
  std::string out = "MPI plugin types are...\n";
  for (std::string_view t : conf::kMpiTypes) {
    if (t != "pmix_v4") out += StrCat("\t", t, "\n");
  }
  return out + "specific pmix plugin versions available: pmix_v4\n";
}

std::string CpuBindHelpText() {
  return "CPU bind options:\n"
         "    --cpu-bind=         Bind tasks to CPUs\n"
         "        q[uiet]         quietly bind before task runs (default)\n"
         "        v[erbose]       verbosely report binding before task runs\n"
         "        no[ne]          don't bind tasks to CPUs (default)\n"
         "        rank            bind by task rank\n"
         "        map_cpu:<list>  specify a CPU ID binding for each task\n"
         "                        where <list> is <cpuid1>,<cpuid2>,...<cpuidN>\n"
         "        mask_cpu:<list> specify a CPU ID binding mask for each task\n"
         "                        where <list> is <mask1>,<mask2>,...<maskN>\n"
         "        rank_ldom       bind task by rank to CPUs in a NUMA locality domain\n"
         "        map_ldom:<list> specify a NUMA locality domain ID for each task\n"
         "                        where <list> is <ldom1>,<ldom2>,...<ldomN>\n"
         "        mask_ldom:<list>specify a NUMA locality domain ID mask for each task\n"
         "                        where <list> is <mask1>,<mask2>,...<maskN>\n"
         "        sockets         auto-generated masks bind to sockets\n"
         "        cores           auto-generated masks bind to cores\n"
         "        threads         auto-generated masks bind to threads\n"
         "        ldoms           auto-generated masks bind to NUMA locality domains\n"
         "        boards          auto-generated masks bind to boards\n"
         "        help            show this help message\n";
}

std::string SrunHelpText() {
  return "Usage: srun [OPTIONS(0)...] executable(0) [args(0)...]\n\n"
         "Loom's srun runs the command as the tasks of a new job allocation: -N, -n,\n"
         "--ntasks-per-node, -c, --mem*, --gres, --gpus*, -t, -p, -J, -w, --exclusive, -C,\n"
         "--export, -D and the other options sbatch takes, plus -l/--label, -u/--unbuffered,\n"
         "-o/-e/-i patterns (%t %n %N per task) and -Q. docs/user/srun.md says what each does\n"
         "in Loom.\n";
}

}  // namespace loom::cli::submit
