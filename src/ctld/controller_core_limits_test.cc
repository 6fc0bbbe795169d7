// Association and QOS limits in the controller's core (AccountingStorageEnforce=limits):
// jobs over a group limit wait with Slurm's reason and start once it allows, per-job limits
// hold a job alone, submission limits and DenyOnLimit refuse with Slurm's message, and
// nothing is held without `limits`.
#include "ctld/controller_core_test_util.h"

namespace loom::ctld {
namespace {

conf::SiteConfig LimitSite(const std::string& enforce) {
  auto site = conf::testing::SiteFromText(
      "ctld_limits_test",
      "ClusterName=t\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\nGresTypes=gpu\n"
      "AccountingStorageEnforce=" +
          enforce +
          "\nNodeName=n[1-2] CPUs=8 RealMemory=16000 Gres=gpu:a100:4\n"
          "PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=1-00:00:00\n");
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

// QOS normal: 4 GPUs at once for everyone, 3 jobs per user, 2 hours per job; QOS strict:
// DenyOnLimit with 1 hour. Account physics: 12 CPUs at once. alice in physics.
std::shared_ptr<const model::AssociationTable> Tree() {
  auto t = std::make_shared<model::AssociationTable>();
  t->accounts = {{"root", "", 1, {}}, {"physics", "root", 1, {}}};
  t->accounts[1].limits.grp_tres = "cpu=12";
  model::UserAssociation alice{"physics", "alice", "", {"normal", "strict"}, "normal", 1, {}};
  alice.limits.max_submit_jobs = 6;
  t->associations = {alice};
  t->default_account = {{"alice", "physics"}};
  t->qos = {"normal", "strict"};
  model::QosPolicy normal;
  normal.limits.grp_tres = "gres/gpu=4";
  normal.limits.max_jobs = 3;
  normal.limits.max_wall_s = 7200;
  t->qos_policy["normal"] = normal;
  model::QosPolicy strict;
  strict.limits.max_wall_s = 3600;
  strict.deny_on_limit = true;
  t->qos_policy["strict"] = strict;
  return t;
}

class LimitsTest : public testing::Test {
 protected:
  explicit LimitsTest(const std::string& enforce = "associations,limits")
      : core_(LimitSite(enforce), CoreOptions{.kill_wait_s = 30, .slurmd_timeout_s = 300}, 1) {
    core_.SetAssociations(Tree());
    Effects fx;
    core_.NodeAlive("n1", 0, &fx);
    core_.NodeAlive("n2", 0, &fx);
  }
  StatusOr<JobId> Submit(int cpus, int gpus, int64_t time_limit_s = 600,
                         const std::string& qos = "") {
    model::JobRequest r = Req(cpus);
    r.shape.gpus_per_node = gpus;
    r.time_limit_s = time_limit_s;
    r.qos = qos;
    Effects fx;
    return core_.Submit(r, kAlice, 0, &fx);
  }
  std::string Reason(JobId id) {
    return std::string(model::PendingReasonName(core_.Find(id)->job.reason));
  }
  ControllerCore core_;
};

TEST_F(LimitsTest, AGroupLimitHoldsJobsWithSlurmsReasonUntilItAllows) {
  const JobId a = *Submit(1, 2), b = *Submit(1, 2), c = *Submit(1, 2);
  Effects fx;
  core_.Schedule(0, &fx);
  EXPECT_EQ(core_.Find(a)->job.state, JobState::kRunning);
  EXPECT_EQ(core_.Find(b)->job.state, JobState::kRunning);
  // 4 GPUs run in QOS normal: the third waits although 4 more are free.
  EXPECT_EQ(core_.Find(c)->job.state, JobState::kPending);
  EXPECT_EQ(Reason(c), "QOSGrpGRES");
  core_.JobEnded(a, 0, false, 10, &fx);
  core_.Schedule(10, &fx);
  EXPECT_EQ(core_.Find(c)->job.state, JobState::kRunning);
}

TEST_F(LimitsTest, JobCountsAccountCpusAndPerJobLimits) {
  // Three CPU jobs run (MaxJobsPerUser 3); a fourth waits for the count, not for CPUs.
  std::vector<JobId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(*Submit(2, 0));
  Effects fx;
  core_.Schedule(0, &fx);
  EXPECT_EQ(Reason(ids[3]), "QOSMaxJobsPerUserLimit");
  // The account's 12 CPUs: 6 run; an 8-CPU job would make 14.
  core_.JobEnded(ids[0], 0, false, 5, &fx);
  core_.Schedule(5, &fx);  // ids[3] starts: 6 CPUs, 3 jobs
  const JobId big = *Submit(8, 0);
  core_.Schedule(6, &fx);
  EXPECT_EQ(core_.Find(big)->job.state, JobState::kPending);
  EXPECT_TRUE(Reason(big) == "QOSMaxJobsPerUserLimit" || Reason(big) == "AssocGrpCpuLimit")
      << Reason(big);
  // Over MaxWall: held alone, whatever runs.
  const JobId long_one = *Submit(1, 0, 3 * 3600);
  core_.Schedule(7, &fx);
  EXPECT_EQ(Reason(long_one), "QOSMaxWallDurationPerJobLimit");
}

TEST_F(LimitsTest, SubmissionLimitsAndDenyOnLimitRefuse) {
  // DenyOnLimit: over the QOS's MaxWall is refused at once.
  StatusOr<JobId> denied = Submit(1, 0, 2 * 3600, "strict");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().message(),
            "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
            "limits)");
  EXPECT_TRUE(Submit(1, 0, 600, "strict").ok());
  // MaxSubmitJobs 6 on alice's association: five more, then refused.
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(Submit(1, 0).ok()) << i;
  EXPECT_FALSE(Submit(1, 0).ok());
}

class NoLimitsTest : public LimitsTest {
 protected:
  NoLimitsTest() : LimitsTest("associations") {}
};

TEST_F(NoLimitsTest, WithoutEnforceLimitsNothingIsHeld) {
  const JobId a = *Submit(1, 2), b = *Submit(1, 2), c = *Submit(1, 2);
  Effects fx;
  core_.Schedule(0, &fx);
  for (JobId id : {a, b, c}) EXPECT_EQ(core_.Find(id)->job.state, JobState::kRunning) << id;
  EXPECT_TRUE(Submit(1, 0, 2 * 3600, "strict").ok());
}

}  // namespace
}  // namespace loom::ctld
