// Starts real batch scripts the way loomd will and checks what a user would see: the output
// file's name, owner and contents, the exit status, and how cancellation ends a script. Needs
// root for the tests that run a job as another user (they skip otherwise).
#include "stepd/launcher.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace loom::stepd {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kTestUser[] = "loomtest1";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The lines NAME=value of `env` output, as a map.
std::map<std::string, std::string> ParseEnv(const std::string& text) {
  std::map<std::string, std::string> env;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

// Polls Reap until `job` has ended or `timeout_ms` passes.
std::optional<FinishedJob> WaitFor(BatchLauncher& launcher, model::JobId job,
                                   int timeout_ms = 5000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const FinishedJob& f : launcher.Reap()) {
      if (f.job_id == job) return f;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

// Waits until `path` contains `text`.
bool WaitForText(const std::string& path, const std::string& text, int timeout_ms = 3000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ReadFile(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

bool ProcessGone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  char state = close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
  return state == 'Z' || state == 'X';
}

class LauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/loom-noded-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ::chmod(root_.c_str(), 0755);  // the job's user must reach its spool and work dirs
    work_ = root_ + "/work";
    spool_ = root_ + "/spool";
    std::filesystem::create_directory(work_);
    ::chmod(work_.c_str(), 0777);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  // A one-node job of the current user running `script` in work_, output to work_/out.
  BatchJob Job(model::JobId id, const std::string& script) {
    BatchJob job;
    job.job_id = id;
    job.name = "test";
    job.uid = ::getuid();
    job.gid = ::getgid();
    job.partition = "debug";
    job.nodes = {"node1"};
    job.cpus_per_node = {4};
    job.node_name = "node1";
    job.work_dir = work_;
    job.stdout_pattern = "out";
    job.script = script;
    job.environment = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
    return job;
  }

  NodeSettings settings_;
  std::string root_, work_, spool_;
};

TEST_F(LauncherTest, ScriptSeesItsJobsEnvironment) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(71, "#!/bin/sh\nenv\n");
  job.nodes = {"node1", "node2"};
  job.cpus_per_node = {4, 4};
  job.ntasks = 3;
  job.gpus = 0b0110;
  job.array_job_id = 70;
  job.array_task_id = 1;
  job.array = *model::ParseArraySpec("0-3");
  StatusOr<pid_t> pid = launcher.Start(job, spool_);
  ASSERT_TRUE(pid.ok()) << pid.status();
  std::optional<FinishedJob> done = WaitFor(launcher, 71);
  ASSERT_TRUE(done);
  EXPECT_TRUE(WIFEXITED(done->wait_status) && WEXITSTATUS(done->wait_status) == 0);

  auto env = ParseEnv(ReadFile(work_ + "/out"));
  EXPECT_EQ(env["SLURM_JOB_ID"], "71");
  EXPECT_EQ(env["SLURM_JOB_NAME"], "test");
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "node[1-2]");
  EXPECT_EQ(env["SLURM_NNODES"], "2");
  EXPECT_EQ(env["SLURM_NTASKS"], "3");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2,1");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "4");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "4(x2)");
  EXPECT_EQ(env["SLURM_JOB_PARTITION"], "debug");
  EXPECT_EQ(env["SLURM_ARRAY_JOB_ID"], "70");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_ID"], "1");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_COUNT"], "4");
  EXPECT_EQ(env["SLURMD_NODENAME"], "node1");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1,2");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "1,2");
  EXPECT_EQ(env["SLURM_TASK_PID"], std::to_string(*pid));
  EXPECT_EQ(env["ENVIRONMENT"], "BATCH");
  EXPECT_EQ(env["PWD"], work_);
  // The spool directory goes with the job.
  EXPECT_FALSE(std::filesystem::exists(spool_ + "/job00071"));
}

