// TaskProlog and TaskEpilog (slurm.conf) and srun's --task-prolog and --task-epilog (which
// reach the node as SLURM_TASK_PROLOG and SLURM_TASK_EPILOG in the step's environment, Slurm's
// input variables for them): programs run by loom-stepd as the job's user, in the task's
// working directory and with its environment, before each task starts and after it ends.
// The site's runs first, then the user's.
//
// What a task prolog writes to its standard output changes the task, one line each:
// `export NAME=value` sets a variable, `unset NAME` removes one, `print TEXT` writes TEXT
// (and a newline) to the task's standard output. Other lines are ignored.
//
// Pure values and functions, but for the Run* calls, which start the programs and wait.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/run_program.h"
#include "core/status.h"
#include "stepd/job_env.h"
#include "stepd/spawn.h"

namespace loom::stepd {

struct TaskScripts {
  std::vector<std::string> prologs;  // in the order they run
  std::vector<std::string> epilogs;
  bool empty() const { return prologs.empty() && epilogs.empty(); }
};

// The programs for a task of `environment`: the site's (NodeSettings::task_prolog, ...),
// then the user's (SLURM_TASK_PROLOG, SLURM_TASK_EPILOG). Glob patterns name every match.
TaskScripts TaskScriptsFor(const NodeSettings& settings,
                           const std::map<std::string, std::string>& environment);

// What a task prolog's output asks for.
struct TaskPrologOutput {
  std::vector<std::pair<std::string, std::string>> exports;
  std::vector<std::string> unsets;
  std::string printed;  // the `print` lines' text, each with its newline
};
TaskPrologOutput ParseTaskPrologOutput(std::string_view out);

// How a task's prologs and epilogs run: as its user, in its directory, with its environment.
core::ProgramRun TaskProgramRun(const ProcessSpec& spec);

// Runs `programs` for the task `spec` is about to start and applies their exports and unsets
// to spec->environment. Returns what they printed. A program that fails (or cannot run) is
// an error naming it: the task does not start.
StatusOr<std::string> RunTaskPrologs(const std::vector<std::string>& programs, ProcessSpec* spec);
// Runs `programs` after the task ended; a failure is logged, the task's end stands.
void RunTaskEpilogs(const std::vector<std::string>& programs, const core::ProgramRun& run);

}  // namespace loom::stepd
