#include "cli/submit/begin_time.h"

#include <gtest/gtest.h>

namespace loom::cli::submit {
namespace {

// 2027-01-15 08:00:00 UTC, a Friday.
constexpr int64_t kNow = 1'800'000'000;

int64_t At(int y, int mo, int d, int h = 0, int mi = 0, int s = 0,
           absl::TimeZone zone = absl::UTCTimeZone()) {
  return absl::ToUnixSeconds(absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), zone));
}

int64_t Parse(std::string_view text, absl::TimeZone zone = absl::UTCTimeZone()) {
  StatusOr<int64_t> t = ParseSlurmDateTime(text, kNow, zone);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status();
  return t.ok() ? *t : -1;
}

std::string Error(std::string_view text) {
  StatusOr<int64_t> t = ParseSlurmDateTime(text, kNow, absl::UTCTimeZone());
  EXPECT_FALSE(t.ok()) << text;
  return std::string(t.status().message());
}

TEST(ParseSlurmDateTime, Now) {
  EXPECT_EQ(Parse("now"), kNow);
  EXPECT_EQ(Parse("now+60"), kNow + 60);
  EXPECT_EQ(Parse("now+1hour"), kNow + 3600);
  EXPECT_EQ(Parse("now + 1 hours"), kNow + 3600);
  EXPECT_EQ(Parse("NOW+2Minutes"), kNow + 120);
  EXPECT_EQ(Parse("now-5"), kNow - 5);
  EXPECT_EQ(Parse("now+3days"), kNow + 3 * 86400);
  EXPECT_EQ(Parse("now+2weeks"), kNow + 14 * 86400);
  EXPECT_EQ(Parse("now+1second"), kNow + 1);
}

TEST(ParseSlurmDateTime, TimesOfDay) {
  EXPECT_EQ(Parse("16:00"), At(2027, 1, 15, 16));
  EXPECT_EQ(Parse("07:59:59"), At(2027, 1, 16, 7, 59, 59));  // already past: tomorrow
  EXPECT_EQ(Parse("08:00"), At(2027, 1, 15, 8));             // now itself is not past
  EXPECT_EQ(Parse("4:00PM"), At(2027, 1, 15, 16));
  EXPECT_EQ(Parse("10:20:30am"), At(2027, 1, 15, 10, 20, 30));
  EXPECT_EQ(Parse("12:00am"), At(2027, 1, 16, 0));
  EXPECT_EQ(Parse("12:30 pm"), At(2027, 1, 15, 12, 30));
  EXPECT_EQ(Parse("midnight"), At(2027, 1, 16));
  EXPECT_EQ(Parse("noon"), At(2027, 1, 15, 12));
  EXPECT_EQ(Parse("fika"), At(2027, 1, 15, 15));
  EXPECT_EQ(Parse("teatime"), At(2027, 1, 15, 16));
}

TEST(ParseSlurmDateTime, Dates) {
  EXPECT_EQ(Parse("today"), At(2027, 1, 15));  // may be in the past
  EXPECT_EQ(Parse("tomorrow"), At(2027, 1, 16));
  EXPECT_EQ(Parse("tomorrow 16:00"), At(2027, 1, 16, 16));
  EXPECT_EQ(Parse("16:00 tomorrow"), At(2027, 1, 16, 16));
  EXPECT_EQ(Parse("today 06:00"), At(2027, 1, 15, 6));
  EXPECT_EQ(Parse("0415"), At(2027, 4, 15));
  EXPECT_EQ(Parse("0110"), At(2028, 1, 10));  // passed this year: next year
  EXPECT_EQ(Parse("041525"), At(2025, 4, 15));
  EXPECT_EQ(Parse("04/15"), At(2027, 4, 15));
  EXPECT_EQ(Parse("04/15/25"), At(2025, 4, 15));
  EXPECT_EQ(Parse("04.15.25"), At(2025, 4, 15));
  EXPECT_EQ(Parse("04/15-10:20"), At(2027, 4, 15, 10, 20));
  EXPECT_EQ(Parse("04/15-"), At(2027, 4, 15));
  EXPECT_EQ(Parse("2025-04-15"), At(2025, 4, 15));
  EXPECT_EQ(Parse("2025-04-15T10:20"), At(2025, 4, 15, 10, 20));
  EXPECT_EQ(Parse("2030-01-01T00:00:00"), At(2030, 1, 1));
  EXPECT_EQ(Parse("2025-02-30"), At(2025, 3, 2));  // days past the month's end roll over
}

TEST(ParseSlurmDateTime, LocalTime) {
  absl::TimeZone plus2 = absl::FixedTimeZone(2 * 3600);
  EXPECT_EQ(Parse("2027-06-01T12:00:00", plus2), At(2027, 6, 1, 10));
  // 08:00 UTC is 10:00 at +2: 09:00 there is past, so tomorrow.
  EXPECT_EQ(Parse("09:00", plus2), At(2027, 1, 16, 9, 0, 0, plus2));
  EXPECT_EQ(Parse("now+1hour", plus2), kNow + 3600);
}

TEST(ParseSlurmDateTime, ErrorsSayWhere) {
  EXPECT_EQ(Error("now+1x"), "Invalid time specification (pos=4): now+1x");
  EXPECT_EQ(Error("now+10min"), "Invalid time specification (pos=5): now+10min");
  EXPECT_EQ(Error("now+"), "Invalid time specification (pos=3): now+");
  EXPECT_EQ(Error("now 5"), "Invalid time specification (pos=4): now 5");
  EXPECT_EQ(Error("12:99"), "Invalid time specification (pos=3): 12:99");
  EXPECT_EQ(Error("10:2"), "Invalid time specification (pos=4): 10:2");
  EXPECT_EQ(Error("1:2:3"), "Invalid time specification (pos=3): 1:2:3");
  EXPECT_EQ(Error("25:00"), "Invalid time specification (pos=0): 25:00");
  EXPECT_EQ(Error("13:00pm"), "Invalid time specification (pos=5): 13:00pm");
  EXPECT_EQ(Error("4pm"), "Invalid time specification (pos=1): 4pm");
  EXPECT_EQ(Error("2024-13-01"), "Invalid time specification (pos=5): 2024-13-01");
  EXPECT_EQ(Error("2025-04-32"), "Invalid time specification (pos=8): 2025-04-32");
  EXPECT_EQ(Error("2025-4-5"), "Invalid time specification (pos=0): 2025-4-5");
  EXPECT_EQ(Error("2025-04-15T10"), "Invalid time specification (pos=13): 2025-04-15T10");
  EXPECT_EQ(Error("13/01"), "Invalid time specification (pos=0): 13/01");
  EXPECT_EQ(Error("1234567890"), "Invalid time specification (pos=2): 1234567890");
  EXPECT_EQ(Error("tomorrow+"), "Invalid time specification (pos=8): tomorrow+");
  EXPECT_EQ(Error("elevenses"), "Invalid time specification (pos=0): elevenses");
  EXPECT_EQ(Error(""), "Invalid time specification (pos=0): ");
  EXPECT_EQ(Error("   "), "Invalid time specification (pos=3):    ");
}

}  // namespace
}  // namespace loom::cli::submit
