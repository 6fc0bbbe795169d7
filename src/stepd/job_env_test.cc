#include "stepd/job_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace loom::stepd {
namespace {

using ::testing::Contains;
using ::testing::Key;
using ::testing::Not;

UserInfo Alice() { return {"alice", 1001, 1001, "/home/alice", "/bin/bash"}; }

// A one-node job as `sbatch -J train -p gpu job.sh` gets it on node gpu-01.
BatchJob OneNodeJob() {
  BatchJob job;
  job.job_id = 4242;
  job.name = "train";
  job.user = "alice";
  job.uid = 1001;
  job.gid = 1001;
  job.partition = "gpu";
  job.submit_dir = "/home/alice/proj";
  job.submit_host = "login1";
  job.nodes = {"gpu-01"};
  job.cpus_per_node = {8};
  job.node_name = "gpu-01";
  job.node_index = 0;
  job.work_dir = "/home/alice/proj";
  job.script = "#!/bin/sh\nenv\n";
  return job;
}

NodeSettings Settings() {
  NodeSettings s;
  s.cluster_name = "loom";
  s.slurm_conf = "/etc/loom/slurm.conf";
  return s;
}

TEST(BatchEnvironmentTest, OneNodeJobGetsSlurmsBatchVariables) {
  auto env = BatchEnvironment(OneNodeJob(), Settings(), Alice());
  EXPECT_EQ(env["SLURM_JOB_ID"], "4242");
  EXPECT_EQ(env["SLURM_JOBID"], "4242");
  EXPECT_EQ(env["SLURM_JOB_NAME"], "train");
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "gpu-01");
  EXPECT_EQ(env["SLURM_NODELIST"], "gpu-01");
  EXPECT_EQ(env["SLURM_JOB_NUM_NODES"], "1");
  EXPECT_EQ(env["SLURM_NNODES"], "1");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "8");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "8");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "1");
  EXPECT_EQ(env["SLURM_SUBMIT_DIR"], "/home/alice/proj");
  EXPECT_EQ(env["SLURM_SUBMIT_HOST"], "login1");
  EXPECT_EQ(env["SLURM_JOB_PARTITION"], "gpu");
  EXPECT_EQ(env["SLURM_JOB_USER"], "alice");
  EXPECT_EQ(env["SLURM_JOB_UID"], "1001");
  EXPECT_EQ(env["SLURM_JOB_GID"], "1001");
  EXPECT_EQ(env["SLURMD_NODENAME"], "gpu-01");
  EXPECT_EQ(env["SLURM_NODEID"], "0");
  EXPECT_EQ(env["SLURM_PROCID"], "0");
  EXPECT_EQ(env["SLURM_LOCALID"], "0");
  EXPECT_EQ(env["SLURM_GTIDS"], "0");
  EXPECT_EQ(env["SLURM_CLUSTER_NAME"], "loom");
  EXPECT_EQ(env["SLURM_CONF"], "/etc/loom/slurm.conf");
  EXPECT_EQ(env["ENVIRONMENT"], "BATCH");
  EXPECT_EQ(env["HOME"], "/home/alice");
  EXPECT_EQ(env["USER"], "alice");
  EXPECT_EQ(env["LOGNAME"], "alice");
  EXPECT_EQ(env["SHELL"], "/bin/bash");
  EXPECT_EQ(env["TMPDIR"], "/tmp");
}

TEST(BatchEnvironmentTest, OptionsNotGivenLeaveTheirVariablesUnset) {
  auto env = BatchEnvironment(OneNodeJob(), Settings(), Alice());
  for (const char* name :
       {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE", "SLURM_CPUS_PER_TASK",
        "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_GPU", "SLURM_JOB_ACCOUNT",
        "SLURM_JOB_QOS", "SLURM_JOB_RESERVATION", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID",
        "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
        "SLURM_RESTART_COUNT", "SLURM_TASK_PID"}) {
    EXPECT_THAT(env, Not(Contains(Key(name)))) << name;
  }
}

