// The building blocks under the parser: logical lines, tokens, paths, key suggestions, and
// the small value parsers (Gres, ports, controller hosts, PreemptMode, TRES names).
#include "conf/internal/lexer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conf/internal/context.h"
#include "conf/internal/key_table.h"
#include "conf/internal/nodes.h"
#include "conf/internal/partitions.h"
#include "core/strings.h"

namespace loom::conf::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Texts(const std::vector<LogicalLine>& lines) {
  std::vector<std::string> out;
  for (const LogicalLine& l : lines) out.push_back(l.text);
  return out;
}

TEST(SplitLogicalLines, CommentsBlanksAndContinuations) {
  auto lines = SplitLogicalLines(
      "# header\n"
      "\n"
      "A=1 # trailing\n"
      "B=\"x # y\"\n"
      "C=1 \\\n"
      "  D=2\n"
      "E=a\\#b\n"
      "F=1 \\");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].line, 3);
  EXPECT_EQ(lines[0].text, "A=1");
  EXPECT_EQ(lines[1].text, "B=\"x # y\"");
  EXPECT_EQ(lines[2].line, 5);
  EXPECT_EQ(lines[2].text, "C=1    D=2");
  EXPECT_EQ(lines[3].line, 7);
  EXPECT_EQ(lines[3].text, "E=a#b");
  EXPECT_EQ(lines[4].text, "F=1 ");  // a continuation at end of file just ends
}

TEST(SplitLogicalLines, EmptyAndCommentOnly) {
  EXPECT_THAT(SplitLogicalLines(""), IsEmpty());
  EXPECT_THAT(SplitLogicalLines("#\n  # x\n\r\n"), IsEmpty());
  EXPECT_THAT(Texts(SplitLogicalLines("A=1\r\nB=2")), ElementsAre("A=1", "B=2"));
}

TEST(TokenizeLine, PairsQuotesAndSpaces) {
  auto t = TokenizeLine("  NodeName=n[1-2]  Reason=\"two words\"  Gres= gpu:8 Empty= ");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->size(), 4u);
  EXPECT_EQ((*t)[0].key, "NodeName");
  EXPECT_EQ((*t)[0].value, "n[1-2]");
  EXPECT_EQ((*t)[1].value, "two words");
  EXPECT_TRUE((*t)[1].quoted);
  EXPECT_EQ((*t)[2].value, "gpu:8");
  EXPECT_EQ((*t)[3].key, "Empty");
  EXPECT_EQ((*t)[3].value, "");
}

TEST(TokenizeLine, Errors) {
  EXPECT_THAT(std::string(TokenizeLine("A=1 B").status().message()),
              HasSubstr("expected Key=Value but found 'B'"));
  EXPECT_THAT(std::string(TokenizeLine("A=\"x").status().message()),
              HasSubstr("unterminated quoted value for A"));
  EXPECT_THAT(std::string(TokenizeLine("A=\"x\"y").status().message()),
              HasSubstr("unexpected text after the quoted value of A"));
  EXPECT_THAT(std::string(TokenizeLine("A+=1").status().message()),
              HasSubstr("expected Key=Value"));
  EXPECT_THAT(std::string(TokenizeLine(std::string_view("ClusterName=ab\0cd", 17)).status().message()),
              HasSubstr("a NUL byte at character 15 of this line"));
}

TEST(ParseIncludeLine, Forms) {
  std::string path;
  EXPECT_TRUE(ParseIncludeLine("Include /etc/slurm/nodes.conf", &path));
  EXPECT_EQ(path, "/etc/slurm/nodes.conf");
  EXPECT_TRUE(ParseIncludeLine("  include\t\"a b.conf\" ", &path));
  EXPECT_EQ(path, "a b.conf");
  EXPECT_TRUE(ParseIncludeLine("INCLUDE", &path));
  EXPECT_EQ(path, "");
  EXPECT_FALSE(ParseIncludeLine("Include=x", &path));
  EXPECT_FALSE(ParseIncludeLine("IncludeFoo x", &path));
}

TEST(Paths, DirNameAndJoin) {
  EXPECT_EQ(DirName("/etc/slurm/slurm.conf"), "/etc/slurm");
  EXPECT_EQ(DirName("/slurm.conf"), "/");
  EXPECT_EQ(DirName("slurm.conf"), "");
  EXPECT_EQ(JoinPath("/etc/slurm", "a.conf"), "/etc/slurm/a.conf");
  EXPECT_EQ(JoinPath("/", "a.conf"), "/a.conf");
  EXPECT_EQ(JoinPath("/etc", "/abs.conf"), "/abs.conf");
  EXPECT_EQ(JoinPath("", "a.conf"), "a.conf");
}

