// loomd's side against the real loom-stepd binary: a job runs and its end is reported; a
// second launcher (loomd restarted) adopts a running supervisor and can still end its job;
// a launch that cannot start says why and leaves nothing; a step's tasks run under a
// supervisor of their own, talk to srun (a fake one here) and outlive the launcher too.
#include "noded/stepd_launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "stepd/testing/fake_srun.h"

namespace loom::noded {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class StepdLauncherTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/stepd_launcher_" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/etc");
    fs::create_directories(dir_ + "/work");
    std::ofstream(dir_ + "/etc/slurm.conf")
        << "ClusterName=t\nSlurmctldHost=localhost\nKillWait=1\n"
           "NodeName=n1 CPUs=2 RealMemory=1000\n"
           "PartitionName=p Nodes=n1 Default=YES\n";
  }

  StepdLauncherOptions Options() {
    StepdLauncherOptions o;
    o.stepd_path = LOOM_STEPD;
    o.spool = dir_ + "/spool";
    o.node = "n1";
    o.slurm_conf = dir_ + "/etc/slurm.conf";
    o.ready_timeout_s = 20;
    return o;
  }

  v1::LaunchBatchRequest Request(uint64_t id, const std::string& script) {
    v1::LaunchBatchRequest req;
    req.set_job_id(id);
    req.mutable_job()->set_job_id(id);
    req.mutable_job()->set_name("t");
    v1::NodeAllocation* a = req.mutable_job()->add_allocation();
    a->set_node("n1");
    a->set_cpus(1);
    req.set_script("#!/bin/sh\n" + script);
    req.set_std_out("out-%j.txt");
    req.set_work_dir(dir_ + "/work");
    req.set_uid(::geteuid());
    req.set_gid(::getegid());
    return req;
  }

  // srun's tasks on n1: `argv` as the job's only step, its I/O to `srun_port`.
  v1::LaunchTasksRequest Tasks(uint64_t id, std::vector<std::string> argv, int srun_port) {
    v1::LaunchTasksRequest req;
    req.set_job_id(id);
    req.mutable_job()->set_job_id(id);
    req.mutable_job()->set_name("t");
    v1::NodeAllocation* a = req.mutable_job()->add_allocation();
    a->set_node("n1");
    a->set_cpus(1);
    v1::SrunStep* srun = req.mutable_job()->mutable_spec()->mutable_srun();
    for (const std::string& arg : argv) srun->add_argv(arg);
    srun->set_io_host("127.0.0.1");
    srun->set_io_port(srun_port);
    req.set_io_key("key");
    req.set_work_dir(dir_ + "/work");
    req.set_uid(::geteuid());
    req.set_gid(::getegid());
    (*req.mutable_environment())["PATH"] = "/usr/bin:/bin";
    return req;
  }

  std::vector<StepdLauncher::Ended> WaitEnded(StepdLauncher& l) {
    for (int i = 0; i < 300; ++i) {
      std::vector<StepdLauncher::Ended> done = l.Reap();
      if (!done.empty()) return done;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "no job ended";
    return {};
  }

  std::string dir_;
};

TEST_F(StepdLauncherTest, RunsAJobAndReportsItsEnd) {
  StepdLauncher l(Options());
  ASSERT_TRUE(l.Start(Request(5, "echo ran $SLURM_JOB_ID\nexit 4\n")).ok());
  EXPECT_THAT(l.Running(), ElementsAre(stepd::StepRef::Batch(5)));
  EXPECT_THAT(l.RunningJobs(), ElementsAre(5));
  std::vector<StepdLauncher::Ended> done = WaitEnded(l);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].ref, stepd::StepRef::Batch(5));
  EXPECT_EQ(done[0].how.job_id, 5u);
  EXPECT_TRUE(WIFEXITED(done[0].how.wait_status) && WEXITSTATUS(done[0].how.wait_status) == 4);
  EXPECT_FALSE(done[0].how.out_of_memory);
  EXPECT_TRUE(l.Running().empty());
  std::ifstream out(dir_ + "/work/out-5.txt");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "ran 5");
  // The result stays until the controller has it.
  EXPECT_TRUE(fs::exists(stepd::PathsOf(dir_ + "/spool", "n1", stepd::StepRef::Batch(5)).result));
  l.Forget(stepd::StepRef::Batch(5));
  EXPECT_FALSE(fs::exists(stepd::PathsOf(dir_ + "/spool", "n1", stepd::StepRef::Batch(5)).dir));
}

TEST_F(StepdLauncherTest, ARestartedLoomdAdoptsRunningSupervisors) {
  {
    StepdLauncher first(Options());
    ASSERT_TRUE(first.Start(Request(6, "sleep 60\n")).ok());
  }  // loomd gone; the supervisor is not its child and runs on
  StepdLauncher second(Options());
  EXPECT_TRUE(second.Running().empty());
  EXPECT_THAT(second.Recover(), ElementsAre(stepd::StepRef::Batch(6)));
  EXPECT_THAT(second.Running(), ElementsAre(stepd::StepRef::Batch(6)));
  EXPECT_TRUE(second.Reap().empty());  // still running
  ASSERT_TRUE(second.Terminate(stepd::StepRef::Batch(6), 1).ok());
  std::vector<StepdLauncher::Ended> done = WaitEnded(second);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].how.terminated);
  EXPECT_TRUE(WIFSIGNALED(done[0].how.wait_status) &&
              WTERMSIG(done[0].how.wait_status) == SIGTERM);
  // A third loomd, before the end was acknowledged, learns it from the result file.
  StepdLauncher third(Options());
  EXPECT_THAT(third.Recover(), ElementsAre(stepd::StepRef::Batch(6)));
  done = third.Reap();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].how.terminated);
  third.Forget(stepd::StepRef::Batch(6));
  EXPECT_TRUE(stepd::ListSupervised(dir_ + "/spool", "n1").empty());
}