TEST(BatchEnvironmentTest, MultiNodeJobUsesSlurmsCompressedForms) {
  // sbatch -N3 -n5 on nodes with 8, 8 and 4 CPUs.
  BatchJob job = OneNodeJob();
  job.nodes = {"n001", "n002", "n003"};
  job.cpus_per_node = {8, 8, 4};
  job.node_name = "n001";
  job.ntasks = 5;
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "n[001-003]");
  EXPECT_EQ(env["SLURM_NODELIST"], "n[001-003]");
  EXPECT_EQ(env["SLURM_NNODES"], "3");
  EXPECT_EQ(env["SLURM_JOB_NUM_NODES"], "3");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "8(x2),4");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "8");
  EXPECT_EQ(env["SLURM_NTASKS"], "5");
  EXPECT_EQ(env["SLURM_NPROCS"], "5");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2(x2),1");
}

TEST(BatchEnvironmentTest, NodeListKeepsTheJobsOrder) {
  BatchJob job = OneNodeJob();
  job.nodes = {"b2", "a1", "b1"};
  job.cpus_per_node = {1, 1, 1};
  job.node_name = "b2";
  EXPECT_EQ(BatchEnvironment(job, Settings(), Alice())["SLURM_JOB_NODELIST"], "b2,a1,b1");
}

TEST(BatchEnvironmentTest, NtasksPerNodeSetsTheTaskCount) {
  BatchJob job = OneNodeJob();
  job.nodes = {"n1", "n2"};
  job.cpus_per_node = {16, 16};
  job.node_name = "n1";
  job.ntasks_per_node = 4;
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_EQ(env["SLURM_NTASKS_PER_NODE"], "4");
  EXPECT_EQ(env["SLURM_NTASKS"], "8");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "4(x2)");
}

TEST(BatchEnvironmentTest, RequestOptionsGivenAppearAsGiven) {
  BatchJob job = OneNodeJob();
  job.ntasks = 2;
  job.cpus_per_task = 4;
  job.mem_per_node_mb = 16000;
  job.account = "physics";
  job.qos = "normal";
  job.reservation = "maint";
  job.dependency = "afterok:4000";
  job.restart_count = 2;
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_EQ(env["SLURM_CPUS_PER_TASK"], "4");
  EXPECT_EQ(env["SLURM_MEM_PER_NODE"], "16000");
  EXPECT_EQ(env["SLURM_JOB_ACCOUNT"], "physics");
  EXPECT_EQ(env["SLURM_JOB_QOS"], "normal");
  EXPECT_EQ(env["SLURM_JOB_RESERVATION"], "maint");
  EXPECT_EQ(env["SLURM_JOB_DEPENDENCY"], "afterok:4000");
  EXPECT_EQ(env["SLURM_RESTART_COUNT"], "2");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2");
  EXPECT_THAT(env, Not(Contains(Key("SLURM_MEM_PER_CPU"))));

  BatchJob per_cpu = OneNodeJob();
  per_cpu.mem_per_cpu_mb = 2048;
  per_cpu.mem_per_gpu_mb = 8192;
  per_cpu.cpus_per_gpu = 6;
  auto env2 = BatchEnvironment(per_cpu, Settings(), Alice());
  EXPECT_EQ(env2["SLURM_MEM_PER_CPU"], "2048");
  EXPECT_EQ(env2["SLURM_MEM_PER_GPU"], "8192");
  EXPECT_EQ(env2["SLURM_CPUS_PER_GPU"], "6");
  EXPECT_THAT(env2, Not(Contains(Key("SLURM_MEM_PER_NODE"))));
}

TEST(BatchEnvironmentTest, GpusAreListedByIndex) {
  BatchJob job = OneNodeJob();
  job.gpus = 0b1101;  // GPUs 0, 2 and 3
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_EQ(env["SLURM_GPUS_ON_NODE"], "3");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "0,2,3");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,2,3");
  EXPECT_EQ(env["GPU_DEVICE_ORDINAL"], "0,2,3");
}

TEST(BatchEnvironmentTest, ConfinedGpusAreCountedFromZeroButJobGpusStayGlobal) {
  BatchJob job = OneNodeJob();
  job.gpus = 0b11000000;  // GPUs 6 and 7
  NodeSettings settings = Settings();
  settings.constrain_devices = true;
  auto env = BatchEnvironment(job, settings, Alice());
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(env["GPU_DEVICE_ORDINAL"], "0,1");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "6,7");
}

