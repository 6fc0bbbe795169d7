// cli_filter.lua for sbatch, srun and salloc (CliFilterPlugins=lua in slurm.conf): the site's
// script beside slurm.conf, run in the submitting command as Slurm runs it. Its
// slurm_cli_setup_defaults(options, early_pass) sets defaults below every other source,
// slurm_cli_pre_submit(options, offset) sees the options as resolved and may change them or
// refuse the submission, slurm_cli_post_submit(offset, job_id, step_id) learns the job id
// (docs/admin/job-submit.md). A function the script does not define is skipped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cli/submit/sbatch_options.h"
#include "conf/cluster_config.h"
#include "core/status.h"
#include "policy/lua_script.h"

namespace loom::cli {

class LuaCliFilter final : public submit::CliFilter {
 public:
  // The filter slurm.conf (at `slurm_conf`, read as `config`) asks for; null when it asks
  // for none. Errors: the script does not load (its PATH:LINE).
  static StatusOr<std::unique_ptr<LuaCliFilter>> FromConfig(const conf::ClusterConfig& config,
                                                            const std::string& slurm_conf);

  StatusOr<std::map<std::string, std::string>> SetupDefaults(std::string_view command) override;
  StatusOr<std::map<std::string, std::string>> PreSubmit(
      std::string_view command, const std::map<std::string, std::string>& options) override;
  // After a submission: slurm_cli_post_submit. Errors are printed, never fatal (the job is
  // in); step_id is 0xfffffffe (slurm.NO_VAL) for a batch job or an allocation.
  void PostSubmit(std::string_view command, uint64_t job_id, uint32_t step_id);

 private:
  explicit LuaCliFilter(std::unique_ptr<policy::LuaScript> script) : script_(std::move(script)) {}
  // Runs `function` on `options` (plus "type": the command) and prints what it logged.
  StatusOr<std::map<std::string, std::string>> Pass(
      const char* function, std::string_view command,
      const std::map<std::string, std::string>& options, nlohmann::json second);
  std::unique_ptr<policy::LuaScript> script_;
};

// Loads the filter for `command` from the slurm.conf the commands read (SlurmConfPath()):
// null without CliFilterPlugins=lua or when slurm.conf cannot be read (the command reports
// that itself when it connects). A script that does not load is an error.
StatusOr<std::unique_ptr<LuaCliFilter>> LoadCliFilter();

// LoadCliFilter for `command` ("sbatch"), an error printed as the command's ("sbatch: error:
// cli_filter.lua does not load: ..."): false when the command must stop.
bool LoadCliFilterFor(std::string_view command, std::unique_ptr<LuaCliFilter>* filter);

}  // namespace loom::cli
