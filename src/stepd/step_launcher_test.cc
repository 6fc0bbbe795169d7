// Starts real tasks the way loomd does for srun and checks what srun hears: the hello with the
// key, each task's output in whole lines, exits after output, the exit statuses, and how a
// terminated step and a vanished srun end. A fake srun listens on loopback.
#include "stepd/step_launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "loom/v1/loom.pb.h"
#include "stepd/testing/fake_srun.h"

namespace loom::stepd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_support::Collect;
using testing_support::FakeSrun;
using testing_support::Heard;

std::optional<FinishedJob> WaitFinished(StepLauncher& launcher, model::JobId job, int ms = 10000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const FinishedJob& f : launcher.Reap()) {
      if (f.job_id == job) return f;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

class StepLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/loom-step-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    work_ = tmpl;
    ::chmod(work_.c_str(), 0777);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(work_, ec);
  }

  // Node n1's share of a `srun -N2 -n<ntasks>` step of the current user running `argv`: with
  // the default -n3 it runs tasks 0 and 1.
  StepJob Step(model::JobId id, std::vector<std::string> argv, int ntasks = 3) {
    StepJob s;
    s.job.job_id = id;
    s.job.name = "step";
    s.job.uid = ::getuid();
    s.job.gid = ::getgid();
    s.job.partition = "debug";
    s.job.nodes = {"n1", "n2"};
    s.job.cpus_per_node = {4, 4};
    s.job.node_name = "n1";
    s.job.node_index = 0;
    s.job.ntasks = ntasks;
    s.job.work_dir = work_;
    s.job.environment = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
    s.argv = std::move(argv);
    s.io_host = "127.0.0.1";
    s.io_port = srun_.port();
    s.io_key = "secret";
    return s;
  }

  NodeSettings settings_;
  std::string work_;
  FakeSrun srun_;
};

TEST_F(StepLauncherTest, TasksSayHelloThenOutputThenExit) {
  StepLauncher launcher(settings_);
  // -n3 over two 4-CPU nodes: n1 runs tasks 0 and 1.
  StepJob step = Step(7, {"sh", "-c", "echo out $SLURM_PROCID; echo err $SLURM_LOCALID >&2"}, 3);
  ASSERT_TRUE(launcher.Start(step).ok());
  EXPECT_TRUE(launcher.IsRunning(7));
  std::vector<v1::StepIo> messages = srun_.WaitClosed();
  ASSERT_FALSE(messages.empty());
  ASSERT_TRUE(messages[0].has_hello());
  EXPECT_EQ(messages[0].hello().job_id(), 7u);
  EXPECT_EQ(messages[0].hello().key(), "secret");
  EXPECT_EQ(messages[0].hello().node(), "n1");
  EXPECT_THAT(messages[0].hello().tasks(), ElementsAre(0, 1));
  Heard h = Collect(messages);
  EXPECT_EQ(h.out[0], "out 0\n");
  EXPECT_EQ(h.out[1], "out 1\n");
  EXPECT_EQ(h.err[0], "err 0\n");
  EXPECT_EQ(h.err[1], "err 1\n");
  EXPECT_EQ(h.status[0], 0);
  EXPECT_EQ(h.status[1], 0);
  EXPECT_FALSE(h.exit_before_output);
  auto f = WaitFinished(launcher, 7);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->wait_status, 0);
  EXPECT_FALSE(launcher.IsRunning(7));
}

TEST_F(StepLauncherTest, LinesOfManyTasksNeverMix) {
  StepLauncher launcher(settings_);
  // Four tasks each write 200 long lines in small pieces at once.
  StepJob step = Step(8,
                      {"sh", "-c",
                       "i=0; while [ $i -lt 200 ]; do printf 'task%s-' $SLURM_PROCID; "
                       "printf '%0300d\\n' $i; i=$((i+1)); done"},
                      8);
  step.job.ntasks_per_node = 4;
  ASSERT_TRUE(launcher.Start(step).ok());
  size_t lines_seen = 0;
  for (const v1::StepIo& m : srun_.WaitClosed(30000)) {
    if (!m.has_output()) continue;
    std::istringstream lines(m.output().data());
    for (std::string line; std::getline(lines, line);) {
      ++lines_seen;
      ASSERT_THAT(line, ::testing::StartsWith("task" + std::to_string(m.output().task()) + "-"));
      ASSERT_EQ(line.size(), 306u + (m.output().task() >= 10 ? 1 : 0)) << line;
    }
    EXPECT_EQ(m.output().data().back(), '\n');
  }
  EXPECT_EQ(lines_seen, 4u * 200u);
  ASSERT_TRUE(WaitFinished(launcher, 8));
}

