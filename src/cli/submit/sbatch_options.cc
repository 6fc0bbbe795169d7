#include "cli/submit/sbatch_options.h"

#include <algorithm>
#include <set>

#include "cli/submit/batch_script.h"
#include "cli/submit/internal/cli_filter_options.h"
#include "cli/submit/internal/sbatch_apply.h"
#include "cli/submit/internal/sbatch_checks.h"
#include "cli/submit/internal/sbatch_environment.h"
#include "cli/submit/internal/sbatch_getopt.h"
#include "cli/submit/internal/sbatch_values.h"
#include "core/strings.h"

namespace loom::cli::submit {
namespace {

using core::StrCat;
using internal::Absolute;
using internal::BaseName;
using internal::EnvironmentOptions;
using internal::EnvOption;
using internal::Fail;
using internal::IsMemOption;
using internal::kFatalExit;
using internal::Opt;
using internal::ParsedOption;
using internal::ResetFlag;
using internal::Resolver;
using internal::SlurmInt;
using internal::Source;
using internal::State;
using internal::WithExit;
using model::JobRequest;

std::string IoPath(std::string_view path, std::string_view base) {
  if (path == "none") return "/dev/null";
  return Absolute(path, base);
}

}  // namespace

SbatchCommandLine ScanSbatchCommandLine(std::span<const std::string> argv) {
  SbatchCommandLine out;
  if (argv.empty()) return out;
  internal::ScanResult scan = internal::ScanOptions(argv.subspan(1));
  for (const ParsedOption& o : scan.options) {
    if (o.id == Opt::kWrap) out.wrap = true;
  }
  if (!scan.rest.empty()) {
    out.script_path = scan.rest[0];
    out.script_args.assign(scan.rest.begin() + 1, scan.rest.end());
  }
  return out;
}

StatusOr<SbatchInput> ParseSbatch(std::span<const std::string> argv, std::string_view script,
                                  const std::map<std::string, std::string>& env, int64_t now,
                                  const SbatchSettings& settings) {
  SbatchInput in;
  std::vector<std::string> early_warnings;
  if (auto it = env.find("SLURM_EXIT_ERROR"); it != env.end()) {
    std::optional<int64_t> code = SlurmInt(it->second);
    if (code && *code != 0) {
      in.error_exit = static_cast<int>(*code);
    } else {
      early_warnings.push_back("sbatch: error: SLURM_EXIT_ERROR has zero value");
    }
  }
  const int error_exit = in.error_exit;
  Resolver resolver(now, settings);

  // 1. The command line, in order, as sbatch's first pass reads it.
  internal::ScanResult cli = internal::ScanOptions(argv.empty() ? argv : argv.subspan(1));
  {
    State scratch;
    for (const ParsedOption& o : cli.options) {
      RETURN_IF_ERROR(resolver.Apply(o, Source::kCommandLine, &scratch));
      if (scratch.action != SbatchInput::Action::kSubmit &&
          scratch.action != SbatchInput::Action::kGresHelp) {
        in.action = scratch.action;
        return in;
      }
    }
    if (!cli.error.ok()) {
      return Fail(
          StrCat(std::string(cli.error.message()), "\nTry \"sbatch --help\" for more information"),
          kOptionErrorExit);
    }
    if (scratch.action == SbatchInput::Action::kGresHelp) {
      in.action = scratch.action;
      return in;
    }
  }
  {
    // -v (or SBATCH_DEBUG=1) with -Q on the command line is refused at once.
    auto env_debug = env.find("SBATCH_DEBUG");
    bool verbose = (env_debug != env.end() && env_debug->second == "1") ||
                   std::any_of(cli.options.begin(), cli.options.end(),
                               [](const ParsedOption& o) { return o.id == Opt::kVerbose; });
    bool quiet = std::any_of(cli.options.begin(), cli.options.end(),
                             [](const ParsedOption& o) { return o.id == Opt::kQuiet; });
    if (verbose && quiet) {
      return Fail("sbatch: error: don't specify both --verbose (-v) and --quiet (-Q)", error_exit);
    }
  }
  bool wrap = std::any_of(cli.options.begin(), cli.options.end(),
                          [](const ParsedOption& o) { return o.id == Opt::kWrap; });
  if (!cli.rest.empty() && cli.rest[0] == ":") {
    return Fail(
        "sbatch: error: heterogeneous jobs (option groups separated by ':') are not "
        "supported by Loom; submit the components as separate jobs",
        error_exit);
  }
  if (wrap && !cli.rest.empty()) {
    return Fail("sbatch: error: Script arguments not permitted with --wrap option", error_exit);
  }

  // 2. The script and its #SBATCH directives, over cli_filter.lua's defaults.
  State st;
  st.warnings = early_warnings;
  std::map<std::string, std::string> given;  // every source's options, for pre_submit
  if (settings.cli_filter != nullptr) {
    StatusOr<std::vector<ParsedOption>> defaults =
        internal::DefaultsPass(*settings.cli_filter, internal::OptionTable(), "sbatch");
    if (!defaults.ok()) return WithExit(defaults.status(), error_exit);
    for (const ParsedOption& o : *defaults)
      RETURN_IF_ERROR(resolver.Apply(o, Source::kScript, &st));
    internal::AddToOptionMap(*defaults, &given);
  }
  std::string script_text;
  std::string script_name = cli.rest.empty() ? "stdin" : cli.rest[0];
  if (!wrap) {
    if (Status s = CheckBatchScript(script); !s.ok()) return WithExit(s, error_exit);
    StatusOr<std::vector<Directive>> directives = ExtractDirectives(script, script_name);
    if (!directives.ok()) return WithExit(directives.status(), kFatalExit);
    for (const Directive& d : *directives) {
      internal::ScanResult line = internal::ScanOptions(d.words);
      for (const ParsedOption& o : line.options) {
        RETURN_IF_ERROR(resolver.Apply(o, Source::kScript, &st));
      }
      internal::AddToOptionMap(line.options, &given);
      if (!line.error.ok()) {
        return Fail(StrCat(std::string(line.error.message()),
                           "\nTry \"sbatch --help\" for more information"),
                    kOptionErrorExit);
      }
      if (!line.rest.empty()) {
        return Fail(
            StrCat("sbatch: error: Invalid directive found in batch script: ", line.rest[0]),
            kOptionErrorExit);
      }
    }
    script_text = std::string(script);
  }

  // 3. SBATCH_* variables: above the script, below the command line. A memory option from
  // the environment gives way to a different one set by the script or the command line.
  std::vector<EnvOption> env_options = EnvironmentOptions(env);
  std::set<Opt> env_mem;
  for (const EnvOption& e : env_options) {
    if (IsMemOption(e.option.id)) env_mem.insert(e.option.id);
  }
  if (env_mem.size() > 1) {
    return Fail(
        "sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE "
        "are mutually exclusive.",
        kFatalExit);
  }
  bool cli_mem = std::any_of(cli.options.begin(), cli.options.end(),
                             [](const ParsedOption& o) { return IsMemOption(o.id); });
  for (const EnvOption& e : env_options) {
    const ParsedOption& o = e.option;
    if (e.reset) {
      ResetFlag(o.id, &st);
      continue;
    }
    if (IsMemOption(o.id)) {
      bool other_set = (o.id != Opt::kMem && st.r.mem_per_node_mb) ||
                       (o.id != Opt::kMemPerCpu && st.r.mem_per_cpu_mb) ||
                       (o.id != Opt::kMemPerGpu && st.r.mem_per_gpu_mb);
      if (cli_mem || other_set) continue;
    }
    RETURN_IF_ERROR(resolver.Apply(o, Source::kEnvironment, &st));
    internal::AddToOptionMap({&o, 1}, &given);
  }

  // 4. The command line again, over everything.
  for (const ParsedOption& o : cli.options) {
    RETURN_IF_ERROR(resolver.Apply(o, Source::kCommandLine, &st));
  }
  internal::AddToOptionMap(cli.options, &given);

  // cli_filter.lua's last word, over everything.
  if (settings.cli_filter != nullptr) {
    StatusOr<std::vector<ParsedOption>> changed =
        internal::PreSubmitPass(*settings.cli_filter, given, internal::OptionTable(), "sbatch");
    if (!changed.ok()) return WithExit(changed.status(), error_exit);
    for (const ParsedOption& o : *changed)
      RETURN_IF_ERROR(resolver.Apply(o, Source::kCommandLine, &st));
  }

  // 5. and 6. The checks sbatch makes once every source is in, and what the controller
  // would reject.
  RETURN_IF_ERROR(internal::CheckRequest(settings, error_exit, &st));

  // 7. Assemble the request.
  JobRequest& r = st.r;
  std::string submit_dir = settings.submit_dir;
  if (submit_dir.empty()) {
    if (auto it = env.find("PWD"); it != env.end()) submit_dir = it->second;
  }
  r.work_dir = st.chdir ? Absolute(*st.chdir, submit_dir) : submit_dir;
  if (st.output) r.stdout_pattern = IoPath(*st.output, r.work_dir);
  if (st.error) r.stderr_pattern = IoPath(*st.error, r.work_dir);
  if (st.input) r.stdin_pattern = IoPath(*st.input, r.work_dir);
  if (st.wrap) {
    r.wrap = *st.wrap;
    r.script = WrapCommand(*st.wrap);
  } else {
    r.script = std::move(script_text);
    if (!cli.rest.empty()) r.script_args.assign(cli.rest.begin() + 1, cli.rest.end());
  }
  if (st.job_name) {
    r.name = *st.job_name;
  } else if (st.wrap) {
    r.name = "wrap";
  } else {
    r.name = cli.rest.empty() ? "sbatch" : BaseName(cli.rest[0]);
  }
  r.environment = model::ResolveExport(r.export_policy, env);
  model::DeriveShape(&r, "sbatch", &st.warnings);

  in.request = std::move(r);
  in.parsable = st.parsable;
  in.wait = st.wait;
  in.quiet = st.quiet;
  in.verbose = st.verbose;
  in.warnings = std::move(st.warnings);
  return in;
}

std::string GresHelpText(std::span<const std::string> gres_types) {
  std::string out = "Valid gres options are:\n";
  for (const std::string& t : gres_types) out += StrCat(t, "[[:type]:count]\n");
  return out;
}

}  // namespace loom::cli::submit
