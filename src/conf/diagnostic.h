// A message about a configuration file tied to the place it came from (file:line and key):
// the warnings a parse returns alongside its result, and the errors it folds into its
// Status. Pure value; thread-compatible.
#pragma once

#include <string>
#include <vector>

namespace loom::conf {

// Where a configuration item was written. `line` is 1-based; 0 means "the file as a whole".
struct SourceLocation {
  std::string file;
  int line = 0;

  // "file:line", or just "file" when line is 0.
  std::string ToString() const;
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

struct Diagnostic {
  enum class Severity { kWarning, kError };

  Severity severity = Severity::kWarning;
  SourceLocation location;
  std::string key;      // the configuration key concerned, as the file spells it; may be empty
  std::string message;  // complete sentence(s) without the location prefix

  // "file:line: warning: message" / "file:line: error: message".
  std::string ToString() const;
};

// Joins diagnostics one per line, in order.
std::string JoinDiagnostics(const std::vector<Diagnostic>& diagnostics);

}  // namespace loom::conf
