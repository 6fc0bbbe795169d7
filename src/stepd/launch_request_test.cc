#include "stepd/launch_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "stepd/records.h"

namespace loom::stepd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::LaunchBatchRequest Request() {
  v1::LaunchBatchRequest req;
  req.set_job_id(17);
  req.mutable_job()->set_job_id(17);
  req.mutable_job()->set_name("train");
  v1::NodeAllocation* a = req.mutable_job()->add_allocation();
  a->set_node("n1");
  a->set_cpus(2);
  a->set_mem_mb(64);
  req.set_script("#!/bin/sh\ntrue\n");
  req.set_std_out("out-%j.txt");
  req.set_uid(1001);
  req.set_gid(1002);
  req.set_gpu_ids("0,2");
  req.set_cpu_ids("2-3");
  req.set_time_limit_s(600);
  (*req.mutable_environment())["FOO"] = "bar";
  return req;
}

TEST(LaunchRequestTest, BatchJobCarriesTheRequest) {
  auto job = BatchJobOf(Request(), "n1");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->job_id, 17u);
  EXPECT_EQ(job->name, "train");
  EXPECT_THAT(job->nodes, ElementsAre("n1"));
  EXPECT_EQ(job->node_name, "n1");
  EXPECT_EQ(job->mem_mb, 64);
  EXPECT_EQ(job->gpus, model::GpuMask{0b101});
  EXPECT_EQ(job->uid, 1001u);
  EXPECT_EQ(job->time_limit_s, 600);
  EXPECT_EQ(job->work_dir, "/tmp");  // none given
  EXPECT_EQ(job->stdout_pattern, "out-%j.txt");
  EXPECT_EQ(job->environment.at("FOO"), "bar");
  EXPECT_FALSE(job->known_user.has_value());  // the controller never sends one
}

TEST(LaunchRequestTest, TheUserLoomdReadReachesTheJob) {
  stepd::KnownUser known;
  known.user.name = "alice";
  known.user.uid = 1001;
  known.user.gid = 100;
  known.user.home = "/home/alice";
  known.user.shell = "/bin/bash";
  known.groups = {100, 27};
  v1::LaunchBatchRequest req = Request();
  *req.mutable_node_user() = KnownUserToWire(known);
  auto job = BatchJobOf(req, "n1");
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_TRUE(job->known_user.has_value());
  EXPECT_EQ(job->known_user->user, known.user);
  EXPECT_EQ(job->known_user->groups, known.groups);
}

std::vector<model::Gpu> Gpus(std::vector<std::string> files) {
  std::vector<model::Gpu> gpus;
  for (size_t i = 0; i < files.size(); ++i) {
    model::Gpu g;
    g.index = static_cast<int32_t>(i);
    g.file = files[i];
    gpus.push_back(g);
  }
  return gpus;
}

TEST(LaunchRequestTest, LimitsFollowCgroupConfAndDenyOnlyGpusNotGiven) {
  conf::CgroupConfig c;
  c.constrain_cores = true;
  c.constrain_ram_space = true;
  c.constrain_devices = true;
  auto job = BatchJobOf(Request(), "n1");  // GPUs 0 and 2
  ASSERT_TRUE(job.ok());
  // Real device files stand in for GPUs: /dev/null is 1:3, /dev/zero 1:5, /dev/full 1:7.
  auto l = LimitsOf(c, *job, "2-3", Gpus({"/dev/null", "/dev/zero", "/dev/full", "/dev/zero"}));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->cpus, "2-3");
  EXPECT_EQ(l->memory_bytes, 64 << 20);
  ASSERT_EQ(l->denied_devices.size(), 1u);  // GPUs 1 and 3 share /dev/zero
  EXPECT_EQ(l->denied_devices[0], (stepd::DeviceId{'c', 1, 5}));

  // A device file shared with a GPU the job holds stays open to it.
  l = LimitsOf(c, *job, "2-3", Gpus({"/dev/null", "/dev/full", "/dev/full"}));
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->denied_devices.empty());

  c.constrain_devices = false;
  l = LimitsOf(c, *job, "2-3", Gpus({"/dev/null", "/dev/zero"}));
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->denied_devices.empty());
}

