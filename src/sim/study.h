// The experiments `loom sim` runs, wired here so that the command only parses its options
// and prints: one workload through each policy (and, on GPU workloads, each placement),
// side by side, one thread per run. Runs share nothing but the read-only workload.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "conf/cluster_config.h"
#include "core/status.h"
#include "core/tres.h"
#include "sched/backfill/policy.h"
#include "sim/fair_share.h"
#include "sim/gpu_workload.h"
#include "sim/maintenance.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim/swf.h"
#include "sim/synthetic.h"
#include "sim/workload.h"

namespace loom::sim {

// What the command sets of the policies (the scheduler's own types, named here so that the
// command needs nothing of src/sched).
using PolicyOptions = sched::PolicyOptions;
using BackfillOrder = sched::BackfillOrder;

// ---------------------------------------------------------------------- priority and shares

// The priorities a study compares (docs/sim.md, "Fair share"): "basic" (the workload's order),
// "multifactor" (age and job size) and "fairshare" (multifactor with fair share).
struct PriorityStudy {
  std::vector<std::string> names;  // empty: the workload's order, and no fair-share report
  // The multifactor settings: a slurm.conf's Priority* keys and TRESBillingWeights when it
  // sets PriorityType=priority/multifactor, else Loom's defaults for the simulator.
  conf::PriorityParams params = DefaultSimPriority();
  core::TresBillingWeights billing;
  std::string shares;  // --shares: a sacctmgr dump file or ACCOUNT=N,...; empty: equal shares
  int64_t sample_every_s = 3600;

  static conf::PriorityParams DefaultSimPriority();
};

// The SchedulerParameters of the slurm.conf at `path` as policy options; its warnings are
// appended to `*warnings`, one per line. With `priority`, a file that sets
// PriorityType=priority/multifactor also gives it its Priority* keys and TRESBillingWeights.
StatusOr<PolicyOptions> PolicyOptionsFromFile(const std::string& path, std::string* warnings,
                                              PriorityStudy* priority = nullptr);

// One setup per name of `study`, each with the shares (`study.shares`, else the workload's
// own `accounts`) and every account and user of `jobs`; notes say what was assumed. Fails
// for an unknown name or shares that do not parse.
StatusOr<std::vector<PrioritySetup>> PrioritySetups(const PriorityStudy& study,
                                                    std::span<const SimJob> jobs,
                                                    const model::AssociationTable& accounts,
                                                    std::vector<std::string>* notes);

// ------------------------------------------------------------------------------ SWF traces

struct SwfStudy {
  std::string trace_path;  // empty: the built-in KTH SP2 trace
  SwfReadOptions read;
  EstimateKind estimate = EstimateKind::kRequested;
  std::vector<std::string> policies;  // names MakePolicy knows
  PolicyOptions policy_options;
  PriorityStudy priority;  // with names: each policy under each priority, "policy+priority"
  bool record_nodes = false;  // SimOptions::record_nodes
  MaintenanceSpec maint;      // --maint: windows added to the trace
  // Fail before the runs when the trace's header gives no UnixStartTime (the accounting
  // needs to know when its time 0 was).
  bool require_unix_start = false;
  // Called from the runs' threads with a run's index and the fraction of its jobs done.
  std::function<void(size_t, double)> progress;
};

struct SwfStudyResult {
  SwfTrace trace;                   // as read, jobs included
  sched::Cluster cluster;           // the machine, as the runs saw it
  std::vector<SimJob> jobs;         // the workload the runs replayed
  std::vector<SimResult> results;   // one per policy (and priority), in the order asked
  std::vector<Summary> rows;        // their summaries
  std::vector<Fairness> fairness;   // with priorities: each run's fairness
  std::vector<std::string> notes;   // what was assumed on the way
};

// Fails for an unknown policy, an unreadable trace, a trace no job of which passes the
// input filter, or a run that fails (Simulate's errors, with the policy named).
StatusOr<SwfStudyResult> RunSwfStudy(const SwfStudy& study);

// A job that started later than a reservation promised it. Under `slurm` only the promise
// made to the first waiting job of its partition binds: reservations live one backfill
// cycle, and the main scheduler starts nothing behind that job (docs/sim.md).
struct LateStart {
  std::string policy;
  sched::JobId id = 0;
  Time start = 0;
  Time promised = 0;
};
std::vector<LateStart> LateStarts(std::span<const SimResult> results);

// ---------------------------------------------------------------------------- GPU workloads

struct GpuStudy {
  std::string trace;      // the Alibaba GPU trace (directory or pod CSV); empty: synthetic
  SyntheticOptions synthetic;
  // Submit times pulled toward the first submission by this factor, in (0, 1].
  double arrival_scale = 1.0;
  std::vector<std::string> policies;
  std::vector<std::string> placements;  // "first-fit", "topo"
  PolicyOptions policy_options;
  double comm_fraction = 0;  // SimOptions::comm_fraction
  PriorityStudy priority;    // with names: "placement/policy+priority"
  bool record_nodes = false;  // SimOptions::record_nodes
  MaintenanceSpec maint;      // --maint: windows added to the workload
};

struct GpuStudyResult {
  GpuWorkload workload;
  std::vector<SimResult> results;  // placement-major, each named "placement/policy"
  std::vector<GpuSummary> rows;
  std::vector<Fairness> fairness;  // with priorities: each run's fairness
};

StatusOr<GpuStudyResult> RunGpuStudy(const GpuStudy& study);

// Whether `path` names a GPU trace rather than an SWF file (a directory or a .csv file).
bool IsGpuTrace(const std::string& path);
// "flat", "tree (2 levels, 16 leaf switches)", "blocks (4 NVLink blocks)".
std::string DescribeTopology(const model::ClusterTopology& topology);

}  // namespace loom::sim
