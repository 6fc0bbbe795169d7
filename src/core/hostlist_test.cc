// Hostlist expansion and compression, checked against every row of Slurm 22.05.8's own
// outputs (tests/data) and against hand-picked corners, including where we deliberately differ.
#include "core/hostlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/strings.h"

namespace loom::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Expand(std::string_view expr) {
  StatusOr<std::vector<std::string>> hosts = ExpandHostlist(expr);
  EXPECT_TRUE(hosts.ok()) << expr << ": " << hosts.status();
  return hosts.ok() ? *hosts : std::vector<std::string>{};
}

std::string Compress(std::string_view expr) {
  StatusOr<Hostlist> list = Hostlist::Parse(expr);
  EXPECT_TRUE(list.ok()) << expr << ": " << list.status();
  return list.ok() ? list->ToString() : "";
}

std::string CompressSorted(std::string_view expr) { return CompressHostlistSorted(Expand(expr)); }

std::vector<std::string> SplitNonEmpty(std::string_view s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  for (std::string_view piece : Split(s, sep)) out.emplace_back(piece);
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? StrCat(sep, parts[i]) : parts[i]);
  return out;
}

// Every row of Slurm 22.05.8's own outputs (tests/data/README.md).
TEST(HostlistGoldenTest, MatchesSlurmOnEveryRow) {
  const std::string path = LOOM_SOURCE_DIR "/tests/data/slurm-22.05.8-scontrol-hostlist-golden.tsv";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot open " << path;
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  ASSERT_EQ(line,
            "input\thostnames_exit\thostnames_stdout\thostnames_stderr\trecompress_exit\t"
            "recompress_stdout");
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++rows;
    std::vector<std::string_view> f = Split(line, '\t');
    ASSERT_EQ(f.size(), 6u) << line;
    const std::string input(f[0]);
    const std::vector<std::string> want_hosts = SplitNonEmpty(f[2], ' ');
    const std::vector<std::string> want_stderr = SplitNonEmpty(f[3], '|');
    SCOPED_TRACE(StrCat("input `", input, "'"));

    SlurmHostlistParse slurm = ParseHostlistLikeSlurm(input);
    std::vector<std::string> got_stderr;
    for (const std::string& e : slurm.slurm_errors) got_stderr.push_back("scontrol: error: " + e);
    StatusOr<std::vector<std::string>> hosts = ExpandHostlist(input);
    if (want_stderr.empty()) {
      ASSERT_TRUE(hosts.ok()) << hosts.status();
      EXPECT_EQ(*hosts, want_hosts);
      EXPECT_THAT(got_stderr, IsEmpty());
    } else {
      EXPECT_FALSE(hosts.ok());
      EXPECT_FALSE(slurm.hostlist.has_value());
      got_stderr.push_back("Invalid hostlist: " + input);
      EXPECT_EQ(got_stderr, want_stderr);
    }

    if (f[4] == "0") {
      // scontrol show hostlist <hosts joined by commas>
      EXPECT_EQ(CompressHostlist(want_hosts), f[5]);
      EXPECT_EQ(Compress(Join(want_hosts, ",")), f[5]);
      // The compressed form expands back to the same hosts.
      EXPECT_EQ(Expand(f[5]), want_hosts);
    }
  }
  EXPECT_GE(rows, 55);
}

TEST(HostlistTest, KeepsOrderAndDuplicates) {
  EXPECT_THAT(Expand("n1,n3,n1"), ElementsAre("n1", "n3", "n1"));
  EXPECT_THAT(Expand("n[3-4,1-2]"), ElementsAre("n3", "n4", "n1", "n2"));
  EXPECT_EQ(CompressHostlist({"n3", "n1", "n2"}), "n[3,1-2]");
  EXPECT_EQ(CompressHostlist({"n1", "n1"}), "n[1,1]");
  EXPECT_EQ(CompressHostlist({"host", "host"}), "host,host");
}

TEST(HostlistTest, EmptyInput) {
  EXPECT_THAT(Expand(""), IsEmpty());
  EXPECT_THAT(Expand(" , ,\t"), IsEmpty());
  EXPECT_EQ(CompressHostlist({}), "");
  EXPECT_EQ(CompressHostlistSorted({}), "");
  EXPECT_TRUE(Hostlist().empty());
}

