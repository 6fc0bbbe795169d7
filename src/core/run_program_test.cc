#include "core/run_program.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loom::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RunProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("loom-run-program-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "#!/bin/sh\n" << body;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(RunProgramTest, GivesTheProgramExactlyItsEnvironmentAndKeepsItsOutput) {
  ProgramRun run;
  run.path = Script("env.sh", "echo \"id=$SLURM_JOB_ID home=${HOME-unset}\"\necho oops >&2\n");
  run.env = {"SLURM_JOB_ID=42", "PATH=/usr/bin:/bin"};
  run.capture_stdout = true;
  auto r = RunProgram(run);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->out, "id=42 home=unset\n");  // stderr is not kept
}

TEST_F(RunProgramTest, ReportsTheExitStatusAndASignal) {
  ProgramRun run;
  run.path = Script("fail.sh", "exit 3\n");
  auto r = RunProgram(run);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->Describe(0), "exit status 3");
  run.path = Script("kill.sh", "kill -9 $$\n");
  r = RunProgram(run);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Describe(0), "killed by signal 9");
}

TEST_F(RunProgramTest, ATimeoutKillsTheProgramAndWhatItStarted) {
  const std::string pid_file = (dir_ / "child.pid").string();
  ProgramRun run;
  run.path = Script("slow.sh", "sleep 60 &\necho $! > " + pid_file + "\nsleep 60\n");
  run.env = {"PATH=/usr/bin:/bin"};
  run.timeout_ms = 300;
  auto r = RunProgram(run);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->Describe(run.timeout_ms), "timed out after 1 s");
  pid_t child = 0;
  std::ifstream(pid_file) >> child;
  ASSERT_GT(child, 0);
  // The background sleep was in the program's session: it is gone (or a zombie of init's).
  for (int i = 0; i < 100 && ::kill(child, 0) == 0; ++i) ::usleep(10000);
  std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
  std::string text;
  std::getline(stat, text);
  EXPECT_TRUE(text.empty() || text.find(") Z") != std::string::npos) << text;
}

TEST_F(RunProgramTest, RunsAsTheUserAsked) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change user";
  ProgramRun run;
  run.path = "/usr/bin/id";
  run.as_user = ProgramRun::User{65534, 65534, {}};
  run.capture_stdout = true;
  auto r = RunProgram(run);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->out, HasSubstr("uid=65534"));
  EXPECT_THAT(r->out, HasSubstr("gid=65534"));
  EXPECT_THAT(r->out, ::testing::Not(HasSubstr("(root)")));
}

TEST_F(RunProgramTest, AProgramThatCannotStartIsAnError) {
  ProgramRun run;
  run.path = (dir_ / "missing").string();
  auto r = RunProgram(run);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("cannot run " + run.path));
  EXPECT_THAT(r.status().message(), HasSubstr("No such file"));
}

TEST_F(RunProgramTest, ProgramsOfAPatternRunInOrderUntilOneFails) {
  const std::string log = (dir_ / "log").string();
  std::filesystem::create_directories(dir_ / "d");
  Script("d/1", "echo 1 >> " + log + "\n");
  Script("d/2", "echo 2 >> " + log + "\nexit 5\n");
  Script("d/3", "echo 3 >> " + log + "\n");
  ProgramRun run;
  run.env = {"PATH=/usr/bin:/bin"};
  std::optional<std::string> failed = RunPrograms((dir_ / "d" / "*").string(), run);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(*failed, (dir_ / "d" / "2").string() + ": exit status 5");
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "1\n2\n");
  EXPECT_EQ(RunPrograms("", run), std::nullopt);
}

TEST_F(RunProgramTest, APatternNamesEveryMatchInOrder) {
  Script("20-b", "");
  Script("10-a", "");
  EXPECT_THAT(ExpandProgramPattern((dir_ / "*").string()),
              ElementsAre((dir_ / "10-a").string(), (dir_ / "20-b").string()));
  EXPECT_THAT(ExpandProgramPattern("/etc/loom/prolog.sh"), ElementsAre("/etc/loom/prolog.sh"));
  EXPECT_TRUE(ExpandProgramPattern((dir_ / "*.none").string()).empty());
  EXPECT_TRUE(ExpandProgramPattern(" ").empty());
}

}  // namespace
}  // namespace loom::core
