// Fair Tree and classic fair share on hand-computed trees, usage decay against its closed
// form, and the usage ledger's resets and stored form.
#include "sched/priority/fairshare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/strings.h"
#include "sched/priority/usage.h"

namespace loom::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool IsUserRow(const ShareAssoc& a) { return !a.user.empty(); }

std::string Name(int k, std::string_view prefix) { return core::StrCat(prefix, k); }

// root
//  ├─ physics (60) ─ u1 (1, 100 s), u2 (1, unused)
//  └─ bio (40) ───── u3 (1, 10 s)
std::vector<ShareAssoc> TwoAccounts() {
  return {
      {"root", "", -1, 1, 0},     {"physics", "", 0, 60, 0}, {"physics", "u1", 1, 1, 100},
      {"physics", "u2", 1, 1, 0}, {"bio", "", 0, 40, 0},     {"bio", "u3", 4, 1, 10},
  };
}

TEST(FairTree, UsersOfTheAccountAheadComeFirstThenByTheirOwnLevel) {
  const std::vector<ShareValues> v = ComputeFairShare(TwoAccounts(), FairShareAlgorithm::kFairTree);
  // Level of root's children: physics 0.6 of the shares, 100/110 of the usage; bio 0.4, 10/110.
  EXPECT_NEAR(v[1].level_fs, 0.6 / (100.0 / 110), 1e-12);
  EXPECT_NEAR(v[4].level_fs, 0.4 / (10.0 / 110), 1e-12);
  // bio is ahead: its only user ranks 3 of 3; in physics the idle u2 (level FS infinite)
  // ranks before u1.
  EXPECT_DOUBLE_EQ(v[5].fairshare, 1.0);
  EXPECT_DOUBLE_EQ(v[3].fairshare, 2.0 / 3);
  EXPECT_DOUBLE_EQ(v[2].fairshare, 1.0 / 3);
  EXPECT_TRUE(std::isinf(v[3].level_fs));
  EXPECT_DOUBLE_EQ(v[2].level_fs, 0.5);
  EXPECT_DOUBLE_EQ(v[0].raw_usage, 110);
  EXPECT_DOUBLE_EQ(v[1].raw_usage, 100);
  EXPECT_DOUBLE_EQ(v[2].norm_shares, 0.5);  // among its level
  EXPECT_DOUBLE_EQ(v[4].norm_shares, 0.4);
}

TEST(FairTree, ReproducesSlurmsFiguresForTheSameTreeAndUsage) {
  // Slurm 22.05's `sshare -a -l` for this tree (Fairshare in brackets) and usage:
  //   root ─ root/root [1], bio [40] ─ daemon [1], nobody [2]
  //        └ physics [60] ─ root [1], theory [30] ─ nobody [1]
  const std::vector<ShareAssoc> t = {
      {"root", "", -1, 1, 0},          {"root", "root", 0, 1, 0},
      {"bio", "", 0, 40, 0},           {"bio", "daemon", 2, 1, 0},
      {"bio", "nobody", 2, 2, 447.89}, {"physics", "", 0, 60, 0},
      {"physics", "root", 5, 1, 30236.05}, {"theory", "", 5, 30, 0},
      {"theory", "nobody", 7, 1, 223.95},
  };
  const std::vector<ShareValues> v = ComputeFairShare(t, FairShareAlgorithm::kFairTree);
  struct Row {
    int index;
    double norm_shares, effective_usage, fairshare, level_fs;
  };
  // What Slurm printed (six decimals); inf for no usage.
  const Row rows[] = {
      {1, 0.009901, 0.000000, 1.0, kInf},     {2, 0.396040, 0.014492, 0, 27.327858},
      {3, 0.333333, 0.000000, 0.8, kInf},     {4, 0.666667, 1.000000, 0.6, 0.666667},
      {5, 0.594059, 0.985508, 0, 0.602795},   {6, 0.032258, 0.992647, 0.2, 0.032497},
      {7, 0.967742, 0.007353, 0, 131.618401}, {8, 1.000000, 1.000000, 0.4, 1.000000},
  };
  for (const Row& r : rows) {
    const ShareValues& s = v[r.index];
    EXPECT_NEAR(s.norm_shares, r.norm_shares, 5e-7) << r.index;
    EXPECT_NEAR(s.effective_usage, r.effective_usage, 5e-6) << r.index;
    if (IsUserRow(t[r.index])) EXPECT_DOUBLE_EQ(s.fairshare, r.fairshare) << r.index;
    if (std::isinf(r.level_fs)) {
      EXPECT_TRUE(std::isinf(s.level_fs)) << r.index;
    } else {
      // The usage is known to about a unit (sshare truncates it): level FS to 1e-4.
      EXPECT_NEAR(s.level_fs, r.level_fs, r.level_fs * 1e-4) << r.index;
    }
  }
  EXPECT_NEAR(v[0].raw_usage, 30907.89, 1e-6);
  EXPECT_EQ(v[0].effective_usage, 1.0);
  EXPECT_EQ(v[0].norm_shares, 0.0);
}

