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

// GrpTRESMins=cpu=10 on physics: 10 CPU-minutes for its past, running and future jobs.
class TresMinsTest : public LimitsTest {
 protected:
  explicit TresMinsTest(const std::string& enforce = "associations,limits") : LimitsTest(enforce) {
    auto t = std::make_shared<model::AssociationTable>(*Tree());
    t->accounts[1].limits.grp_tres_mins = "cpu=10";
    t->qos_policy["normal"] = model::QosPolicy{};
    core_.SetAssociations(t);
  }
};

TEST_F(TresMinsTest, UsedAndRunningMinutesHoldTheNextJob) {
  const JobId a = *Submit(1, 0, 600);  // may use all 10 minutes
  Effects fx;
  core_.Schedule(0, &fx);
  ASSERT_EQ(core_.Find(a)->job.state, JobState::kRunning);
  const JobId b = *Submit(1, 0, 600);
  core_.Schedule(1, &fx);
  EXPECT_EQ(Reason(b), "AssocGrpCPUMinutesLimit");
  // a ends after a minute: 1 CPU-minute used, 9 left: b runs (without `safe`, until the
  // limit is reached).
  core_.JobEnded(a, 0, false, 60, &fx);
  core_.Schedule(60, &fx);
  EXPECT_EQ(core_.Find(b)->job.state, JobState::kRunning);
  EXPECT_NEAR(core_.usage().tres_usage().at({"physics", "alice"}).at("cpu"), 60, 1);
}

class SafeTresMinsTest : public TresMinsTest {
 protected:
  SafeTresMinsTest() : TresMinsTest("associations,limits,safe") {}
};

TEST_F(SafeTresMinsTest, AJobStartsOnlyIfItsWholeRunFits) {
  const JobId a = *Submit(1, 0, 120);
  Effects fx;
  core_.Schedule(0, &fx);
  core_.JobEnded(a, 0, false, 120, &fx);  // 2 CPU-minutes used
  const JobId big = *Submit(1, 0, 600), small = *Submit(1, 0, 480);
  core_.Schedule(121, &fx);
  EXPECT_EQ(Reason(big), "AssocGrpCPUMinutesLimit");            // 2 + 10 > 10
  EXPECT_EQ(core_.Find(small)->job.state, JobState::kRunning);  // 2 + 8 = 10
}

// Partition gpu: only physics, only QOS normal and strict, and its own QOS gpuq (2 GPUs at
// once, at least 1 GPU per job); partition chem: not physics.
class PartitionAccessTest : public testing::Test {
 protected:
  PartitionAccessTest()
      : core_(Site(), CoreOptions{.kill_wait_s = 30, .slurmd_timeout_s = 300}, 1) {
    auto t = std::make_shared<model::AssociationTable>(*Tree());
    t->accounts.push_back({"chem", "root", 1, {}});
    t->associations[0].qos.push_back("low");
    t->associations.push_back({"chem", "bob", "", {"normal"}, "normal", 1, {}});
    t->associations.push_back({"chem", "alice", "", {"normal"}, "normal", 1, {}});
    t->default_account["bob"] = "chem";
    t->qos.insert("low");
    t->qos.insert("gpuq");
    model::QosPolicy gpuq;
    gpuq.limits.grp_tres = "gres/gpu=2";
    gpuq.limits.min_tres_per_job = "gres/gpu=1";
    t->qos_policy["gpuq"] = gpuq;
    t->qos_policy["low"] = model::QosPolicy{};
    core_.SetAssociations(t);
    Effects fx;
    core_.NodeAlive("n1", 0, &fx);
    core_.NodeAlive("n2", 0, &fx);
  }
  static conf::SiteConfig Site() {
    auto site = conf::testing::SiteFromText(
        "ctld_partition_access_test",
        "ClusterName=t\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\nGresTypes=gpu\n"
        "AccountingStorageEnforce=associations,limits,qos\n"
        "NodeName=n[1-2] CPUs=8 RealMemory=16000 Gres=gpu:a100:4\n"
        "PartitionName=batch Nodes=n[1-2] Default=YES\n"
        "PartitionName=gpu Nodes=n[1-2] QOS=gpuq AllowAccounts=physics AllowQos=normal,strict\n"
        "PartitionName=chem Nodes=n[1-2] DenyAccounts=physics\n");
    EXPECT_TRUE(site.ok()) << site.status();
    return *site;
  }
  StatusOr<JobId> Submit(const std::string& partition, int gpus, const Caller& who = kAlice,
                         const std::string& qos = "", const std::string& account = "") {
    model::JobRequest r = Req(1);
    r.partitions = {partition};
    r.shape.gpus_per_node = gpus;
    r.time_limit_s = 600;
    r.qos = qos;
    r.account = account;
    Effects fx;
    return core_.Submit(r, who, 0, &fx);
  }
  std::string Error(const StatusOr<JobId>& r) {
    return r.ok() ? "ok" : std::string(r.status().message());
  }
  std::string Reason(JobId id) {
    return std::string(model::PendingReasonName(core_.Find(id)->job.reason));
  }
  ControllerCore core_;
};

