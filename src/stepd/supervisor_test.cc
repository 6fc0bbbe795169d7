#include "stepd/supervisor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace loom::stepd {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A cgroup system over plain files: its procs file is a regular file the script's child
// writes "0" to, and its usage is what the test says.
class FakeCgroups final : public stepd::CgroupSystem {
 public:
  explicit FakeCgroups(std::string dir) : dir_(std::move(dir)) {}
  std::string_view version() const override { return "fake"; }
  StatusOr<std::unique_ptr<stepd::StepCgroup>> Create(uint64_t job_id, std::string_view step,
                                                      const stepd::StepLimits& limits) override {
    if (!fail_.empty()) return absl::InternalError(fail_);
    created_ = std::to_string(job_id) + "/" + std::string(step);
    limits_ = limits;
    std::ofstream(dir_ + "/cgroup.procs");
    return std::unique_ptr<stepd::StepCgroup>(new Step(this));
  }
  std::string dir_;
  std::string fail_;
  std::string created_;
  stepd::StepLimits limits_;
  stepd::CgroupUsage usage_;
  bool removed_ = false;

 private:
  class Step final : public stepd::StepCgroup {
   public:
    explicit Step(FakeCgroups* sys) : sys_(sys) {}
    Status Attach(pid_t) override { return absl::OkStatus(); }
    Status Freeze(bool) override { return absl::OkStatus(); }
    Status KillAll() override { return absl::OkStatus(); }
    StatusOr<stepd::CgroupUsage> Usage() const override { return sys_->usage_; }
    Status Remove() override {
      sys_->removed_ = true;
      return absl::OkStatus();
    }
    std::vector<pid_t> Pids() const override { return {}; }
    std::vector<std::string> ProcsFiles() const override { return {sys_->dir_ + "/cgroup.procs"}; }

   private:
    FakeCgroups* sys_;
  };
};

class SupervisorTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/supervisor_" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/cg");
    fs::create_directories(dir_ + "/work");
  }

  SupervisorOptions Options(const std::string& script) {
    SupervisorOptions o;
    o.job.job_id = 31;
    o.job.uid = ::geteuid();
    o.job.gid = ::getegid();
    o.job.nodes = {"n1"};
    o.job.cpus_per_node = {1};
    o.job.node_name = "n1";
    o.job.work_dir = dir_ + "/work";
    o.job.stdout_pattern = "out.txt";
    o.job.script = "#!/bin/sh\n" + script;
    o.spool = dir_ + "/spool";
    o.settings.kill_wait_s = 1;
    return o;
  }

  StepResult WaitFor(BatchSupervisor& s) {
    for (int i = 0; i < 200; ++i) {
      if (auto r = s.Poll()) return *r;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "the job did not end";
    return {};
  }

  std::string dir_;
};

TEST_F(SupervisorTest, RunsTheScriptInItsCgroupAndReportsTheEnd) {
  FakeCgroups cg(dir_ + "/cg");
  SupervisorOptions o = Options("echo hello\nexit 3\n");
  o.cgroups = &cg;
  o.limits.cpus = "1";
  BatchSupervisor s(std::move(o));
  ASSERT_TRUE(s.Start().ok());
  EXPECT_GT(s.job_pid(), 0);
  StepResult r = WaitFor(s);
  EXPECT_EQ(r.job_id, 31u);
  EXPECT_TRUE(WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 3) << r.wait_status;
  EXPECT_FALSE(r.out_of_memory);
  EXPECT_EQ(cg.created_, "31/batch");
  EXPECT_EQ(cg.limits_.cpus, "1");
  EXPECT_EQ(Slurp(dir_ + "/cg/cgroup.procs"), "0");  // the child joined before exec
  EXPECT_TRUE(cg.removed_);
  EXPECT_EQ(Slurp(dir_ + "/work/out.txt"), "hello\n");
  EXPECT_FALSE(s.Poll().has_value());  // once
}

TEST_F(SupervisorTest, AnOomKillInTheCgroupIsReported) {
  FakeCgroups cg(dir_ + "/cg");
  cg.usage_.oom_kills = 1;
  cg.usage_.memory_peak_bytes = 64 << 20;
  cg.usage_.cpu_usec = 1234;
  SupervisorOptions o = Options("exit 0\n");
  o.cgroups = &cg;
  BatchSupervisor s(std::move(o));
  ASSERT_TRUE(s.Start().ok());
  StepResult r = WaitFor(s);
  EXPECT_TRUE(r.out_of_memory);
  EXPECT_EQ(r.max_rss_bytes, 64 << 20);
  EXPECT_EQ(r.cgroup_cpu_us, 1234);
}

TEST_F(SupervisorTest, ACgroupThatCannotBeMadeFailsTheStartAndRunsNothing) {
  FakeCgroups cg(dir_ + "/cg");
  cg.fail_ = "the memory controller is not available";
  SupervisorOptions o = Options("touch " + dir_ + "/work/ran\n");
  o.cgroups = &cg;
  BatchSupervisor s(std::move(o));
  Status st = s.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("job 31: cannot make its cgroup"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("memory controller"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(fs::exists(dir_ + "/work/ran"));
}

TEST_F(SupervisorTest, TerminateSendsSigtermThenSigkill) {
  SupervisorOptions o = Options("trap '' TERM\nsleep 30 &\nwait\nwait\n");
  BatchSupervisor s(std::move(o));
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(s.Terminate(1).ok());
  StepResult r = WaitFor(s);
  EXPECT_TRUE(r.terminated);
  EXPECT_TRUE(r.killed);
  EXPECT_TRUE(WIFSIGNALED(r.wait_status) && WTERMSIG(r.wait_status) == SIGKILL) << r.wait_status;
  EXPECT_FALSE(s.Signal(SIGUSR1).ok());  // ended
}

TEST_F(SupervisorTest, TheBackstopEndsAJobPastItsTimeLimit) {
  core::SimulatedClock clock(1'764'620'222);
  clock.Advance(std::chrono::seconds(1000));
  SupervisorOptions o = Options("sleep 30\n");
  o.job.time_limit_s = 60;
  o.backstop_grace_s = 10;
  o.clock = &clock;
  BatchSupervisor s(std::move(o));
  ASSERT_TRUE(s.Start().ok());
  EXPECT_EQ(s.NextDeadlineMs(), 1000000 + 70 * 1000);
  clock.Advance(std::chrono::seconds(69));
  EXPECT_FALSE(s.Poll().has_value());  // not yet
  clock.Advance(std::chrono::seconds(1));
  StepResult r = WaitFor(s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.terminated);
  EXPECT_TRUE(WIFSIGNALED(r.wait_status) && WTERMSIG(r.wait_status) == SIGTERM) << r.wait_status;
}

TEST_F(SupervisorTest, SignalsReachTheScript) {
  SupervisorOptions o =
      Options("trap 'echo got usr1; exit 0' USR1\nwhile :; do sleep 0.05; done\n");
  BatchSupervisor s(std::move(o));
  ASSERT_TRUE(s.Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(s.Signal(SIGUSR1).ok());
  StepResult r = WaitFor(s);
  EXPECT_TRUE(WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0) << r.wait_status;
  // Every process of the job gets it: sleep dies of it, the script's trap answers.
  EXPECT_THAT(Slurp(dir_ + "/work/out.txt"), HasSubstr("got usr1\n"));
}

}  // namespace
}  // namespace loom::stepd