TEST(FairTree, TiedUsersShareARankAndTiedAccountsPoolTheirUsers) {
  // Nothing used yet: every level FS is infinite, so everyone ties at the top.
  std::vector<ShareAssoc> idle = TwoAccounts();
  for (ShareAssoc& a : idle) a.usage = 0;
  const std::vector<ShareValues> v = ComputeFairShare(idle, FairShareAlgorithm::kFairTree);
  for (int i : {2, 3, 5}) EXPECT_DOUBLE_EQ(v[i].fairshare, 1.0) << i;

  // Two accounts with the same level FS pool their users, who are then ordered by their own
  // level FS: a's x (0.5/0.25 = 2) before b's y (1/1 = 1) before a's w (0.5/0.75).
  const std::vector<ShareAssoc> pooled = {
      {"root", "", -1, 1, 0}, {"a", "", 0, 1, 0}, {"a", "w", 1, 1, 30},
      {"a", "x", 1, 1, 10},   {"b", "", 0, 1, 0}, {"b", "y", 4, 1, 40},
  };
  const std::vector<ShareValues> p = ComputeFairShare(pooled, FairShareAlgorithm::kFairTree);
  EXPECT_EQ(p[1].level_fs, p[4].level_fs);
  EXPECT_DOUBLE_EQ(p[3].fairshare, 1.0);
  EXPECT_DOUBLE_EQ(p[5].fairshare, 2.0 / 3);
  EXPECT_DOUBLE_EQ(p[2].fairshare, 1.0 / 3);
}

TEST(FairTree, DeeperLevelsNeverOvertakeTheirParentsOrder) {
  // Whatever the usage below, every user of the account ahead at the top ranks above every
  // user of the other: checked on random trees.
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<ShareAssoc> t = {{"root", "", -1, 1, 0},
                                 {"a", "", 0, static_cast<int64_t>(1 + rng() % 9), 0},
                                 {"b", "", 0, static_cast<int64_t>(1 + rng() % 9), 0}};
    std::vector<int32_t> users_of_a, users_of_b;
    for (int k = 0; k < 6; ++k) {
      const int32_t parent = k % 2 == 0 ? 1 : 2;
      // Sub-accounts too: a user two levels down still belongs to a or b.
      const auto sub = static_cast<int32_t>(t.size());
      t.push_back({Name(k, "s"), "", parent, 1 + static_cast<int64_t>(rng() % 5), 0});
      for (int u = 0; u < 3; ++u) {
        (parent == 1 ? users_of_a : users_of_b).push_back(static_cast<int32_t>(t.size()));
        t.push_back({t[sub].account, Name(k * 3 + u, "u"), sub, 1 + static_cast<int64_t>(rng() % 5),
                     static_cast<double>(rng() % 1000)});
      }
    }
    const std::vector<ShareValues> v = ComputeFairShare(t, FairShareAlgorithm::kFairTree);
    if (v[1].level_fs == v[2].level_fs) continue;
    const auto& ahead = v[1].level_fs > v[2].level_fs ? users_of_a : users_of_b;
    const auto& behind = v[1].level_fs > v[2].level_fs ? users_of_b : users_of_a;
    double lowest_ahead = 1, highest_behind = 0;
    for (int32_t u : ahead) lowest_ahead = std::min(lowest_ahead, v[u].fairshare);
    for (int32_t u : behind) highest_behind = std::max(highest_behind, v[u].fairshare);
    EXPECT_GT(lowest_ahead, highest_behind) << "round " << round;
  }
}

