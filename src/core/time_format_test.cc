#include "core/time_format.h"

#include <gtest/gtest.h>

namespace loom::core {
namespace {

TEST(ParseDuration, AcceptsEverySlurmForm) {
  EXPECT_EQ(*ParseDuration("30"), 30 * 60);                     // MM
  EXPECT_EQ(*ParseDuration("30:15"), 30 * 60 + 15);             // MM:SS
  EXPECT_EQ(*ParseDuration("02:30:15"), 2 * 3600 + 30 * 60 + 15);  // HH:MM:SS
  EXPECT_EQ(*ParseDuration("2-12"), 2 * 86400 + 12 * 3600);     // D-HH
  EXPECT_EQ(*ParseDuration("2-12:30"), 2 * 86400 + 12 * 3600 + 30 * 60);
  EXPECT_EQ(*ParseDuration("7-00:00:00"), 7 * 86400);
  EXPECT_EQ(*ParseDuration("0"), 0);
}

TEST(ParseDuration, UnlimitedSpellings) {
  EXPECT_EQ(*ParseDuration("UNLIMITED"), kUnlimitedSeconds);
  EXPECT_EQ(*ParseDuration("infinite"), kUnlimitedSeconds);
  EXPECT_EQ(*ParseDuration("-1"), kUnlimitedSeconds);
}

TEST(ParseDuration, RejectsMalformedWithTheTextInTheMessage) {
  for (const char* bad : {"", "abc", "1:2:3:4", "1-", "-5", "1-2-3", "1::2", "5m", "1- 2", "x-1"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos);
  }
}

TEST(ParseDuration, RejectsMoreThanAMillionDays) {
  EXPECT_FALSE(ParseDuration("77777792:0:45").ok());
  EXPECT_FALSE(ParseDuration("1000001-00").ok());
  EXPECT_TRUE(ParseDuration("1000000-00").ok());
}

TEST(FormatDuration, SlurmLayouts) {
  EXPECT_EQ(FormatDuration(3600), "01:00:00");
  EXPECT_EQ(FormatDuration(7 * 86400), "7-00:00:00");
  EXPECT_EQ(FormatDuration(kUnlimitedSeconds), "UNLIMITED");
  EXPECT_EQ(FormatElapsed(5), "0:05");
  EXPECT_EQ(FormatElapsed(3725), "1:02:05");
  EXPECT_EQ(FormatElapsed(90061), "1-01:01:01");
}

TEST(FormatDuration, RoundTrips) {
  for (int64_t s : {0, 59, 3600, 86399, 86400, 1234567}) {
    EXPECT_EQ(*ParseDuration(FormatDuration(s)), s);
  }
}

}  // namespace
}  // namespace loom::core