TEST_F(StepLauncherTest, ExitStatusesAddUpBySrunsRule) {
  StepLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Step(9, {"sh", "-c", "exit $((SLURM_PROCID + 3))"})).ok());
  Heard h = Collect(srun_.WaitClosed());
  EXPECT_EQ(WEXITSTATUS(h.status[0]), 3);
  EXPECT_EQ(WEXITSTATUS(h.status[1]), 4);
  auto f = WaitFinished(launcher, 9);
  ASSERT_TRUE(f);
  EXPECT_TRUE(WIFEXITED(f->wait_status));
  EXPECT_EQ(WEXITSTATUS(f->wait_status), 4);
}

TEST_F(StepLauncherTest, MissingCommandExitsTwoWithSlurmsMessage) {
  StepLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Step(10, {"no-such-command-here"}, 1)).ok());
  Heard h = Collect(srun_.WaitClosed());
  EXPECT_EQ(h.err[0], "loom-stepd: error: execve(): no-such-command-here: No such file or directory\n");
  EXPECT_TRUE(WIFEXITED(h.status[0]));
  EXPECT_EQ(WEXITSTATUS(h.status[0]), 2);
  ASSERT_TRUE(WaitFinished(launcher, 10));
}

TEST_F(StepLauncherTest, TerminateEndsTheTasks) {
  StepLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Step(11, {"sleep", "600"})).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(launcher.Terminate(11, 5).ok());
  Heard h = Collect(srun_.WaitClosed());
  EXPECT_TRUE(WIFSIGNALED(h.status[0]));
  EXPECT_EQ(WTERMSIG(h.status[0]), SIGTERM);
  auto f = WaitFinished(launcher, 11);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->terminated);
  EXPECT_FALSE(f->killed);
  EXPECT_TRUE(absl::IsNotFound(launcher.Terminate(11, 5)));
}

TEST_F(StepLauncherTest, TheTasksCpuTimeIsAddedUp) {
  StepLauncher launcher(settings_);
  // Two tasks that each spin a little (about a tenth of a second of CPU each).
  ASSERT_TRUE(launcher
                  .Start(Step(15, {"sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"}))
                  .ok());
  (void)srun_.WaitClosed();
  auto f = WaitFinished(launcher, 15);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->wait_status, 0);
  EXPECT_GT(f->user_cpu_us + f->system_cpu_us, 0);
}

TEST_F(StepLauncherTest, TasksThatIgnoreTermAreKilledAfterKillWait) {
  StepLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Step(12, {"sh", "-c", "trap '' TERM; sleep 600"}, 1)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(launcher.Terminate(12, 1).ok());
  auto f = WaitFinished(launcher, 12);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->killed);
  EXPECT_EQ(WTERMSIG(f->wait_status), SIGKILL);
}

TEST_F(StepLauncherTest, SignalReachesEveryTask) {
  StepLauncher launcher(settings_);
  ASSERT_TRUE(
      launcher.Start(Step(13, {"sh", "-c", "trap 'echo got; exit 5' USR1; sleep 600 & wait"}))
          .ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(launcher.Signal(13, SIGUSR1).ok());
  Heard h = Collect(srun_.WaitClosed());
  EXPECT_EQ(h.out[0], "got\n");
  EXPECT_EQ(h.out[1], "got\n");
  EXPECT_EQ(WEXITSTATUS(h.status[1]), 5);
  ASSERT_TRUE(WaitFinished(launcher, 13));
}

TEST_F(StepLauncherTest, SrunGoneEndsTheTasks) {
  settings_.kill_wait_s = 1;
  StepLauncher launcher(settings_);
  ASSERT_TRUE(
      launcher.Start(Step(14, {"sh", "-c", "while true; do echo tick; sleep 0.05; done"})).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  srun_.Hangup();
  auto f = WaitFinished(launcher, 14);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->terminated);
  EXPECT_TRUE(WIFSIGNALED(f->wait_status));
}

TEST_F(StepLauncherTest, UnreachableSrunFailsTheLaunch) {
  StepLauncher launcher(settings_);
  StepJob step = Step(15, {"true"});
  step.io_port = 1;  // nothing listens there
  Status s = launcher.Start(step);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("job 15: srun at 127.0.0.1:1 cannot be reached"));
  EXPECT_FALSE(launcher.IsRunning(15));
}

