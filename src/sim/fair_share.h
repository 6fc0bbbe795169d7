// Multifactor priority and fair share in virtual time: the usage each association is charged
// as simulated jobs run, its decay, the fair-share values of the account tree and the
// priorities of waiting jobs, recalculated every PriorityCalcPeriod of simulated time. The
// pieces are the controller's (src/sched/priority: the usage ledger, the tree builder, Fair
// Tree and classic, the multifactor sum), so a simulated cluster ranks jobs as a running one
// would. Also what the report reads: the usage of each top-level account over time.
// Thread-compatible; a FairShareClock belongs to one simulation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "conf/cluster_config.h"
#include "core/tres.h"
#include "model/association.h"
#include "sched/priority/priority.h"
#include "sched/priority/share_tree.h"
#include "sched/priority/usage.h"
#include "sched/types.h"

namespace loom::sim {

using sched::Time;
struct SimJob;

// What the priority of a simulated cluster reads. With PriorityType=priority/basic the jobs
// keep the priority their workload gives them, and usage is still charged and recorded, so
// that a run without fair share can be compared with one that has it.
struct PrioritySetup {
  conf::PriorityParams params;
  core::TresBillingWeights billing;      // TRESBillingWeights; empty: a CPU-second costs 1
  model::AssociationTable associations;  // accounts and users with their shares
  // How often the usage of the top-level accounts is recorded (at least PriorityCalcPeriod).
  int64_t sample_every_s = 3600;
};

// The usage of each top-level account (a child of root) at one time.
struct ShareSample {
  Time time = 0;
  std::vector<double> usage;  // decayed billing-seconds charged under each account
  std::vector<char> waiting;  // whether the account had a job waiting
};

struct ShareHistory {
  std::vector<std::string> accounts;  // the root's children, in the tree's order
  std::vector<double> shares;         // their configured shares, normalised to sum 1
  std::vector<ShareSample> samples;
};

class FairShareClock {
 public:
  // `jobs` are the workload's; each names an (account, user) that `setup.associations` holds.
  FairShareClock(const PrioritySetup& setup, const sched::Cluster& cluster,
                 std::span<const SimJob> jobs);

  bool multifactor() const { return setup_.params.type == conf::PriorityType::kMultifactor; }
  // When the next recalculation is due: PriorityCalcPeriod after the last.
  Time next_calc() const { return next_calc_; }
  // Whether a job's end changed the usage since the values were computed.
  bool stale() const { return stale_; }

  // What a second of a job holding `cpus` CPUs, `gpus` GPUs on `nodes` nodes costs.
  double BillingPerSecond(int64_t cpus, int64_t gpus, int32_t nodes) const;
  // Charges job `j` (by index) for [from, until), from no earlier than what the last
  // recalculation charged: a job that ended, for the rest of its run.
  void Charge(int32_t j, double billing_per_s, Time start, Time until);

  // A period recalculation at `now` (decay, then each running job charged up to now) when
  // `period`, then the tree's values anew; age counts at period recalculations only, as in
  // Slurm. `running` holds (job index, billing per second, start) of every running job.
  struct Running {
    int32_t job;
    double billing_per_s;
    Time start;
  };
  void Recalculate(Time now, bool period, std::span<const Running> running);
  // Job `j`'s priority by the last calculation (its workload's under priority/basic).
  int64_t PriorityOf(int32_t j) const;

  // Records the top-level accounts' usage when a sample is due; `waiting_jobs` are the
  // indices of the jobs waiting now.
  void MaybeSample(Time now, std::span<const int32_t> waiting_jobs);
  // The top-level account of job `j` (an index into history().accounts), or -1.
  int32_t TopAccountOf(int32_t j) const { return job_top_[j]; }
  const ShareHistory& history() const { return history_; }
  const sched::ShareTable& table() const { return table_; }

 private:
  const PrioritySetup& setup_;
  std::span<const SimJob> jobs_;
  sched::MultifactorWeights weights_;
  sched::ClusterTotals totals_;
  std::vector<int32_t> partition_factor_;  // PriorityJobFactor of each partition
  sched::UsageLedger usage_;
  sched::ShareTable table_;
  std::vector<int32_t> job_assoc_;  // each job's user association in table_.tree
  std::vector<int32_t> job_top_;    // each job's top-level account in history_
  std::vector<int32_t> top_index_;  // history_'s accounts in table_.tree
  Time calculated_at_ = 0;
  Time next_calc_ = sched::kNever;
  Time next_sample_ = 0;
  bool stale_ = true;
  ShareHistory history_;
};

// Fairness over a run (docs/sim.md, "Fair share"): Jain's index of the accounts' usage shares
// against their configured shares, among the accounts with a job waiting, averaged over the
// samples where at least two accounts wait; NaN when none does.
double MeanJainIndex(const ShareHistory& h);
// Jain's index of one sample: (sum x)^2 / (n sum x^2), x being each waiting account's part of
// the waiting accounts' usage over its part of their shares; NaN for fewer than two.
double JainIndex(const ShareHistory& h, const ShareSample& s);

}  // namespace loom::sim