TEST(KeyTable, CanonicalAndSuggestions) {
  EXPECT_EQ(CanonicalKey(Scope::kGlobal, "schedulertype"), "SchedulerType");
  EXPECT_EQ(CanonicalKey(Scope::kNode, "COREsPerSocket"), "CoresPerSocket");
  EXPECT_EQ(CanonicalKey(Scope::kPartition, "cores"), std::nullopt);
  EXPECT_EQ(EditDistance("abc", "acb"), 1);
  EXPECT_EQ(EditDistance("Kitten", "sitting"), 3);
  EXPECT_EQ(ClosestMatch("SelectTyp", KnownKeys(Scope::kGlobal)), "SelectType");
  EXPECT_EQ(ClosestMatch("Zzzzzzzzzz", KnownKeys(Scope::kGlobal)), std::nullopt);
  // The key table has no duplicates (case-insensitively).
  for (Scope s : {Scope::kGlobal, Scope::kNode, Scope::kPartition}) {
    auto keys = KnownKeys(s);
    for (size_t i = 0; i < keys.size(); ++i) {
      for (size_t j = i + 1; j < keys.size(); ++j) {
        EXPECT_NE(core::ToLower(keys[i]), core::ToLower(keys[j])) << keys[i];
      }
    }
  }
}

TEST(ParseGres, Forms) {
  auto g = ParseGres("gpu:a100:8, gpu:h100:no_consume:2 ,mps:1K,nic");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(*g, ElementsAre(GresSpec{"gpu", "a100", 8, false}, GresSpec{"gpu", "h100", 2, true},
                              GresSpec{"mps", "", 1024, false}, GresSpec{"nic", "", 1, false}));
  EXPECT_TRUE(ParseGres("").ok());
  EXPECT_FALSE(ParseGres(":8").ok());
  EXPECT_FALSE(ParseGres("gpu:a100:8:9").ok());
  EXPECT_FALSE(ParseGres("gpu:a100:b200").ok());
  EXPECT_FALSE(ParseGres("gpu:99999999999999999999").ok());
}

TEST(ParsePortList, Forms) {
  EXPECT_THAT(*ParsePortList("6818"), ElementsAre(6818));
  EXPECT_THAT(*ParsePortList("17001-17003"), ElementsAre(17001, 17002, 17003));
  EXPECT_THAT(*ParsePortList("[1-2,5]"), ElementsAre(1, 2, 5));
  EXPECT_FALSE(ParsePortList("0").ok());
  EXPECT_FALSE(ParsePortList("5-3").ok());
  EXPECT_FALSE(ParsePortList("x").ok());
}

TEST(ParseControllerHost, Forms) {
  EXPECT_EQ(*ParseControllerHost("ctl"), (ControllerHost{"ctl", "ctl"}));
  EXPECT_EQ(*ParseControllerHost("ctl(10.0.0.1)"), (ControllerHost{"ctl", "10.0.0.1"}));
  EXPECT_FALSE(ParseControllerHost("").ok());
  EXPECT_FALSE(ParseControllerHost("ctl()").ok());
  EXPECT_FALSE(ParseControllerHost("(x)").ok());
  EXPECT_FALSE(ParseControllerHost("a(b)(c)").ok());
}

TEST(ParsePreemptMode, Forms) {
  EXPECT_EQ(ParsePreemptMode("off")->ToString(), "OFF");
  EXPECT_EQ(ParsePreemptMode("GANG")->ToString(), "GANG");
  EXPECT_EQ(ParsePreemptMode("SUSPEND,GANG")->ToString(), "SUSPEND,GANG");
  EXPECT_EQ(ParsePreemptMode("requeue,within")->ToString(), "REQUEUE,WITHIN");
  EXPECT_FALSE(ParsePreemptMode("").has_value());
  EXPECT_FALSE(ParsePreemptMode("CANCEL,SUSPEND").has_value());
  EXPECT_FALSE(ParsePreemptMode("GANG,GANG").has_value());
}

TEST(SplitTopLevelCommas, KeepsBracketsTogether) {
  EXPECT_THAT(SplitTopLevelCommas("a[1,2],b, c[3-4,6]"), ElementsAre("a[1,2]", "b", "c[3-4,6]"));
  EXPECT_THAT(SplitList(" a, ,b "), ElementsAre("a", "b"));
}

}  // namespace
}  // namespace loom::conf::internal
