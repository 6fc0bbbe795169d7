#include "sched/limits/limits.h"

#include <cstdint>

#include "core/strings.h"
#include "sched/types.h"

namespace loom::sched {

using model::PendingReason;

void LimitTable::AddRunning(const core::TresVector& tres, const std::vector<int32_t>& scopes_of,
                            int64_t seconds_left) {
  used.resize(scopes.size());
  jobs.resize(scopes.size(), 0);
  used_secs.resize(scopes.size());
  for (int32_t s : scopes_of) {
    used[s] += tres;
    ++jobs[s];
    if (!scopes[s].tres_mins.empty() && seconds_left > 0) used_secs[s] += tres * seconds_left;
  }
}

void LimitTable::AddUsed(int32_t scope, const core::TresVector& seconds) {
  used_secs.resize(scopes.size());
  used_secs[scope] += seconds;
}

PendingReason LimitMinutesReason(LimitKind kind, std::string_view tres) {
  using R = PendingReason;
  const bool qos = kind == LimitKind::kQosGroup || kind == LimitKind::kQosPerUser;
  if (tres == "cpu") return qos ? R::kQOSGrpCPUMinutesLimit : R::kAssocGrpCPUMinutesLimit;
  if (tres == "mem") return qos ? R::kQOSGrpMemoryMinutes : R::kAssocGrpMemMinutes;
  if (tres == "node") return qos ? R::kQOSGrpNodeMinutes : R::kAssocGrpNodeMinutes;
  if (tres == "billing") return qos ? R::kQOSGrpBillingMinutes : R::kAssocGrpBillingMinutes;
  return qos ? R::kQOSGrpGRESMinutes : R::kAssocGrpGRESMinutes;
}

PendingReason LimitReason(LimitKind kind, std::string_view tres) {
  enum Col { kCpu, kMem, kNode, kGres, kBilling, kJobs, kWall };
  Col col = kJobs;
  if (tres == "cpu") {
    col = kCpu;
  } else if (tres == "mem") {
    col = kMem;
  } else if (tres == "node") {
    col = kNode;
  } else if (tres == "billing") {
    col = kBilling;
  } else if (tres == "wall") {
    col = kWall;
  } else if (!tres.empty()) {
    col = kGres;
  }
  using R = PendingReason;
  // Slurm's reason per kind of limit and TRES; kNone where Slurm has no such limit.
  static constexpr R kTable[7][7] = {
      // cpu, mem, node, gres, billing, jobs, wall
      {R::kQOSGrpCpuLimit, R::kQOSGrpMemLimit, R::kQOSGrpNodeLimit, R::kQOSGrpGRES,
       R::kQOSGrpBillingLimit, R::kQOSGrpJobsLimit, R::kNone},
      {R::kQOSMaxCpuPerUserLimit, R::kQOSMaxMemoryPerUser, R::kQOSMaxNodePerUserLimit,
       R::kQOSMaxGRESPerUser, R::kQOSMaxBillingPerUser, R::kQOSMaxJobsPerUserLimit, R::kNone},
      {R::kAssocGrpCpuLimit, R::kAssocGrpMemLimit, R::kAssocGrpNodeLimit, R::kAssocGrpGRES,
       R::kAssocGrpBillingLimit, R::kAssocGrpJobsLimit, R::kNone},
      {R::kNone, R::kNone, R::kNone, R::kNone, R::kNone, R::kAssocMaxJobsLimit, R::kNone},
      {R::kQOSMaxCpuPerJobLimit, R::kQOSMaxMemoryPerJob, R::kQOSMaxNodePerJobLimit,
       R::kQOSMaxGRESPerJob, R::kQOSMaxBillingPerJob, R::kNone, R::kQOSMaxWallDurationPerJobLimit},
      {R::kAssocMaxCpuPerJobLimit, R::kAssocMaxMemoryPerJob, R::kAssocMaxNodePerJobLimit,
       R::kAssocMaxGRESPerJob, R::kAssocMaxBillingPerJob, R::kNone,
       R::kAssocMaxWallDurationPerJobLimit},
      {R::kQOSMinCpuNotSatisfied, R::kQOSMinMemory, R::kQOSMinNode, R::kQOSMinGRES,
       R::kQOSMinBilling, R::kNone, R::kNone},
  };
  return kTable[static_cast<int>(kind)][col];
}

const TresCap* FirstExceeded(const std::vector<TresCap>& caps, const core::TresVector& used,
                             const core::TresVector& tres) {
  for (const TresCap& c : caps) {
    const int64_t want = tres.Get(c.name);
    if (want > 0 && used.Get(c.name) + want > c.max) return &c;
  }
  return nullptr;
}

LimitTally::LimitTally(const LimitTable* table) : table_(table) {
  if (table_ == nullptr) return;
  used_ = table_->used;
  jobs_ = table_->jobs;
  used_secs_ = table_->used_secs;
  used_.resize(table_->scopes.size());
  jobs_.resize(table_->scopes.size(), 0);
  used_secs_.resize(table_->scopes.size());
}

PendingReason LimitTally::Check(const PendingJob& job) const {
  if (table_ == nullptr) return PendingReason::kNone;
  for (int32_t s : job.limit_scopes) {
    const LimitScope& scope = table_->scopes[s];
    if (scope.max_jobs >= 0 && jobs_[s] + 1 > scope.max_jobs) return LimitReason(scope.kind, "");
    if (const TresCap* c = FirstExceeded(scope.tres, used_[s], job.limit_tres)) {
      return LimitReason(scope.kind, c->name);
    }
    // GrpTRESMins, on the TRES the job asks for: reached, or (safe) not enough left for it.
    for (const TresCap& c : scope.tres_mins) {
      const int64_t want = job.limit_tres_secs.Get(c.name);
      if (want <= 0) continue;
      const int64_t used = used_secs_[s].Get(c.name);
      const int64_t cap = c.max > INT64_MAX / 60 ? INT64_MAX : c.max * 60;
      if (used >= cap || (table_->safe && used + want > cap)) {
        return LimitMinutesReason(scope.kind, c.name);
      }
    }
  }
  return PendingReason::kNone;
}

void LimitTally::Charge(const PendingJob& job) {
  if (table_ == nullptr) return;
  for (int32_t s : job.limit_scopes) {
    used_[s] += job.limit_tres;
    ++jobs_[s];
    if (!table_->scopes[s].tres_mins.empty()) used_secs_[s] += job.limit_tres_secs;
  }
}

}  // namespace loom::sched