TEST_F(PartitionAccessTest, AccountAndQosListsRefuseWithSlurmsErrors) {
  const std::string bad_account = "Invalid account or account/partition combination specified";
  EXPECT_EQ(Error(Submit("gpu", 1)), "ok");
  EXPECT_EQ(Error(Submit("gpu", 1, kBob)), bad_account);  // not in AllowAccounts
  EXPECT_EQ(Error(Submit("gpu", 1, kAlice, "low")), "Invalid qos specification");  // AllowQos
  EXPECT_EQ(Error(Submit("chem", 0)), bad_account);               // physics is denied
  EXPECT_EQ(Error(Submit("chem", 0, kAlice, "", "chem")), "ok");  // her other account is not
  EXPECT_EQ(Error(Submit("chem", 0, kBob)), "ok");
}

TEST_F(PartitionAccessTest, APartitionsQosLimitsItsJobs) {
  const JobId a = *Submit("gpu", 1), b = *Submit("gpu", 1), c = *Submit("gpu", 1);
  const JobId cpu_only = *Submit("gpu", 0);
  const JobId elsewhere = *Submit("batch", 1);
  Effects fx;
  core_.Schedule(0, &fx);
  EXPECT_EQ(core_.Find(a)->job.state, JobState::kRunning);
  EXPECT_EQ(core_.Find(b)->job.state, JobState::kRunning);
  // gpuq's 2 GPUs are in use, though QOS normal would allow 4.
  EXPECT_EQ(Reason(c), "QOSGrpGRES");
  EXPECT_EQ(Reason(cpu_only), "QOSMinGRES");                        // MinTRESPerJob=gres/gpu=1
  EXPECT_EQ(core_.Find(elsewhere)->job.state, JobState::kRunning);  // not under gpuq
}

TEST_F(PartitionAccessTest, UpdatingAJobsQosAccountOrPartitionIsCheckedAsASubmission) {
  const JobId id = *Submit("batch", 0, kAlice, "", "chem");
  auto update = [&](const std::string& key, const std::string& value, const Caller& who) {
    auto edit = ParseJobEdit({{key, value}});
    if (!edit.ok()) return std::string(edit.status().message());
    Effects fx;
    Status s = core_.UpdateJob(id, *edit, who, 1, &fx);
    return s.ok() ? std::string("ok") : std::string(s.message());
  };
  // chem's association allows QOS normal only, for everyone who updates it.
  EXPECT_EQ(update("QOS", "low", kAlice), "Invalid qos specification");
  EXPECT_EQ(update("QOS", "low", kRoot), "Invalid qos specification");
  EXPECT_EQ(update("Account", "physics", kAlice), "ok");
  EXPECT_EQ(update("QOS", "Strict", kAlice), "ok");
  EXPECT_EQ(core_.Find(id)->request->qos, "strict");
  EXPECT_EQ(update("Account", "nowhere", kAlice),
            "Invalid account or account/partition combination specified");
  EXPECT_EQ(update("Partition", "chem", kAlice),
            "Invalid account or account/partition combination specified");
  EXPECT_EQ(core_.Find(id)->request->account, "physics");
}

}  // namespace
}  // namespace loom::ctld