TEST(HostlistTest, SeparatorsAreCommaSpaceAndTabButNotNewline) {
  EXPECT_THAT(Expand("a1 a2\ta3,,a4"), ElementsAre("a1", "a2", "a3", "a4"));
  EXPECT_THAT(Expand("a1\na2"), ElementsAre("a1\na2"));
  // Inside brackets a separator does not split; the padding counts the space.
  EXPECT_THAT(Expand("n[1, 2]"), ElementsAre("n1", "n02"));
}

TEST(HostlistTest, PaddingComesFromTheRangeStart) {
  EXPECT_THAT(Expand("n[009-11]"), ElementsAre("n009", "n010", "n011"));
  EXPECT_THAT(Expand("n[1-03]"), ElementsAre("n1", "n2", "n3"));
  EXPECT_THAT(Expand("n[9,09]"), ElementsAre("n9", "n09"));
  EXPECT_THAT(Expand("n[+1]"), ElementsAre("n01"));  // strtoul takes the sign; width is 2
  EXPECT_THAT(Expand("n[1a-3]"), ElementsAre("n01", "n02", "n03"));
}

TEST(HostlistTest, CompressionJoinsOnlyWhenPaddingAgrees) {
  EXPECT_EQ(CompressHostlist({"n9", "n10"}), "n[9-10]");
  EXPECT_EQ(CompressHostlist({"n09", "n10"}), "n[09-10]");
  EXPECT_EQ(CompressHostlist({"n9", "n010"}), "n[9,010]");
  EXPECT_EQ(CompressHostlist({"n98", "n99", "n100", "n101"}), "n[98-101]");
  EXPECT_EQ(CompressHostlist({"n0", "n00", "n000"}), "n[0,00,000]");
  EXPECT_EQ(Compress("n9,n10,n09,n010,n11"), "n[9-10,09,010,11]");
  EXPECT_EQ(Compress("123,124,x"), "[123-124],x");
}

TEST(HostlistTest, SeveralBracketsExpandAsSlurmsProduct) {
  EXPECT_THAT(Expand("rack[1-2]-node[01-02]"),
              ElementsAre("rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"));
  // With three brackets Slurm varies the last fastest, then the first, then the middle.
  EXPECT_THAT(Expand("a[1-2]b[1-2]c[1-2]"), ElementsAre("a1b1c1", "a1b1c2", "a2b1c1", "a2b1c2",
                                                        "a1b2c1", "a1b2c2", "a2b2c1", "a2b2c2"));
  EXPECT_EQ(Compress("n[1-2]m[4-5]"), "n1m[4-5],n2m[4-5]");
}

TEST(HostlistTest, LenientCorners) {
  EXPECT_THAT(Expand("n[1-]"), ElementsAre("n1"));
  EXPECT_THAT(Expand("n["), ElementsAre("n]"));
  EXPECT_THAT(Expand("gpu-[01-"), ElementsAre("gpu-]"));
  EXPECT_THAT(Expand("[abc"), ElementsAre("abc"));
  EXPECT_THAT(Expand("[1-3]"), ElementsAre("1", "2", "3"));
  EXPECT_THAT(Expand("a]b[1]"), ElementsAre("a]b1"));
}

