// job_submit.lua for the controller (JobSubmitPlugins=lua): the script runs in a small pool of
// loom-lua-helper processes, one call per helper at a time, each call under a deadline
// (LoomJobSubmitTimeout). A script that is slow, loops, blocks in a C call or crashes costs
// its helper (killed and started again) and the one submission an error; the controller's
// threads never run Lua, so scheduling and other requests go on. Slurm runs the script
// inside slurmctld under its job-write lock instead. Calls beyond what the helpers and a
// short queue take are refused at once rather than held, so a slow script cannot tie up the
// controller's request workers. Thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "model/job_request.h"
#include "policy/job_desc.h"

namespace loom::ctld {

struct JobSubmitPoolOptions {
  std::string helper;       // the loom-lua-helper binary
  std::string script_path;  // job_submit.lua's path: Lua's errors say PATH:LINE
  std::string script;       // its text, as read when it was (re)loaded
  nlohmann::json part_list = nlohmann::json::object();  // policy::PartitionListOf
  int32_t helpers = 2;
  int64_t timeout_ms = 1000;
  int32_t max_queued = 8;  // calls waiting for a helper beyond the busy ones
};

// What job_submit.lua made of a submission.
struct JobSubmitOutcome {
  Status status;                       // a refusal: the script's code as Slurm words it
  std::vector<std::string> user_msgs;  // slurm.user_msg, for the submitter either way
};

class JobSubmitPool {
 public:
  // Starts one helper and loads the script in it. Errors: the script's own (a syntax error
  // as "PATH:LINE: ..."), a script without slurm_job_submit, or a helper that cannot start.
  static StatusOr<std::unique_ptr<JobSubmitPool>> Start(JobSubmitPoolOptions options);
  ~JobSubmitPool();  // kills the helpers
  JobSubmitPool(const JobSubmitPool&) = delete;
  JobSubmitPool& operator=(const JobSubmitPool&) = delete;

  // Runs slurm_job_submit(job_desc, part_list, submit_uid) on `request` and applies what
  // the script changed. The returned status is the call's: Unavailable when the helpers are
  // busy, DeadlineExceeded past the deadline, Internal when the helper died, InvalidArgument
  // for a script error or a value the script set that does not fit; `outcome->status` is
  // the script's verdict when the call went through.
  Status Submit(const policy::Submitter& who, model::JobRequest* request,
                JobSubmitOutcome* outcome);

  // slurm_job_modify(job_desc, job_rec, part_list, modify_uid) for `scontrol update job`:
  // job_desc holds the fields the update sets (the others nil or NO_VAL), job_rec the job as
  // it is. Returns job_desc as the script left it (the update made of it is the caller's);
  // statuses as Submit. A script without slurm_job_modify accepts every update.
  StatusOr<nlohmann::json> Modify(const nlohmann::json& job_desc, const nlohmann::json& job_rec,
                                  uint32_t uid, JobSubmitOutcome* outcome);

  const std::string& script_path() const { return options_.script_path; }
  // The helpers' process ids (0 for one not started), for diagnostics and tests.
  std::vector<pid_t> helper_pids();

 private:
  struct Helper {
    pid_t pid = -1;
    int fd = -1;
    bool busy = false;
  };
  explicit JobSubmitPool(JobSubmitPoolOptions options) : options_(std::move(options)) {}
  // Starts helper `h` and loads the script in it, by `deadline_ms`.
  Status Spawn(Helper* h, int64_t deadline_ms);
  // Kills helper `h` (if it still runs), reaps it and says how it ended ("signal 9").
  static std::string Stop(Helper* h);
  // One call of the script on a helper it waits for (at most the deadline): the job_desc
  // it returned, its verdict in outcome->status, its messages in outcome->user_msgs; its log
  // lines go to the controller's log.
  StatusOr<nlohmann::json> Call(const nlohmann::json& call, JobSubmitOutcome* outcome);
  // One exchange, on a helper this thread holds.
  StatusOr<nlohmann::json> Exchange(Helper* h, const nlohmann::json& call, int64_t deadline_ms);

  const JobSubmitPoolOptions options_;
  const core::Clock& clock_ = core::RealClock();  // deadlines are real time, always
  core::Mutex mu_;
  std::vector<std::unique_ptr<Helper>> helpers_ ABSL_GUARDED_BY(mu_);
  int32_t queued_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace loom::ctld
