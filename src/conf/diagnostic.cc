#include "conf/diagnostic.h"

#include "core/strings.h"

namespace loom::conf {

std::string SourceLocation::ToString() const {
  if (line <= 0) return file;
  return core::StrCat(file, ":", line);
}

std::string Diagnostic::ToString() const {
  return core::StrCat(location.ToString(), ": ",
                      severity == Severity::kError ? "error: " : "warning: ", message);
}

std::string JoinDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    if (!out.empty()) out.push_back('\n');
    out += d.ToString();
  }
  return out;
}

}  // namespace loom::conf