TEST(BatchEnvironmentTest, ExportedCudaVisibleDevicesStaysWhenTheJobHoldsNoGpus) {
  BatchJob job = OneNodeJob();
  job.environment["CUDA_VISIBLE_DEVICES"] = "1";
  EXPECT_EQ(BatchEnvironment(job, Settings(), Alice())["CUDA_VISIBLE_DEVICES"], "1");
  job.gpus = 0b100;
  EXPECT_EQ(BatchEnvironment(job, Settings(), Alice())["CUDA_VISIBLE_DEVICES"], "2");
}

TEST(BatchEnvironmentTest, ArrayTaskGetsTheArraysVariables) {
  BatchJob job = OneNodeJob();
  job.job_id = 101;
  job.array_job_id = 100;
  job.array_task_id = 3;
  job.array = *model::ParseArraySpec("1-9:2%2");
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_EQ(env["SLURM_JOB_ID"], "101");
  EXPECT_EQ(env["SLURM_ARRAY_JOB_ID"], "100");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_ID"], "3");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_COUNT"], "5");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MIN"], "1");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MAX"], "9");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_STEP"], "2");
}

TEST(BatchEnvironmentTest, ArrayTaskStep) {
  EXPECT_EQ(ArrayTaskStep(*model::ParseArraySpec("0-15:4")), 4);
  EXPECT_EQ(ArrayTaskStep(*model::ParseArraySpec("0-15")), 1);
  EXPECT_EQ(ArrayTaskStep(*model::ParseArraySpec("0,3,6")), 3);
  EXPECT_EQ(ArrayTaskStep(*model::ParseArraySpec("0,3,7")), 1);
  EXPECT_EQ(ArrayTaskStep(*model::ParseArraySpec("7")), 1);
}

TEST(BatchEnvironmentTest, SlurmsValuesWinOverExportedOnes) {
  BatchJob job = OneNodeJob();
  job.environment = {{"SLURM_JOB_ID", "1"},
                     {"SLURM_JOB_NAME", "outer"},
                     {"PATH", "/usr/bin"},
                     {"ENVIRONMENT", "interactive"}};
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_EQ(env["SLURM_JOB_ID"], "4242");
  EXPECT_EQ(env["SLURM_JOB_NAME"], "train");
  EXPECT_EQ(env["ENVIRONMENT"], "BATCH");
  EXPECT_EQ(env["PATH"], "/usr/bin");
}

TEST(BatchEnvironmentTest, AnOuterJobsVariablesDoNotLeakIn) {
  // sbatch run from inside an array task with -n: the new job has neither.
  BatchJob job = OneNodeJob();
  job.environment = {
      {"SLURM_NTASKS", "64"},       {"SLURM_NPROCS", "64"},        {"SLURM_ARRAY_TASK_ID", "7"},
      {"SLURM_ARRAY_JOB_ID", "99"}, {"SLURM_MEM_PER_CPU", "1000"}, {"SLURM_STEP_ID", "0"},
      {"SLURM_JOB_GPUS", "0"},      {"SLURM_TASK_PID", "12"},      {"MY_SETTING", "kept"}};
  auto env = BatchEnvironment(job, Settings(), Alice());
  for (const char* name :
       {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_JOB_ID",
        "SLURM_MEM_PER_CPU", "SLURM_STEP_ID", "SLURM_JOB_GPUS", "SLURM_TASK_PID"}) {
    EXPECT_THAT(env, Not(Contains(Key(name)))) << name;
  }
  EXPECT_EQ(env["MY_SETTING"], "kept");
}

TEST(BatchEnvironmentTest, LoginVariablesComeFromPasswdOnlyWhenNotExported) {
  BatchJob job = OneNodeJob();
  job.environment = {{"HOME", "/scratch/alice"}, {"SHELL", "/bin/zsh"}, {"TMPDIR", "/local"}};
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_EQ(env["HOME"], "/scratch/alice");
  EXPECT_EQ(env["SHELL"], "/bin/zsh");
  EXPECT_EQ(env["TMPDIR"], "/local");
  EXPECT_EQ(env["USER"], "alice");
  EXPECT_EQ(env["LOGNAME"], "alice");
}

