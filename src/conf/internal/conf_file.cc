#include "conf/internal/conf_file.h"

#include "conf/internal/key_table.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace loom::conf::internal {

using core::StrCat;

void Diagnostics::Error(const SourceLocation& at, std::string_view key, std::string message) {
  if (errors_.size() >= kMaxErrors) return;
  errors_.push_back({Diagnostic::Severity::kError, at, std::string(key), std::move(message)});
}

void Diagnostics::Warn(const SourceLocation& at, std::string_view key, std::string message) {
  if (warnings_ == nullptr) return;
  warnings_->push_back({Diagnostic::Severity::kWarning, at, std::string(key), std::move(message)});
}

Status Diagnostics::ToStatus() const {
  if (errors_.empty()) return absl::OkStatus();
  std::string message = JoinDiagnostics(errors_);
  if (errors_.size() >= kMaxErrors) message += "\n(further errors not shown)";
  return absl::InvalidArgumentError(message);
}

std::vector<Statement> ReadStatements(std::string_view text, const std::string& file,
                                      Diagnostics* diag) {
  std::vector<Statement> out;
  for (LogicalLine& ll : SplitLogicalLines(text)) {
    SourceLocation at{file, ll.line};
    StatusOr<std::vector<KeyValue>> pairs = TokenizeLine(ll.text);
    if (!pairs.ok()) {
      diag->Error(at, "", std::string(pairs.status().message()));
      continue;
    }
    if (!pairs->empty()) out.push_back({std::move(at), std::move(*pairs)});
  }
  return out;
}

std::optional<std::string_view> MatchKey(std::string_view key,
                                         std::span<const std::string_view> known) {
  for (std::string_view k : known) {
    if (core::EqualsIgnoreCase(k, key)) return k;
  }
  return std::nullopt;
}

std::string UnknownKeyMessage(std::string_view key, std::string_view line_kind,
                              std::span<const std::string_view> known) {
  std::string head = StrCat("unknown key '", key, "' on ", line_kind, " line");
  if (std::optional<std::string_view> near = ClosestMatch(key, known)) {
    return StrCat(head, "; did you mean '", *near, "'?");
  }
  std::string list;
  for (std::string_view k : known) list += StrCat(list.empty() ? "" : ", ", k);
  return StrCat(head, "; expected one of ", list);
}

StatusOr<std::vector<std::string>> ExpandNames(std::string_view expr, int64_t max_names) {
  StatusOr<core::Hostlist> list = core::Hostlist::Parse(expr, max_names);
  if (!list.ok()) return list.status();
  if (list->size() > max_names) {
    return absl::InvalidArgumentError(
        StrCat("it names ", list->size(), " entries, more than the ", max_names, " allowed"));
  }
  return list->Expand();
}

}  // namespace loom::conf::internal