TEST_F(LauncherTest, OutputPatternsNameTheFiles) {
  BatchLauncher launcher(settings_);
  std::string user = LookupUser(::getuid())->name;
  BatchJob job = Job(205, "#!/bin/sh\necho to-out\necho to-err >&2\n");
  job.name = "build";
  job.array_job_id = 200;
  job.array_task_id = 5;
  job.stdout_pattern = "%x-%j-%u.out";
  job.stderr_pattern = root_ + "/%A_%a.%N.err";
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 205));
  EXPECT_EQ(ReadFile(work_ + "/build-205-" + user + ".out"), "to-out\n");
  EXPECT_EQ(ReadFile(root_ + "/200_5.node1.err"), "to-err\n");

  // Without -o: slurm-%j.out in the working directory, stderr in the same file.
  BatchJob plain = Job(206, "#!/bin/sh\necho a\necho b >&2\n");
  plain.stdout_pattern.clear();
  ASSERT_TRUE(launcher.Start(plain, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 206));
  EXPECT_EQ(ReadFile(work_ + "/slurm-206.out"), "a\nb\n");

  // An array task without -o: slurm-%A_%a.out; "%%" is a '%'.
  BatchJob task = Job(207, "#!/bin/sh\necho t\n");
  task.stdout_pattern.clear();
  task.array_job_id = 200;
  task.array_task_id = 7;
  ASSERT_TRUE(launcher.Start(task, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 207));
  EXPECT_EQ(ReadFile(work_ + "/slurm-200_7.out"), "t\n");
  BatchJob percent = Job(208, "#!/bin/sh\necho p\n");
  percent.stdout_pattern = "100%%-%j";
  ASSERT_TRUE(launcher.Start(percent, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 208));
  EXPECT_EQ(ReadFile(work_ + "/100%-208"), "p\n");
}

TEST_F(LauncherTest, ExitCodeIsReported) {
  BatchLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Job(3, "#!/bin/sh\nexit 3\n"), spool_).ok());
  std::optional<FinishedJob> done = WaitFor(launcher, 3);
  ASSERT_TRUE(done);
  ASSERT_TRUE(WIFEXITED(done->wait_status));
  EXPECT_EQ(WEXITSTATUS(done->wait_status), 3);
  EXPECT_FALSE(done->terminated);
  EXPECT_FALSE(launcher.IsRunning(3));
}

TEST_F(LauncherTest, ScriptWithoutInterpreterLineRunsUnderSh) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(4, "echo \"args: $1 $2\"\necho \"$0\"\n");
  job.script_args = {"one", "two words"};
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 4));
  EXPECT_EQ(ReadFile(work_ + "/out"),
            "args: one two words\n" + spool_ + "/job00004/slurm_script\n");
}

TEST_F(LauncherTest, InterpreterLineIsHonoured) {
  BatchLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Job(5, "#!/bin/cat\nhello\n"), spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 5));
  EXPECT_EQ(ReadFile(work_ + "/out"), "#!/bin/cat\nhello\n");
}

TEST_F(LauncherTest, TerminateSendsTermThenKillAfterKillWait) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(6,
                     "#!/bin/sh\n"
                     "trap 'echo got TERM' TERM\n"
                     "echo ready\n"
                     "while :; do sleep 0.05; done\n");
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  ASSERT_TRUE(WaitForText(work_ + "/out", "ready"));
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(launcher.Terminate(6, /*kill_wait_s=*/1).ok());
  ASSERT_TRUE(launcher.NextDeadlineMs().has_value());
  std::optional<FinishedJob> done = WaitFor(launcher, 6);
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(done);
  ASSERT_TRUE(WIFSIGNALED(done->wait_status));
  EXPECT_EQ(WTERMSIG(done->wait_status), SIGKILL);
  EXPECT_TRUE(done->terminated);
  EXPECT_TRUE(done->killed);
  EXPECT_GE(elapsed, std::chrono::milliseconds(950));
  EXPECT_LT(elapsed, std::chrono::milliseconds(2500));
  EXPECT_THAT(ReadFile(work_ + "/out"), HasSubstr("got TERM"));
  EXPECT_FALSE(launcher.NextDeadlineMs().has_value());
}

TEST_F(LauncherTest, ScriptThatHonoursTermEndsWithoutKill) {
  BatchLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Job(7, "#!/bin/sh\necho ready\nexec sleep 30\n"), spool_).ok());
  ASSERT_TRUE(WaitForText(work_ + "/out", "ready"));
  ASSERT_TRUE(launcher.Terminate(7, 30).ok());
  std::optional<FinishedJob> done = WaitFor(launcher, 7);
  ASSERT_TRUE(done);
  ASSERT_TRUE(WIFSIGNALED(done->wait_status));
  EXPECT_EQ(WTERMSIG(done->wait_status), SIGTERM);
  EXPECT_TRUE(done->terminated);
  EXPECT_FALSE(done->killed);
}

