#include "cli/cli_filter.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/client.h"
#include "conf/slurm_conf.h"
#include "core/strings.h"

namespace loom::cli {
namespace {

using core::StrCat;
using nlohmann::json;

}  // namespace

StatusOr<std::unique_ptr<LuaCliFilter>> LuaCliFilter::FromConfig(const conf::ClusterConfig& config,
                                                                 const std::string& slurm_conf) {
  if (!config.cli_filter_lua) return std::unique_ptr<LuaCliFilter>();
  const std::string path =
      (std::filesystem::path(slurm_conf).parent_path() / "cli_filter.lua").string();
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(StrCat("cannot read ", path,
                                      ", which CliFilterPlugins=lua runs; "
                                      "install it beside slurm.conf or remove the key"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  StatusOr<std::unique_ptr<policy::LuaScript>> script = policy::LuaScript::Load(text.str(), path);
  if (!script.ok()) {
    return absl::InvalidArgumentError(
        StrCat("cli_filter.lua does not load: ", std::string(script.status().message())));
  }
  return std::unique_ptr<LuaCliFilter>(new LuaCliFilter(*std::move(script)));
}

StatusOr<std::map<std::string, std::string>> LuaCliFilter::Pass(
    const char* function, std::string_view command,
    const std::map<std::string, std::string>& options, json second) {
  if (!script_->Defines(function)) return options;
  json table = json::object();
  for (const auto& [k, v] : options) table[k] = v;
  table["type"] = std::string(command);
  StatusOr<policy::CallResult> r = script_->Call(function, {table, std::move(second)});
  if (!r.ok()) return r.status();
  for (const policy::LogLine& l : r->log) {
    if (l.level == "error")
      std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(command.size()), command.data(),
                   l.text.c_str());
  }
  for (const std::string& m : r->user_msgs) {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(command.size()), command.data(), m.c_str());
  }
  if (r->rc != policy::kSuccess) {
    return absl::FailedPreconditionError("cli_filter plugin terminated with error");
  }
  std::map<std::string, std::string> out;
  if (!r->args.empty() && r->args[0].is_object()) {
    for (const auto& [k, v] : r->args[0].items()) {
      if (v.is_string()) {
        out[k] = v.get<std::string>();
      } else if (v.is_number_integer()) {
        out[k] = std::to_string(v.get<int64_t>());
      } else if (v.is_boolean() && v.get<bool>()) {
        out[k] = "set";
      }
    }
  }
  return out;
}

StatusOr<std::map<std::string, std::string>> LuaCliFilter::SetupDefaults(std::string_view command) {
  return Pass("slurm_cli_setup_defaults", command, {}, false);
}

StatusOr<std::map<std::string, std::string>> LuaCliFilter::PreSubmit(
    std::string_view command, const std::map<std::string, std::string>& options) {
  return Pass("slurm_cli_pre_submit", command, options, 0);
}

void LuaCliFilter::PostSubmit(std::string_view command, uint64_t job_id, uint32_t step_id) {
  if (!script_->Defines("slurm_cli_post_submit")) return;
  StatusOr<policy::CallResult> r =
      script_->Call("slurm_cli_post_submit", {0, static_cast<int64_t>(job_id), step_id});
  if (!r.ok()) {
    std::fprintf(stderr, "%.*s: error: cli_filter.lua: %s\n", static_cast<int>(command.size()),
                 command.data(), std::string(r.status().message()).c_str());
  }
}

StatusOr<std::unique_ptr<LuaCliFilter>> LoadCliFilter() {
  const std::string path = SlurmConfPath();
  std::vector<conf::Diagnostic> warnings;
  StatusOr<conf::ClusterConfig> cfg = conf::LoadSlurmConf(path, &warnings);
  if (!cfg.ok()) return std::unique_ptr<LuaCliFilter>();
  return LuaCliFilter::FromConfig(*cfg, path);
}

bool LoadCliFilterFor(std::string_view command, std::unique_ptr<LuaCliFilter>* filter) {
  StatusOr<std::unique_ptr<LuaCliFilter>> loaded = LoadCliFilter();
  if (!loaded.ok()) {
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(command.size()), command.data(),
                 std::string(loaded.status().message()).c_str());
    return false;
  }
  *filter = *std::move(loaded);
  return true;
}

}  // namespace loom::cli