TEST(FairTree, ZeroSharesAndFairshareParent) {
  const std::vector<ShareAssoc> t = {
      {"root", "", -1, 1, 0},
      {"a", "", 0, 1, 50},
      {"a", "nil", 1, 0, 0},             // Fairshare=0: factor 0
      {"a", "p", 1, kSharesParent, 5},   // stands in for a
      {"grp", "", 0, kSharesParent, 0},  // transparent: its users join root's level
      {"grp", "g", 4, 1, 0},
  };
  const std::vector<ShareValues> v = ComputeFairShare(t, FairShareAlgorithm::kFairTree);
  EXPECT_EQ(v[2].fairshare, 0.0);
  // g (idle, at root's level) first; then a's place, where p stands in for a.
  EXPECT_DOUBLE_EQ(v[5].fairshare, 1.0);
  EXPECT_DOUBLE_EQ(v[3].fairshare, 2.0 / 3);
  EXPECT_DOUBLE_EQ(v[3].level_fs, v[1].level_fs);
}

TEST(Classic, TwoToTheMinusEffectiveUsageOverShares) {
  const std::vector<ShareValues> v = ComputeFairShare(TwoAccounts(), FairShareAlgorithm::kClassic);
  const double u_phys = 100.0 / 110, u_bio = 10.0 / 110;
  // Under the root, effective usage is the normalised usage.
  EXPECT_DOUBLE_EQ(v[1].effective_usage, u_phys);
  EXPECT_DOUBLE_EQ(v[1].fairshare, std::exp2(-u_phys / 0.6));
  // Below, a user's own usage pulled toward its account's by its part of the shares.
  EXPECT_DOUBLE_EQ(v[2].effective_usage, u_phys);
  EXPECT_DOUBLE_EQ(v[3].effective_usage, 0 + (u_phys - 0) * 0.5);
  EXPECT_DOUBLE_EQ(v[3].fairshare, std::exp2(-(u_phys * 0.5) / 0.3));
  EXPECT_DOUBLE_EQ(v[5].effective_usage, u_bio);
  EXPECT_DOUBLE_EQ(v[5].fairshare, std::exp2(-u_bio / 0.4));
  // Nothing used: every factor is 1; the root's effective usage is all of it (2^-1).
  std::vector<ShareAssoc> idle = TwoAccounts();
  for (ShareAssoc& a : idle) a.usage = 0;
  const std::vector<ShareValues> none = ComputeFairShare(idle, FairShareAlgorithm::kClassic);
  EXPECT_DOUBLE_EQ(none[0].fairshare, 0.5);
  for (size_t i = 1; i < none.size(); ++i) EXPECT_DOUBLE_EQ(none[i].fairshare, 1.0) << i;
}