TEST_F(LauncherTest, SignalReachesTheScript) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(8,
                     "#!/bin/sh\n"
                     "trap 'exit 7' USR1\n"
                     "echo ready\n"
                     "while :; do sleep 0.05; done\n");
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  ASSERT_TRUE(WaitForText(work_ + "/out", "ready"));
  ASSERT_TRUE(launcher.Signal(8, SIGUSR1).ok());
  std::optional<FinishedJob> done = WaitFor(launcher, 8);
  ASSERT_TRUE(done);
  ASSERT_TRUE(WIFEXITED(done->wait_status));
  EXPECT_EQ(WEXITSTATUS(done->wait_status), 7);
  EXPECT_EQ(launcher.Signal(8, SIGUSR1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(launcher.Terminate(8, 1).code(), absl::StatusCode::kNotFound);
}

TEST_F(LauncherTest, ProcessesLeftBehindEndWithTheScript) {
  BatchLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Job(9, "#!/bin/sh\nsleep 30 &\necho $!\n"), spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 9));
  pid_t straggler = std::stoi(ReadFile(work_ + "/out"));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!ProcessGone(straggler) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(ProcessGone(straggler));
}

TEST_F(LauncherTest, BadWorkDirFallsBackToTmpWithAnError) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(9901, "#!/bin/sh\npwd\n");
  job.work_dir = root_ + "/does-not-exist";
  job.stdout_pattern = "loom-noded-test-%j.out";  // relative: lands in /tmp
  const std::string out = "/tmp/loom-noded-test-9901.out";
  std::filesystem::remove(out);
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  std::optional<FinishedJob> done = WaitFor(launcher, 9901);
  ASSERT_TRUE(done);
  EXPECT_TRUE(WIFEXITED(done->wait_status) && WEXITSTATUS(done->wait_status) == 0);
  std::string text = ReadFile(out);
  std::filesystem::remove(out);
  EXPECT_EQ(text, "loom-stepd: error: couldn't chdir to `" + job.work_dir +
                      "': No such file or directory: going to /tmp instead\n/tmp\n");
}

TEST_F(LauncherTest, UnopenableOutputFailsTheLaunchAndSaysWhy) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(11, "#!/bin/sh\necho never\n");
  job.stdout_pattern = root_ + "/missing-dir/%j.out";
  job.stderr_pattern = "err-%j";
  StatusOr<pid_t> pid = launcher.Start(job, spool_);
  ASSERT_FALSE(pid.ok());
  const std::string why =
      "Could not open stdout file " + root_ + "/missing-dir/11.out: No such file or directory";
  EXPECT_THAT(std::string(pid.status().message()), HasSubstr("job 11"));
  EXPECT_THAT(std::string(pid.status().message()), HasSubstr(why));
  EXPECT_EQ(ReadFile(work_ + "/err-11"), "loom-stepd: error: " + why + "\n");
  EXPECT_FALSE(launcher.IsRunning(11));
  EXPECT_FALSE(std::filesystem::exists(spool_ + "/job00011"));
}

TEST_F(LauncherTest, MissingInterpreterFailsTheLaunch) {
  BatchLauncher launcher(settings_);
  StatusOr<pid_t> pid = launcher.Start(Job(12, "#!/nonexistent/interp\n"), spool_);
  ASSERT_FALSE(pid.ok());
  EXPECT_THAT(std::string(pid.status().message()),
              HasSubstr("execve(): " + spool_ + "/job00012/slurm_script: No such file"));
  EXPECT_THAT(ReadFile(work_ + "/out"), StartsWith("loom-stepd: error: execve(): "));
}

TEST_F(LauncherTest, UnknownUserIsRefused) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(13, "#!/bin/sh\n");
  job.uid = 3999999;
  StatusOr<pid_t> pid = launcher.Start(job, spool_);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(pid.status().message()),
              HasSubstr("job 13: user id 3999999 has no passwd entry"));
}

TEST_F(LauncherTest, SameJobTwiceIsRefused) {
  BatchLauncher launcher(settings_);
  ASSERT_TRUE(launcher.Start(Job(14, "#!/bin/sh\necho ready\nexec sleep 30\n"), spool_).ok());
  EXPECT_EQ(launcher.Start(Job(14, "#!/bin/sh\n"), spool_).status().code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(launcher.Terminate(14, 0).ok());
  ASSERT_TRUE(WaitFor(launcher, 14));
}

TEST_F(LauncherTest, OpenModeAppendKeepsEarlierOutput) {
  BatchLauncher launcher(settings_);
  WriteFile(work_ + "/out", "earlier\n");
  BatchJob job = Job(15, "#!/bin/sh\necho later\n");
  job.open_mode = model::OpenMode::kAppend;
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 15));
  EXPECT_EQ(ReadFile(work_ + "/out"), "earlier\nlater\n");

  BatchJob truncating = Job(16, "#!/bin/sh\necho fresh\n");  // the default: truncate
  ASSERT_TRUE(launcher.Start(truncating, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 16));
  EXPECT_EQ(ReadFile(work_ + "/out"), "fresh\n");
}

