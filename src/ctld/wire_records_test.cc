// The controller's records on the wire, and what squeue, sinfo and scontrol make of them:
// ctld/wire.h to the wire, cli/wire_views.h back to the views the commands render.
#include "ctld/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "cli/format/scontrol_format.h"
#include "cli/format/sinfo_format.h"
#include "cli/format/squeue_format.h"
#include "cli/submit/sbatch_options.h"
#include "cli/wire_views.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "rpc/convert.h"
#include "conf/testing/site_text.h"

namespace loom::ctld {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fmt = cli::format;
using cli::ToJobView;
using cli::ToNodeView;
using cli::ToPartitionView;
using rpc::ToWire;

// What the other end gets: a message through serialization.
template <typename M>
M Wire(const M& m) {
  M out;
  EXPECT_TRUE(out.ParseFromString(m.SerializeAsString()));
  return out;
}

// -------------------------------------------------------------------------- the controller

conf::SiteConfig Site() {
  auto site = conf::testing::SiteFromText(
      "ctld_wire_records_test",
      "ClusterName=t\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\n"
         "GresTypes=gpu\n"
         "NodeName=n[1-2] CPUs=8 Sockets=2 CoresPerSocket=4 RealMemory=16000 "
         "Gres=gpu:a100:4 Feature=a100,nvlink\n"
         "NodeName=c1 CPUs=4 RealMemory=8000\n"
         "PartitionName=batch Nodes=n[1-2],c1 Default=YES MaxTime=1-00:00:00 "
         "DefaultTime=01:00:00\n"
         "PartitionName=small Nodes=n1 MaxTime=01:00:00 MaxNodes=1\n",
      // The GPU nodes' insides: two NUMA nodes of four CPUs, two GPUs on each.
      {{"gres.conf",
        "NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-1] Cores=0-3\n"
        "NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[2-3] Cores=4-7\n"}});
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

const Caller kAlice{1001, 1001, "alice"};
constexpr int64_t kNow = 1'800'000'000;  // 2027-01-15T08:00:00Z

model::JobRequest Sbatch(std::vector<std::string> args) {
  args.insert(args.begin(), "sbatch");
  const std::map<std::string, std::string> env = {{"PWD", "/home/alice"}, {"PATH", "/usr/bin"}};
  StatusOr<cli::submit::SbatchInput> in =
      cli::submit::ParseSbatch(args, "#!/bin/sh\nsrun true\n", env, kNow);
  EXPECT_TRUE(in.ok()) << in.status();
  return in.ok() ? in->request : model::JobRequest{};
}

class ControllerTest : public ::testing::Test {
 protected:
  ControllerTest() : core_(Site(), CoreOptions{}, 100) {}
  void Up(int64_t now) {
    Effects fx;
    for (const char* n : {"n1", "n2", "c1"}) core_.NodeAlive(n, now, &fx);
  }
  model::JobId Submit(const model::JobRequest& r, int64_t now = kNow) {
    Effects fx;
    StatusOr<model::JobId> id = core_.Submit(r, kAlice, now, &fx);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or(0);
  }
  void Schedule(int64_t now) {
    Effects fx;
    core_.Schedule(now, &fx);
  }
  v1::JobInfo Info(model::JobId id, const JobInfoOptions& o = {}) {
    const JobEntry* e = core_.Find(id);
    EXPECT_NE(e, nullptr);
    return e ? FromEntry(*e, core_.cluster(), o) : v1::JobInfo{};
  }
  std::vector<fmt::JobView> JobViews() {
    std::vector<fmt::JobView> out;
    for (const v1::JobInfo& j : JobsOf(core_, Options())) out.push_back(ToJobView(Wire(j)));
    return out;
  }
  static JobInfoOptions Options() {
    JobInfoOptions o;
    o.cluster_name = "t";
    o.group_name = [](uint32_t gid) { return gid == 1001 ? "alice" : ""; };
    return o;
  }
  ControllerCore core_;
};

TEST_F(ControllerTest, RunningGpuJobCarriesItsPlacement) {
  Up(kNow);
  model::JobId id = Submit(Sbatch({"-J", "gpujob", "--gres=gpu:2", "-c", "4", "--mem=2048", "-t",
                                   "10", "-o", "out-%j.txt", "job.sh"}));
  Schedule(kNow + 1);
  v1::JobInfo info = Info(id, Options());
  EXPECT_EQ(info.job_id(), id);
  EXPECT_EQ(info.state(), "RUNNING");
  EXPECT_EQ(info.reason(), "None");
  EXPECT_EQ(info.user(), "alice");
  EXPECT_EQ(info.group_name(), "alice");
  EXPECT_EQ(info.cluster_name(), "t");
  EXPECT_EQ(info.partition(), "batch");
  EXPECT_EQ(info.num_nodes(), 1);
  EXPECT_EQ(info.num_cpus(), 4);
  EXPECT_EQ(info.start_time(), kNow + 1);
  EXPECT_EQ(info.end_time(), kNow + 1 + 600);
  EXPECT_EQ(info.time_limit_s(), 600);
  EXPECT_EQ(info.submit_time(), kNow);
  EXPECT_EQ(info.accrue_time(), kNow);
  ASSERT_EQ(info.allocation_size(), 1);
  const v1::NodeAllocation& a = info.allocation(0);
  EXPECT_EQ(info.node_list(), a.node());
  EXPECT_EQ(info.batch_host(), a.node());
  EXPECT_EQ(a.gpus(), 2);
  EXPECT_EQ(a.gpu_type(), "a100");
  EXPECT_EQ(a.cpus(), 4);
  EXPECT_EQ(a.mem_mb(), 2048);
  EXPECT_FALSE(a.gpu_ids().empty());
  EXPECT_EQ(info.gpu_ids(), core::StrCat(a.node(), ":", a.gpu_ids()));
  EXPECT_THAT(info.tres_alloc(), HasSubstr("gres/gpu=2"));
  EXPECT_THAT(info.tres_req(), HasSubstr("cpu=4,mem=2G,node=1"));
  EXPECT_EQ(info.min_memory_mb(), 2048);
  EXPECT_FALSE(info.memory_per_cpu());
  EXPECT_TRUE(info.requeue());
  // The submission rides along without its script and environment unless asked for.
  EXPECT_EQ(info.spec().name(), "gpujob");
  EXPECT_TRUE(info.spec().script().empty());
  EXPECT_TRUE(info.spec().environment().empty());
  // The controller keeps neither in its table (only its store does); an entry that has
  // them gives them when asked.
  JobEntry with_script = *core_.Find(id);
  model::JobRequest full = *with_script.request;
  full.script = "#!/bin/sh\nnvidia-smi\n";
  full.environment = {{"HOME", "/home/alice"}};
  with_script.request = std::make_shared<const model::JobRequest>(full);
  JobInfoOptions all;
  all.with_script = all.with_environment = true;
  EXPECT_EQ(FromEntry(with_script, core_.cluster(), all).spec().script(), full.script);
  EXPECT_EQ(FromEntry(with_script, core_.cluster(), all).spec().environment().size(), 1);
}

TEST_F(ControllerTest, CpuIdsBecomeSocketsAndCores) {
  // Without a GPU topology the controller holds no CPU ids; FromEntry says so by leaving
  // them out, and reports the sockets of ids it is given.
  sched::Cluster cluster = core_.cluster();
  JobEntry e;
  e.request = std::make_shared<model::JobRequest>();
  e.job.id = 7;
  e.job.state = model::JobState::kRunning;
  sched::NodeAlloc a(0, model::Resources{6, 2, 1000});
  for (int cpu : {2, 3, 4, 5, 6, 7}) a.cpu_ids.set(cpu);
  a.gpu_ids = 0b1010;
  e.mutable_alloc().push_back(a);
  v1::JobInfo info = FromEntry(e, cluster);
  ASSERT_EQ(info.allocation_size(), 1);
  EXPECT_EQ(info.allocation(0).cpu_ids(), "2-7");
  EXPECT_EQ(info.allocation(0).gpu_ids(), "1,3");
  ASSERT_EQ(info.allocation(0).sockets_size(), 2);
  EXPECT_EQ(info.allocation(0).sockets(0).socket(), 0);
  EXPECT_THAT(info.allocation(0).sockets(0).cores(), ::testing::ElementsAre(2, 3));
  EXPECT_EQ(info.allocation(0).sockets(1).socket(), 1);
  EXPECT_THAT(info.allocation(0).sockets(1).cores(), ::testing::ElementsAre(0, 1, 2, 3));

  fmt::JobView v = ToJobView(info);
  ASSERT_EQ(v.node_details.size(), 1u);
  EXPECT_EQ(v.node_details[0].nodes, "n1");
  EXPECT_EQ(v.node_details[0].cpu_ids, "2-7");
  EXPECT_EQ(v.node_details[0].gres, "gpu:a100:2(IDX:1,3)");
  EXPECT_EQ(v.job_gres, "gpu:a100:2");
  ASSERT_EQ(v.allocation.size(), 1u);
  EXPECT_EQ(v.allocation[0].sockets.size(), 2u);
}

TEST_F(ControllerTest, PendingReasonsDependenciesAndTimes) {
  Up(kNow);
  model::JobId big = Submit(Sbatch({"-N", "2", "--exclusive", "job.sh"}));
  model::JobId dep = Submit(Sbatch({core::StrCat("--dependency=afterok:", big), "job.sh"}));
  model::JobId held = Submit(Sbatch({"--hold", "job.sh"}));
  model::JobId later = Submit(Sbatch({"--begin=now+1hour", "job.sh"}));
  Schedule(kNow + 1);
  EXPECT_EQ(Info(big).state(), "RUNNING");
  v1::JobInfo d = Info(dep);
  EXPECT_EQ(d.state(), "PENDING");
  EXPECT_EQ(d.reason(), "Dependency");
  EXPECT_EQ(d.dependency(), core::StrCat("afterok:", big, "(unfulfilled)"));
  EXPECT_EQ(d.eligible_time(), 0);
  EXPECT_EQ(d.accrue_time(), 0);
  v1::JobInfo h = Info(held);
  EXPECT_EQ(h.reason(), "JobHeldUser");
  EXPECT_EQ(h.priority(), 0);
  v1::JobInfo l = Info(later);
  EXPECT_EQ(l.reason(), "BeginTime");
  EXPECT_EQ(l.eligible_time(), kNow + 3600);
  EXPECT_EQ(l.accrue_time(), 0);

  // The job fails: its dependant can never run, and it says why it ended.
  Effects fx;
  core_.JobEnded(big, 3 << 8, false, kNow + 5, &fx);
  Schedule(kNow + 6);
  v1::JobInfo b = Info(big);
  EXPECT_EQ(b.state(), "FAILED");
  EXPECT_EQ(b.reason(), "NonZeroExitCode");
  EXPECT_EQ(b.exit_code(), 3);
  EXPECT_EQ(b.exit_signal(), 0);
  // It still names where it ran, as Slurm's records do, while its nodes are free again.
  EXPECT_EQ(b.allocation_size(), 2);
  EXPECT_EQ(b.batch_host(), b.allocation(0).node());
  EXPECT_EQ(b.num_nodes(), 2);
  EXPECT_FALSE(b.node_list().empty());
  EXPECT_FALSE(b.tres_alloc().empty());
  for (const v1::NodeInfo& n : NodesOf(core_)) EXPECT_EQ(n.alloc_cpus(), 0) << n.name();
  d = Info(dep);
  EXPECT_EQ(d.reason(), "DependencyNeverSatisfied");
  EXPECT_EQ(d.dependency(), core::StrCat("afterok:", big, "(failed)"));
}

TEST_F(ControllerTest, CancelledJobIsCompletingUntilItsProcessesAreGone) {
  Up(kNow);
  model::JobId id = Submit(Sbatch({"job.sh"}));
  Schedule(kNow + 1);
  Effects fx;
  ASSERT_TRUE(core_.Signal(id, std::nullopt, 0, kAlice, kNow + 2, &fx).ok());
  EXPECT_EQ(Info(id).state(), "COMPLETING");
  // It still holds its node.
  std::vector<v1::NodeInfo> nodes = NodesOf(core_);
  int busy = 0;
  for (const v1::NodeInfo& n : nodes) busy += n.alloc_cpus();
  EXPECT_EQ(busy, 1);
  core_.JobEnded(id, SIGTERM, false, kNow + 3, &fx);
  v1::JobInfo info = Info(id);
  EXPECT_EQ(info.state(), "CANCELLED");
  EXPECT_EQ(info.exit_signal(), SIGTERM);
  nodes = NodesOf(core_);
  busy = 0;
  for (const v1::NodeInfo& n : nodes) busy += n.alloc_cpus();
  EXPECT_EQ(busy, 0);
}

// A job that starts or ends rebuilds only the nodes it holds; the others are shared with
// the list before.
TEST_F(ControllerTest, RefreshedNodesShareThoseWhoseUsageDidNotChange) {
  Up(kNow);
  auto usage = [this] { return NodeUsageOf(core_.LiveEntries(), core_.cluster().nodes.size()); };
  int finished = 0;
  auto finish = [&](int32_t, v1::NodeInfo* n) {
    ++finished;
    n->set_port(6818);
  };
  std::vector<NodeUsage> before_usage = usage();
  NodeInfos before = RefreshNodes(core_, before_usage, nullptr, {}, true, finish);
  ASSERT_GE(before.size(), 2u);
  EXPECT_EQ(finished, static_cast<int>(before.size()));

  model::JobId id = Submit(Sbatch({"job.sh"}));
  Schedule(kNow + 1);
  const int32_t held = core_.Find(id)->alloc().front().node;
  finished = 0;
  std::vector<NodeUsage> now_usage = usage();
  NodeInfos now = RefreshNodes(core_, now_usage, &before, before_usage, true, finish);
  ASSERT_EQ(now.size(), before.size());
  EXPECT_EQ(finished, 1);
  for (size_t i = 0; i < now.size(); ++i) {
    if (static_cast<int32_t>(i) == held) {
      EXPECT_NE(now[i], before[i]);
      EXPECT_EQ(now[i]->alloc_cpus(), 1);
      EXPECT_EQ(now[i]->port(), 6818);
    } else {
      EXPECT_EQ(now[i], before[i]) << i;
    }
  }
  // Without a list before, every node is built again.
  finished = 0;
  NodeInfos all = RefreshNodes(core_, now_usage, nullptr, now_usage, true, finish);
  EXPECT_EQ(finished, static_cast<int>(all.size()));
  EXPECT_EQ(all[held]->alloc_cpus(), 1);
}

TEST_F(ControllerTest, PendingArrayTasksFoldIntoOneRecord) {
  Up(kNow);
  model::JobId array = Submit(Sbatch({"--array=0-4%2", "-J", "arr", "job.sh"}));
  Schedule(kNow + 1);
  std::vector<v1::JobInfo> jobs = JobsOf(core_);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].state(), "RUNNING");
  EXPECT_EQ(jobs[0].array_job_id(), array);
  EXPECT_EQ(jobs[0].array_task_id(), 0);
  EXPECT_EQ(jobs[1].array_task_id(), 1);
  EXPECT_EQ(jobs[2].state(), "PENDING");
  EXPECT_EQ(jobs[2].job_id(), array);
  EXPECT_EQ(jobs[2].array_task_id(), -1);
  EXPECT_EQ(jobs[2].array_task_string(), "2-4%2");
  EXPECT_EQ(jobs[2].array_max_tasks(), 2u);
  EXPECT_EQ(jobs[2].reason(), "JobArrayTaskLimit");

