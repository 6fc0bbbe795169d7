#include "cli/submit/batch_script.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace loom::cli::submit {
namespace {

using core::StrCat;

bool IsBlank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

constexpr std::string_view kMagic = "#SBATCH";

// Splits the text after "#SBATCH" on one line into words.
Status SplitDirective(std::string_view line, int line_number, std::string_view script_name,
                      std::vector<std::string>* words) {
  size_t i = kMagic.size();
  while (i < line.size() && IsBlank(line[i])) ++i;
  while (i < line.size()) {
    size_t segment = i;  // where this word's text starts, blanks included
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i >= line.size() || line[i] == '#') return absl::OkStatus();
    std::string word;
    char quote = 0;
    bool quoted = false, done = false;
    while (i < line.size() && !done) {
      char c = line[i];
      if (quote == 0 && IsBlank(c)) break;
      if (c == '\\') {
        if (i + 1 < line.size() && !(quote == 0 && IsBlank(line[i + 1]))) {
          word += line[i + 1];
          i += 2;
        } else {
          ++i;
        }
        continue;
      }
      if (quote == 0 && c == '#') {
        done = true;  // a comment: the rest of the line is not read
        break;
      }
      if (c == '"' || c == '\'') {
        if (quote == 0) {
          quote = c;
          quoted = true;
        } else if (quote == c) {
          quote = 0;
        } else {
          word += c;
        }
        ++i;
        continue;
      }
      word += c;
      ++i;
    }
    if (quote != 0) {
      return absl::InvalidArgumentError(StrCat("sbatch: fatal: ", script_name, ": line ",
                                               line_number, ": Unmatched `", quote, "` in [",
                                               line.substr(segment), "]"));
    }
    if (!word.empty() || quoted) words->push_back(std::move(word));
    if (done) break;
  }
  return absl::OkStatus();
}

}  // namespace

Status CheckBatchScript(std::string_view script) {
  auto error = [](std::string_view text) { return absl::InvalidArgumentError(std::string(text)); };
  if (script.empty()) return error("sbatch: error: Batch script is empty!");
  if (std::all_of(script.begin(), script.end(), IsBlank)) {
    return error("sbatch: error: Batch script contains only whitespace!");
  }
  if (script.substr(0, 2) != "#!") {
    return error(
        "sbatch: error: This does not look like a batch script.  The first\n"
        "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
        "sbatch: error: For instance: #!/bin/sh");
  }
  if (script.find('\0') != std::string_view::npos) {
    return error(
        "sbatch: error: The Slurm controller does not allow scripts that\n"
        "sbatch: error: contain a NULL character '\\0'.");
  }
  if (script.find("\r\n") != std::string_view::npos) {
    return error(
        "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
        "sbatch: error: instead of expected UNIX line breaks (\\n).");
  }
  return absl::OkStatus();
}

StatusOr<std::vector<Directive>> ExtractDirectives(std::string_view script,
                                                   std::string_view script_name) {
  std::vector<Directive> out;
  int line_number = 0;
  size_t start = 0;
  while (start < script.size()) {
    size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.substr(0, kMagic.size()) == kMagic) {
      Directive d{line_number, {}};
      RETURN_IF_ERROR(SplitDirective(line, line_number, script_name, &d.words));
      out.push_back(std::move(d));
      continue;
    }
    std::string_view body = core::Trim(line);
    if (body.empty() || body.front() == '#') continue;  // blank or a comment
    break;                                              // the first command: directives end here
  }
  return out;
}

std::string WrapCommand(std::string_view command) {
  return StrCat("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n", command, "\n");
}

std::string RecordedCommand(std::string_view script, std::span<const std::string> args,
                            std::string_view work_dir, std::string_view path_env,
                            const std::function<bool(const std::string&)>& exists) {
  std::string out(script);
  if (!script.empty() && script.front() != '.' && script.front() != '/') {
    std::vector<std::string> dirs{std::string(work_dir)};
    for (std::string_view dir : core::Split(path_env, ':')) {
      if (dir.empty()) continue;
      dirs.push_back(dir.front() == '.' ? StrCat(work_dir, "/", dir) : std::string(dir));
    }
    for (const std::string& dir : dirs) {
      std::string candidate = StrCat(dir, "/", script);
      if (exists(candidate)) {
        out = std::move(candidate);
        break;
      }
    }
  }
  for (const std::string& a : args) out += StrCat(" ", a);
  return out;
}

}  // namespace loom::cli::submit
