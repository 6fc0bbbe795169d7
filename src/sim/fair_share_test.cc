// Fair share in virtual time: usage converges toward the configured shares under the
// multifactor priority, not under the workload's order; a clock that only records usage
// changes no schedule; Jain's index as defined in docs/sim.md.
#include "sim/fair_share.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sched/backfill/policy.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace loom::sim {
namespace {

constexpr int64_t kDay = 86400;

// One 100-CPU node; three accounts of one user each submit, at the same steady rate, a
// 20-CPU four-hour job every 80 minutes: each asks for 60% of the machine, more than any
// share, so all three wait all the time and the scheduler decides who runs.
sched::Cluster Machine() {
  SwfTrace trace;
  trace.machine_procs = 100;
  return SwfCluster(trace);
}

std::vector<SimJob> Contention(int64_t days) {
  std::vector<SimJob> jobs;
  const char* accounts[] = {"physics", "chem", "bio"};
  for (Time t = 0; t < days * kDay; t += 4800) {
    for (const char* a : accounts) {
      SimJob j;
      j.id = jobs.size() + 1;
      j.submit = t;
      j.run = 4 * 3600;
      j.estimate = 4 * 3600;
      j.shape.ntasks = 20;
      j.account = a;
      j.user = std::string("u-") + a;
      jobs.push_back(j);
    }
  }
  return jobs;
}

PrioritySetup SetupOf(conf::PriorityType type) {
  PrioritySetup s;
  s.params.type = type;
  s.params.weight_fairshare = 10000;
  s.params.weight_age = 1000;
  s.params.decay_half_life_s = 7 * kDay;
  s.associations.accounts = {{.name = "physics", .parent = "root", .shares = 50, .limits = {}},
                             {.name = "chem", .parent = "root", .shares = 30, .limits = {}},
                             {.name = "bio", .parent = "root", .shares = 20, .limits = {}}};
  for (const char* a : {"physics", "chem", "bio"}) {
    model::UserAssociation u;
    u.account = a;
    u.user = std::string("u-") + a;
    s.associations.associations.push_back(u);
  }
  return s;
}

// Each account's part of the decayed usage at the last sample before `t`.
std::vector<double> SharesAt(const SimResult& r, Time t) {
  const ShareSample* last = nullptr;
  for (const ShareSample& s : r.shares.samples) {
    if (s.time <= t) last = &s;
  }
  EXPECT_NE(last, nullptr);
  double total = 0;
  for (double u : last->usage) total += u;
  std::vector<double> out;
  for (double u : last->usage) out.push_back(u / total);
  return out;
}

SimResult Simulated(const std::vector<SimJob>& jobs, const PrioritySetup* setup) {
  auto policy = sched::MakePolicy("easy", sched::PolicyOptions{});
  EXPECT_TRUE(policy.ok());
  SimOptions opts;
  opts.priority = setup;
  auto r = Simulate(Machine(), jobs, **policy, opts);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : SimResult{};
}

TEST(FairShareSim, UsageConvergesToTheSharesWithinFivePercentOverAMonth) {
  const std::vector<SimJob> jobs = Contention(30);
  const PrioritySetup setup = SetupOf(conf::PriorityType::kMultifactor);
  const SimResult r = Simulated(jobs, &setup);
  ASSERT_EQ(r.shares.accounts, (std::vector<std::string>{"physics", "chem", "bio"}));
  const std::vector<double> want = {0.5, 0.3, 0.2};
  EXPECT_EQ(r.shares.shares, want);
  const std::vector<double> got = SharesAt(r, 30 * kDay);
  for (size_t a = 0; a < want.size(); ++a) {
    EXPECT_NEAR(got[a], want[a], 0.05) << r.shares.accounts[a];
  }
  // Every account waited the whole month: the waits say who was favoured.
  const Fairness f = SummarizeFairness(r);
  EXPECT_LT(f.accounts[0].mean_wait_s, f.accounts[1].mean_wait_s);
  EXPECT_LT(f.accounts[1].mean_wait_s, f.accounts[2].mean_wait_s);
  EXPECT_GT(f.jain_index, 0.95);
}

TEST(FairShareSim, TheWorkloadsOrderGivesEachAccountWhatItAsksFor) {
  // The same month in submission order: a third each, far from the shares.
  const std::vector<SimJob> jobs = Contention(30);
  const PrioritySetup setup = SetupOf(conf::PriorityType::kBasic);
  const SimResult r = Simulated(jobs, &setup);
  const std::vector<double> got = SharesAt(r, 30 * kDay);
  for (double g : got) EXPECT_NEAR(g, 1.0 / 3, 0.01);
  EXPECT_GT(std::abs(got[0] - 0.5), 0.15);
  EXPECT_LT(SummarizeFairness(r).jain_index, 0.9);
}

TEST(FairShareSim, RecordingUsageChangesNoSchedule) {
  const std::vector<SimJob> jobs = Contention(2);
  const PrioritySetup setup = SetupOf(conf::PriorityType::kBasic);
  const SimResult with = Simulated(jobs, &setup);
  const SimResult without = Simulated(jobs, nullptr);
  ASSERT_EQ(with.jobs.size(), without.jobs.size());
  for (size_t i = 0; i < with.jobs.size(); ++i) {
    ASSERT_EQ(with.jobs[i].start, without.jobs[i].start) << "job " << with.jobs[i].id;
  }
  EXPECT_EQ(with.passes, without.passes);
}

TEST(FairShareSim, JainIndexOfTheWaitingAccounts) {
  ShareHistory h;
  h.accounts = {"a", "b", "c"};
  h.shares = {0.25, 0.25, 0.5};
  // a and b wait with usage 3:1 against equal shares: x = 1.5 and 0.5; c does not wait.
  ShareSample s{.time = 0, .usage = {3, 1, 100}, .waiting = {1, 1, 0}};
  EXPECT_DOUBLE_EQ(JainIndex(h, s), 4.0 / (2 * (2.25 + 0.25)));
  s.usage = {2, 2, 0};
  EXPECT_DOUBLE_EQ(JainIndex(h, s), 1.0);
  s.waiting = {1, 0, 0};
  EXPECT_TRUE(std::isnan(JainIndex(h, s)));  // one account alone is neither fair nor unfair
  h.samples = {s, ShareSample{.time = 1, .usage = {3, 1, 0}, .waiting = {1, 1, 0}},
               ShareSample{.time = 2, .usage = {2, 2, 0}, .waiting = {1, 1, 1}}};
  // The first has one account waiting and counts for nothing; in the third c waits without
  // usage: x = 2, 2, 0.
  EXPECT_DOUBLE_EQ(MeanJainIndex(h), (0.8 + 16.0 / (3 * 8)) / 2);
}

}  // namespace
}  // namespace loom::sim