  fmt::JobView pending = ToJobView(jobs[2]);
  EXPECT_FALSE(pending.array_task_id.has_value());
  EXPECT_EQ(pending.array_task_string, "2-4%2");
  fmt::JobView task = ToJobView(jobs[1]);
  EXPECT_EQ(task.array_task_id, 1u);
  EXPECT_EQ(task.array_job_id, array);
}

TEST_F(ControllerTest, NodesAndPartitions) {
  // Before any daemon registered: every node DOWN and not responding.
  std::vector<v1::NodeInfo> nodes = NodesOf(core_);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].state(), "DOWN+NOT_RESPONDING");
  EXPECT_EQ(nodes[0].reason(), "Not responding");
  EXPECT_EQ(ToNodeView(nodes[0]).flags, fmt::kNodeFlagNotResponding);

  Up(kNow);
  Submit(Sbatch({"--gres=gpu:3", "-c", "2", "--mem=1000", "job.sh"}));
  Submit(Sbatch({"-c", "8", "job.sh"}));  // only the other GPU node has 8 CPUs free
  Schedule(kNow + 1);
  nodes = NodesOf(core_);
  int mixed = 0, allocated = 0, idle = 0;
  for (const v1::NodeInfo& n : nodes) {
    mixed += n.state() == "MIXED";
    allocated += n.state() == "ALLOCATED";
    idle += n.state() == "IDLE";
  }
  EXPECT_EQ(mixed, 1);
  EXPECT_EQ(allocated, 1);
  EXPECT_EQ(idle, 1);
  const v1::NodeInfo* gpu_node = nullptr;
  for (const v1::NodeInfo& n : nodes) {
    if (n.alloc_gpus() > 0) gpu_node = &n;
  }
  ASSERT_NE(gpu_node, nullptr);
  EXPECT_EQ(gpu_node->state(), "MIXED");
  EXPECT_EQ(gpu_node->alloc_cpus(), 2);
  EXPECT_EQ(gpu_node->alloc_memory_mb(), 1000);
  EXPECT_EQ(gpu_node->alloc_gpus(), 3);
  EXPECT_EQ(gpu_node->gpus(), 4);
  EXPECT_EQ(gpu_node->gpu_type(), "a100");
  EXPECT_THAT(gpu_node->features(), ::testing::ElementsAre("a100", "nvlink"));
  EXPECT_EQ(gpu_node->cfg_tres(), "cpu=8,mem=16000M,billing=8,gres/gpu=4");
  EXPECT_EQ(gpu_node->alloc_tres(), "cpu=2,mem=1000M,gres/gpu=3");

  fmt::NodeView v = ToNodeView(Wire(*gpu_node));
  EXPECT_EQ(v.state, model::NodeState::kMixed);
  EXPECT_EQ(v.gres, "gpu:a100:4");
  EXPECT_THAT(v.gres_used, ::testing::StartsWith("gpu:a100:3(IDX:"));
  EXPECT_EQ(v.sockets, 2);
  EXPECT_EQ(v.cores_per_socket, 4);
  EXPECT_EQ(v.features_available, "a100,nvlink");
  EXPECT_EQ(v.cfg_tres.Get(core::kTresGpu), 4);

  std::vector<v1::PartitionInfo> parts = PartitionsOf(core_);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name(), "batch");
  EXPECT_TRUE(parts[0].is_default());
  EXPECT_EQ(parts[0].nodes(), "n[1-2],c1");
  EXPECT_EQ(parts[0].total_cpus(), 20);
  EXPECT_EQ(parts[0].total_nodes(), 3);
  EXPECT_EQ(parts[0].default_time_s(), 3600);
  EXPECT_EQ(parts[0].max_time_s(), 86400);
  // No AccountingStorageTRES=gres/gpu here: Slurm's partition TRES then leaves GPUs out.
  EXPECT_EQ(parts[0].tres(), "cpu=20,mem=40000M,node=3,billing=20");
  EXPECT_EQ(FromPartitions(core_.cluster(), /*gpu_tres=*/true)[0].tres(),
            "cpu=20,mem=40000M,node=3,billing=20,gres/gpu=8");
  EXPECT_EQ(parts[1].max_nodes(), 1);
  fmt::PartitionView p = ToPartitionView(Wire(parts[0]));
  EXPECT_EQ(p.node_names, (std::vector<std::string>{"n1", "n2", "c1"}));
  EXPECT_EQ(p.max_time_s, 86400);
  EXPECT_EQ(p.default_time_s, 3600);
  EXPECT_EQ(p.total_cpus, 20);
}

