// The lexical layer of slurm.conf: physical lines -> logical lines (comments stripped,
// `\` continuations joined) -> `Key=Value` pairs, with Include lines expanded into the
// statements of the included files. Pure functions plus a reader that is used once;
// thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "conf/diagnostic.h"
#include "conf/include_resolver.h"
#include "core/status.h"

namespace loom::conf::internal {

struct KeyValue {
  std::string key;    // as written (case preserved for messages)
  std::string value;  // quotes removed
  bool quoted = false;
};

// One logical line of a configuration file with its pairs.
struct Statement {
  SourceLocation location;
  std::vector<KeyValue> pairs;
};

struct LogicalLine {
  int line = 0;  // first physical line, 1-based
  std::string text;
};

// Splits `text` into logical lines: `#` starts a comment except inside double quotes or
// written as `\#`; a line ending in `\` (after its comment is removed) continues on the next.
// Blank logical lines are dropped.
std::vector<LogicalLine> SplitLogicalLines(std::string_view text);

// Splits a logical line into `Key=Value` pairs separated by whitespace. Whitespace may
// surround `=`; a value in double quotes may contain whitespace and `#`.
// Errors describe the offending token.
StatusOr<std::vector<KeyValue>> TokenizeLine(std::string_view line);

// If `line` is an Include line ("Include <path>", any case), returns its path argument
// (quotes removed, possibly empty); otherwise false.
bool ParseIncludeLine(std::string_view line, std::string* path);

// Directory part of a path ("/etc/slurm/slurm.conf" -> "/etc/slurm", "x.conf" -> "").
std::string DirName(std::string_view path);
// Joins `dir` and a relative `path`; returns `path` when it is absolute or `dir` is empty.
std::string JoinPath(std::string_view dir, std::string_view path);

// Reads a main file and, recursively, the files its Include lines name, producing the
// statements of all of them in order. Include paths are relative to the including file's
// directory; when nothing is found there, the main file's directory is tried (where Slurm
// looks). `%c` in an Include path is replaced by the ClusterName set before that line.
// Include cycles and nesting deeper than kMaxIncludeDepth are errors.
class StatementReader {
 public:
  static constexpr int kMaxIncludeDepth = 16;

  StatementReader(const IncludeResolver& resolver, std::vector<Diagnostic>* errors,
                  std::vector<Diagnostic>* warnings)
      : resolver_(resolver), errors_(errors), warnings_(warnings) {}

  // Appends the statements of `text` (named `file_name`) and of its includes to `out`, and
  // the names of the files read to `files`.
  void Read(std::string_view text, std::string_view file_name, std::vector<Statement>* out,
            std::vector<std::string>* files);

 private:
  void ReadFile(std::string_view text, const std::string& name, std::vector<Statement>* out,
                std::vector<std::string>* files);
  void Include(const SourceLocation& at, std::string_view arg, const std::string& including,
               std::vector<Statement>* out, std::vector<std::string>* files);
  void Error(const SourceLocation& at, std::string message);

  const IncludeResolver& resolver_;
  std::vector<Diagnostic>* errors_;
  std::vector<Diagnostic>* warnings_;
  std::string main_dir_;
  std::string cluster_name_;        // last ClusterName seen, for %c
  std::vector<std::string> stack_;  // files being read, outermost first
};

}  // namespace loom::conf::internal
