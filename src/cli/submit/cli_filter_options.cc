#include "cli/submit/internal/cli_filter_options.h"

#include "core/strings.h"

namespace loom::cli::submit::internal {

void AddToOptionMap(std::span<const ParsedOption> given, std::map<std::string, std::string>* out) {
  for (const ParsedOption& o : given) {
    const std::string_view name = LongName(o.id);
    if (name.empty()) continue;
    (*out)[std::string(name)] = o.value && !o.value->empty() ? *o.value : "set";
  }
}

StatusOr<std::vector<ParsedOption>> FilterOptions(const std::map<std::string, std::string>& before,
                                                  const std::map<std::string, std::string>& after,
                                                  std::span<const OptionSpec> table,
                                                  std::string_view command) {
  std::vector<ParsedOption> out;
  for (const auto& [name, value] : after) {
    if (name == "type") continue;
    auto was = before.find(name);
    if (was != before.end() && was->second == value) continue;
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : table) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(core::StrCat(
          command, ": error: cli_filter.lua set option '", name, "', which ", command,
          " does not have (options are named as on the command line, without the dashes)"));
    }
    ParsedOption o{spec->id, std::nullopt};
    if (spec->arg != ArgKind::kNone && !(spec->arg == ArgKind::kOptional && value.empty())) {
      o.value = value;
    }
    out.push_back(std::move(o));
  }
  return out;
}

StatusOr<std::vector<ParsedOption>> DefaultsPass(CliFilter& filter,
                                                 std::span<const OptionSpec> table,
                                                 std::string_view command) {
  StatusOr<std::map<std::string, std::string>> set = filter.SetupDefaults(command);
  if (!set.ok()) {
    return absl::InvalidArgumentError(
        core::StrCat(command, ": error: ", std::string(set.status().message())));
  }
  return FilterOptions({}, *set, table, command);
}

StatusOr<std::vector<ParsedOption>> PreSubmitPass(CliFilter& filter,
                                                  const std::map<std::string, std::string>& given,
                                                  std::span<const OptionSpec> table,
                                                  std::string_view command) {
  StatusOr<std::map<std::string, std::string>> after = filter.PreSubmit(command, given);
  if (!after.ok()) {
    return absl::InvalidArgumentError(
        core::StrCat(command, ": error: ", std::string(after.status().message())));
  }
  return FilterOptions(given, *after, table, command);
}

}  // namespace loom::cli::submit::internal