// ------------------------------------------------------------------- rendering from the wire

TEST_F(ControllerTest, SqueueAndScontrolRenderWhatTheWireCarries) {
  Up(kNow);
  model::JobId run =
      Submit(Sbatch({"-J", "trainer", "--gres=gpu:2", "-c", "4", "--mem=2048", "-t", "10", "-o",
                     "out-%j.txt", "--comment=hello", "--mail-type=END", "job.sh"}));
  model::JobId wait =
      Submit(Sbatch({core::StrCat("--dependency=afterok:", run), "-J", "after", "job.sh"}));
  Schedule(kNow + 1);
  const fmt::RenderContext ctx{kNow + 65, 0};
  std::vector<fmt::JobView> views = JobViews();
  ASSERT_EQ(views.size(), 2u);

  StatusOr<std::string> squeue = fmt::RenderSqueue(views, {}, ctx);
  ASSERT_TRUE(squeue.ok()) << squeue.status();
  EXPECT_THAT(*squeue, HasSubstr("JOBID PARTITION     NAME     USER ST       TIME  NODES "
                                 "NODELIST(REASON)"));
  const std::string node = views[0].nodes;
  EXPECT_THAT(*squeue, HasSubstr(core::StrCat(run,
                                              "     batch  trainer    alice  R       1:04"
                                              "      1 ",
                                              node)));
  EXPECT_THAT(*squeue, HasSubstr(core::StrCat(wait,
                                              "     batch    after    alice PD       0:00"
                                              "      1 (Dependency)")));

  const std::string job = fmt::RenderJob(views[0], {.details = true}, ctx);
  for (const std::string& want : {
           core::StrCat("JobId=", run, " JobName=trainer\n"),
           std::string("   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"),
           std::string("   JobState=RUNNING Reason=None Dependency=(null)\n"),
           std::string("   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"),
           std::string("   RunTime=00:01:04 TimeLimit=00:10:00 TimeMin=N/A\n"),
           std::string("   SubmitTime=2027-01-15T08:00:00 EligibleTime=2027-01-15T08:00:00\n"),
           std::string("   StartTime=2027-01-15T08:00:01 EndTime=2027-01-15T08:10:01"),
           std::string("   Partition=batch AllocNode:Sid="),
           core::StrCat("   NodeList=", node, "\n"),
           core::StrCat("   BatchHost=", node, "\n"),
           std::string("   NumNodes=1 NumCPUs=4 NumTasks=1 CPUs/Task=4 ReqB:S:C:T=0:0:*:*\n"),
           std::string("   TRES=cpu=4,mem=2G,node=1,billing=4,gres/gpu=2\n"),
           std::string("   JOB_GRES=gpu:a100:2\n"),
           core::StrCat("     Nodes=", node, " CPU_IDs="),
           std::string("GRES=gpu:a100:2(IDX:"),
           std::string("   MinCPUsNode=4 MinMemoryNode=2G MinTmpDiskNode=0\n"),
           std::string("   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"),
           std::string("   Command=(null)\n"),
           std::string("   WorkDir=/home/alice\n"),
           std::string("   Comment=hello\n"),
           core::StrCat("   StdOut=/home/alice/out-", run, ".txt\n"),
           core::StrCat("   StdErr=/home/alice/out-", run, ".txt\n"),
           std::string("   StdIn=/dev/null\n"),
           std::string("   TresPerNode=gres:gpu:2"),
           std::string("   MailUser=(null) MailType=END"),
       }) {
    EXPECT_THAT(job, HasSubstr(want));
  }

  const std::string pending = fmt::RenderJob(views[1], {}, ctx);
  EXPECT_THAT(pending,
              HasSubstr(core::StrCat("JobState=PENDING Reason=Dependency Dependency=afterok:", run,
                                     "(unfulfilled)\n")));
  EXPECT_THAT(pending, HasSubstr("EligibleTime=Unknown"));
  EXPECT_THAT(pending, HasSubstr("NodeList=\n"));
  EXPECT_THAT(pending, Not(HasSubstr("BatchHost=")));

  // squeue --json reads the same views.
  std::string json = fmt::RenderSqueueJson(views, {}, ctx);
  EXPECT_THAT(json, HasSubstr("\"job_state\": \"RUNNING\""));
  EXPECT_THAT(json, HasSubstr("\"user_name\": \"alice\""));
}