TEST_F(StepLauncherTest, UnknownUserIsToldToSrun) {
  StepLauncher launcher(settings_);
  StepJob step = Step(16, {"true"});
  step.job.uid = 3999999;
  Status s = launcher.Start(step);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("user id 3999999 has no passwd entry"));
  Heard h = Collect(srun_.WaitClosed());
  ASSERT_EQ(h.failures.size(), 1u);
  EXPECT_THAT(h.failures[0], HasSubstr("launch failed on n1: user id 3999999"));
}

TEST_F(StepLauncherTest, PerTaskOutputFilesAreOpenedHere) {
  StepLauncher launcher(settings_);
  StepJob step = Step(17, {"sh", "-c", "echo to-file $SLURM_PROCID; echo oops >&2"});
  step.stdout_pattern = work_ + "/out-%j-%t-%N.txt";
  step.stderr_pattern = step.stdout_pattern;  // srun -o without -e
  ASSERT_TRUE(launcher.Start(step).ok());
  Heard h = Collect(srun_.WaitClosed());
  EXPECT_TRUE(h.out.empty());
  EXPECT_TRUE(h.err.empty());
  ASSERT_TRUE(WaitFinished(launcher, 17));
  std::ifstream in(work_ + "/out-17-1-n1.txt");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "to-file 1\noops\n");
}

TEST_F(StepLauncherTest, StdoutToFilesStderrToSrun) {
  StepLauncher launcher(settings_);
  StepJob step = Step(19, {"sh", "-c", "echo to-file; echo oops >&2"});
  step.stdout_pattern = work_ + "/out-%t";
  ASSERT_TRUE(launcher.Start(step).ok());
  Heard h = Collect(srun_.WaitClosed());
  EXPECT_TRUE(h.out.empty());
  EXPECT_EQ(h.err[0], "oops\n");
  EXPECT_EQ(h.err[1], "oops\n");
  ASSERT_TRUE(WaitFinished(launcher, 19));
  std::ifstream in(work_ + "/out-0");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "to-file\n");
}

TEST_F(StepLauncherTest, SameJobTwiceIsRefused) {
  StepLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Step(18, {"sleep", "600"}, 1)).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(launcher.Start(Step(18, {"true"}, 1))));
  ASSERT_TRUE(launcher.Terminate(18, 0).ok());
  ASSERT_TRUE(WaitFinished(launcher, 18));
}

