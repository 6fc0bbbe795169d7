// Fair share in the controller's core: usage charged as jobs run and end, decay at each
// PriorityCalcPeriod, fair-share factors from the tree, pending priorities that follow them,
// an administrator's priority left alone, and usage that survives a restart.
#include <cmath>

#include "ctld/controller_core_test_util.h"

namespace loom::ctld {
namespace {

conf::SiteConfig FairSite(std::string extra = "") {
  auto site = conf::testing::SiteFromText(
      "ctld_fairshare_test",
      "ClusterName=t\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\n"
      "PriorityType=priority/multifactor\nPriorityWeightFairshare=10000\n"
      "PriorityWeightAge=1000\nPriorityCalcPeriod=5\nPriorityDecayHalfLife=1-0\n" +
          extra +
          "NodeName=n[1-2] CPUs=8 RealMemory=16000\n"
          "PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=1-00:00:00\n");
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

// root ─ physics (1) ─ alice, bio (1) ─ bob
std::shared_ptr<const model::AssociationTable> Tree() {
  auto t = std::make_shared<model::AssociationTable>();
  t->accounts = {{"root", "", 1, {}}, {"physics", "root", 1, {}}, {"bio", "root", 1, {}}};
  t->associations = {{"physics", "alice", "", {"normal"}, "", 1, {}},
                     {"bio", "bob", "", {"normal"}, "", 1, {}}};
  t->default_account = {{"alice", "physics"}, {"bob", "bio"}};
  t->qos = {"normal"};
  t->qos_policy["normal"] = model::QosPolicy{};
  return t;
}

class FairShareTest : public testing::Test {
 protected:
  explicit FairShareTest(std::string extra = "")
      : core_(FairSite(std::move(extra)), CoreOptions{.kill_wait_s = 30, .slurmd_timeout_s = 300},
              1) {
    core_.SetAssociations(Tree());
    Effects fx;
    core_.NodeAlive("n1", 1000, &fx);
    core_.NodeAlive("n2", 1000, &fx);
    core_.Tick(1000, &fx);
  }
  JobId Submit(const Caller& who, const std::string& account, int cpus, Time now) {
    model::JobRequest r = Req(cpus);
    r.account = account;
    r.qos = "normal";
    Effects fx;
    auto id = core_.Submit(r, who, now, &fx);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }
  double Factor(const std::string& account, const std::string& user) {
    auto it = core_.fair_share().factor.find({account, user});
    return it == core_.fair_share().factor.end() ? -1 : it->second;
  }
  ControllerCore core_;
};

TEST_F(FairShareTest, UsageIsChargedAsJobsRunAndTheIdleAccountGoesFirst) {
  const JobId busy = Submit(kAlice, "physics", 8, 1000);
  Effects fx;
  core_.Schedule(1000, &fx);
  ASSERT_EQ(core_.Find(busy)->job.state, JobState::kRunning);
  // A calculation while it runs charges 8 CPUs x 300 s; its end charges the rest.
  core_.Tick(1300, &fx);
  EXPECT_NEAR(core_.usage().UsageOf("physics", "alice"), 8 * 300.0, 1e-9);
  core_.JobEnded(busy, 0, false, 1400, &fx);
  // What was charged decays first, over the 100 s since.
  const double decay = std::exp2(-100.0 / 86400);
  EXPECT_NEAR(core_.usage().UsageOf("physics", "alice"), 8 * 300.0 * decay + 8 * 100.0, 1e-9);
  EXPECT_TRUE(core_.usage_unstored());

  // The next tick recomputes fair share: bob (idle) ranks first.
  core_.Tick(1401, &fx);
  EXPECT_DOUBLE_EQ(Factor("bio", "bob"), 1.0);
  EXPECT_DOUBLE_EQ(Factor("physics", "alice"), 0.5);
  const JobId a = Submit(kAlice, "physics", 1, 1402);
  const JobId b = Submit(kBob, "bio", 1, 1402);
  EXPECT_EQ(core_.Find(b)->job.priority - core_.Find(a)->job.priority, 5000);
  const PriorityFactors f = core_.FactorsOf(*core_.Find(b));
  EXPECT_DOUBLE_EQ(f.fairshare, 1.0);
  EXPECT_EQ(f.priority, core_.Find(b)->job.priority);
}

TEST_F(FairShareTest, PendingPrioritiesFollowFairShareAndAnAdministratorsPriorityStays) {
  // bob's account uses the cluster: a job holds one node, then jobs wait.
  const JobId run = Submit(kBob, "bio", 8, 1000);
  Effects fx;
  core_.Schedule(1000, &fx);
  ASSERT_EQ(core_.Find(run)->job.state, JobState::kRunning);
  const JobId a = Submit(kAlice, "physics", 8, 1000);
  const JobId b = Submit(kBob, "bio", 8, 1000);
  const JobId fixed = Submit(kBob, "bio", 8, 1000);
  ASSERT_TRUE(core_.UpdateJob(fixed, PriorityEdit(77), kRoot, 1000, &fx).ok());
  // Nothing charged yet: a tie.
  EXPECT_EQ(core_.Find(a)->job.priority, core_.Find(b)->job.priority);
  core_.Tick(1300, &fx);  // a calculation: bob's usage counts
  EXPECT_GT(core_.Find(a)->job.priority, core_.Find(b)->job.priority);
  EXPECT_EQ(core_.Find(fixed)->job.priority, 77);
}

TEST_F(FairShareTest, UsageDecaysAtEachCalculationAndSurvivesARestart) {
  const JobId run = Submit(kAlice, "physics", 4, 1000);
  Effects fx;
  core_.Schedule(1000, &fx);
  core_.JobEnded(run, 0, false, 1000 + 3600, &fx);
  const double charged = 4 * 3600.0;
  EXPECT_NEAR(core_.usage().UsageOf("physics", "alice"), charged, 1e-9);
  // A day later (a half-life), half of it is left.
  for (Time t = 1000 + 3600; t <= 1000 + 3600 + 86400; t += 300) core_.Tick(t, &fx);
  EXPECT_NEAR(core_.usage().UsageOf("physics", "alice"), charged / 2, charged * 1e-9);

  // The stored form brings back the same usage and, with it, the same factors.
  StatusOr<sched::UsageLedger> stored = sched::UsageLedger::Parse(core_.usage().Serialize(), "t");
  ASSERT_TRUE(stored.ok());
  ControllerCore restarted(FairSite(), CoreOptions{.kill_wait_s = 30, .slurmd_timeout_s = 300}, 9);
  restarted.SetAssociations(Tree());
  restarted.RestoreUsage(*stored);
  restarted.Tick(1000 + 3600 + 86400, &fx);
  EXPECT_EQ(restarted.usage(), core_.usage());
  EXPECT_EQ(restarted.fair_share().factor, core_.fair_share().factor);
}

class ClassicTest : public FairShareTest {
 protected:
  ClassicTest() : FairShareTest("PriorityFlags=NO_FAIR_TREE\n") {}
};

TEST_F(ClassicTest, TheClassicFactorIsTwoToTheMinusUsageOverShares) {
  const JobId run = Submit(kAlice, "physics", 8, 1000);
  Effects fx;
  core_.Schedule(1000, &fx);
  core_.JobEnded(run, 0, false, 1100, &fx);
  core_.Tick(1101, &fx);
  // alice has all the usage (effective usage 1) of half the shares: 2^(-1/0.5).
  EXPECT_DOUBLE_EQ(Factor("physics", "alice"), 0.25);
  EXPECT_DOUBLE_EQ(Factor("bio", "bob"), 1.0);
}

// PriorityWeightAssoc and PriorityWeightTRES: bio's Priority=10 (bob inherits it), physics's
// 5 with alice's own 0; a weight per CPU and per MB of memory over the partition's 16 CPUs and
// 32,000 MB.
class WeightsTest : public FairShareTest {
 protected:
  WeightsTest()
      : FairShareTest("PriorityWeightAssoc=1000\nPriorityWeightTRES=CPU=2000,Mem=4000\n") {
    auto t = std::make_shared<model::AssociationTable>(*Tree());
    t->accounts[1].priority = 5;
    t->accounts[2].priority = 10;
    core_.SetAssociations(t);
    Effects fx;
    core_.Tick(1001, &fx);
  }
};

TEST_F(WeightsTest, AssociationPriorityAndTresFactors) {
  model::JobRequest r = Req(4);
  r.account = "bio";
  r.qos = "normal";
  r.mem_per_node_mb = 8000;
  r.shape.mem_per_node_mb = 8000;
  Effects fx;
  const JobId bobs = *core_.Submit(r, kBob, 1001, &fx);
  const JobId alices = Submit(kAlice, "physics", 4, 1001);
  const PriorityFactors b = core_.FactorsOf(*core_.Find(bobs));
  const PriorityFactors a = core_.FactorsOf(*core_.Find(alices));
  EXPECT_DOUBLE_EQ(b.assoc, 1.0);  // 10 of 10, from its account
  EXPECT_DOUBLE_EQ(a.assoc, 0.5);  // 5 of 10
  ASSERT_EQ(b.tres.size(), 2u);
  EXPECT_EQ(b.tres[0].first, "cpu");
  EXPECT_DOUBLE_EQ(b.tres[0].second, 4.0 / 16);
  EXPECT_EQ(b.tres[1].first, "mem");
  EXPECT_DOUBLE_EQ(b.tres[1].second, 8000.0 / 32000);
  // Neither has usage: the rest is the same. Bob's 1000 x 1 + 2000 x 0.25 + 4000 x 0.25
  // against alice's 1000 x 0.5 + 2000 x 0.25 (she asks for no memory).
  EXPECT_EQ(b.fairshare, a.fairshare);
  EXPECT_EQ(b.priority - a.priority, 2500 - 1000);
}

}  // namespace
}  // namespace loom::ctld