TEST_F(ControllerTest, SinfoRendersWhatTheWireCarries) {
  Up(kNow);
  Effects fx;
  Submit(Sbatch({"--gres=gpu:1", "job.sh"}));
  Schedule(kNow + 1);
  std::vector<fmt::NodeView> nodes;
  for (const v1::NodeInfo& n : NodesOf(core_)) nodes.push_back(ToNodeView(Wire(n)));
  std::vector<fmt::PartitionView> parts;
  for (const v1::PartitionInfo& p : PartitionsOf(core_)) parts.push_back(ToPartitionView(Wire(p)));
  StatusOr<std::string> sinfo = fmt::RenderSinfo(parts, nodes, {}, {kNow + 5, 0});
  ASSERT_TRUE(sinfo.ok()) << sinfo.status();
  EXPECT_THAT(*sinfo, HasSubstr("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"));
  EXPECT_THAT(*sinfo, HasSubstr("batch*       up 1-00:00:00      1    mix "));
  EXPECT_THAT(*sinfo, HasSubstr("batch*       up 1-00:00:00      2   idle "));
  EXPECT_THAT(*sinfo, HasSubstr("small        up    1:00:00      1 "));

  const std::string node = fmt::RenderNode(nodes[0], {}, {kNow + 5, 0});
  EXPECT_THAT(node, HasSubstr("NodeName=n1 "));
  EXPECT_THAT(node, HasSubstr("CPUAlloc="));
  EXPECT_THAT(node, HasSubstr("Gres=gpu:a100:4\n"));
  EXPECT_THAT(node, HasSubstr("Partitions=batch,small \n"));
}

