// Association and QOS limits: parsing sacctmgr's TRES limits, Slurm's reason names, the
// tally, and every policy on random queues: no pass starts jobs that together go over a
// limit, and a job held by a limit keeps nobody else from starting.
#include "sched/limits/limits.h"

#include <gtest/gtest.h>

#include <random>

#include "sched/backfill/policy.h"

namespace loom::sched {
namespace {

using model::PendingReason;

TEST(TresCaps, ParseSacctmgrsFormAndRefuseBadItems) {
  auto caps = ParseTresCaps("cpu=16,GRES/gpu=4,mem=64G,gres/gpu:h100=0,node=-1");
  ASSERT_TRUE(caps.ok()) << caps.status();
  EXPECT_EQ(*caps, (std::vector<TresCap>{
                       {"cpu", 16}, {"gres/gpu", 4}, {"mem", 65536}, {"gres/gpu:h100", 0}}));
  EXPECT_FALSE(ParseTresCaps("cpu").ok());
  auto bad = ParseTresCaps("cpu=lots");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cpu=lots"), std::string::npos) << bad.status();
}

TEST(LimitReasons, SlurmsNames) {
  EXPECT_EQ(model::PendingReasonName(LimitReason(LimitKind::kQosGroup, "gres/gpu")), "QOSGrpGRES");
  EXPECT_EQ(model::PendingReasonName(LimitReason(LimitKind::kQosGroup, "cpu")), "QOSGrpCpuLimit");
  EXPECT_EQ(model::PendingReasonName(LimitReason(LimitKind::kQosPerUser, "gres/gpu:a100")),
            "QOSMaxGRESPerUser");
  EXPECT_EQ(model::PendingReasonName(LimitReason(LimitKind::kQosPerUser, "")),
            "QOSMaxJobsPerUserLimit");
  EXPECT_EQ(model::PendingReasonName(LimitReason(LimitKind::kAssocGroup, "gres/gpu")),
            "AssocGrpGRES");
  EXPECT_EQ(model::PendingReasonName(LimitReason(LimitKind::kAssocUser, "")), "AssocMaxJobsLimit");
  EXPECT_EQ(model::PendingReasonName(LimitReason(LimitKind::kQosPerJob, "wall")),
            "QOSMaxWallDurationPerJobLimit");
  EXPECT_EQ(model::PendingReasonName(LimitReason(LimitKind::kAssocPerJob, "node")),
            "AssocMaxNodePerJobLimit");
}

TEST(LimitTally, GrpTRESMinsCountsUsageAndTimeLeftAndSafeWantsTheWholeRun) {
  // 100 CPU-minutes: 40 used (decayed usage), a running 1-CPU job with 30 minutes left.
  LimitTable t;
  t.scopes = {{LimitKind::kAssocGroup, {}, -1, {{"cpu", 100}}}};
  core::TresVector used;
  used.Set("cpu", 40 * 60);
  t.AddUsed(0, used);
  core::TresVector one;
  one.Set("cpu", 1);
  t.AddRunning(one, {0}, 30 * 60);
  PendingJob job;  // 1 CPU for 40 minutes: 110 in all
  job.limit_scopes = {0};
  job.limit_tres = one;
  job.limit_tres_secs = one * (40 * 60);
  LimitTally tally(&t);
  EXPECT_EQ(tally.Check(job), PendingReason::kNone);  // 70 < 100: not reached
  tally.Charge(job);                                  // 110: reached
  EXPECT_EQ(tally.Check(job), PendingReason::kAssocGrpCPUMinutesLimit);
  // AccountingStorageEnforce=safe: the whole run must fit.
  t.safe = true;
  LimitTally safe(&t);
  EXPECT_EQ(safe.Check(job), PendingReason::kAssocGrpCPUMinutesLimit);
  job.limit_tres_secs = one * (30 * 60);  // 100 exactly: fits
  EXPECT_EQ(safe.Check(job), PendingReason::kNone);
  // A job that asks for none of the TRES is not held by it.
  PendingJob gpu;
  gpu.limit_scopes = {0};
  gpu.limit_tres_secs.Set("gres/gpu", 3600);
  EXPECT_EQ(tally.Check(gpu), PendingReason::kNone);
  EXPECT_EQ(model::PendingReasonName(LimitMinutesReason(LimitKind::kQosGroup, "gres/gpu")),
            "QOSGrpGRESMinutes");
  EXPECT_EQ(model::PendingReasonName(LimitMinutesReason(LimitKind::kQosGroup, "cpu")),
            "QOSGrpCPUMinutesLimit");
  EXPECT_EQ(model::PendingReasonName(LimitMinutesReason(LimitKind::kAssocGroup, "billing")),
            "AssocGrpBillingMinutes");
}

TEST(LimitTally, CountsRunningJobsAndThoseThePassStarts) {
  LimitTable t;
  t.scopes = {{LimitKind::kQosGroup, {{"gres/gpu", 8}}, -1}, {LimitKind::kQosPerUser, {}, 2}};
  core::TresVector four;
  four.Set("gres/gpu", 4);
  t.AddRunning(four, {0, 1});
  PendingJob job;
  job.limit_scopes = {0, 1};
  job.limit_tres = four;
  LimitTally tally(&t);
  EXPECT_EQ(tally.Check(job), PendingReason::kNone);
  tally.Charge(job);
  // 8 GPUs in use: the QOS's group limit holds the next one.
  EXPECT_EQ(tally.Check(job), PendingReason::kQOSGrpGRES);
  PendingJob cpu_only;
  cpu_only.limit_scopes = {0, 1};
  cpu_only.limit_tres.Set("cpu", 1);
  // No GPUs asked for: only the per-user job count applies (2 running).
  EXPECT_EQ(tally.Check(cpu_only), PendingReason::kQOSMaxJobsPerUserLimit);
  // No table: no limits.
  EXPECT_EQ(LimitTally().Check(job), PendingReason::kNone);
}

// Random queues on a random cluster, every policy: what each pass starts, with what runs,
// stays within every scope's caps; a job reported as held by a limit would indeed go over.
class LimitsPolicyTest : public testing::TestWithParam<std::string> {};

TEST_P(LimitsPolicyTest, NoPassGoesOverALimit) {
  std::mt19937 rng(11);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 60; ++round) {
    Cluster c;
    model::Partition part;
    for (int i = 0; i < 6; ++i) {
      model::Node n;
      n.name = "n" + std::to_string(i);
      n.capacity = Resources{.cpus = 16, .gpus = 4, .mem_mb = 64000};
      c.nodes.push_back(n);
      part.nodes.push_back(i);
    }
    c.partitions.push_back(part);
    // Scopes: one QOS group (GPUs and jobs), a per-user scope for each of 3 users, and an
    // account group on CPUs.
    LimitTable t;
    t.scopes.push_back({LimitKind::kQosGroup, {{"gres/gpu", uni(0, 12)}}, uni(1, 8)});
    for (int u = 0; u < 3; ++u) {
      t.scopes.push_back({LimitKind::kQosPerUser, {{"gres/gpu", uni(0, 6)}}, uni(1, 4)});
    }
    t.scopes.push_back({LimitKind::kAssocGroup, {{"cpu", uni(4, 48)}}, -1});
    t.used.resize(t.scopes.size());
    t.jobs.resize(t.scopes.size(), 0);
    std::vector<PendingJob> pending;
    for (int j = 0; j < 30; ++j) {
      PendingJob p;
      p.id = static_cast<JobId>(j + 1);
      p.submit = j;
      p.priority = uni(1, 100);
      p.shape.ntasks = 1;
      p.shape.cpus_per_task = uni(1, 8);
      p.shape.gpus_per_node = uni(0, 2);
      p.estimate = uni(10, 1000);
      const int user = uni(0, 2);
      p.limit_scopes = {0, 1 + user, 4};
      p.limit_tres.Set("cpu", p.shape.cpus_per_task);
      p.limit_tres.Set("gres/gpu", p.shape.gpus_per_node);
      pending.push_back(std::move(p));
    }
    PolicyOptions opts;
    auto policy = MakePolicy(GetParam(), opts);
    ASSERT_TRUE(policy.ok());
    PassInput in;
    in.cluster = &c;
    in.pending = pending;
    in.now = 1000;
    in.trigger = PassTrigger::kPeriodic;
    in.limits = &t;
    PassOutput out;
    (*policy)->Pass(in, &out);
    std::vector<core::TresVector> used(t.scopes.size());
    std::vector<int64_t> jobs(t.scopes.size(), 0);
    for (const JobStart& s : out.starts) {
      for (int32_t sc : pending[s.pending_index].limit_scopes) {
        used[sc] += pending[s.pending_index].limit_tres;
        ++jobs[sc];
      }
    }
    for (size_t sc = 0; sc < t.scopes.size(); ++sc) {
      if (t.scopes[sc].max_jobs >= 0) EXPECT_LE(jobs[sc], t.scopes[sc].max_jobs) << round;
      for (const TresCap& cap : t.scopes[sc].tres) {
        EXPECT_LE(used[sc].Get(cap.name), cap.max) << round << " " << cap.name;
      }
    }
    // Some job was held by a limit in most rounds; the reasons are limit reasons then.
    for (size_t i = 0; i < pending.size(); ++i) {
      const std::string_view why = model::PendingReasonName(out.reasons[i]);
      if (why.starts_with("QOS") || why.starts_with("Assoc")) {
        bool started = false;
        for (const JobStart& s : out.starts)
          started = started || s.pending_index == static_cast<int32_t>(i);
        EXPECT_FALSE(started);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryPolicy, LimitsPolicyTest,
                         testing::Values("fcfs", "easy", "conservative", "slurm"));

}  // namespace
}  // namespace loom::sched
