#include "stepd/records.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

namespace loom::stepd {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RecordsTest, PathsArePerNodeJobAndStep) {
  StepdPaths p = PathsOf("/var/spool/loomd/n1", "n1", StepRef::Batch(42));
  EXPECT_EQ(p.dir, "/var/spool/loomd/n1/stepd/n1_job42");
  EXPECT_EQ(p.socket, p.dir + "/socket");
  EXPECT_EQ(p.result, p.dir + "/result");
  EXPECT_EQ(p.pid, p.dir + "/pid");
  EXPECT_EQ(p.tasks, p.dir + "/tasks");
  EXPECT_EQ(p.launch, p.dir + "/launch.pb");
  EXPECT_EQ(PathsOf("/s", "n1", StepRef::OnlyStep(42)).dir, "/s/stepd/n1_job42.srun");
  EXPECT_EQ(PathsOf("/s", "n1", StepRef::Step(42, 3)).dir, "/s/stepd/n1_job42.3");
}

TEST(RecordsTest, StepArgumentsRoundTrip) {
  for (StepRef ref : {StepRef::Batch(9), StepRef::OnlyStep(9), StepRef::Step(9, 0),
                      StepRef::Step(9, 17)}) {
    auto back = ParseStepArg(9, StepArg(ref));
    ASSERT_TRUE(back.ok()) << Describe(ref);
    EXPECT_EQ(*back, ref);
  }
  EXPECT_EQ(Describe(StepRef::Step(9, 2)), "step 9.2");
  EXPECT_EQ(Describe(StepRef::OnlyStep(9)), "job 9's tasks");
  EXPECT_THAT(ParseStepArg(9, "batch").status().message(), HasSubstr("'batch' is not a step"));
  EXPECT_FALSE(ParseStepArg(9, "-1").ok());
}

TEST(RecordsTest, ListSupervisedSeesOnlyThisNodesDirectories) {
  const std::string spool = testing::TempDir() + "/records_list";
  fs::remove_all(spool);
  for (const char* d : {"n1_job7", "n1_job12", "n1_job12.srun", "n1_job7.0", "n1_job7.4",
                        "n10_job3", "n2_job5", "n1_jobx", "n1_job8.", "n1_job8.x"}) {
    fs::create_directories(spool + "/stepd/" + d);
  }
  EXPECT_THAT(ListSupervised(spool, "n1"),
              ElementsAre(StepRef::Batch(7), StepRef::Step(7, 0), StepRef::Step(7, 4),
                          StepRef::Batch(12), StepRef::OnlyStep(12)));
  EXPECT_THAT(ListSupervised(spool, "n10"), ElementsAre(StepRef::Batch(3)));
  EXPECT_TRUE(ListSupervised(spool + "/none", "n1").empty());
}

TEST(RecordsTest, TaskRecordsRoundTripAndBadOnesSayWhere) {
  std::vector<TaskRecord> tasks = {{0, {100, 5000}}, {3, {101, 5001}}};
  auto back = ParseTaskRecords(FormatTaskRecords(tasks), "x/tasks");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, tasks);
  EXPECT_TRUE(ParseTaskRecords("", "x/tasks")->empty());
  EXPECT_EQ(ParseTaskRecords("0 100 5000\n1 zero 3\n", "x/tasks").status().message(),
            "x/tasks:2: not a 'TASK PID START' line: '1 zero 3'");
}

TEST(RecordsTest, PidRecordRoundTripsAndBadOnesSayWhere) {
  PidRecord r{{123, 456789}, {124, 456790}};
  auto back = ParsePidRecord(FormatPidRecord(r), "x/pid");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  auto bad = ParsePidRecord("123 abc", "/spool/stepd/n1_job3/pid");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("/spool/stepd/n1_job3/pid"));
}

TEST(RecordsTest, ResultRoundTripsAndIncompleteIsRefused) {
  StepResult r;
  r.job_id = 9;
  r.wait_status = 9;
  r.out_of_memory = true;
  r.terminated = true;
  r.timed_out = true;
  r.user_cpu_us = 10;
  r.system_cpu_us = 20;
  r.cgroup_cpu_us = 35;
  r.max_rss_bytes = 1 << 26;
  auto back = ParseResult(FormatResult(r), "result");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  EXPECT_FALSE(ParseResult("job_id=9\n", "result").ok());
  auto bad = ParseResult("job_id=9\nwait_status=zero\n", "the/result");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("the/result:2"));
}

TEST(RecordsTest, AtomicWriteReplacesWholeFiles) {
  const std::string dir = testing::TempDir() + "/records_atomic";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = dir + "/result";
  ASSERT_TRUE(WriteFileAtomic(path, "first\n", 0600, Durability::kSurvivesCrash).ok());
  ASSERT_TRUE(WriteFileAtomic(path, "second\n", 0600, Durability::kUntilReboot).ok());
  EXPECT_EQ(*ReadFile(path), "second\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(absl::IsNotFound(ReadFile(dir + "/missing").status()));
  for (Durability d : {Durability::kUntilReboot, Durability::kSurvivesCrash}) {
    EXPECT_FALSE(WriteFileAtomic(dir + "/no/such/dir/file", "x", 0600, d).ok());
  }
}

TEST(RecordsTest, ProcessRefsTellAReusedPidFromTheOriginal) {
  auto me = RefOf(::getpid());
  ASSERT_TRUE(me.has_value());
  EXPECT_TRUE(IsAlive(*me));
  EXPECT_FALSE(IsAlive(ProcessRef{me->pid, me->start_time + 1}));  // same pid, other start
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status;
  ::waitpid(child, &status, 0);
  EXPECT_FALSE(StartTimeOf(child).has_value());
}

}  // namespace
}  // namespace loom::stepd