TEST_F(ControllerTest, ControllerErrorsGetTheirCodes) {
  Up(kNow);
  Effects fx;
  model::JobRequest r = Sbatch({"-p", "nope", "job.sh"});
  EXPECT_EQ(ToWire(core_.Submit(r, kAlice, kNow, &fx).status()).code(), v1::INVALID_PARTITION);
  r = Sbatch({"-c", "64", "job.sh"});
  EXPECT_EQ(ToWire(core_.Submit(r, kAlice, kNow, &fx).status()).code(),
            v1::REQUESTED_CONFIG_UNAVAILABLE);
  // A dependency on an unknown job is accepted, as Slurm 22.05 accepts it.
  r = Sbatch({"--dependency=afterok:999", "job.sh"});
  EXPECT_EQ(ToWire(core_.Submit(r, kAlice, kNow, &fx).status()).code(), v1::OK);
  EXPECT_EQ(ToWire(core_.Signal(999, std::nullopt, 0, kAlice, kNow, &fx)).code(),
            v1::INVALID_JOB_ID);
  model::JobId id = Submit(Sbatch({"job.sh"}));
  const Caller bob{1002, 1002, "bob"};
  EXPECT_EQ(ToWire(core_.Signal(id, std::nullopt, 0, bob, kNow, &fx)).code(), v1::ACCESS_DENIED);
  ASSERT_TRUE(core_.Signal(id, std::nullopt, 0, kAlice, kNow, &fx).ok());
  EXPECT_EQ(ToWire(core_.Signal(id, std::nullopt, 0, kAlice, kNow, &fx)).code(),
            v1::JOB_ALREADY_COMPLETE);
  EXPECT_EQ(ToWire(core_.Hold(id, kAlice, &fx)).code(), v1::JOB_NOT_PENDING);
  EXPECT_EQ(ToWire(Status()).code(), v1::OK);
}

// srun's key reaches the nodes with the submission, never a query's reply.
TEST(SrunStepWireTest, TheKeyStaysOutOfQueryReplies) {
  JobEntry e;
  model::JobRequest srun;
  srun.name = "hostname";
  srun.srun = model::SrunStep{
      {"hostname", "-f"}, "10.0.0.7", 41234, "k3y", false, "", "", "", "", "", "", "",
      std::nullopt};
  e.request = std::make_shared<const model::JobRequest>(srun);
  JobInfoOptions with_script;
  with_script.with_script = true;
  const v1::JobInfo info = FromEntry(e, sched::Cluster{}, with_script);
  EXPECT_EQ(info.spec().srun().io_port(), 41234);  // the rest of srun's step is there
  EXPECT_EQ(info.spec().srun().argv_size(), 2);
  EXPECT_TRUE(info.spec().srun().io_key().empty());
}

}  // namespace
}  // namespace loom::ctld
