// scontrol show job/node/partition rendering against Slurm 22.05's own output for the
// reference scenario (tests/data/slurm-ref/), byte for byte, plus what those files do not show.
#include "cli/format/scontrol_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/format/reference_scenario.h"

namespace loom::cli::format {
namespace {

using model::JobState;
using testing::At;
using testing::BusyContext;
using testing::BusyJob;
using testing::BusyNodes;
using ::testing::HasSubstr;
using testing::IdleNodes;
using testing::Partitions;
using testing::ReadReferenceOutput;

std::string Expected(const std::string& file) {
  StatusOr<std::string> text = ReadReferenceOutput(file);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.value_or("");
}

std::string Job(const JobView& j, bool details = false, bool one_liner = false) {
  return RenderJob(j, ScontrolOptions{one_liner, details}, BusyContext());
}

// A job of the scenario's second part: like the held job 5 (one CPU, no time limit).
JobView SmallJob(uint32_t id, std::string name, int64_t priority) {
  JobView j = BusyJob(5);
  j.job_id = id;
  j.name = std::move(name);
  j.priority = priority;
  j.reason = "None";
  return j;
}

// Runs `j` on core 0 of n001 from `start` to `end`.
void RanOnN001(JobView* j, int64_t start, int64_t end) {
  j->start_time = j->last_sched_eval = start;
  j->end_time = end;
  j->nodes = j->batch_host = "n001";
  j->tres_alloc = j->tres_req;
}

TEST(ScontrolGolden, Partition) {
  EXPECT_EQ(RenderPartitions(Partitions(), {}, BusyContext()),
            Expected("06-scontrol_show_partition.txt"));
}

TEST(ScontrolGolden, IdleNode) {
  EXPECT_EQ(RenderNode(IdleNodes()[0], {}, BusyContext()),
            Expected("07-scontrol_show_node_n001_idle.txt"));
}

TEST(ScontrolGolden, BusyNode) {
  EXPECT_EQ(RenderNode(BusyNodes()[0], {}, BusyContext()),
            Expected("37-scontrol_show_node_n001_busy.txt"));
}

TEST(ScontrolGolden, AllNodes) {
  EXPECT_EQ(RenderNodes(BusyNodes(), {}, BusyContext()), Expected("38-scontrol_show_node_all.txt"));
}

TEST(ScontrolGolden, DrainedNode) {
  NodeView n = BusyNodes()[15];
  n.flags = kNodeFlagDrain | kNodeFlagPlanned;
  n.reason = "maintenance test";
  n.reason_user = "root";
  n.reason_time = At(18, 57, 4);
  EXPECT_EQ(RenderNode(n, {}, BusyContext()), Expected("62-scontrol_show_node_drained.txt"));
}

TEST(ScontrolGolden, RunningJob) {
  EXPECT_EQ(Job(BusyJob(3)), Expected("27-scontrol_show_job_running.txt"));
}

TEST(ScontrolGolden, GpuJob) {
  EXPECT_EQ(Job(BusyJob(4)), Expected("28-scontrol_show_job_gpu.txt"));
}

TEST(ScontrolGolden, GpuJobDetails) {
  EXPECT_EQ(Job(BusyJob(4), /*details=*/true), Expected("29-scontrol_show_job_gpu_details.txt"));
}

TEST(ScontrolGolden, HeldJob) {
  EXPECT_EQ(Job(BusyJob(5)), Expected("30-scontrol_show_job_held.txt"));
}

TEST(ScontrolGolden, DependentJob) {
  EXPECT_EQ(Job(BusyJob(6)), Expected("31-scontrol_show_job_dependency.txt"));
}

TEST(ScontrolGolden, ArrayJob) {
  // `scontrol show job 7`: the pending tasks' record, then each task, as the controller lists.
  std::vector<JobView> jobs = {BusyJob(7), BusyJob(10), BusyJob(9)};
  EXPECT_EQ(RenderJobs(jobs, {}, BusyContext()), Expected("32-scontrol_show_job_array.txt"));
}

TEST(ScontrolGolden, ArrayTask) {
  EXPECT_EQ(Job(BusyJob(9)), Expected("33-scontrol_show_job_array_task.txt"));
}

TEST(ScontrolGolden, PendingOnResources) {
  EXPECT_EQ(Job(BusyJob(8)), Expected("34-scontrol_show_job_pending_resources.txt"));
}

TEST(ScontrolGolden, CompletedJob) {
  EXPECT_EQ(Job(BusyJob(1)), Expected("35-scontrol_show_job_completed.txt"));
}

TEST(ScontrolGolden, OneLiner) {
  EXPECT_EQ(Job(BusyJob(3), false, /*one_liner=*/true),
            Expected("36-scontrol_show_job_oneliner.txt"));
}

TEST(ScontrolGolden, HeldByAdminAfterTimeLimitUpdate) {
  JobView j = BusyJob(8);
  j.priority = 0;
  j.reason = "JobHeldAdmin";
  j.time_limit_s = 180;
  j.eligible_time = 0;
  j.start_time = At(19, 6, 29);
  j.end_time = At(19, 9, 29);
  j.last_sched_eval = At(18, 56, 48);
  j.scheduler = "Backfill:*";
  j.sched_nodes = "n[001-016]";
  EXPECT_EQ(Job(j), Expected("45-scontrol_show_job_after_update.txt"));
}

TEST(ScontrolGolden, ReleasedAndDone) {
  JobView j = BusyJob(5);
  j.state = JobState::kCompleted;
  j.reason = "None";
  j.priority = 4294901750;
  j.eligible_time = j.accrue_time = At(18, 56, 48);
  RanOnN001(&j, At(18, 56, 48), At(18, 56, 48));
  EXPECT_EQ(Job(j), Expected("47-scontrol_show_job_released_done.txt"));
}

TEST(ScontrolGolden, Cancelled) {
  JobView j = BusyJob(3);
  j.state = JobState::kCancelled;
  j.exit_signal = 15;
  j.end_time = At(18, 56, 48);
  EXPECT_EQ(Job(j), Expected("49-scontrol_show_job_cancelled.txt"));
}

TEST(ScontrolGolden, DependencyFailed) {
  JobView j = BusyJob(6);
  j.reason = "DependencyNeverSatisfied";
  j.dependency = "afterok:3(failed)";
  EXPECT_EQ(Job(j), Expected("50-scontrol_show_job_dep_after_cancel.txt"));
}

TEST(ScontrolGolden, Failed) {
  JobView j = SmallJob(13, "failer", 4294901749);
  j.state = JobState::kFailed;
  j.reason = "NonZeroExitCode";
  j.exit_status = 3;
  j.submit_time = j.eligible_time = j.accrue_time = At(18, 56, 48);
  RanOnN001(&j, At(18, 56, 51), At(18, 56, 51));
  EXPECT_EQ(Job(j), Expected("52-scontrol_show_job_failed.txt"));
}

TEST(ScontrolGolden, DependencyNeverSatisfied) {
  JobView j = SmallJob(15, "dep_on_fail", 4294901747);
  j.reason = "DependencyNeverSatisfied";
  j.dependency = "afterok:13(failed)";
  j.submit_time = j.last_sched_eval = At(18, 56, 48);
  EXPECT_EQ(Job(j), Expected("53-scontrol_show_job_dep_never.txt"));
}

TEST(ScontrolGolden, DependencySatisfiedAndDone) {
  JobView j = SmallJob(16, "dep_on_ok", 4294901746);
  j.state = JobState::kCompleted;
  j.submit_time = At(18, 56, 48);
  j.eligible_time = j.accrue_time = At(18, 56, 54);
  RanOnN001(&j, At(18, 56, 54), At(18, 56, 54));
  EXPECT_EQ(Job(j), Expected("54-scontrol_show_job_dep_ok_done.txt"));
}

TEST(ScontrolGolden, UnknownDependencyRanAtOnce) {
  JobView j = SmallJob(22, "wrap", 4294901740);
  j.state = JobState::kCompleted;
  j.submit_time = j.eligible_time = j.accrue_time = At(18, 57, 18);
  RanOnN001(&j, At(18, 57, 18), At(18, 57, 18));
  EXPECT_EQ(Job(j), Expected("73-scontrol_show_job_bad_dependency.txt"));
}

// ---------------------------------------------------------------------------------------------

TEST(ScontrolJob, StreamPathsResolveLikeSlurm) {
  JobView j = BusyJob(9);
  j.std_out.clear();
  EXPECT_EQ(ResolvedStdOut(j), "/tmp/slurm-ref/work/slurm-7_1.out");
  EXPECT_EQ(ResolvedStdErr(j), "/tmp/slurm-ref/work/slurm-7_1.out");
  j.std_in.clear();
  EXPECT_EQ(ResolvedStdIn(j), "/dev/null");
  j.std_out = "logs/%x-%j-%A_%a-%u-%N-%%.out";
  j.std_err = "/abs/%j.err";
  EXPECT_EQ(ResolvedStdOut(j), "/tmp/slurm-ref/work/logs/arr-9-7_1-root-n001-%.out");
  EXPECT_EQ(ResolvedStdErr(j), "/abs/9.err");
  JobView plain = BusyJob(3);
  plain.std_out.clear();
  EXPECT_EQ(ResolvedStdOut(plain), "/tmp/slurm-ref/work/slurm-3.out");
}

TEST(ScontrolJob, OptionalLines) {
  JobView j = BusyJob(3);
  j.reservation = "maint";
  j.comment = "hello";
  j.wckey = "proj";
  j.mail_user = "a@b";
  j.mail_type = "END";
  j.batch = false;
  std::string out = Job(j);
  EXPECT_THAT(out, HasSubstr(" QOS=normal WCKey=proj\n"));
  EXPECT_THAT(out, HasSubstr("AllocNode:Sid=localhost:3014\n   Reservation=maint\n"));
  EXPECT_THAT(out, HasSubstr("WorkDir=/tmp/slurm-ref/work\n   Comment=hello\n   Power=\n"));
  EXPECT_THAT(out, HasSubstr("   MailUser=a@b MailType=END\n   \n\n"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("StdOut=")));
}

TEST(ScontrolJob, DetailsForAJobWithoutGres) {
  std::string out = Job(BusyJob(3), /*details=*/true);
  EXPECT_THAT(out, HasSubstr("   DerivedExitCode=0:0\n"));
  EXPECT_THAT(out, HasSubstr("   JOB_GRES=(null)\n     Nodes=n001 CPU_IDs=0-3 Mem=2048 GRES=\n"));
  // No allocation, no JOB_GRES block.
  EXPECT_THAT(Job(BusyJob(8), true), ::testing::Not(HasSubstr("JOB_GRES")));
}

TEST(ScontrolNode, OneLinerAndUnknowns) {
  NodeView n = IdleNodes()[1];
  n.cpu_load.reset();
  n.free_memory_mb.reset();
  n.partitions.clear();
  n.os.clear();
  std::string out = RenderNode(n, ScontrolOptions{true, false}, BusyContext());
  EXPECT_THAT(out, HasSubstr("NodeName=n002 Arch=x86_64 CoresPerSocket=32  CPUAlloc=0 "));
  EXPECT_THAT(out, HasSubstr("CPULoad=N/A "));
  EXPECT_THAT(out, HasSubstr("FreeMem=N/A "));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("Partitions=")));
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1);
}

