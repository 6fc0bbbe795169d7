// The controller's job_submit.lua (docs/admin/job-submit.md): loading the script into a pool
// of helper processes at the start and at each reconfigure, keeping the last good one.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/log.h"
#include "core/strings.h"
#include "ctld/controller.h"
#include "policy/job_desc.h"

namespace loom::ctld {

void Controller::LoadJobSubmit(const conf::SiteConfig& site) {
  const conf::ClusterConfig& cfg = site.cluster;
  if (!cfg.job_submit_lua) {
    core::MutexLock lock(&policy_mu_);
    job_submit_.reset();
    job_submit_error_.clear();
    return;
  }
  JobSubmitPoolOptions o;
  o.helper = lua_helper_;
  o.script_path = (std::filesystem::path(slurm_conf_).parent_path() / "job_submit.lua").string();
  o.part_list = policy::PartitionListOf(cfg);
  o.helpers = cfg.job_submit_helpers;
  o.timeout_ms = cfg.job_submit_timeout_ms;
  StatusOr<std::unique_ptr<JobSubmitPool>> pool = absl::NotFoundError("");
  if (std::ifstream in(o.script_path); in) {
    std::ostringstream text;
    text << in.rdbuf();
    o.script = text.str();
    pool = JobSubmitPool::Start(std::move(o));
  } else {
    pool = absl::NotFoundError(core::StrCat("cannot read ", o.script_path,
                                            ", which JobSubmitPlugins=lua "
                                            "runs on every submission"));
  }
  core::MutexLock lock(&policy_mu_);
  if (pool.ok()) {
    job_submit_ = std::shared_ptr<JobSubmitPool>(std::move(*pool));
    job_submit_error_.clear();
    core::LogInfo("job_submit.lua loaded from {}", job_submit_->script_path());
    return;
  }
  const std::string why(pool.status().message());
  if (job_submit_ != nullptr) {
    core::LogError("job_submit.lua does not load: {}; the version loaded before stays in force",
                   why);
    return;
  }
  job_submit_error_ = core::StrCat("job_submit.lua does not load (", why,
                                   "); submissions are refused until it is fixed and `scontrol "
                                   "reconfigure` loads it");
  core::LogError("{}", job_submit_error_);
}

std::shared_ptr<JobSubmitPool> Controller::job_submit(std::string* error) const {
  core::MutexLock lock(&policy_mu_);
  *error = job_submit_error_;
  return job_submit_;
}

}  // namespace loom::ctld