TEST_F(LauncherTest, UnusableTmpdirBecomesTmp) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(17, "#!/bin/sh\necho \"TMPDIR=$TMPDIR\"\n");
  job.environment["TMPDIR"] = root_ + "/no/such/parent";
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 17));
  EXPECT_EQ(ReadFile(work_ + "/out"), "loom-stepd: error: Unable to create TMPDIR [" + root_ +
                                          "/no/such/parent]: No such file or directory\n"
                                          "loom-stepd: error: Setting TMPDIR to /tmp\nTMPDIR=/tmp\n");
}

TEST_F(LauncherTest, SignalsBlockedOrIgnoredByLoomdAreResetForTheJob) {
  BatchLauncher launcher(settings_);
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  struct sigaction ignore = {}, old_action;
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGUSR2, &ignore, &old_action);
  ASSERT_TRUE(launcher.Start(Job(18, "#!/bin/sh\necho ready\nexec sleep 30\n"), spool_).ok());
  sigaction(SIGUSR2, &old_action, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(WaitForText(work_ + "/out", "ready"));
  ASSERT_TRUE(launcher.Signal(18, SIGUSR2).ok());
  std::optional<FinishedJob> done = WaitFor(launcher, 18);
  ASSERT_TRUE(done);
  ASSERT_TRUE(WIFSIGNALED(done->wait_status));
  EXPECT_EQ(WTERMSIG(done->wait_status), SIGUSR2);
}

TEST_F(LauncherTest, DescriptorsOfLoomdAreNotInherited) {
  BatchLauncher launcher(settings_);
  int leaked = ::open("/dev/null", O_RDONLY);  // not close-on-exec
  ASSERT_GE(leaked, 3);
  ASSERT_TRUE(launcher.Start(Job(19, "#!/bin/sh\nls /proc/self/fd\n"), spool_).ok());
  ::close(leaked);
  ASSERT_TRUE(WaitFor(launcher, 19));
  // ls sees 0, 1, 2 and the descriptor of the directory it reads, nothing else.
  std::istringstream fds(ReadFile(work_ + "/out"));
  std::vector<int> open;
  for (int fd; fds >> fd;) open.push_back(fd);
  EXPECT_THAT(open, ::testing::ElementsAre(0, 1, 2, 3));
}

TEST_F(LauncherTest, KillDeadlineUsesTheInjectedClock) {
  core::SimulatedClock clock(1'796'083'200);
  clock.Advance(std::chrono::seconds(1));
  BatchLauncher launcher(settings_, clock);
  BatchJob job = Job(20, "#!/bin/sh\ntrap '' TERM\necho ready\nwhile :; do sleep 0.05; done\n");
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  ASSERT_TRUE(WaitForText(work_ + "/out", "ready"));
  ASSERT_TRUE(launcher.Terminate(20, 60).ok());
  EXPECT_EQ(launcher.NextDeadlineMs(), 61000);
  ASSERT_TRUE(launcher.Terminate(20, 120).ok());  // keeps the earlier deadline
  EXPECT_EQ(launcher.NextDeadlineMs(), 61000);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(launcher.Reap().empty());  // still before the deadline: not killed
  clock.Advance(std::chrono::seconds(60));
  std::optional<FinishedJob> done = WaitFor(launcher, 20);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->killed);
  EXPECT_EQ(WTERMSIG(done->wait_status), SIGKILL);
}

TEST_F(LauncherTest, NonRootLoomdRunsOnlyItsOwnUsersJobs) {
  if (::geteuid() == 0) GTEST_SKIP() << "loomd runs as root here";
  BatchLauncher launcher(settings_);
  BatchJob job = Job(21, "#!/bin/sh\n");
  job.uid = 0;
  StatusOr<pid_t> pid = launcher.Start(job, spool_);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(pid.status().message()), HasSubstr("run loomd as root"));
}

TEST(ExpandJobFilesTest, DefaultsAreSlurms) {
  BatchJob job;
  job.job_id = 12;
  job.node_name = "n1";
  JobFiles files = ExpandJobFiles(job, "alice");
  EXPECT_EQ(files.stdout_path, "slurm-12.out");
  EXPECT_EQ(files.stderr_path, "slurm-12.out");
  EXPECT_EQ(files.stdin_path, "/dev/null");

  job.array_job_id = 10;
  job.array_task_id = 2;
  job.stderr_pattern = "/logs/%u/%x_%4a.err";
  job.stdin_pattern = "in.%a";
  job.name = "sweep";
  files = ExpandJobFiles(job, "alice");
  EXPECT_EQ(files.stdout_path, "slurm-10_2.out");
  EXPECT_EQ(files.stderr_path, "/logs/alice/sweep_0002.err");
  EXPECT_EQ(files.stdin_path, "in.2");
}

