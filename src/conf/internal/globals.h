// Global (not per-node, not per-partition) slurm.conf keys: the typed ones Loom acts on
// (cluster identity, ports, scheduler, selection, priority, preemption, memory defaults,
// timers), the legacy controller keys, and the accepted-but-unused ones kept verbatim.
// Used by one parse at a time; thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "conf/cluster_config.h"
#include "conf/internal/context.h"
#include "conf/internal/lexer.h"

namespace loom::conf::internal {

// Parses a SchedulerParameters value into `params` (typed options, known-but-unused
// options with a warning each, unknown options as errors).
void ParseSchedulerParameters(ParseContext* ctx, const SourceLocation& at, const KeyValue& kv,
                              SchedulerParams* params);

// Parses a SelectTypeParameters value. Returns false (after reporting) when malformed.
bool ParseSelectTypeParameters(ParseContext* ctx, const SourceLocation& at, const KeyValue& kv,
                               SelectParams* params);

class GlobalKeys {
 public:
  explicit GlobalKeys(ParseContext* ctx) : ctx_(ctx) {}

  // Handles one global `Key=Value` (not a record key such as NodeName).
  void Add(const SourceLocation& at, const KeyValue& kv);

  // Call after all lines: applies defaults that depend on other keys (controllers from the
  // legacy ControlMachine keys, SelectTypeParameters for select/linear).
  void Finish();

 private:
  void Apply(const SourceLocation& at, std::string_view key, const KeyValue& kv);
  // JobSubmitPlugins, CliFilterPlugins: whether lua (or PREFIX/lua) is listed; the other
  // plugins listed earn a warning.
  bool LuaPluginListed(const SourceLocation& at, const KeyValue& kv, std::string_view prefix);

  ParseContext* ctx_;
  std::map<std::string, SourceLocation> seen_;  // canonical key -> first location
  std::map<std::string, std::pair<SourceLocation, std::string>> legacy_controller_;
  bool select_params_given_ = false;
};

}  // namespace loom::conf::internal