TEST(LaunchRequestTest, AGpuFileThatIsNoDeviceIsNamed) {
  conf::CgroupConfig c;
  c.constrain_devices = true;
  auto job = BatchJobOf(Request(), "n1");
  auto l = LimitsOf(c, *job, "", Gpus({"/dev/null", "/no/such/nvidia1"}));
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(std::string(l.status().message()),
              HasSubstr("GPU 1 of node n1 (File=/no/such/nvidia1"));
  EXPECT_THAT(std::string(l.status().message()), HasSubstr("ConstrainDevices=no"));
}

class PrepareLaunchTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/prepare_" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/cgroupfs");
    std::ofstream(dir_ + "/slurm.conf") << "ClusterName=c1\nSlurmctldHost=localhost\nKillWait=7\n"
                                           "GresTypes=gpu\n"
                                           "NodeName=n1 CPUs=4 RealMemory=1000 Gres=gpu:3\n"
                                           "PartitionName=p Nodes=n1 Default=YES\n";
    std::ofstream(dir_ + "/gres.conf") << "NodeName=n1 Name=gpu File=/dev/null\n"
                                          "NodeName=n1 Name=gpu File=/dev/zero\n"
                                          "NodeName=n1 Name=gpu File=/dev/full\n";
  }
  std::string dir_;
};

TEST_F(PrepareLaunchTest, WithoutCgroupConfNothingIsConfined) {
  auto p = PrepareLaunch(Request(), "n1", dir_ + "/slurm.conf");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->cgroups, nullptr);
  EXPECT_EQ(p->settings.cluster_name, "c1");
  EXPECT_EQ(p->settings.kill_wait_s, 7);
  EXPECT_FALSE(p->settings.constrain_devices);
  EXPECT_EQ(p->job.job_id, 17u);
}

TEST_F(PrepareLaunchTest, CgroupConfGivesTheJobItsLimits) {
  std::ofstream(dir_ + "/cgroup.conf") << "CgroupPlugin=cgroup/v1\nCgroupMountpoint=" << dir_
                                       << "/cgroupfs\nConstrainCores=yes\nConstrainRAMSpace=yes\n"
                                          "ConstrainDevices=yes\n";
  auto p = PrepareLaunch(Request(), "n1", dir_ + "/slurm.conf");  // GPUs 0 and 2
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_NE(p->cgroups, nullptr);
  EXPECT_EQ(p->cgroups->version(), "v1");
  EXPECT_TRUE(p->settings.constrain_devices);
  EXPECT_EQ(p->limits.cpus, "2-3");
  EXPECT_EQ(p->limits.memory_bytes, 64 << 20);
  EXPECT_THAT(p->limits.denied_devices, ElementsAre(stepd::DeviceId{'c', 1, 5}));  // /dev/zero
}

// What NVML found (AutoDetect=nvml) stands in for gres.conf's GPUs: their files are fenced.
TEST_F(PrepareLaunchTest, DiscoveredGpusDecideWhatIsFenced) {
  std::ofstream(dir_ + "/cgroup.conf") << "CgroupPlugin=cgroup/v1\nCgroupMountpoint=" << dir_
                                       << "/cgroupfs\nConstrainDevices=yes\n";
  auto found = std::make_shared<model::NodeTopology>();
  for (const char* file : {"/dev/full", "/dev/random", "/dev/urandom"}) {
    model::Gpu g;
    g.index = found->num_gpus();
    g.file = file;
    g.domain = g.index / 2;
    found->gpus.push_back(g);
  }
  NodeHardware hardware;
  hardware.gpus = found;
  // Through the wire and back, as loomd leaves it for its supervisors.
  const NodeHardware back = HardwareFromWire(HardwareToWire(hardware));
  ASSERT_NE(back.gpus, nullptr);
  EXPECT_EQ(back.gpus->gpus, found->gpus);
  EXPECT_FALSE(back.cpus.has_value());
  auto p = PrepareLaunch(Request(), "n1", dir_ + "/slurm.conf", back);  // GPUs 0 and 2
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->limits.denied_devices, ElementsAre(stepd::DeviceId{'c', 1, 8}));  // /dev/random
  // Without what loomd found, gres.conf's files count.
  ASSERT_TRUE(ReadNodeHardware(dir_ + "/spool", "n1").ok());
  EXPECT_EQ(ReadNodeHardware(dir_ + "/spool", "n1")->gpus, nullptr);
  std::filesystem::create_directories(dir_ + "/spool/stepd");
  std::ofstream(HardwarePath(dir_ + "/spool", "n1")) << "not a message";
  EXPECT_TRUE(absl::IsDataLoss(ReadNodeHardware(dir_ + "/spool", "n1").status()));
}

