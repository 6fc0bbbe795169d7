// `sacct --json`: the jobs of an accounting query as Slurm 22.05 prints them (the OpenAPI
// DB v0.0.38 document: meta, errors, jobs with their steps), the same shape
// slurmrestd's /slurmdb/v0.0.38/jobs answers with. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cli/format/text.h"
#include "loom/v1/loom.pb.h"

namespace loom::cli {

// The document for `reply`'s jobs (every attempt, steps included); `now` gives running jobs
// their elapsed time; `user_name` names the user who cancelled a job.
std::string SacctJson(const v1::AcctQueryJobsReply& reply, const format::JsonMeta& meta,
                      int64_t now, const std::function<std::string(uint32_t)>& user_name);

}  // namespace loom::cli