TEST(BatchEnvironmentTest, UserNameFallsBackToThePasswdEntry) {
  BatchJob job = OneNodeJob();
  job.user.clear();
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_EQ(env["SLURM_JOB_USER"], "alice");
  EXPECT_EQ(env["USER"], "alice");
}

TEST(BatchEnvironmentTest, EmptySettingsLeaveTheirVariablesUnset) {
  NodeSettings bare;
  bare.tmp_dir.clear();
  auto env = BatchEnvironment(OneNodeJob(), bare, Alice());
  EXPECT_THAT(env, Not(Contains(Key("SLURM_CLUSTER_NAME"))));
  EXPECT_THAT(env, Not(Contains(Key("SLURM_CONF"))));
  EXPECT_THAT(env, Not(Contains(Key("TMPDIR"))));
}

// `srun -N2 -n3 -l ...`: node n2 (index 1) runs task 2, the third of the step.
TEST(TaskEnvironmentTest, EachTaskKnowsItsPlaceInTheStep) {
  BatchJob job = OneNodeJob();
  job.nodes = {"n1", "n2"};
  job.cpus_per_node = {4, 4};
  job.node_name = "n2";
  job.node_index = 1;
  job.ntasks = 3;
  job.gpus = 0b101;
  StepTask task{2, 0, "10.1.2.3", 40001};
  auto env = TaskEnvironment(job, Settings(), Alice(), task);
  EXPECT_EQ(env["SLURM_JOB_ID"], "4242");
  EXPECT_EQ(env["SLURM_STEP_ID"], "0");
  EXPECT_EQ(env["SLURM_STEPID"], "0");
  EXPECT_EQ(env["SLURM_PROCID"], "2");
  EXPECT_EQ(env["SLURM_LOCALID"], "0");
  EXPECT_EQ(env["SLURM_NODEID"], "1");
  EXPECT_EQ(env["SLURM_GTIDS"], "2");
  EXPECT_EQ(env["SLURM_NTASKS"], "3");
  EXPECT_EQ(env["SLURM_NPROCS"], "3");
  EXPECT_EQ(env["SLURM_NNODES"], "2");
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "n[1-2]");
  EXPECT_EQ(env["SLURM_STEP_NODELIST"], "n[1-2]");
  EXPECT_EQ(env["SLURM_STEP_NUM_NODES"], "2");
  EXPECT_EQ(env["SLURM_STEP_NUM_TASKS"], "3");
  EXPECT_EQ(env["SLURM_STEP_TASKS_PER_NODE"], "2,1");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2,1");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "4");
  EXPECT_EQ(env["SLURMD_NODENAME"], "n2");
  EXPECT_EQ(env["SLURM_DISTRIBUTION"], "block");
  EXPECT_EQ(env["SLURM_SRUN_COMM_HOST"], "10.1.2.3");
  EXPECT_EQ(env["SLURM_LAUNCH_NODE_IPADDR"], "10.1.2.3");
  EXPECT_EQ(env["SLURM_SRUN_COMM_PORT"], "40001");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,2");
  EXPECT_EQ(env["SLURM_STEP_GPUS"], "0,2");
  EXPECT_THAT(env, Not(Contains(Key("ENVIRONMENT"))));
}

TEST(TaskEnvironmentTest, TasksOnOneNodeAreABlock) {
  BatchJob job = OneNodeJob();
  job.nodes = {"n1", "n2"};
  job.cpus_per_node = {4, 4};
  job.node_name = "n1";
  job.ntasks_per_node = 2;
  auto env = TaskEnvironment(job, Settings(), Alice(), StepTask{1, 1, "", 0});
  EXPECT_EQ(env["SLURM_GTIDS"], "0,1");
  EXPECT_EQ(env["SLURM_PROCID"], "1");
  EXPECT_EQ(env["SLURM_LOCALID"], "1");
  EXPECT_EQ(env["SLURM_NTASKS"], "4");
  EXPECT_THAT(env, Not(Contains(Key("SLURM_SRUN_COMM_HOST"))));
  EXPECT_THAT(env, Not(Contains(Key("SLURM_STEP_GPUS"))));
}