TEST_F(PrepareLaunchTest, ABadCgroupConfIsNamedWithItsLine) {
  std::ofstream(dir_ + "/cgroup.conf") << "ConstrainCores=yes\nConstrainRAMSpace=perhaps\n";
  auto p = PrepareLaunch(Request(), "n1", dir_ + "/slurm.conf");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("cgroup.conf:2"));
}

TEST(LaunchRequestTest, StepJobOfAStepInsideTheAllocation) {
  v1::LaunchTasksRequest req;
  req.set_job_id(17);
  req.mutable_job()->set_job_id(17);
  for (const char* node : {"n1", "n2"}) {
    v1::NodeAllocation* a = req.mutable_job()->add_allocation();
    a->set_node(node);
    a->set_cpus(4);
  }
  req.set_step_id(3);
  req.mutable_step()->add_argv("hostname");
  req.mutable_step()->set_io_host("10.0.0.1");
  req.mutable_step()->set_io_port(4000);
  req.mutable_step()->set_cpu_bind("cores");
  req.mutable_step_info()->add_nodes("n2");
  req.mutable_step_info()->add_nodes("n1");
  req.mutable_step_info()->add_tasks_per_node(2);
  req.mutable_step_info()->add_tasks_per_node(2);
  req.mutable_step_info()->set_distribution("cyclic");
  req.set_step_node_index(1);
  req.add_task_ids(1);
  req.add_task_ids(3);
  req.set_cpu_ids("0-3");
  req.set_io_key("k");
  auto step = StepJobOf(req, "n1");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_THAT(step->argv, ElementsAre("hostname"));
  EXPECT_EQ(step->io_host, "10.0.0.1");
  EXPECT_EQ(step->io_port, 4000);
  EXPECT_EQ(step->io_key, "k");
  ASSERT_TRUE(step->placement.has_value());
  EXPECT_EQ(step->placement->step_id, 3u);
  EXPECT_THAT(step->placement->nodes, ElementsAre("n2", "n1"));
  EXPECT_EQ(step->placement->node_index, 1);
  EXPECT_THAT(step->placement->task_ids, ElementsAre(1, 3));
  EXPECT_EQ(step->placement->distribution, model::Distribution::kCyclic);
  EXPECT_EQ(step->binding.cpu_bind, "cores");
  EXPECT_EQ(step->node_cpus, "0-3");
  EXPECT_EQ(step->job.node_index, 0);  // n1 in the job's allocation

  req.mutable_step()->clear_argv();
  EXPECT_EQ(StepJobOf(req, "n1").status().message(),
            "step 17.3: LaunchTasks without its command or nodes");
  req.clear_step_id();
  EXPECT_EQ(StepJobOf(req, "n1").status().message(), "job 17: LaunchTasks without srun's command");
}

TEST(LaunchRequestTest, HostCpusRoundTrip) {
  hw::CpuLayout cpus;
  cpus.sockets = 2;
  cpus.cores_per_socket = 1;
  cpus.threads_per_core = 2;
  cpus.cpus = 4;
  cpus.memory_mb = 1024;
  cpus.numa_cpus = {{0, 2}, {1, 3}};
  cpus.cores = {model::CpuCore{0, {0, 2}}, model::CpuCore{1, {1, 3}}};
  hw::CpuLayout back = HostCpusFromWire(HostCpusToWire(cpus));
  EXPECT_EQ(back.sockets, 2);
  EXPECT_EQ(back.cpus, 4);
  EXPECT_EQ(back.memory_mb, 1024);
  EXPECT_EQ(back.numa_cpus, cpus.numa_cpus);
  EXPECT_EQ(back.cores, cpus.cores);
}

}  // namespace
}  // namespace loom::stepd
