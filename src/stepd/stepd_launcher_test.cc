// loomd's side against the real loom-stepd binary: a job runs and its end is reported; a
// second launcher (loomd restarted) adopts a running supervisor and can still end its job;
// a launch that cannot start says why and leaves nothing.
#include "stepd/stepd_launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace loom::stepd {
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

  std::vector<noded::FinishedJob> WaitEnded(StepdLauncher& l) {
    for (int i = 0; i < 300; ++i) {
      std::vector<noded::FinishedJob> done = l.Reap();
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
  EXPECT_THAT(l.Running(), ElementsAre(5));
  std::vector<noded::FinishedJob> done = WaitEnded(l);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].job_id, 5u);
  EXPECT_TRUE(WIFEXITED(done[0].wait_status) && WEXITSTATUS(done[0].wait_status) == 4);
  EXPECT_FALSE(done[0].out_of_memory);
  EXPECT_TRUE(l.Running().empty());
  std::ifstream out(dir_ + "/work/out-5.txt");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "ran 5");
  // The result stays until the controller has it.
  EXPECT_TRUE(fs::exists(PathsOf(dir_ + "/spool", "n1", 5).result));
  l.Forget(5);
  EXPECT_FALSE(fs::exists(PathsOf(dir_ + "/spool", "n1", 5).dir));
}

TEST_F(StepdLauncherTest, ARestartedLoomdAdoptsRunningSupervisors) {
  {
    StepdLauncher first(Options());
    ASSERT_TRUE(first.Start(Request(6, "sleep 60\n")).ok());
  }  // loomd gone; the supervisor is not its child and runs on
  StepdLauncher second(Options());
  EXPECT_TRUE(second.Running().empty());
  EXPECT_THAT(second.Recover(), ElementsAre(6));
  EXPECT_THAT(second.Running(), ElementsAre(6));
  EXPECT_TRUE(second.Reap().empty());  // still running
  ASSERT_TRUE(second.Terminate(6, 1).ok());
  std::vector<noded::FinishedJob> done = WaitEnded(second);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].terminated);
  EXPECT_TRUE(WIFSIGNALED(done[0].wait_status) && WTERMSIG(done[0].wait_status) == SIGTERM);
  // A third loomd, before the end was acknowledged, learns it from the result file.
  StepdLauncher third(Options());
  EXPECT_THAT(third.Recover(), ElementsAre(6));
  done = third.Reap();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].terminated);
  third.Forget(6);
  EXPECT_TRUE(ListJobs(dir_ + "/spool", "n1").empty());
}

TEST_F(StepdLauncherTest, ASupervisorThatDiesIsReportedAndItsJobKilled) {
  StepdLauncher l(Options());
  ASSERT_TRUE(l.Start(Request(8, "sleep 60\n")).ok());
  auto text = ReadFile(PathsOf(dir_ + "/spool", "n1", 8).pid);
  ASSERT_TRUE(text.ok());
  auto pids = ParsePidRecord(*text, "pid");
  ASSERT_TRUE(pids.ok());
  ASSERT_TRUE(IsAlive(pids->job));
  ::kill(pids->stepd.pid, SIGKILL);
  std::vector<noded::FinishedJob> done = WaitEnded(l);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].killed);
  for (int i = 0; i < 50 && IsAlive(pids->job); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(IsAlive(pids->job));
}

TEST_F(StepdLauncherTest, ALaunchThatCannotStartSaysWhyAndLeavesNothing) {
  StepdLauncher l(Options());
  v1::LaunchBatchRequest req = Request(7, "true\n");
  req.set_std_out("/no/such/dir/out.txt");
  Status s = l.Start(req);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/no/such/dir/out.txt"));
  EXPECT_TRUE(l.Running().empty());
  EXPECT_FALSE(fs::exists(PathsOf(dir_ + "/spool", "n1", 7).dir));

  StepdLauncherOptions bad = Options();
  bad.slurm_conf = dir_ + "/etc/missing.conf";
  StepdLauncher m(bad);
  s = m.Start(Request(9, "true\n"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("missing.conf"));
}

}  // namespace
}  // namespace loom::stepd
