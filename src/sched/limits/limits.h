// Association and QOS limits on what runs at once: Slurm's GrpTRES and GrpJobs (of a QOS and
// of each account up the tree), MaxTRESPerUser and MaxJobsPerUser (of a QOS, per user) and
// MaxJobs (of a user's association). A driver describes the scopes and what running jobs
// already use in a LimitTable; each pending job names the scopes it counts against and what
// it would use; a pass keeps a LimitTally, asks it before starting a job and charges it
// after, so that no pass starts a job a limit forbids. Limits on one job alone (MaxTRES,
// MaxWall) are the driver's, reported as the job's `blocked` reason. Pure;
// thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tres.h"
#include "model/job_state.h"

namespace loom::sched {

struct PendingJob;

// Where a limit comes from; with the TRES it caps, it names the pending reason.
enum class LimitKind : uint8_t {
  kQosGroup,      // QOS GrpTRES, GrpJobs: all of the QOS's jobs together
  kQosPerUser,    // QOS MaxTRESPerUser, MaxJobsPerUser: one user's jobs in the QOS
  kAssocGroup,    // association GrpTRES, GrpJobs: the account's (and its sub-accounts') jobs
  kAssocUser,     // association MaxJobs: one user association's jobs
  kQosPerJob,     // QOS MaxTRESPerJob, MaxWall: one job
  kAssocPerJob,   // association MaxTRESPerJob, MaxWall: one job
  kQosMinPerJob,  // QOS MinTRESPerJob: one job asking for less
};

using core::ParseTresCaps;
using core::TresCap;

struct LimitScope {
  LimitKind kind = LimitKind::kQosGroup;
  std::vector<TresCap> tres;
  int64_t max_jobs = -1;  // -1: none
  // GrpTRESMins: the TRES-minutes its past, present and future jobs may use together.
  std::vector<TresCap> tres_mins = {};
};

struct LimitTable {
  std::vector<LimitScope> scopes;
  // What running jobs use now, by scope.
  std::vector<core::TresVector> used;
  std::vector<int64_t> jobs;
  // For GrpTRESMins, TRES-seconds by scope: the decayed usage of ended and running jobs
  // (AddUsed) and what running jobs may still use until their time limits (AddRunning).
  std::vector<core::TresVector> used_secs;
  // AccountingStorageEnforce=safe: a job starts only if it can run to its time limit within
  // every GrpTRESMins; otherwise until the limit is reached.
  bool safe = false;
  // Adds a running job (its TRES, the scopes it counts against, the seconds it has left).
  void AddRunning(const core::TresVector& tres, const std::vector<int32_t>& scopes,
                  int64_t seconds_left = 0);
  // Adds decayed usage, in TRES-seconds, to a scope.
  void AddUsed(int32_t scope, const core::TresVector& seconds);
};

// The pending reason for a limit of `kind` on `tres` (empty: on the number of jobs; "wall":
// on the time limit).
model::PendingReason LimitReason(LimitKind kind, std::string_view tres);

// The pending reason for a GrpTRESMins of `kind` (kQosGroup or kAssocGroup) on `tres`:
// QOSGrpCPUMinutesLimit, AssocGrpGRESMinutes, ...
model::PendingReason LimitMinutesReason(LimitKind kind, std::string_view tres);

// The first cap of `caps` that `tres` goes over, together with `used`; null when none.
const TresCap* FirstExceeded(const std::vector<TresCap>& caps, const core::TresVector& used,
                             const core::TresVector& tres);

// One pass's view: the table's running usage plus the jobs the pass started.
class LimitTally {
 public:
  explicit LimitTally(const LimitTable* table = nullptr);
  // kNone when `job` may start within every scope it counts against; else the reason of the
  // first scope (in the job's order) it would go over.
  model::PendingReason Check(const PendingJob& job) const;
  // `job` started: it counts from now on.
  void Charge(const PendingJob& job);

 private:
  const LimitTable* table_;
  std::vector<core::TresVector> used_;
  std::vector<int64_t> jobs_;
  std::vector<core::TresVector> used_secs_;
};

}  // namespace loom::sched