// Step 2 of a 3-node job, on its last two nodes, cyclic: node n3 is the step's node 1.
TEST(TaskEnvironmentTest, AStepInsideTheAllocationDescribesItselfNotTheJob) {
  BatchJob job = OneNodeJob();
  job.nodes = {"n1", "n2", "n3"};
  job.cpus_per_node = {8, 8, 8};
  job.node_name = "n3";
  job.node_index = 2;
  job.ntasks = 24;
  StepPlacement p;
  p.step_id = 2;
  p.nodes = {"n2", "n3"};
  p.tasks_per_node = {2, 2};
  p.node_index = 1;
  p.task_ids = {1, 3};
  p.distribution = model::Distribution::kCyclic;
  StepTask task{3, 1, "10.1.2.3", 40001};
  task.placement = &p;
  auto env = TaskEnvironment(job, Settings(), Alice(), task);
  EXPECT_EQ(env["SLURM_STEP_ID"], "2");
  EXPECT_EQ(env["SLURM_STEPID"], "2");
  EXPECT_EQ(env["SLURM_PROCID"], "3");
  EXPECT_EQ(env["SLURM_LOCALID"], "1");
  EXPECT_EQ(env["SLURM_NODEID"], "1");
  EXPECT_EQ(env["SLURM_GTIDS"], "1,3");
  EXPECT_EQ(env["SLURM_NTASKS"], "4");
  EXPECT_EQ(env["SLURM_NPROCS"], "4");
  EXPECT_EQ(env["SLURM_NNODES"], "2");
  EXPECT_EQ(env["SLURM_NODELIST"], "n[2-3]");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2(x2)");
  EXPECT_EQ(env["SLURM_STEP_NODELIST"], "n[2-3]");
  EXPECT_EQ(env["SLURM_STEP_NUM_NODES"], "2");
  EXPECT_EQ(env["SLURM_STEP_NUM_TASKS"], "4");
  EXPECT_EQ(env["SLURM_STEP_TASKS_PER_NODE"], "2(x2)");
  EXPECT_EQ(env["SLURM_DISTRIBUTION"], "cyclic");
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "n[1-3]");  // the job's stay the job's
  EXPECT_EQ(env["SLURM_JOB_NUM_NODES"], "3");
  EXPECT_EQ(env["SLURMD_NODENAME"], "n3");
}

// An 8-CPU, 4-GPU node: 2 sockets of 2 cores with 2 threads; GPUs 0-1 on socket 0's NUMA
// node, 2-3 on socket 1's.
NodeSettings GpuNodeSettings() {
  NodeSettings s = Settings();
  s.layout.name = "gpu-01";
  s.layout.cpus = model::CpuTopology::Uniform(2, 2, 2);
  for (int32_t g = 0; g < 4; ++g) {
    model::Gpu gpu;
    gpu.index = g;
    gpu.numa = g / 2;
    s.layout.gpus.push_back(gpu);
  }
  return s;
}

TEST(BindStepTest, WithoutOptionsOrLayoutEveryTaskGetsAllTheJobHolds) {
  BatchJob job = OneNodeJob();
  job.gpus = 0b1100;
  auto b = BindStep(job, "0-7", BindingOptions{}, {4, 5}, Settings());  // no layout
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->tasks.size(), 2u);
  EXPECT_EQ(b->tasks[1].task_id, 5);
  EXPECT_EQ(b->tasks[1].local_id, 1);
  EXPECT_EQ(b->tasks[1].gpus, 0b1100);
  EXPECT_EQ(b->tasks[1].cuda_visible_devices, "2,3");
  EXPECT_EQ(b->tasks[1].cpus.count(), 8);
  // A layout, but neither --cpu-bind nor task/affinity: no CPU binding.
  b = BindStep(job, "0-7", BindingOptions{}, {0, 1}, GpuNodeSettings());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->cpu_bind, model::CpuBindType::kNone);
  EXPECT_TRUE(CpuBindEnvironment(*b, false).empty());
}

