// Helpers shared by the slurm.conf tests: parse a text without a filesystem, and match
// errors and warnings by substring. Header-only; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "conf/slurm_conf.h"
#include "core/strings.h"

namespace loom::conf::testing {

// Every test config starts with these two lines, so the first line of a body is line 3.
inline constexpr std::string_view kHeader = "ClusterName=test\nSlurmctldHost=ctl\n";
inline constexpr std::string_view kFile = "/etc/slurm/slurm.conf";

// "/etc/slurm/slurm.conf:<line>: error: " and "...: warning: ".
inline std::string ErrorAt(int line) { return core::StrCat(kFile, ":", line, ": error: "); }
inline std::string WarningAt(int line) { return core::StrCat(kFile, ":", line, ": warning: "); }

inline StatusOr<ClusterConfig> ParseText(std::string_view text,
                                         std::vector<Diagnostic>* warnings = nullptr,
                                         const IncludeResolver* resolver = nullptr) {
  NoIncludeResolver none;
  return ParseSlurmConf(text, kFile, resolver ? *resolver : none, warnings);
}

// Parses kHeader + body.
inline StatusOr<ClusterConfig> ParseBody(std::string_view body,
                                         std::vector<Diagnostic>* warnings = nullptr) {
  return ParseText(core::StrCat(kHeader, body), warnings);
}

inline std::string ErrorText(const StatusOr<ClusterConfig>& r) {
  return r.ok() ? std::string("<ok>") : std::string(r.status().message());
}

inline std::string WarningText(const std::vector<Diagnostic>& warnings) {
  return JoinDiagnostics(warnings);
}

}  // namespace loom::conf::testing
