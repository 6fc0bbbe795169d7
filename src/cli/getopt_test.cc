#include "cli/getopt.h"

#include <gtest/gtest.h>

namespace loom::cli {
namespace {

enum class Opt { kFormat, kLong, kNoHeader, kUsage, kUser, kHelp, kJobs, kClusters, kVerbose };

constexpr OptionSpec<Opt> kTable[] = {
    {"format", 'o', ArgKind::kRequired, Opt::kFormat},
    {"long", 'l', ArgKind::kNone, Opt::kLong},
    {"noheader", 'h', ArgKind::kNone, Opt::kNoHeader},
    {"usage", 0, ArgKind::kNone, Opt::kUsage},
    {"user", 'u', ArgKind::kRequired, Opt::kUser},
    {"users", 0, ArgKind::kRequired, Opt::kUser},
    {"help", 0, ArgKind::kNone, Opt::kHelp},
    {"jobs", 'j', ArgKind::kOptional, Opt::kJobs},
    {"cluster", 0, ArgKind::kRequired, Opt::kClusters},
    {"clusters", 'M', ArgKind::kRequired, Opt::kClusters},
    {"", 'v', ArgKind::kNone, Opt::kVerbose},
};
constexpr Opt kFinal[] = {Opt::kHelp, Opt::kUsage};

using Words = std::vector<std::string>;
using Parsed = std::vector<ParsedOption<Opt>>;

ScanResult<Opt> Scan(Words w, Ordering ordering = Ordering::kPermute) {
  return ScanOptions<Opt>(w, kTable, "squeue", ordering, kFinal);
}

TEST(ScanOptions, Forms) {
  ScanResult<Opt> r = Scan(
      {"-lh", "-o%i", "--format", "%j", "--format=%u", "-j", "-j5", "--jobs=6", "-M", "c1", "-v"});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(r.options, (Parsed{{Opt::kLong, std::nullopt},
                               {Opt::kNoHeader, std::nullopt},
                               {Opt::kFormat, "%i"},
                               {Opt::kFormat, "%j"},
                               {Opt::kFormat, "%u"},
                               {Opt::kJobs, std::nullopt},
                               {Opt::kJobs, "5"},
                               {Opt::kJobs, "6"},
                               {Opt::kClusters, "c1"},
                               {Opt::kVerbose, std::nullopt}}));
  EXPECT_TRUE(r.rest.empty());
}

TEST(ScanOptions, OptionalArgumentsOnlyAttached) {
  ScanResult<Opt> r = Scan({"--jobs", "7", "-j", "8"});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(r.options, (Parsed{{Opt::kJobs, std::nullopt}, {Opt::kJobs, std::nullopt}}));
  EXPECT_EQ(r.rest, (Words{"7", "8"}));
}

TEST(ScanOptions, PermutationAndItsLimits) {
  ScanResult<Opt> r = Scan({"12", "-l", "-", "13", "--", "-h", "14"});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(r.options, (Parsed{{Opt::kLong, std::nullopt}}));
  EXPECT_EQ(r.rest, (Words{"12", "-", "13", "-h", "14"}));

  r = Scan({"12", "-l", "13"}, Ordering::kRequireOrder);
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_TRUE(r.options.empty());
  EXPECT_EQ(r.rest, (Words{"12", "-l", "13"}));
}

TEST(ScanOptions, Abbreviations) {
  // A unique prefix; an exact name over longer ones; two names of one option count once.
  ScanResult<Opt> r = Scan({"--form=x", "--user=a", "--use=b", "--cluster=c", "--clu=d", "--he"});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(r.options, (Parsed{{Opt::kFormat, "x"},
                               {Opt::kUser, "a"},
                               {Opt::kUser, "b"},
                               {Opt::kClusters, "c"},
                               {Opt::kClusters, "d"},
                               {Opt::kHelp, std::nullopt}}));
}

TEST(ScanOptions, FinalOptionsEndTheScan) {
  ScanResult<Opt> r = Scan({"-l", "--usage", "--bogus", "x"});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(r.options.back().id, Opt::kUsage);
  EXPECT_TRUE(r.rest.empty());
}

TEST(ScanOptions, GlibcMessages) {
  auto error = [](Words w) { return std::string(Scan(std::move(w)).error.message()); };
  EXPECT_EQ(error({"--us=x"}),
            "squeue: option '--us=x' is ambiguous; possibilities: '--usage' "
            "'--user' '--users'");
  EXPECT_EQ(error({"--u"}),
            "squeue: option '--u' is ambiguous; possibilities: '--usage' "
            "'--user' '--users'");
  EXPECT_EQ(error({"--bogus=1"}), "squeue: unrecognized option '--bogus=1'");
  EXPECT_EQ(error({"-lz"}), "squeue: invalid option -- 'z'");
  EXPECT_EQ(error({"x", "-o"}), "squeue: option requires an argument -- 'o'");
  EXPECT_EQ(error({"--fo"}), "squeue: option '--format' requires an argument");
  EXPECT_EQ(error({"--lo=1"}), "squeue: option '--long' doesn't allow an argument");
  // The options before the malformed one are kept.
  ScanResult<Opt> r = Scan({"-l", "--bogus", "-h"});
  EXPECT_EQ(r.options, (Parsed{{Opt::kLong, std::nullopt}}));
  EXPECT_FALSE(r.error.ok());
}

TEST(LongName, FirstNamedRow) {
  EXPECT_EQ(LongName<Opt>(kTable, Opt::kClusters), "cluster");
  EXPECT_EQ(LongName<Opt>(kTable, Opt::kVerbose), "");
}

}  // namespace
}  // namespace loom::cli