TEST(HostlistTest, RejectsWhatSlurmRejects) {
  for (const char* bad : {"n[]", "n[3-1]", "n[x]", "n[1-10x]", "n[1,,2]", "n[1--2]", "n[1-3]-ib",
                          "n[1-3]a", "a[1-2]b[3-4]c", "n[1-65537]", "a[1-2]b[x]c[1]"}) {
    StatusOr<std::vector<std::string>> hosts = ExpandHostlist(bad);
    EXPECT_FALSE(hosts.ok()) << bad;
    EXPECT_EQ(hosts.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_THAT(std::string(ExpandHostlist("n[3-1]").status().message()),
              HasSubstr("invalid range `3-1'"));
  EXPECT_THAT(std::string(ExpandHostlist("n[1-3]-ib").status().message()),
              HasSubstr("may not continue after its last bracket"));
  EXPECT_THAT(std::string(ExpandHostlist("n[1-70000]").status().message()),
              HasSubstr("too many hosts in range `1-70000'"));
}

TEST(HostlistTest, SlurmDiagnostics) {
  SlurmHostlistParse r = ParseHostlistLikeSlurm("n[1-65537]");
  EXPECT_FALSE(r.hostlist.has_value());
  EXPECT_THAT(r.slurm_errors,
              ElementsAre("_parse_single_range: Too many hosts in range `1-65537'"));
  EXPECT_FALSE(ParseHostlistLikeSlurm("n[1-3]-ib").hostlist.has_value());
  EXPECT_THAT(ParseHostlistLikeSlurm("n[1-3]-ib").slurm_errors, IsEmpty());
}

TEST(HostlistTest, NestedBracketErrorsDropHostsInSlurmButFailForUs) {
  // Slurm logs the error once per value of the later bracket and keeps going.
  SlurmHostlistParse r = ParseHostlistLikeSlurm("a[x]b[1-3]c[1],n1");
  ASSERT_TRUE(r.hostlist.has_value());
  EXPECT_TRUE(r.lossy);
  EXPECT_EQ(r.slurm_errors.size(), 3u);
  EXPECT_THAT(r.hostlist->Expand(), ElementsAre("n1"));
  EXPECT_FALSE(ExpandHostlist("a[x]b[1-3]c[1],n1").ok());
  // Too many values in a nested bracket: Slurm keeps the hosts it had made, silently.
  r = ParseHostlistLikeSlurm("z[1-2]a[1-65536,1]b[1]c[1]");
  ASSERT_TRUE(r.hostlist.has_value());
  EXPECT_TRUE(r.lossy);
  EXPECT_THAT(r.slurm_errors, IsEmpty());
  EXPECT_EQ(r.hostlist->size(), 2 * 65536);
}

TEST(HostlistTest, TooManyRangesInOneBracketIsFatalInSlurm) {
  std::string expr = "n[1";
  for (int i = 1; i < kMaxRangesPerBracket; ++i) expr += ",1";
  EXPECT_EQ(ParseHostlistLikeSlurm(expr + "]").hostlist->size(), kMaxRangesPerBracket);
  SlurmHostlistParse r = ParseHostlistLikeSlurm(expr + ",1]");
  EXPECT_TRUE(r.fatal);
  EXPECT_FALSE(r.hostlist.has_value());
  EXPECT_THAT(r.slurm_errors,
              ElementsAre("_parse_range_list: Too many ranges, can't process entire list"));
}

TEST(HostlistTest, OurOwnSizeLimit) {
  EXPECT_TRUE(Hostlist::Parse("n[1-100]", 100).ok());
  StatusOr<Hostlist> big = Hostlist::Parse("n[1-100],m1", 100);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(std::string(big.status().message()), HasSubstr("more than 100 hosts"));
  // A product Slurm would try to build until memory runs out.
  SlurmHostlistParse r = ParseHostlistLikeSlurm("a[0-65535]b[0-65535]c[0-65535]");
  EXPECT_TRUE(r.over_limit);
  EXPECT_FALSE(r.hostlist.has_value());
}

TEST(HostlistTest, NumbersBeyondSixtyFourBitsAreNotRenamed) {
  // Slurm would print n18446744073709551615 for both.
  EXPECT_THAT(Expand("n99999999999999999999999"), ElementsAre("n99999999999999999999999"));
  EXPECT_FALSE(ExpandHostlist("n[99999999999999999999]").ok());
  EXPECT_THAT(Expand("n[18446744073709551614-18446744073709551615]"),
              ElementsAre("n18446744073709551614", "n18446744073709551615"));
  EXPECT_EQ(CompressHostlist({"n18446744073709551615", "n0"}), "n[18446744073709551615,0]");
}

TEST(HostlistTest, PrefixesAreComparedExactly) {
  // Slurm's natural comparison skips whitespace and would print "a\rb[1-2]".
  EXPECT_EQ(CompressHostlist({"a\rb1", "ab2"}), "a\rb1,ab2");
}

TEST(HostlistTest, SortedLikeScontrolHostlistsorted) {
  // reference-outputs/03-scontrol_show_hostlistsorted.txt
  EXPECT_EQ(CompressSorted("gpu-03,gpu-01,gpu-02,n[001-003],gpu-10"), "gpu-[01-03,10],n[001-003]");
  EXPECT_EQ(CompressSorted("n10,n9,n09,n1,n01,host,n,m2,m1"), "host,m[1-2],n,n[1,9,01,09-10]");
  EXPECT_EQ(CompressSorted("b1,a10,a9,a1b,a2b,a10b"), "a[9-10],a1b,a2b,a10b,b1");
  // Duplicates are kept, next to each other.
  EXPECT_EQ(CompressSorted("n[1-3],n[2-4],n3"), "n[1-2,2-3,3,3-4]");
  EXPECT_EQ(CompressSorted("n[1-4],n[1-5],n[1-6]"), "n[1,1,1-2,2,2-3,3,3-4,4,4-5,5-6]");
  EXPECT_EQ(CompressSorted("n[5-6],n01,n[3-7]"), "n[3-5,5-6,6-7,01]");
}

TEST(HostlistTest, SortNeverLosesHosts) {
  // Slurm 22.05 prints "n[0,0-1,...,29-30,30]" here, losing n31-n37 and n01-n05.
  const std::string expr = "n[0-30],n[01-05],n[0-37]";
  std::string sorted = CompressSorted(expr);
  std::vector<std::string> before = Expand(expr), after = Expand(sorted);
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, before);
  EXPECT_THAT(sorted, HasSubstr("30-37,01-05"));
}

TEST(HostlistTest, NaturalCompare) {
  EXPECT_LT(NaturalCompare("n9", "n10"), 0);
  EXPECT_GT(NaturalCompare("n10", "n9"), 0);
  EXPECT_EQ(NaturalCompare("n10", "n10"), 0);
  EXPECT_LT(NaturalCompare("a", "a1b"), 0);
  EXPECT_LT(NaturalCompare("x01", "x1"), 0);  // leading zero: compared digit by digit
  EXPECT_EQ(NaturalCompare("a b", "ab"), 0);  // whitespace is skipped
}

TEST(HostlistTest, LargeRangesAreFast) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> hosts = Expand("n[00001-10000]");
  ASSERT_EQ(hosts.size(), 10000u);
  EXPECT_EQ(hosts.front(), "n00001");
  EXPECT_EQ(hosts.back(), "n10000");
  EXPECT_EQ(CompressHostlist(hosts), "n[00001-10000]");
  std::reverse(hosts.begin(), hosts.end());
  EXPECT_EQ(CompressHostlistSorted(hosts), "n[00001-10000]");

  // 10,000 scattered nodes over two prefixes, expanded and compressed back.
  std::string expr;
  for (int i = 0; i < 5000; ++i) expr += StrCat(i ? "," : "", "gpu", 2 * i, ",cpu", 2 * i + 1);
  std::vector<std::string> scattered = Expand(expr);
  ASSERT_EQ(scattered.size(), 10000u);
  EXPECT_EQ(Expand(CompressHostlist(scattered)), scattered);
  std::string sorted = CompressHostlistSorted(scattered);
  EXPECT_EQ(sorted.substr(0, 20), "cpu[1,3,5,7,9,11,13,");

  // Slurm's largest range and many duplicates.
  EXPECT_EQ(Expand("n[0-65535]").size(), 65536u);
  std::string doubled = CompressSorted("n[1-20000],n[1-20000]");
  EXPECT_EQ(doubled.substr(0, 16), "n[1,1-2,2-3,3-4,");
  EXPECT_EQ(Expand(doubled).size(), 40000u);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
}

TEST(HostlistTest, HostlistValue) {
  Hostlist list = Hostlist::FromHosts({"n1", "n2"});
  list.PushHost("n3");
  list.PushHost("login");
  EXPECT_EQ(list.size(), 4);
  EXPECT_EQ(list.ToString(), "n[1-3],login");
  Hostlist copy = list;
  copy.PushHost("n4");
  EXPECT_EQ(list.ToString(), "n[1-3],login");
  EXPECT_EQ(copy.ToString(), "n[1-3],login,n4");
}

}  // namespace
}  // namespace loom::core
