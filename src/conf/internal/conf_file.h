// What the smaller Slurm files (gres.conf, topology.conf) share: reading `Key=Value` lines
// without Include, matching keys case-insensitively with a suggestion for typos, and
// collecting file:line errors and warnings into one Status. Used by one parse at a time;
// thread-compatible.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "conf/diagnostic.h"
#include "conf/internal/lexer.h"
#include "core/status.h"

namespace loom::conf::internal {

// Errors and warnings of one parse. Errors beyond kMaxErrors are dropped (noise).
class Diagnostics {
 public:
  static constexpr size_t kMaxErrors = 100;

  // `warnings` may be null: warnings are then dropped.
  explicit Diagnostics(std::vector<Diagnostic>* warnings) : warnings_(warnings) {}

  void Error(const SourceLocation& at, std::string_view key, std::string message);
  void Warn(const SourceLocation& at, std::string_view key, std::string message);
  bool has_errors() const { return !errors_.empty(); }

  // OK when there were no errors; else InvalidArgumentError listing them one per line.
  Status ToStatus() const;

 private:
  std::vector<Diagnostic> errors_;
  std::vector<Diagnostic>* warnings_;
};

// The statements (logical lines split into pairs) of `text`, named `file` in locations.
// Lines that do not tokenize are reported to `diag` and skipped.
std::vector<Statement> ReadStatements(std::string_view text, const std::string& file,
                                      Diagnostics* diag);

// The spelling in `known` of `key`, matched case-insensitively; nullopt when not there.
std::optional<std::string_view> MatchKey(std::string_view key,
                                         std::span<const std::string_view> known);

// "unknown key 'Fiel' on a <line_kind> line; did you mean 'File'?" or, with no near match,
// "...; expected one of A, B, C".
std::string UnknownKeyMessage(std::string_view key, std::string_view line_kind,
                              std::span<const std::string_view> known);

// The names of a hostlist expression, refusing more than `max_names` (InvalidArgument
// naming the problem).
StatusOr<std::vector<std::string>> ExpandNames(std::string_view expr, int64_t max_names);

}  // namespace loom::conf::internal