TEST(ScontrolPartition, LimitsAndDefaults) {
  PartitionView p = Partitions()[0];
  p.max_time_s = 86400 + 3600;
  p.default_time_s = 1800;
  p.max_nodes = 4;
  p.def_mem_per_cpu_mb = 1000;
  p.max_mem_per_node_mb = 64000;
  p.deny_accounts = "guests";
  p.state = PartitionState::kDrain;
  p.tres_billing_weights = "CPU=1.0,Mem=0.25G";
  std::string out = RenderPartition(p, {}, BusyContext());
  EXPECT_THAT(out, HasSubstr("AllowGroups=ALL DenyAccounts=guests AllowQos=ALL\n"));
  EXPECT_THAT(out, HasSubstr("DefaultTime=00:30:00 "));
  EXPECT_THAT(out, HasSubstr("MaxNodes=4 MaxTime=1-01:00:00 "));
  EXPECT_THAT(out, HasSubstr("State=DRAIN "));
  EXPECT_THAT(out, HasSubstr("DefMemPerCPU=1000 MaxMemPerNode=64000\n"));
  EXPECT_THAT(out, HasSubstr("\n   TRESBillingWeights=CPU=1.0,Mem=0.25G\n\n"));
}

}  // namespace
}  // namespace loom::cli::format
