#include "cli/submit/salloc_options.h"

#include "cli/submit/internal/cli_filter_options.h"
#include "cli/submit/internal/sbatch_apply.h"
#include "cli/submit/internal/sbatch_checks.h"
#include "cli/submit/internal/sbatch_getopt.h"
#include "cli/submit/internal/sbatch_values.h"
#include "core/strings.h"

namespace loom::cli::submit {
namespace {

using core::StrCat;
using internal::Fail;
using internal::Opt;
using internal::ParsedOption;
using internal::Source;

// The shared code speaks as sbatch; salloc says the same as itself.
std::string AsSalloc(std::string_view text) {
  std::string out;
  for (std::string_view line : core::Split(text, '\n')) {
    if (!out.empty()) out += '\n';
    if (line.starts_with("sbatch:")) {
      out += "salloc:";
      line.remove_prefix(7);
    } else if (line.starts_with("srun:")) {
      out += "salloc:";
      line.remove_prefix(5);
    }
    out += line;
  }
  for (const char* help : {"\"sbatch --help\"", "\"srun --help\""}) {
    const std::string h = help;
    for (size_t at = out.find(h); at != std::string::npos; at = out.find(h, at)) {
      out.replace(at, h.size(), "\"salloc --help\"");
    }
  }
  return out;
}

Status AsSalloc(const Status& s) {
  if (s.ok()) return s;
  return Fail(AsSalloc(std::string(s.message())), SbatchExitCode(s));
}

// Options of srun's that say how tasks run: a salloc runs no tasks of its own.
bool IsStepOption(Opt id) {
  switch (id) {
    case Opt::kLabel:
    case Opt::kUnbuffered:
    case Opt::kQuitOnInterrupt:
    case Opt::kCpuBind:
    case Opt::kKillOnBadExit:
    case Opt::kMpi:
    case Opt::kMultiProg:
    case Opt::kPty:
    case Opt::kJobid:
    case Opt::kOverlap:
    case Opt::kExact:
    case Opt::kBcast:
    case Opt::kCompress:
    case Opt::kDisableStatus:
    case Opt::kEpilog:
    case Opt::kProlog:
    case Opt::kTaskEpilog:
    case Opt::kTaskProlog:
    case Opt::kRelative:
    case Opt::kResvPorts:
    case Opt::kSendLibs:
    case Opt::kSlurmdDebug:
    case Opt::kThreads:
    case Opt::kWaitSeconds:
    case Opt::kNoAllocate:
    case Opt::kImmediate:
      return true;
    default:
      return false;
  }
}

struct EnvVar {
  const char* name;
  Opt id;
};
constexpr EnvVar kSallocEnv[] = {
    {"SALLOC_ACCOUNT", Opt::kAccount},
    {"SALLOC_CONSTRAINT", Opt::kConstraint},
    {"SALLOC_PARTITION", Opt::kPartition},
    {"SALLOC_QOS", Opt::kQos},
    {"SALLOC_RESERVATION", Opt::kReservation},
    {"SALLOC_TIMELIMIT", Opt::kTime},
    {"SALLOC_WCKEY", Opt::kWckey},
};

}  // namespace

StatusOr<SallocInput> ParseSalloc(std::span<const std::string> argv,
                                  const std::map<std::string, std::string>& env, int64_t now,
                                  const SbatchSettings& settings) {
  SallocInput in;
  if (auto it = env.find("SLURM_EXIT_ERROR"); it != env.end()) {
    std::optional<int64_t> code = internal::SlurmInt(it->second);
    if (code && *code != 0) in.error_exit = static_cast<int>(*code);
  }
  const int error_exit = in.error_exit;
  internal::ScanResult cli = internal::ScanOptions(argv.empty() ? argv : argv.subspan(1),
                                                   internal::SrunOptionTable(), "salloc");
  for (const ParsedOption& o : cli.options) {
    if (o.id == Opt::kHelp || o.id == Opt::kUsage || o.id == Opt::kVersion) {
      in.action = o.id == Opt::kHelp    ? SallocInput::Action::kHelp
                  : o.id == Opt::kUsage ? SallocInput::Action::kUsage
                                        : SallocInput::Action::kVersion;
      return in;
    }
  }
  if (!cli.error.ok()) {
    return Fail(StrCat(AsSalloc(std::string(cli.error.message())),
                       "\nTry \"salloc --help\" for more information"),
                error_exit);
  }
  internal::Resolver resolver(now, settings);
  internal::State st;
  auto apply = [&](const ParsedOption& o, Source source) -> Status {
    if (IsStepOption(o.id)) {
      return Fail(StrCat("salloc: error: ", internal::OptName(o.id),
                         " is an option of srun's: salloc runs no tasks; give it to srun "
                         "inside the allocation"),
                  error_exit);
    }
    return AsSalloc(resolver.Apply(o, source, &st));
  };
  // cli_filter.lua's defaults, then the environment, the command line, and the filter's
  // last word over them.
  std::map<std::string, std::string> given;
  if (settings.cli_filter != nullptr) {
    StatusOr<std::vector<ParsedOption>> defaults =
        internal::DefaultsPass(*settings.cli_filter, internal::SrunOptionTable(), "salloc");
    if (!defaults.ok()) return internal::WithExit(defaults.status(), error_exit);
    for (const ParsedOption& o : *defaults) RETURN_IF_ERROR(apply(o, Source::kScript));
    internal::AddToOptionMap(*defaults, &given);
  }
  for (const EnvVar& e : kSallocEnv) {
    auto it = env.find(e.name);
    if (it == env.end()) continue;
    const ParsedOption o{e.id, it->second};
    RETURN_IF_ERROR(apply(o, Source::kEnvironment));
    internal::AddToOptionMap({&o, 1}, &given);
  }
  for (const ParsedOption& o : cli.options) RETURN_IF_ERROR(apply(o, Source::kCommandLine));
  internal::AddToOptionMap(cli.options, &given);
  if (settings.cli_filter != nullptr) {
    StatusOr<std::vector<ParsedOption>> changed =
        internal::PreSubmitPass(*settings.cli_filter, given, internal::SrunOptionTable(), "salloc");
    if (!changed.ok()) return internal::WithExit(changed.status(), error_exit);
    for (const ParsedOption& o : *changed) RETURN_IF_ERROR(apply(o, Source::kCommandLine));
  }
  if (st.verbose > 0 && st.quiet) {
    return Fail("salloc: error: don't specify both --verbose (-v) and --quiet (-Q)", error_exit);
  }
  RETURN_IF_ERROR(AsSalloc(internal::CheckRequest(settings, error_exit, &st)));

  model::JobRequest& r = st.r;
  std::string submit_dir = settings.submit_dir;
  if (submit_dir.empty()) {
    if (auto it = env.find("PWD"); it != env.end()) submit_dir = it->second;
  }
  r.work_dir = st.chdir ? internal::Absolute(*st.chdir, submit_dir) : submit_dir;
  in.command = cli.rest;
  std::string shell = "/bin/sh";
  if (auto it = env.find("SHELL"); it != env.end() && !it->second.empty()) shell = it->second;
  const std::string program = in.command.empty() ? shell : in.command[0];
  r.name = st.job_name ? *st.job_name : internal::BaseName(program);
  r.requeue = false;
  r.allocation_only = true;
  r.environment = model::ResolveExport(r.export_policy, env);
  model::DeriveShape(&r, "salloc", &st.warnings);
  in.request = std::move(r);
  in.quiet = st.quiet;
  in.warnings = std::move(st.warnings);
  for (std::string& w : in.warnings) w = AsSalloc(w);
  return in;
}

std::string SallocHelpText() {
  return "Usage: salloc [OPTIONS(0)...] [command(0) [args(0)...]]\n\n"
         "Loom's salloc obtains a job allocation (-N, -n, --ntasks-per-node, -c, --mem*,\n"
         "--gres, --gpus*, -t, -p, -J, -w, --exclusive, -C and the other options sbatch\n"
         "takes), runs the command (default: $SHELL) on this host with the job's SLURM_*\n"
         "variables, and releases the allocation when it exits. srun inside it runs steps\n"
         "on the allocated nodes. docs/user/salloc.md says what each option does in Loom.\n";
}

}  // namespace loom::cli::submit
