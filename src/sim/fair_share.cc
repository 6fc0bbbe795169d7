#include "sim/fair_share.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/strings.h"
#include "sched/config.h"
#include "sim/simulator.h"

namespace loom::sim {
namespace {

// The multifactor sum is a whole number from 1 to the highest priority the controller keeps.
constexpr int64_t kMaxPriority = 4294967293LL;

sched::FairShareAlgorithm AlgorithmOf(const conf::PriorityParams& p) {
  return p.no_fair_tree ? sched::FairShareAlgorithm::kClassic
                        : sched::FairShareAlgorithm::kFairTree;
}

}  // namespace

FairShareClock::FairShareClock(const PrioritySetup& setup, const sched::Cluster& cluster,
                               std::span<const SimJob> jobs)
    : setup_(setup), jobs_(jobs), weights_(sched::WeightsFromConfig(setup.params)) {
  totals_.nodes = static_cast<int32_t>(cluster.nodes.size());
  totals_.cpus = 0;
  for (const model::Node& n : cluster.nodes) totals_.cpus += n.capacity.cpus;
  for (const model::Partition& p : cluster.partitions) {
    partition_factor_.push_back(p.priority_job_factor);
    totals_.max_partition_job_factor =
        std::max<int32_t>(totals_.max_partition_job_factor, p.priority_job_factor);
  }
  table_ = sched::BuildShareTable(setup.associations, usage_, AlgorithmOf(setup.params));
  std::map<std::pair<std::string, std::string>, int32_t> assoc;
  for (size_t i = 0; i < table_.tree.size(); ++i) {
    const sched::ShareAssoc& a = table_.tree[i];
    if (!a.user.empty()) assoc.emplace(std::make_pair(a.account, a.user), static_cast<int32_t>(i));
    if (a.parent == 0 && a.user.empty()) {
      top_index_.push_back(static_cast<int32_t>(i));
      history_.accounts.push_back(a.account);
      history_.shares.push_back(static_cast<double>(std::max<int64_t>(0, a.shares)));
    }
  }
  double total = 0;
  for (double s : history_.shares) total += s;
  for (double& s : history_.shares) s = total > 0 ? s / total : 0;
  // Each association's top-level account: walk up to the root's child.
  std::vector<int32_t> top_of(table_.tree.size(), -1);
  for (size_t k = 0; k < top_index_.size(); ++k) top_of[top_index_[k]] = static_cast<int32_t>(k);
  for (size_t i = 1; i < table_.tree.size(); ++i) {
    if (top_of[i] < 0 && table_.tree[i].parent > 0) top_of[i] = top_of[table_.tree[i].parent];
  }
  job_assoc_.assign(jobs.size(), -1);
  job_top_.assign(jobs.size(), -1);
  for (size_t j = 0; j < jobs.size(); ++j) {
    auto it = assoc.find({jobs[j].account, jobs[j].user});
    if (it == assoc.end()) continue;
    job_assoc_[j] = it->second;
    job_top_[j] = top_of[it->second];
  }
  const Time first = jobs.empty() ? 0 : jobs.front().submit;
  usage_.Advance(first, setup.params.decay_half_life_s, setup.params.usage_reset);
  usage_.set_charged_to(first);
  calculated_at_ = first;
  next_calc_ = sched::SaturatingAdd(first, std::max<int64_t>(1, setup.params.calc_period_s));
  next_sample_ = first;
}

double FairShareClock::BillingPerSecond(int64_t cpus, int64_t gpus, int32_t nodes) const {
  core::TresVector tres;
  tres.Set(core::kTresCpu, cpus);
  tres.Set(core::kTresNode, nodes);
  if (gpus > 0) tres.Set(core::kTresGpu, gpus);
  return setup_.billing.Billing(tres, setup_.params.max_tres);
}

void FairShareClock::Charge(int32_t j, double billing_per_s, Time start, Time until) {
  const Time from = std::max(start, usage_.charged_to());
  if (until <= from) return;
  // What was charged before decays to `until` first, as in the controller.
  usage_.Advance(until, setup_.params.decay_half_life_s, setup_.params.usage_reset);
  usage_.Charge(jobs_[j].account, jobs_[j].user, billing_per_s * static_cast<double>(until - from));
  stale_ = true;
}

void FairShareClock::Recalculate(Time now, bool period, std::span<const Running> running) {
  if (period) {
    usage_.Advance(now, setup_.params.decay_half_life_s, setup_.params.usage_reset);
    for (const Running& r : running) Charge(r.job, r.billing_per_s, r.start, now);
    usage_.set_charged_to(now);
    calculated_at_ = now;
    next_calc_ = sched::SaturatingAdd(now, std::max<int64_t>(1, setup_.params.calc_period_s));
    stale_ = true;
  }
  if (!stale_) return;
  stale_ = false;
  for (sched::ShareAssoc& a : table_.tree) {
    if (!a.user.empty()) a.usage = usage_.UsageOf(a.account, a.user);
  }
  table_.values = sched::ComputeFairShare(table_.tree, AlgorithmOf(setup_.params));
}

int64_t FairShareClock::PriorityOf(int32_t j) const {
  const SimJob& job = jobs_[j];
  if (!multifactor()) return job.priority;
  sched::PriorityInputs in;
  in.eligible_since = std::max(job.submit, job.begin);
  in.nodes = std::max(1, job.shape.min_nodes);
  in.cpus = std::max<int64_t>(1, job.shape.TotalCpus());
  if (job.partition >= 0 && static_cast<size_t>(job.partition) < partition_factor_.size()) {
    in.partition_job_factor = partition_factor_[job.partition];
  }
  if (job_assoc_[j] >= 0) in.fairshare_factor = table_.values[job_assoc_[j]].fairshare;
  return std::clamp<int64_t>(sched::MultifactorPriority(weights_, in, totals_, calculated_at_), 1,
                             kMaxPriority);
}

void FairShareClock::MaybeSample(Time now, std::span<const int32_t> waiting_jobs) {
  if (now < next_sample_) return;
  const int64_t every = std::max(setup_.sample_every_s, setup_.params.calc_period_s);
  next_sample_ = sched::SaturatingAdd(now, std::max<int64_t>(1, every));
  ShareSample s;
  s.time = now;
  for (int32_t i : top_index_) s.usage.push_back(table_.values[i].raw_usage);
  s.waiting.assign(top_index_.size(), 0);
  for (int32_t j : waiting_jobs) {
    if (job_top_[j] >= 0) s.waiting[job_top_[j]] = 1;
  }
  history_.samples.push_back(std::move(s));
}

double JainIndex(const ShareHistory& h, const ShareSample& s) {
  double usage = 0, shares = 0;
  int n = 0;
  for (size_t a = 0; a < h.accounts.size(); ++a) {
    if (!s.waiting[a] || h.shares[a] <= 0) continue;
    usage += s.usage[a];
    shares += h.shares[a];
    ++n;
  }
  if (n < 2 || usage <= 0) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0, squares = 0;
  for (size_t a = 0; a < h.accounts.size(); ++a) {
    if (!s.waiting[a] || h.shares[a] <= 0) continue;
    const double x = (s.usage[a] / usage) / (h.shares[a] / shares);
    sum += x;
    squares += x * x;
  }
  return squares > 0 ? sum * sum / (n * squares) : std::numeric_limits<double>::quiet_NaN();
}

double MeanJainIndex(const ShareHistory& h) {
  double sum = 0;
  int64_t n = 0;
  for (const ShareSample& s : h.samples) {
    const double j = JainIndex(h, s);
    if (std::isnan(j)) continue;
    sum += j;
    ++n;
  }
  return n > 0 ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace loom::sim
