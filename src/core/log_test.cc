#include "core/log.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loom::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// 2026-12-01 20:17:02.123 in local time, as the daemons stamp their lines.
const SimulatedClock& FixedTime() {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 11;
  tm.tm_mday = 1;
  tm.tm_hour = 20;
  tm.tm_min = 17;
  tm.tm_sec = 2;
  tm.tm_isdst = -1;
  static SimulatedClock* const clock = [&] {
    auto* c = new SimulatedClock(static_cast<int64_t>(std::mktime(&tm)));
    c->Advance(std::chrono::milliseconds(123));
    return c;
  }();
  return *clock;
}

struct Captured {
  Logger logger{FixedTime()};
  std::vector<std::string> lines;
  Captured() {
    logger.ToSink([this](std::string_view l) { lines.emplace_back(l); });
  }
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Log, PrefixIsSlurmsWithTheLevelWordButForInfo) {
  Captured c;
  c.logger.SetLevel(LogLevel::kDebug2);
  c.logger.Write(LogLevel::kInfo, "serving on 127.0.0.1:6817");
  c.logger.Write(LogLevel::kError, "the store refused a change");
  c.logger.Write(LogLevel::kDebug2, "pass done");
  EXPECT_THAT(c.lines, ElementsAre("[2026-12-01T20:17:02.123] serving on 127.0.0.1:6817",
                                   "[2026-12-01T20:17:02.123] error: the store refused a change",
                                   "[2026-12-01T20:17:02.123] debug2: pass done"));
}

TEST(Log, NothingBelowTheLevelIsWritten) {
  Captured c;  // info by default
  c.logger.Write(LogLevel::kVerbose, "v");
  c.logger.Write(LogLevel::kDebug, "d");
  c.logger.Write(LogLevel::kDebug5, "d5");
  EXPECT_THAT(c.lines, IsEmpty());
  EXPECT_FALSE(c.logger.Enabled(LogLevel::kDebug));
  c.logger.SetLevel(LogLevel::kDebug);
  c.logger.Write(LogLevel::kDebug, "d");
  c.logger.Write(LogLevel::kDebug2, "d2");
  EXPECT_THAT(c.lines, ElementsAre("[2026-12-01T20:17:02.123] debug: d"));
  c.logger.SetLevel(LogLevel::kQuiet);
  c.logger.Write(LogLevel::kFatal, "f");
  EXPECT_EQ(c.lines.size(), 1u);
}

TEST(Log, LevelsBySlurmsNamesAndNumbers) {
  EXPECT_EQ(ParseLogLevel("debug2"), LogLevel::kDebug2);
  EXPECT_EQ(ParseLogLevel("INFO"), LogLevel::kInfo);
  EXPECT_EQ(ParseLogLevel("0"), LogLevel::kQuiet);
  EXPECT_EQ(ParseLogLevel("9"), LogLevel::kDebug5);
  EXPECT_EQ(ParseLogLevel("10"), std::nullopt);
  EXPECT_EQ(ParseLogLevel("loud"), std::nullopt);
  EXPECT_EQ(LogLevelName(LogLevel::kVerbose), "verbose");
}

TEST(Log, EachVRaisesTheLevelOneStep) {
  EXPECT_EQ(RaiseLogLevel(LogLevel::kInfo, 0), LogLevel::kInfo);
  EXPECT_EQ(RaiseLogLevel(LogLevel::kInfo, 2), LogLevel::kDebug);
  EXPECT_EQ(RaiseLogLevel(LogLevel::kDebug3, 9), LogLevel::kDebug5);
}

TEST(Log, JobLinesNameTheJobAsSlurmDoes) {
  EXPECT_EQ(fmt::format("{} launch on n1 failed", JobId{123}), "JobId=123 launch on n1 failed");
}

TEST(Log, DebugFlagsAreParsedAndChanged) {
  absl::StatusOr<uint32_t> f = ParseDebugFlags("backfill, Steps");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(DebugFlagsString(*f), "Backfill,Steps");
  f = ApplyDebugFlagChanges(*f, "+SCHEDULING,-Backfill");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(DebugFlagsString(*f), "Scheduling,Steps");
  EXPECT_THAT(ApplyDebugFlagChanges(0, "+Shoes").status().message(),
              HasSubstr("Invalid DebugFlag: Shoes"));
  EXPECT_FALSE(ApplyDebugFlagChanges(0, "Backfill").ok());
  EXPECT_FALSE(ParseDebugFlags("Backfill,Nope").ok());
}

TEST(Log, ReopenAfterTheFileWasMovedWritesANewFile) {
  const std::string dir = ::testing::TempDir() + "/log_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/ctld.log";
  Logger logger(FixedTime());
  ASSERT_TRUE(logger.ToFile(path).ok());
  logger.Write(LogLevel::kInfo, "before");
  std::filesystem::rename(path, path + ".1");
  logger.Write(LogLevel::kInfo, "still the old file");
  ASSERT_TRUE(logger.Reopen().ok());
  logger.Write(LogLevel::kInfo, "after");
  EXPECT_EQ(ReadFile(path + ".1"),
            "[2026-12-01T20:17:02.123] before\n[2026-12-01T20:17:02.123] still the old file\n");
  EXPECT_EQ(ReadFile(path), "[2026-12-01T20:17:02.123] after\n");
  std::filesystem::remove_all(dir);
}

TEST(Log, FileThatCannotBeOpenedIsAnError) {
  Logger logger;
  absl::Status s = logger.ToFile("/dev/null/x.log");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("/dev/null/x.log"));
}

TEST(Log, LogFileNamesExpandNodeAndHost) {
  EXPECT_EQ(ExpandLogFileName("/var/log/slurmd.%n.log", "gpu01", "host7"),
            "/var/log/slurmd.gpu01.log");
  EXPECT_EQ(ExpandLogFileName("/l/%h/%n%%", "n1", "h"), "/l/h/n1%%");
}

TEST(Log, ConfigureSetsLevelAndFlags) {
  Logger logger;
  LogSettings s;
  s.level = LogLevel::kDebug;
  s.debug_flags = FlagBit(DebugFlag::kBackfill);
  ASSERT_TRUE(ConfigureLog(logger, s, "test").ok());
  EXPECT_EQ(logger.level(), LogLevel::kDebug);
  EXPECT_TRUE(logger.FlagOn(DebugFlag::kBackfill));
  EXPECT_FALSE(logger.FlagOn(DebugFlag::kScheduling));
}

}  // namespace
}  // namespace loom::core
