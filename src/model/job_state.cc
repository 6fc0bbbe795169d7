#include "model/job_state.h"

#include <sys/wait.h>

#include <array>

#include "core/strings.h"

namespace loom::model {
namespace {

struct StateNames {
  JobState state;
  std::string_view name;
  std::string_view short_name;
};

constexpr std::array<StateNames, 13> kStates = {{
    {JobState::kPending, "PENDING", "PD"},
    {JobState::kRunning, "RUNNING", "R"},
    {JobState::kSuspended, "SUSPENDED", "S"},
    {JobState::kCompleting, "COMPLETING", "CG"},
    {JobState::kCompleted, "COMPLETED", "CD"},
    {JobState::kCancelled, "CANCELLED", "CA"},
    {JobState::kFailed, "FAILED", "F"},
    {JobState::kTimeout, "TIMEOUT", "TO"},
    {JobState::kNodeFail, "NODE_FAIL", "NF"},
    {JobState::kPreempted, "PREEMPTED", "PR"},
    {JobState::kBootFail, "BOOT_FAIL", "BF"},
    {JobState::kDeadline, "DEADLINE", "DL"},
    {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"},
}};

}  // namespace

std::string_view JobStateName(JobState s) { return kStates[static_cast<size_t>(s)].name; }

std::string_view JobStateShortName(JobState s) {
  return kStates[static_cast<size_t>(s)].short_name;
}

std::optional<JobState> ParseJobState(std::string_view s) {
  for (const StateNames& n : kStates) {
    if (core::EqualsIgnoreCase(s, n.name) || core::EqualsIgnoreCase(s, n.short_name)) {
      return n.state;
    }
  }
  return std::nullopt;
}

bool IsFinal(JobState s) {
  switch (s) {
    case JobState::kPending:
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
      return false;
    default:
      return true;
  }
}

JobState EndedState(int32_t wait_status, bool out_of_memory) {
  if (out_of_memory) return JobState::kOutOfMemory;
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 ? JobState::kCompleted
                                                                 : JobState::kFailed;
}

bool CanTransition(JobState from, JobState to) {
  using S = JobState;
  if (from == to || from == S::kCompleting || to == S::kCompleting) return false;
  switch (from) {
    case S::kPending:
      // Starts, is cancelled before running, or is rejected at launch.
      return to == S::kRunning || to == S::kCancelled || to == S::kFailed || to == S::kDeadline ||
             to == S::kBootFail;
    case S::kRunning:
      // Ends (through COMPLETING or directly in a simulator), is suspended or requeued.
      return to != S::kBootFail;
    case S::kSuspended:
      return to == S::kRunning || to == S::kCancelled || to == S::kPreempted || to == S::kPending ||
             to == S::kNodeFail;
    default:
      // Final states: only a requeue makes a job PENDING again.
      return to == S::kPending;
  }
}

std::string_view PendingReasonName(PendingReason r) {
  switch (r) {
    case PendingReason::kNone:
      return "None";
    case PendingReason::kPriority:
      return "Priority";
    case PendingReason::kResources:
      return "Resources";
    case PendingReason::kDependency:
      return "Dependency";
    case PendingReason::kDependencyNeverSatisfied:
      return "DependencyNeverSatisfied";
    case PendingReason::kBeginTime:
      return "BeginTime";
    case PendingReason::kJobHeldUser:
      return "JobHeldUser";
    case PendingReason::kJobHeldAdmin:
      return "JobHeldAdmin";
    case PendingReason::kPartitionTimeLimit:
      return "PartitionTimeLimit";
    case PendingReason::kPartitionNodeLimit:
      return "PartitionNodeLimit";
    case PendingReason::kPartitionDown:
      return "PartitionDown";
    case PendingReason::kPartitionInactive:
      return "PartitionInactive";
    case PendingReason::kNodeDown:
      return "NodeDown";
    case PendingReason::kBadConstraints:
      return "BadConstraints";
    case PendingReason::kReqNodeNotAvail:
      return "ReqNodeNotAvail";
    case PendingReason::kJobArrayTaskLimit:
      return "JobArrayTaskLimit";
    case PendingReason::kInvalidQOS:
      return "InvalidQOS";
    case PendingReason::kQOSMaxGRESPerUser:
      return "QOSMaxGRESPerUser";
    case PendingReason::kQOSMaxJobsPerUserLimit:
      return "QOSMaxJobsPerUserLimit";
    case PendingReason::kReservation:
      return "Reservation";
    case PendingReason::kReservedForMaintenance:
      return "ReqNodeNotAvail, Reserved for maintenance";
    case PendingReason::kReservationDeleted:
      return "ReservationDeleted";
    case PendingReason::kQOSGrpCpuLimit:
      return "QOSGrpCpuLimit";
    case PendingReason::kQOSGrpMemLimit:
      return "QOSGrpMemLimit";
    case PendingReason::kQOSGrpNodeLimit:
      return "QOSGrpNodeLimit";
    case PendingReason::kQOSGrpGRES:
      return "QOSGrpGRES";
    case PendingReason::kQOSGrpBillingLimit:
      return "QOSGrpBillingLimit";
    case PendingReason::kQOSGrpJobsLimit:
      return "QOSGrpJobsLimit";
    case PendingReason::kQOSMaxCpuPerUserLimit:
      return "QOSMaxCpuPerUserLimit";
    case PendingReason::kQOSMaxMemoryPerUser:
      return "QOSMaxMemoryPerUser";
    case PendingReason::kQOSMaxNodePerUserLimit:
      return "QOSMaxNodePerUserLimit";
    case PendingReason::kQOSMaxBillingPerUser:
      return "QOSMaxBillingPerUser";
    case PendingReason::kAssocGrpCpuLimit:
      return "AssocGrpCpuLimit";
    case PendingReason::kAssocGrpMemLimit:
      return "AssocGrpMemLimit";
    case PendingReason::kAssocGrpNodeLimit:
      return "AssocGrpNodeLimit";
    case PendingReason::kAssocGrpGRES:
      return "AssocGrpGRES";
    case PendingReason::kAssocGrpBillingLimit:
      return "AssocGrpBillingLimit";
    case PendingReason::kAssocGrpJobsLimit:
      return "AssocGrpJobsLimit";
    case PendingReason::kAssocMaxJobsLimit:
      return "AssocMaxJobsLimit";
    case PendingReason::kQOSMaxCpuPerJobLimit:
      return "QOSMaxCpuPerJobLimit";
    case PendingReason::kQOSMaxMemoryPerJob:
      return "QOSMaxMemoryPerJob";
    case PendingReason::kQOSMaxNodePerJobLimit:
      return "QOSMaxNodePerJobLimit";
    case PendingReason::kQOSMaxGRESPerJob:
      return "QOSMaxGRESPerJob";
    case PendingReason::kQOSMaxBillingPerJob:
      return "QOSMaxBillingPerJob";
    case PendingReason::kQOSMaxWallDurationPerJobLimit:
      return "QOSMaxWallDurationPerJobLimit";
    case PendingReason::kAssocMaxCpuPerJobLimit:
      return "AssocMaxCpuPerJobLimit";
    case PendingReason::kAssocMaxMemoryPerJob:
      return "AssocMaxMemoryPerJob";
    case PendingReason::kAssocMaxNodePerJobLimit:
      return "AssocMaxNodePerJobLimit";
    case PendingReason::kAssocMaxGRESPerJob:
      return "AssocMaxGRESPerJob";
    case PendingReason::kAssocMaxBillingPerJob:
      return "AssocMaxBillingPerJob";
    case PendingReason::kAssocMaxWallDurationPerJobLimit:
      return "AssocMaxWallDurationPerJobLimit";
    case PendingReason::kQOSMinCpuNotSatisfied:
      return "QOSMinCpuNotSatisfied";
    case PendingReason::kQOSMinMemory:
      return "QOSMinMemory";
    case PendingReason::kQOSMinNode:
      return "QOSMinNode";
    case PendingReason::kQOSMinGRES:
      return "QOSMinGRES";
    case PendingReason::kQOSMinBilling:
      return "QOSMinBilling";
    case PendingReason::kQOSGrpCPUMinutesLimit:
      return "QOSGrpCPUMinutesLimit";
    case PendingReason::kQOSGrpMemoryMinutes:
      return "QOSGrpMemoryMinutes";
    case PendingReason::kQOSGrpNodeMinutes:
      return "QOSGrpNodeMinutes";
    case PendingReason::kQOSGrpGRESMinutes:
      return "QOSGrpGRESMinutes";
    case PendingReason::kQOSGrpBillingMinutes:
      return "QOSGrpBillingMinutes";
    case PendingReason::kAssocGrpCPUMinutesLimit:
      return "AssocGrpCPUMinutesLimit";
    case PendingReason::kAssocGrpMemMinutes:
      return "AssocGrpMemMinutes";
    case PendingReason::kAssocGrpNodeMinutes:
      return "AssocGrpNodeMinutes";
    case PendingReason::kAssocGrpGRESMinutes:
      return "AssocGrpGRESMinutes";
    case PendingReason::kAssocGrpBillingMinutes:
      return "AssocGrpBillingMinutes";
    case PendingReason::kLaunchFailedRequeuedHeld:
      return "launch failed requeued held";  // Slurm's description, which squeue shows
  }
  return "None";
}

}  // namespace loom::model