TEST(BindStepTest, CoresAndClosestFollowTheNodesLayout) {
  BatchJob job = OneNodeJob();
  job.gpus = 0b1111;
  auto b =
      BindStep(job, "0-7", BindingOptions{"cores", "closest", "", 1, 0}, {0, 1}, GpuNodeSettings());
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->tasks.size(), 2u);
  // Cyclic over sockets: task 0 on socket 0 (core 0: CPUs 0 and 4), task 1 on socket 1.
  EXPECT_EQ(b->tasks[0].cpus.ToVector(), (std::vector<int32_t>{0, 4}));
  EXPECT_EQ(b->tasks[1].cpus.ToVector(), (std::vector<int32_t>{2, 6}));
  EXPECT_EQ(b->tasks[0].cuda_visible_devices, "0,1");
  EXPECT_EQ(b->tasks[1].cuda_visible_devices, "2,3");
  auto env = CpuBindEnvironment(*b, false);
  EXPECT_EQ(env["SLURM_CPU_BIND_TYPE"], "mask_cpu:");
  EXPECT_EQ(env["SLURM_CPU_BIND_LIST"], "0x11,0x44");
  EXPECT_EQ(env["SLURM_CPU_BIND"], "quiet,mask_cpu:0x11,0x44");
  // --gpus-per-task: a GPU of its own, the closest.
  b = BindStep(job, "0-7", BindingOptions{"", "", "1", 1, 0}, {0, 1}, GpuNodeSettings());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->tasks[0].cuda_visible_devices.size(), 1u);
  EXPECT_NE(b->tasks[0].cuda_visible_devices, b->tasks[1].cuda_visible_devices);
  // task/affinity binds without --cpu-bind.
  NodeSettings affinity = GpuNodeSettings();
  affinity.auto_cpu_bind = true;
  affinity.default_cpu_bind = model::CpuBindType::kCores;
  b = BindStep(job, "0-7", BindingOptions{}, {0, 1}, affinity);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE(b->cpu_bind, model::CpuBindType::kNone);
  EXPECT_LT(b->tasks[0].cpus.count(), 8);
}

TEST(BindStepTest, BadOptionsAndTooLittleAreErrors) {
  BatchJob job = OneNodeJob();
  job.gpus = 0b0011;
  EXPECT_FALSE(
      BindStep(job, "0-7", BindingOptions{"bogus", "", "", 1, 0}, {0}, GpuNodeSettings()).ok());
  EXPECT_FALSE(
      BindStep(job, "0-7", BindingOptions{"", "", "x:y", 1, 0}, {0}, GpuNodeSettings()).ok());
  // Three GPUs a task, two held here.
  auto b = BindStep(job, "0-7", BindingOptions{"", "", "a100:3", 1, 0}, {0}, GpuNodeSettings());
  EXPECT_FALSE(b.ok());
}

TEST(TaskEnvironmentTest, TheTasksBindingSetsItsVisibleGpus) {
  BatchJob job = OneNodeJob();
  job.gpus = 0b1111;
  StepTask task{0, 0, "", 0};
  model::TaskBinding binding;
  binding.gpus = 0b0100;
  binding.cuda_visible_devices = "2";
  task.binding = &binding;
  const std::map<std::string, std::string> bind_env = {{"SLURM_CPU_BIND", "quiet,mask_cpu:0x1"}};
  task.cpu_bind_env = &bind_env;
  job.environment["SLURM_CPU_BIND_LIST"] = "0xff";  // an outer step's
  auto env = TaskEnvironment(job, Settings(), Alice(), task);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "2");
  EXPECT_EQ(env["GPU_DEVICE_ORDINAL"], "2");
  EXPECT_EQ(env["SLURM_STEP_GPUS"], "0,1,2,3");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "0,1,2,3");
  EXPECT_EQ(env["SLURM_CPU_BIND"], "quiet,mask_cpu:0x1");
  EXPECT_THAT(env, Not(Contains(Key("SLURM_CPU_BIND_LIST"))));
  binding = model::TaskBinding{};
  env = TaskEnvironment(job, Settings(), Alice(), task);
  EXPECT_THAT(env, Not(Contains(Key("CUDA_VISIBLE_DEVICES"))));
}

TEST(TaskEnvironmentTest, AnOuterStepsVariablesDoNotReachABatchScript) {
  BatchJob job = OneNodeJob();
  job.environment = {{"SLURM_DISTRIBUTION", "cyclic"},
                     {"SLURM_LAUNCH_NODE_IPADDR", "1.2.3.4"},
                     {"SLURM_STEP_NUM_TASKS", "9"}};
  auto env = BatchEnvironment(job, Settings(), Alice());
  EXPECT_THAT(env, Not(Contains(Key("SLURM_DISTRIBUTION"))));
  EXPECT_THAT(env, Not(Contains(Key("SLURM_LAUNCH_NODE_IPADDR"))));
  EXPECT_THAT(env, Not(Contains(Key("SLURM_STEP_NUM_TASKS"))));
}