TEST(Usage, DecayMatchesTheClosedForm) {
  // Charged in many steps or decayed once, usage after t is u0 * 2^(-t / half-life).
  UsageLedger stepwise, once;
  const int64_t half_life = 7 * 86400;
  stepwise.Advance(1000, half_life, UsageReset::kNone);
  once.Advance(1000, half_life, UsageReset::kNone);
  stepwise.Charge("a", "u", 3600);
  once.Charge("a", "u", 3600);
  for (Time t = 1000 + 300; t <= 1000 + 30 * 86400; t += 300) {
    stepwise.Advance(t, half_life, UsageReset::kNone);
  }
  once.Advance(1000 + 30 * 86400, half_life, UsageReset::kNone);
  const double closed = 3600 * std::exp2(-30.0 * 86400 / half_life);
  EXPECT_NEAR(stepwise.UsageOf("a", "u"), closed, closed * 1e-9);
  EXPECT_NEAR(once.UsageOf("a", "u"), closed, closed * 1e-12);
  EXPECT_DOUBLE_EQ(DecayFactor(half_life, half_life), 0.5);
  EXPECT_DOUBLE_EQ(DecayFactor(100, 0), 1.0);  // no decay
}

TEST(Usage, UsageEqualsTheSumOfBilledSecondsWithoutDecay) {
  UsageLedger l;
  l.Advance(0, 0, UsageReset::kNone);
  double sum = 0;
  std::mt19937 rng(3);
  for (int k = 0; k < 1000; ++k) {
    const double billed = static_cast<double>(rng() % 64) * static_cast<double>(rng() % 3600);
    l.Charge("a", "u", billed);
    sum += billed;
    l.Advance(k * 60, 0, UsageReset::kNone);
  }
  EXPECT_DOUBLE_EQ(l.UsageOf("a", "u"), sum);
}

TEST(Usage, ResetPeriodsClearAtTheirBoundary) {
  // 2026-09-30 23:00 UTC (a Wednesday).
  const Time t = 1790809200;
  EXPECT_EQ(*NextReset(UsageReset::kDaily, t), 1790812800);               // Oct 1 00:00
  EXPECT_EQ(*NextReset(UsageReset::kWeekly, t), 1790812800 + 4 * 86400);  // Mon Oct 5
  EXPECT_EQ(*NextReset(UsageReset::kMonthly, t), 1790812800);             // Oct 1
  EXPECT_EQ(*NextReset(UsageReset::kQuarterly, t), 1790812800);           // Oct 1
  EXPECT_EQ(*NextReset(UsageReset::kYearly, t), 1798761600);              // 2027-01-01
  EXPECT_FALSE(NextReset(UsageReset::kNone, t));

  UsageLedger l;
  l.Advance(t, 0, UsageReset::kMonthly);
  l.Charge("a", "u", 50);
  l.Advance(t + 1800, 0, UsageReset::kMonthly);  // still September
  EXPECT_EQ(l.UsageOf("a", "u"), 50);
  l.Advance(t + 7200, 0, UsageReset::kMonthly);  // October
  EXPECT_EQ(l.UsageOf("a", "u"), 0);
}

TEST(Usage, StoredFormRoundTripsAndBadTextIsNamed) {
  UsageLedger l;
  l.Advance(500, 3600, UsageReset::kNone);
  l.Charge("physics", "alice", 1.0 / 3);
  l.Charge("bio", "bob", 1e12);
  core::TresVector tres;
  tres.Set("cpu", 3);
  tres.Set("gres/gpu:h100", 1);
  l.ChargeTres("physics", "alice", tres, 100.5);
  l.ChargeQosTres("normal", tres, 7);
  l.set_charged_to(499);
  StatusOr<UsageLedger> back = UsageLedger::Parse(l.Serialize(), "the usage record");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, l);
  EXPECT_EQ(back->tres_usage().at({"physics", "alice"}).at("cpu"), 301.5);
  EXPECT_EQ(back->qos_tres_usage().at("normal").at("gres/gpu:h100"), 7);
  // TRES usage decays with the rest.
  back->Advance(500 + 3600, 3600, UsageReset::kNone);
  EXPECT_DOUBLE_EQ(back->qos_tres_usage().at("normal").at("cpu"), 10.5);
  StatusOr<UsageLedger> bad = UsageLedger::Parse("loom-usage 1\t1\t2\nphysics\talice\tlots\n", "X");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "X, line 2: expected account, user and usage");
}

}  // namespace
}  // namespace loom::sched