TEST_F(StepdLauncherTest, ASupervisorThatDiesIsReportedAndItsJobKilled) {
  StepdLauncher l(Options());
  ASSERT_TRUE(l.Start(Request(8, "sleep 60\n")).ok());
  auto text = stepd::ReadFile(stepd::PathsOf(dir_ + "/spool", "n1", stepd::StepRef::Batch(8)).pid);
  ASSERT_TRUE(text.ok());
  auto pids = stepd::ParsePidRecord(*text, "pid");
  ASSERT_TRUE(pids.ok());
  ASSERT_TRUE(stepd::IsAlive(pids->job));
  ::kill(pids->stepd.pid, SIGKILL);
  std::vector<StepdLauncher::Ended> done = WaitEnded(l);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].how.killed);
  for (int i = 0; i < 50 && stepd::IsAlive(pids->job); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(stepd::IsAlive(pids->job));
}

TEST_F(StepdLauncherTest, ALaunchThatCannotStartSaysWhyAndLeavesNothing) {
  StepdLauncher l(Options());
  v1::LaunchBatchRequest req = Request(7, "true\n");
  req.set_std_out("/no/such/dir/out.txt");
  Status s = l.Start(req);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/no/such/dir/out.txt"));
  EXPECT_TRUE(l.Running().empty());
  EXPECT_FALSE(fs::exists(stepd::PathsOf(dir_ + "/spool", "n1", stepd::StepRef::Batch(7)).dir));

  StepdLauncherOptions bad = Options();
  bad.slurm_conf = dir_ + "/etc/missing.conf";
  StepdLauncher m(bad);
  s = m.Start(Request(9, "true\n"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("missing.conf"));
}

TEST_F(StepdLauncherTest, AStepsTasksRunUnderTheirOwnSupervisorAndOutliveLoomd) {
  stepd::testing_support::FakeSrun srun;
  const stepd::StepRef ref = stepd::StepRef::OnlyStep(11);
  {
    StepdLauncher first(Options());
    ASSERT_TRUE(first
                    .StartStep(Tasks(11, {"sh", "-c", "sleep 1; echo task $SLURM_PROCID; exit 3"},
                                     srun.port()))
                    .ok());
    EXPECT_THAT(first.Running(), ElementsAre(ref));
    std::vector<stepd::TaskRecord> tasks = first.StepTasks(ref);
    ASSERT_EQ(tasks.size(), 1u);
    EXPECT_EQ(tasks[0].task, 0);
  }  // loomd gone: the supervisor keeps the tasks and srun's connection
  StepdLauncher second(Options());
  EXPECT_THAT(second.Recover(), ElementsAre(ref));
  std::vector<StepdLauncher::Ended> done = WaitEnded(second);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].ref, ref);
  EXPECT_TRUE(WIFEXITED(done[0].how.wait_status) && WEXITSTATUS(done[0].how.wait_status) == 3);
  stepd::testing_support::Heard heard = stepd::testing_support::Collect(srun.WaitClosed());
  EXPECT_EQ(heard.out[0], "task 0\n");
  EXPECT_EQ(heard.status[0] >> 8, 3);
  second.Forget(ref);
  EXPECT_TRUE(stepd::ListSupervised(dir_ + "/spool", "n1").empty());
}

TEST_F(StepdLauncherTest, AStepsSignalsReachItsTasksAndAnUnreachableSrunIsAnError) {
  stepd::testing_support::FakeSrun srun;
  StepdLauncher l(Options());
  v1::LaunchTasksRequest req = Tasks(12, {"sleep", "60"}, srun.port());
  req.set_step_id(2);
  req.mutable_step()->add_argv("sleep");
  req.mutable_step()->add_argv("60");
  req.mutable_step()->set_io_host("127.0.0.1");
  req.mutable_step()->set_io_port(srun.port());
  req.mutable_step()->set_work_dir(dir_ + "/work");
  req.mutable_step_info()->add_nodes("n1");
  req.mutable_step_info()->add_tasks_per_node(1);
  req.add_task_ids(0);
  ASSERT_TRUE(l.StartStep(req).ok());
  const stepd::StepRef ref = stepd::StepRef::Step(12, 2);
  EXPECT_THAT(l.Of(12), ElementsAre(ref));
  EXPECT_TRUE(absl::IsNotFound(l.Signal(stepd::StepRef::Step(12, 3), SIGTERM)));
  ASSERT_TRUE(l.Signal(ref, SIGTERM).ok());
  std::vector<StepdLauncher::Ended> done = WaitEnded(l);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].ref, ref);
  EXPECT_TRUE(WIFSIGNALED(done[0].how.wait_status) &&
              WTERMSIG(done[0].how.wait_status) == SIGTERM);

  // Nobody listens where srun should: the launch fails and leaves nothing.
  const int closed_port = srun.port();
  srun.Hangup();
  v1::LaunchTasksRequest lost = Tasks(13, {"true"}, 1);
  Status s = l.StartStep(lost);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("13"));
  EXPECT_FALSE(fs::exists(stepd::PathsOf(dir_ + "/spool", "n1", stepd::StepRef::OnlyStep(13)).dir));
  (void)closed_port;
}

}  // namespace
}  // namespace loom::noded
