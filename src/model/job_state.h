// Slurm's job states and pending reasons, with the names Slurm prints, and the job state
// machine (which transitions are legal). Pure values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace loom::model {

enum class JobState : uint8_t {
  kPending,
  kRunning,
  kSuspended,
  // Shown, never a job's state: what queries print for a job that ended while its
  // processes are still being killed (Slurm's COMPLETING flag on its final state). The
  // state machine never moves a job to or from it.
  kCompleting,
  kCompleted,
  kCancelled,
  kFailed,
  kTimeout,
  kNodeFail,
  kPreempted,
  kBootFail,
  kDeadline,
  kOutOfMemory,
};

// "PENDING", "RUNNING", ... as in `scontrol show job` JobState= and `squeue -o %T`.
std::string_view JobStateName(JobState s);
// "PD", "R", "S", "CG", "CD", "CA", "F", "TO", "NF", "PR", "BF", "DL", "OOM" (`squeue -o %t`).
std::string_view JobStateShortName(JobState s);
// Accepts either form, any case (`squeue -t pd`, `-t RUNNING`).
std::optional<JobState> ParseJobState(std::string_view s);
// A job in a final state never changes again (except by requeue, which makes it PENDING).
bool IsFinal(JobState s);
// Whether `from` -> `to` is a legal step of the state machine.
bool CanTransition(JobState from, JobState to);
// How a job that ran to its end ended, from its wait(2) status: COMPLETED for exit code 0,
// OUT_OF_MEMORY when it ran out of memory, else FAILED.
JobState EndedState(int32_t wait_status, bool out_of_memory);

// Why a pending job is not running, as printed in squeue's NODELIST(REASON) column.
enum class PendingReason : uint8_t {
  kNone,
  kPriority,
  kResources,
  kDependency,
  kDependencyNeverSatisfied,
  kBeginTime,
  kJobHeldUser,
  kJobHeldAdmin,
  kPartitionTimeLimit,
  kPartitionNodeLimit,
  kPartitionDown,
  kPartitionInactive,
  kNodeDown,
  kBadConstraints,
  kReqNodeNotAvail,
  kJobArrayTaskLimit,
  kInvalidQOS,
  kQOSMaxGRESPerUser,
  kQOSMaxJobsPerUserLimit,
  kReservation,
  kReservedForMaintenance,  // its nodes are in a MAINT reservation over its time limit
  kReservationDeleted,      // the reservation it names is gone
  // Association and QOS limits (sched/limits): what holds a job, as Slurm names it.
  kQOSGrpCpuLimit,
  kQOSGrpMemLimit,
  kQOSGrpNodeLimit,
  kQOSGrpGRES,
  kQOSGrpBillingLimit,
  kQOSGrpJobsLimit,
  kQOSMaxCpuPerUserLimit,
  kQOSMaxMemoryPerUser,
  kQOSMaxNodePerUserLimit,
  kQOSMaxBillingPerUser,
  kAssocGrpCpuLimit,
  kAssocGrpMemLimit,
  kAssocGrpNodeLimit,
  kAssocGrpGRES,
  kAssocGrpBillingLimit,
  kAssocGrpJobsLimit,
  kAssocMaxJobsLimit,
  kQOSMaxCpuPerJobLimit,
  kQOSMaxMemoryPerJob,
  kQOSMaxNodePerJobLimit,
  kQOSMaxGRESPerJob,
  kQOSMaxBillingPerJob,
  kQOSMaxWallDurationPerJobLimit,
  kAssocMaxCpuPerJobLimit,
  kAssocMaxMemoryPerJob,
  kAssocMaxNodePerJobLimit,
  kAssocMaxGRESPerJob,
  kAssocMaxBillingPerJob,
  kAssocMaxWallDurationPerJobLimit,
  // A QOS's MinTRESPerJob: the job asks for less than it must.
  kQOSMinCpuNotSatisfied,
  kQOSMinMemory,
  kQOSMinNode,
  kQOSMinGRES,
  kQOSMinBilling,
  // GrpTRESMins: the TRES-minutes of a QOS or an account used up.
  kQOSGrpCPUMinutesLimit,
  kQOSGrpMemoryMinutes,
  kQOSGrpNodeMinutes,
  kQOSGrpGRESMinutes,
  kQOSGrpBillingMinutes,
  kAssocGrpCPUMinutesLimit,
  kAssocGrpMemMinutes,
  kAssocGrpNodeMinutes,
  kAssocGrpGRESMinutes,
  kAssocGrpBillingMinutes,
  // Requeued and held by the controller because its prolog failed on a node; released by
  // an administrator, as JobHeldAdmin.
  kLaunchFailedRequeuedHeld,
};

// "None", "Priority", "Resources", ... exactly as Slurm prints them.
std::string_view PendingReasonName(PendingReason r);

}  // namespace loom::model
