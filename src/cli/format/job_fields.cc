#include "cli/format/job_fields.h"

#include <algorithm>

#include "core/strings.h"

namespace loom::cli::format {

std::string FormatJobId(const JobView& job) {
  if (job.array_task_id.has_value()) {
    return core::StrCat(job.array_job_id != 0 ? job.array_job_id : job.job_id, "_",
                        *job.array_task_id);
  }
  if (!job.array_task_string.empty()) {
    return core::StrCat(job.job_id, "_[", job.array_task_string, "]");
  }
  return core::StrCat(job.job_id);
}

int64_t JobTimeUsed(const JobView& job, int64_t now) {
  using model::JobState;
  if (job.state == JobState::kPending || job.start_time == 0) return 0;
  if (job.state == JobState::kSuspended) return std::max<int64_t>(job.secs_pre_suspend, 0);
  bool ended = job.state != JobState::kRunning && job.end_time != 0;
  int64_t end = ended ? job.end_time : now;
  // After a suspension the clock restarts at the resume (suspend_time) from secs_pre_suspend.
  int64_t used = job.suspend_time != 0 ? job.secs_pre_suspend + (end - job.suspend_time)
                                       : end - job.start_time;
  return std::max<int64_t>(used, 0);
}

std::string_view JobReasonText(const JobView& job) {
  return job.state_description.empty() ? std::string_view(job.reason)
                                       : std::string_view(job.state_description);
}

}  // namespace loom::cli::format
