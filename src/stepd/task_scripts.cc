#include "stepd/task_scripts.h"

#include "core/log.h"
#include "core/strings.h"

namespace loom::stepd {
namespace {

using core::StrCat;

void AddAll(const std::string& setting, std::vector<std::string>* out) {
  for (std::string& p : core::ExpandProgramPattern(setting)) out->push_back(std::move(p));
}

}  // namespace

TaskScripts TaskScriptsFor(const NodeSettings& settings,
                           const std::map<std::string, std::string>& environment) {
  TaskScripts s;
  AddAll(settings.task_prolog, &s.prologs);
  AddAll(settings.task_epilog, &s.epilogs);
  if (auto it = environment.find("SLURM_TASK_PROLOG"); it != environment.end()) {
    AddAll(it->second, &s.prologs);
  }
  if (auto it = environment.find("SLURM_TASK_EPILOG"); it != environment.end()) {
    AddAll(it->second, &s.epilogs);
  }
  return s;
}

TaskPrologOutput ParseTaskPrologOutput(std::string_view out) {
  TaskPrologOutput parsed;
  while (!out.empty()) {
    const size_t end = out.find('\n');
    std::string_view line = out.substr(0, end);
    out = end == std::string_view::npos ? std::string_view() : out.substr(end + 1);
    if (line.starts_with("export ")) {
      std::string_view rest = core::Trim(line.substr(7));
      const size_t eq = rest.find('=');
      if (eq == std::string_view::npos || eq == 0) continue;
      parsed.exports.emplace_back(std::string(rest.substr(0, eq)),
                                  std::string(rest.substr(eq + 1)));
    } else if (line.starts_with("unset ")) {
      std::string_view name = core::Trim(line.substr(6));
      if (!name.empty()) parsed.unsets.emplace_back(name);
    } else if (line.starts_with("print ")) {
      parsed.printed.append(line.substr(6)).push_back('\n');
    }
  }
  return parsed;
}

core::ProgramRun TaskProgramRun(const ProcessSpec& spec) {
  core::ProgramRun run;
  for (const auto& [name, value] : spec.environment) run.env.push_back(StrCat(name, "=", value));
  run.work_dir = spec.work_dir.empty() ? "/" : spec.work_dir;
  if (spec.who.become_user) {
    core::ProgramRun::User u;
    u.uid = spec.who.user.uid;
    u.gid = spec.who.gid;
    u.groups.assign(spec.who.groups.begin(), spec.who.groups.end());
    run.as_user = std::move(u);
  }
  return run;
}

StatusOr<std::string> RunTaskPrologs(const std::vector<std::string>& programs, ProcessSpec* spec) {
  std::string printed;
  for (const std::string& program : programs) {
    core::ProgramRun run = TaskProgramRun(*spec);
    run.path = program;
    run.capture_stdout = true;
    StatusOr<core::ProgramResult> r = core::RunProgram(run);
    if (!r.ok())
      return absl::FailedPreconditionError(
          StrCat("task prolog ", std::string(r.status().message())));
    if (!r->ok()) {
      return absl::FailedPreconditionError(
          StrCat("task prolog ", program, " failed: ", r->Describe(0)));
    }
    TaskPrologOutput asked = ParseTaskPrologOutput(r->out);
    for (auto& [name, value] : asked.exports) spec->environment[name] = std::move(value);
    for (const std::string& name : asked.unsets) spec->environment.erase(name);
    printed += asked.printed;
  }
  return printed;
}

void RunTaskEpilogs(const std::vector<std::string>& programs, const core::ProgramRun& base) {
  for (const std::string& program : programs) {
    core::ProgramRun run = base;
    run.path = program;
    StatusOr<core::ProgramResult> r = core::RunProgram(run);
    if (!r.ok()) {
      core::LogError("task epilog: {}", r.status().message());
    } else if (!r->ok()) {
      core::LogError("task epilog {} failed: {}", program, r->Describe(0));
    }
  }
}

}  // namespace loom::stepd
