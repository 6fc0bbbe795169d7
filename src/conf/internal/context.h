// Shared state of one slurm.conf parse (the config being built, errors, warnings) and the
// value parsers every kind of line uses: integers with ranges, booleans, lists, TRES
// weights, time limits, memory sizes, all reporting "file:line" errors in one format.
// Used by one parse at a time; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/cluster_config.h"
#include "conf/diagnostic.h"
#include "conf/internal/lexer.h"
#include "core/tres.h"

namespace loom::conf::internal {

class ParseContext {
 public:
  // Stops recording errors beyond this many (the rest would be noise).
  static constexpr size_t kMaxErrors = 100;

  ParseContext(ClusterConfig* config, std::vector<Diagnostic>* warnings)
      : config_(config), warnings_(warnings) {}

  ClusterConfig& config() { return *config_; }
  std::vector<Diagnostic>& errors() { return errors_; }
  std::vector<Diagnostic>* warnings() { return warnings_; }

  void Error(const SourceLocation& at, std::string_view key, std::string message);
  void Warn(const SourceLocation& at, std::string_view key, std::string message);
  // "invalid value 'v' for Key: expected ..." at `at`.
  void BadValue(const SourceLocation& at, std::string_view key, std::string_view value,
                std::string_view expected);
  // The standard warning for a key Slurm knows and Loom does not act on.
  void WarnNotActedOn(const SourceLocation& at, std::string_view key, std::string_view where = "");

  // Integer within [min, max]; reports BadValue and returns nullopt otherwise.
  std::optional<int64_t> Int(const SourceLocation& at, const KeyValue& kv, int64_t min,
                             int64_t max);
  // Like Int, but UNLIMITED/INFINITE (any case) give `unlimited`.
  std::optional<int64_t> IntOrUnlimited(const SourceLocation& at, const KeyValue& kv, int64_t min,
                                        int64_t max, int64_t unlimited);
  // YES/NO, TRUE/FALSE, 1/0, ON/OFF (any case).
  std::optional<bool> Bool(const SourceLocation& at, const KeyValue& kv);
  // A Slurm time limit (core::ParseDuration) in seconds; UNLIMITED gives kUnlimitedSeconds.
  std::optional<int64_t> Duration(const SourceLocation& at, const KeyValue& kv);
  // One of `choices` (case-insensitive); returns its index.
  std::optional<size_t> Choice(const SourceLocation& at, const KeyValue& kv,
                               std::initializer_list<std::string_view> choices);
  // "Name=weight[unit],..." as TRESBillingWeights / PriorityWeightTRES write it
  // (core::TresBillingWeights::Parse).
  std::optional<core::TresBillingWeights> TresWeights(const SourceLocation& at, const KeyValue& kv);
  // A TRES name in core::CanonicalTresName's form, or nullopt after reporting.
  std::optional<std::string> TresName(const SourceLocation& at, const KeyValue& kv,
                                      std::string_view name);

 private:
  ClusterConfig* config_;
  std::vector<Diagnostic> errors_;
  std::vector<Diagnostic>* warnings_;
};

// Splits a comma list, trimming items and dropping empty ones.
std::vector<std::string> SplitList(std::string_view value);

// Splits on commas that are not inside [...] (hostlist expressions: "a[1-2,4],b").
std::vector<std::string> SplitTopLevelCommas(std::string_view value);

}  // namespace loom::conf::internal