TEST(CompressCountsTest, SlurmsRunLengthForm) {
  // The examples of Slurm's sbatch manual.
  EXPECT_EQ(CompressCounts({72, 72, 36}), "72(x2),36");
  EXPECT_EQ(CompressCounts({2, 2, 2, 1}), "2(x3),1");
  EXPECT_EQ(CompressCounts({1, 1, 1, 1}), "1(x4)");
  EXPECT_EQ(CompressCounts({4}), "4");
  EXPECT_EQ(CompressCounts({4, 8, 4}), "4,8,4");
  EXPECT_EQ(CompressCounts({}), "");
}

TEST(TasksPerNodeTest, FollowsTheRequest) {
  BatchJob job = OneNodeJob();
  job.nodes = {"n1", "n2"};
  job.cpus_per_node = {8, 8};
  job.node_name = "n1";
  EXPECT_EQ(TasksPerNode(job), (std::vector<int32_t>{1, 1}));  // no -n: one per node
  job.ntasks = 3;
  EXPECT_EQ(TasksPerNode(job), (std::vector<int32_t>{2, 1}));
  job.ntasks = 4;
  EXPECT_EQ(TasksPerNode(job), (std::vector<int32_t>{2, 2}));
  job.cpus_per_node = {1, 8};  // the first node has room for one task only
  EXPECT_EQ(TasksPerNode(job), (std::vector<int32_t>{1, 3}));
  job.cpus_per_node = {8, 8};
  job.cpus_per_task = 4;
  job.ntasks = 3;
  EXPECT_EQ(TasksPerNode(job), (std::vector<int32_t>{2, 1}));
  job.cpus_per_task.reset();
  job.cpus_per_node = {1, 1};  // overcommitted: dealt round robin past the CPUs
  job.ntasks = 5;
  EXPECT_EQ(TasksPerNode(job), (std::vector<int32_t>{3, 2}));
  job.tasks_per_node = {4, 1};  // the controller's layout wins
  EXPECT_EQ(TasksPerNode(job), (std::vector<int32_t>{4, 1}));
}

TEST(GpuIndexListTest, GlobalAndRelative) {
  EXPECT_EQ(GpuIndexList(0), "");
  EXPECT_EQ(GpuIndexList(0b1), "0");
  EXPECT_EQ(GpuIndexList(0b1010), "1,3");
  EXPECT_EQ(GpuIndexList(0b1010, /*relative=*/true), "0,1");
  EXPECT_EQ(GpuIndexList(model::GpuMask{1} << 63), "63");
}

TEST(ValidateBatchJobTest, RejectsAnAllocationThatDisagreesWithItself) {
  EXPECT_TRUE(ValidateBatchJob(OneNodeJob()).ok());

  BatchJob no_nodes = OneNodeJob();
  no_nodes.nodes.clear();
  EXPECT_THAT(std::string(ValidateBatchJob(no_nodes).message()),
              ::testing::HasSubstr("node list is empty"));

  BatchJob wrong_name = OneNodeJob();
  wrong_name.node_name = "gpu-02";
  EXPECT_THAT(std::string(ValidateBatchJob(wrong_name).message()),
              ::testing::HasSubstr("node_name 'gpu-02'"));

  BatchJob bad_index = OneNodeJob();
  bad_index.node_index = 1;
  EXPECT_FALSE(ValidateBatchJob(bad_index).ok());

  BatchJob cpus = OneNodeJob();
  cpus.cpus_per_node = {8, 8};
  EXPECT_THAT(std::string(ValidateBatchJob(cpus).message()),
              ::testing::HasSubstr("cpus_per_node has 2 entries for 1 nodes"));

  BatchJob half_array = OneNodeJob();
  half_array.array_task_id = 3;
  EXPECT_FALSE(ValidateBatchJob(half_array).ok());
}

}  // namespace
}  // namespace loom::stepd
