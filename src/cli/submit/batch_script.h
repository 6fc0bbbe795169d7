// The batch script as sbatch reads it: the checks it makes before submitting, the #SBATCH
// directives at its top, and the script --wrap generates. Pure functions; thread-safe.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::cli::submit {

// Checks a script the way sbatch does: not empty, not only whitespace, starting with "#!",
// no NUL character, no DOS line breaks. On failure returns InvalidArgumentError whose message
// is what sbatch prints, one "sbatch: error: ..." line per line.
Status CheckBatchScript(std::string_view script);

// One #SBATCH line, split into words the way sbatch splits it.
struct Directive {
  int line = 0;  // 1-based
  std::vector<std::string> words;
  friend bool operator==(const Directive&, const Directive&) = default;
};

// The #SBATCH directives of `script`: lines that start with "#SBATCH" (in the first column),
// up to the first line that is neither blank nor a comment; later #SBATCH lines are ignored,
// as sbatch ignores them. Words are separated by blanks; single and double quotes group, a
// backslash takes the next character literally, and an unquoted '#' ends the line.
// `script_name` names the script in errors (sbatch says "stdin" for standard input). An
// unterminated quote is an error: "sbatch: fatal: NAME: line N: Unmatched `\"` in [...]".
StatusOr<std::vector<Directive>> ExtractDirectives(std::string_view script,
                                                   std::string_view script_name);

// The script sbatch submits for --wrap=COMMAND.
std::string WrapCommand(std::string_view command);

// What sbatch records as a script job's command (scontrol's Command=): the script's path as
// given when it starts with '.' or '/'; otherwise the first file a search finds, in the
// job's working directory `work_dir` and then along `path_env` ($PATH); failing that, the
// path as given. Then the script's arguments, each after one space. `exists` says whether
// a path names a file.
std::string RecordedCommand(std::string_view script, std::span<const std::string> args,
                            std::string_view work_dir, std::string_view path_env,
                            const std::function<bool(const std::string&)>& exists);

}  // namespace loom::cli::submit
