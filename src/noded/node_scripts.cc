#include "noded/node_scripts.h"

#include <algorithm>
#include <chrono>

#include "core/clock.h"
#include "core/cpu_list.h"
#include "core/log.h"
#include "core/run_program.h"
#include "core/strings.h"
#include "rpc/convert.h"
#include "rpc/job_script_env.h"

namespace loom::noded {
namespace {

using core::StrCat;

// The run of a job a request is about: its id and how often it was requeued.
std::pair<uint64_t, int32_t> RunOf(const v1::JobInfo& job) {
  return {job.job_id(), job.restarts()};
}

}  // namespace

void NodeScripts::Reconfigure(NodeScriptsOptions options) {
  auto next = std::make_shared<const NodeScriptsOptions>(std::move(options));
  core::MutexLock lock(&opt_mu_);
  opt_ = std::move(next);
}

std::shared_ptr<const NodeScriptsOptions> NodeScripts::Options() const {
  core::MutexLock lock(&opt_mu_);
  return opt_;
}

std::vector<std::string> NodeScripts::Environment(const v1::JobInfo& job,
                                                  std::string_view context) const {
  const std::shared_ptr<const NodeScriptsOptions> opt = Options();
  std::vector<std::string> env =
      rpc::JobScriptEnvironment(job, context, opt->cluster_name, opt->slurm_conf);
  env.push_back(StrCat("SLURMD_NODENAME=", opt->node));
  // The GPUs the job holds on this node, as the job's own processes number them.
  for (const v1::NodeAllocation& a : job.allocation()) {
    if (a.node() != opt->node || a.gpu_ids().empty()) continue;
    auto ids = core::ParseCpuList(a.gpu_ids());
    if (!ids.ok()) break;
    std::vector<std::string> text;
    for (int32_t id : *ids) text.push_back(StrCat(id));
    env.push_back(StrCat("SLURM_JOB_GPUS=", core::Join(text, ",")));
    env.push_back(StrCat("CUDA_VISIBLE_DEVICES=", core::Join(text, ",")));
  }
  return env;
}

std::optional<std::string> NodeScripts::RunAll(const NodeScriptsOptions& opt,
                                               const std::string& setting, const v1::JobInfo& job,
                                               std::string_view context) {
  std::optional<core::MutexLock> serial;
  if (opt.serial) serial.emplace(&serial_mu_);
  core::ProgramRun run;
  run.env = Environment(job, context);
  run.timeout_ms = opt.timeout_s * 1000;
  return core::RunPrograms(setting, std::move(run));
}

Status NodeScripts::Prolog(const v1::JobInfo& job) {
  const std::shared_ptr<const NodeScriptsOptions> opt = Options();
  if (opt->prolog.empty()) return absl::OkStatus();
  const uint64_t id = job.job_id();
  {
    core::MutexLock lock(&mu_);
    auto [it, first] = prologs_.try_emplace(id);
    if (!first) {
      mu_.Await([this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        auto run = prologs_.find(id);
        return run == prologs_.end() || run->second.done;
      });
      auto run = prologs_.find(id);
      if (run != prologs_.end()) return run->second.result;
      // Forgotten meanwhile (its epilog ran): this launch comes too late to run.
      return absl::FailedPreconditionError(
          StrCat("job ", id, " ended on node ", opt->node, " before its launch came"));
    }
    std::erase(epilogs_done_, RunOf(job));  // a new run of a requeued job
  }
  const auto started = core::RealClock().Monotonic();
  std::optional<std::string> failed = RunAll(*opt, opt->prolog, job, "prolog_slurmd");
  Status result;
  if (failed) {
    v1::Error e;
    e.set_code(v1::PROLOG_FAILED);
    e.set_message(StrCat("prolog of job ", id, " failed on node ", opt->node, ": ", *failed));
    result = rpc::FromWire(e);
    core::LogError("{}", result.message());
  } else {
    core::LogFlagged(core::DebugFlag::kSteps, "job {}: prolog done in {} ms", id,
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                         core::RealClock().Monotonic() - started)
                         .count());
  }
  core::MutexLock lock(&mu_);
  PrologRun& run = prologs_[id];
  run.done = true;
  run.result = result;
  return result;
}

std::optional<std::string> NodeScripts::Epilog(const v1::JobInfo& job) {
  const uint64_t id = job.job_id();
  {
    core::MutexLock lock(&mu_);
    // A prolog that runs now finishes first.
    mu_.Await([this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      auto run = prologs_.find(id);
      return run == prologs_.end() || run->second.done;
    });
    prologs_.erase(id);
    if (std::find(epilogs_done_.begin(), epilogs_done_.end(), RunOf(job)) != epilogs_done_.end()) {
      return std::nullopt;
    }
  }
  const std::shared_ptr<const NodeScriptsOptions> opt = Options();
  std::optional<std::string> failed =
      opt->epilog.empty() ? std::nullopt : RunAll(*opt, opt->epilog, job, "epilog_slurmd");
  if (failed) core::LogError("epilog of job {} failed on node {}: {}", id, opt->node, *failed);
  core::MutexLock lock(&mu_);
  epilogs_done_.push_back(RunOf(job));
  if (epilogs_done_.size() > kRemembered) epilogs_done_.pop_front();
  return failed;
}

}  // namespace loom::noded
