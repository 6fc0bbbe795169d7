#include "sched/limits/limits.h"

#include "core/strings.h"
#include "sched/types.h"

namespace loom::sched {

using model::PendingReason;

void LimitTable::AddRunning(const core::TresVector& tres, const std::vector<int32_t>& scopes_of) {
  used.resize(scopes.size());
  jobs.resize(scopes.size(), 0);
  for (int32_t s : scopes_of) {
    used[s] += tres;
    ++jobs[s];
  }
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
  used_.resize(table_->scopes.size());
  jobs_.resize(table_->scopes.size(), 0);
}

PendingReason LimitTally::Check(const PendingJob& job) const {
  if (table_ == nullptr) return PendingReason::kNone;
  for (int32_t s : job.limit_scopes) {
    const LimitScope& scope = table_->scopes[s];
    if (scope.max_jobs >= 0 && jobs_[s] + 1 > scope.max_jobs) return LimitReason(scope.kind, "");
    if (const TresCap* c = FirstExceeded(scope.tres, used_[s], job.limit_tres)) {
      return LimitReason(scope.kind, c->name);
    }
  }
  return PendingReason::kNone;
}

void LimitTally::Charge(const PendingJob& job) {
  if (table_ == nullptr) return;
  for (int32_t s : job.limit_scopes) {
    used_[s] += job.limit_tres;
    ++jobs_[s];
  }
}

}  // namespace loom::sched