// ---------------------------------------------------------------------------------------
// As another user (needs root).

class LauncherAsUserTest : public LauncherTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a job as another user";
    if (::getpwnam(kTestUser) == nullptr &&
        std::system("useradd --no-create-home --shell /bin/sh loomtest1 >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "cannot create the test user " << kTestUser;
    }
    struct passwd* pw = ::getpwnam(kTestUser);
    ASSERT_NE(pw, nullptr);
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    LauncherTest::SetUp();
    ASSERT_EQ(::chown(work_.c_str(), uid_, gid_), 0);
    ::chmod(work_.c_str(), 0755);
  }

  BatchJob UserJob(model::JobId id, const std::string& script) {
    BatchJob job = Job(id, script);
    job.uid = uid_;
    job.gid = gid_;
    job.user = kTestUser;
    return job;
  }

  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

TEST_F(LauncherAsUserTest, JobRunsAsItsUserAndOwnsItsOutput) {
  BatchLauncher launcher(settings_);
  BatchJob job = UserJob(
      30, "#!/bin/sh\nid -u\nid -g\nls -ln \"$0\" | cut -d' ' -f1,3\necho \"$USER $HOME\"\n");
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  std::optional<FinishedJob> done = WaitFor(launcher, 30);
  ASSERT_TRUE(done);
  EXPECT_TRUE(WIFEXITED(done->wait_status) && WEXITSTATUS(done->wait_status) == 0);
  struct stat st;
  ASSERT_EQ(::stat((work_ + "/out").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid_);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  struct passwd* pw = ::getpwnam(kTestUser);
  EXPECT_EQ(ReadFile(work_ + "/out"), std::to_string(uid_) + "\n" + std::to_string(gid_) +
                                          "\n-rwx------ " + std::to_string(uid_) + "\n" +
                                          kTestUser + " " + pw->pw_dir + "\n");
}

TEST_F(LauncherAsUserTest, UserCannotWriteWhereItHasNoRight) {
  BatchLauncher launcher(settings_);
  std::string root_only = root_ + "/root-only";
  std::filesystem::create_directory(root_only);
  ::chmod(root_only.c_str(), 0755);
  BatchJob job = UserJob(31, "#!/bin/sh\necho never\n");
  job.stdout_pattern = root_only + "/out";
  job.stderr_pattern = "err";
  StatusOr<pid_t> pid = launcher.Start(job, spool_);
  ASSERT_FALSE(pid.ok());
  EXPECT_THAT(std::string(pid.status().message()),
              HasSubstr("Could not open stdout file " + root_only + "/out: Permission denied"));
  EXPECT_THAT(ReadFile(work_ + "/err"), HasSubstr("Permission denied"));
}

TEST_F(LauncherAsUserTest, RootJobRunsAsRoot) {
  BatchLauncher launcher(settings_);
  BatchJob job = Job(32, "#!/bin/sh\nid -u\n");
  job.uid = 0;
  job.gid = 0;
  ASSERT_TRUE(launcher.Start(job, spool_).ok());
  ASSERT_TRUE(WaitFor(launcher, 32));
  EXPECT_EQ(ReadFile(work_ + "/out"), "0\n");
}

// loomd reads the job's user for its supervisor; the supervisor takes it as given, and asks
// the node's own database when it was read for another uid.
TEST(IdentityTest, AUserLoomdReadIsTakenAsGiven) {
  BatchJob job;
  job.uid = ::getuid();
  job.gid = ::getgid();
  KnownUser known;
  known.user.name = "read-by-loomd";
  known.user.uid = ::getuid();
  known.user.gid = ::getgid();
  known.user.home = "/home/read-by-loomd";
  known.user.shell = "/bin/sh";
  known.groups = {::getgid(), 4242};
  job.known_user = known;
  StatusOr<JobIdentity> who = IdentityOf(job);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->user, known.user);
  EXPECT_EQ(who->gid, ::getgid());
  if (who->become_user) EXPECT_EQ(who->groups, (std::vector<gid_t>{::getgid(), 4242}));

  job.known_user->user.uid = ::getuid() + 1;
  who = IdentityOf(job);
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->user.name, LookupUser(::getuid())->name);
}

}  // namespace
}  // namespace loom::stepd