// Two steps of one job side by side on this node (srun twice in a batch script): each its own
// tasks (cyclic ids here), its own srun, its own end; a signal to one leaves the other alone.
TEST_F(StepLauncherTest, StepsOfOneJobRunSideBySide) {
  StepLauncher launcher(settings_);
  FakeSrun second;
  auto placed = [&](uint32_t id, std::vector<int32_t> tasks, std::vector<std::string> argv) {
    StepJob s = Step(30, std::move(argv));
    StepPlacement& p = s.placement.emplace();
    p.step_id = id;
    p.nodes = {"n1", "n2"};
    p.tasks_per_node = {2, 2};
    p.node_index = 0;
    p.task_ids = std::move(tasks);
    p.distribution = model::Distribution::kCyclic;
    return s;
  };
  ASSERT_TRUE(launcher.Start(placed(0, {0, 1}, {"sleep", "600"})).ok());
  StepJob echo = placed(1, {0, 2}, {"sh", "-c", "echo $SLURM_PROCID $SLURM_LOCALID $SLURM_STEP_ID"});
  echo.io_port = second.port();
  ASSERT_TRUE(launcher.Start(echo).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(launcher.Start(echo)));  // the same step again
  std::vector<v1::StepIo> messages = second.WaitClosed();
  ASSERT_FALSE(messages.empty());
  EXPECT_THAT(messages[0].hello().tasks(), ElementsAre(0, 2));
  Heard h = Collect(messages);
  EXPECT_EQ(h.out[0], "0 0 1\n");
  EXPECT_EQ(h.out[2], "2 1 1\n");
  std::optional<FinishedStep> done;
  for (int i = 0; i < 1000 && !done; ++i) {
    for (const FinishedStep& f : launcher.Reap()) done = f;
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(done);
  EXPECT_EQ(done->step_id, std::optional<uint32_t>(1));
  EXPECT_TRUE(launcher.IsRunning(30, 0));  // step 0 still sleeps
  EXPECT_FALSE(launcher.IsRunning(30, 1));
  EXPECT_TRUE(absl::IsNotFound(launcher.Signal(30, SIGTERM, 1)));
  ASSERT_TRUE(launcher.Signal(30, SIGTERM, 0).ok());
  Heard first = Collect(srun_.WaitClosed());
  EXPECT_EQ(WTERMSIG(first.status[0]), SIGTERM);
  auto f = WaitFinished(launcher, 30);
  ASSERT_TRUE(f);
  EXPECT_FALSE(launcher.IsRunning(30));
}

// A step cgroup that records what is done with it; its procs "files" are plain files here.
class FakeCgroup : public StepCgroup {
 public:
  FakeCgroup(std::string procs, int64_t oom_kills, bool* removed)
      : procs_(std::move(procs)), oom_kills_(oom_kills), removed_(removed) {}
  Status Attach(pid_t) override { return absl::OkStatus(); }
  Status Freeze(bool) override { return absl::OkStatus(); }
  Status KillAll() override { return absl::OkStatus(); }
  StatusOr<CgroupUsage> Usage() const override {
    CgroupUsage u;
    u.oom_kills = oom_kills_;
    return u;
  }
  Status Remove() override {
    *removed_ = true;
    return absl::OkStatus();
  }
  std::vector<pid_t> Pids() const override { return {}; }
  std::vector<std::string> ProcsFiles() const override { return {procs_}; }

 private:
  std::string procs_;
  int64_t oom_kills_;
  bool* removed_;
};

TEST_F(StepLauncherTest, ConfinedStepsJoinTheirCgroupAndAnOomKillMarksThem) {
  const std::string procs = work_ + "/cgroup.procs";
  std::ofstream(procs).close();
  std::vector<std::string> names;
  bool removed = false;
  ConfineStep confine = [&](const StepJob& step, const std::string& name)
      -> StatusOr<std::unique_ptr<StepCgroup>> {
    names.push_back(name);
    return std::unique_ptr<StepCgroup>(new FakeCgroup(procs, /*oom_kills=*/1, &removed));
  };
  StepLauncher launcher(settings_, 120000, confine);
  ASSERT_TRUE(launcher.Start(Step(40, {"true"})).ok());
  Collect(srun_.WaitClosed());
  auto f = WaitFinished(launcher, 40);
  ASSERT_TRUE(f);
  EXPECT_EQ(names, (std::vector<std::string>{"srun"}));  // a job srun submitted: its step
  EXPECT_TRUE(f->out_of_memory);
  EXPECT_TRUE(removed);
  // Each of the two tasks wrote "0" to the procs file before exec, as it joined.
  std::ifstream in(procs);
  std::string joined((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(joined, "00");

  // A cgroup that cannot be made fails the launch and runs nothing.
  ConfineStep refuse = [](const StepJob&, const std::string&)
      -> StatusOr<std::unique_ptr<StepCgroup>> {
    return absl::FailedPreconditionError("no cgroup for you");
  };
  StepLauncher refusing(settings_, 120000, refuse);
  Status s = refusing.Start(Step(41, {"true"}));
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("no cgroup for you"));
  EXPECT_FALSE(refusing.IsRunning(41));
}

TEST(OutputChunkerTest, WholeLinesOnly) {
  OutputChunker c;
  EXPECT_TRUE(c.Add("hel").empty());
  EXPECT_THAT(c.Add("lo\nwor"), ElementsAre("hello\n"));
  EXPECT_THAT(c.Add("ld\na\nb"), ElementsAre("world\n", "a\n"));
  EXPECT_EQ(c.Flush(), "b");
  EXPECT_EQ(c.Flush(), std::nullopt);
}

TEST(OutputChunkerTest, LongLinesGoInPieces) {
  OutputChunker c(false, 4);
  EXPECT_THAT(c.Add("abcdefghij\n"), ElementsAre("abcd", "efgh", "ij\n"));
  EXPECT_THAT(c.Add("abcdef"), ElementsAre("abcd"));
  EXPECT_EQ(c.Flush(), "ef");
}

TEST(OutputChunkerTest, UnbufferedPassesBytesAsTheyCome) {
  OutputChunker c(true);
  EXPECT_THAT(c.Add("par"), ElementsAre("par"));
  EXPECT_THAT(c.Add("tial\nmore"), ElementsAre("tial\nmore"));
  EXPECT_EQ(c.Flush(), std::nullopt);
}

TEST(FindCommandTest, SearchesPathLikeExecvp) {
  EXPECT_EQ(FindCommand("sh", "/nonexistent:/bin:/usr/bin", "/"), "/bin/sh");
  EXPECT_EQ(FindCommand("./x", "/bin", "/"), "./x");
  EXPECT_EQ(FindCommand("/usr/bin/env", "", "/"), "/usr/bin/env");
  EXPECT_EQ(FindCommand("no-such-command-here", "/bin:/usr/bin", "/"), "no-such-command-here");
  EXPECT_EQ(FindCommand("sh", "bin", "/"), "/bin/sh");  // relative PATH entries: from work_dir
}

}  // namespace
}  // namespace loom::stepd
