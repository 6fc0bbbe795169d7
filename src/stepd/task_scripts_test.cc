#include "stepd/task_scripts.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loom::stepd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(TaskScripts, TheSitesRunFirstThenTheUsers) {
  NodeSettings settings;
  settings.task_prolog = "/etc/slurm/task_prolog";
  settings.task_epilog = "/etc/slurm/task_epilog";
  TaskScripts s = TaskScriptsFor(
      settings, {{"SLURM_TASK_PROLOG", "/home/a/tp"}, {"SLURM_TASK_EPILOG", "/home/a/te"}});
  EXPECT_THAT(s.prologs, ElementsAre("/etc/slurm/task_prolog", "/home/a/tp"));
  EXPECT_THAT(s.epilogs, ElementsAre("/etc/slurm/task_epilog", "/home/a/te"));
  EXPECT_TRUE(TaskScriptsFor(NodeSettings{}, {}).empty());
}

TEST(TaskScripts, PrologOutputSetsUnsetsAndPrints) {
  TaskPrologOutput out = ParseTaskPrologOutput(
      "export A=1\nexport  B=x=y\nunset C\nprint hello world\nrandom line\nexport =bad\n"
      "print last");
  EXPECT_THAT(out.exports, ElementsAre(Pair("A", "1"), Pair("B", "x=y")));
  EXPECT_THAT(out.unsets, ElementsAre("C"));
  EXPECT_EQ(out.printed, "hello world\nlast\n");
}

TEST(TaskScripts, APrologChangesTheTasksEnvironmentAndAFailureStopsIt) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("loom-task-scripts-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto script = [&](const std::string& name, const std::string& body) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << "#!/bin/sh\n" << body;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  };
  ProcessSpec spec;
  spec.work_dir = dir.string();
  spec.environment = {{"SLURM_PROCID", "3"}, {"DROP", "1"}, {"PATH", "/usr/bin:/bin"}};
  const std::string good = script(
      "good",
      "echo \"export RANK_FROM_PROLOG=$SLURM_PROCID\"\necho unset DROP\necho print in $PWD\n");
  StatusOr<std::string> printed = RunTaskPrologs({good}, &spec);
  ASSERT_TRUE(printed.ok()) << printed.status();
  EXPECT_EQ(*printed, "in " + dir.string() + "\n");
  EXPECT_EQ(spec.environment["RANK_FROM_PROLOG"], "3");
  EXPECT_FALSE(spec.environment.contains("DROP"));
  const std::string bad = script("bad", "exit 4\n");
  StatusOr<std::string> failed = RunTaskPrologs({bad}, &spec);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(),
              HasSubstr("task prolog " + bad + " failed: exit status 4"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace loom::stepd
