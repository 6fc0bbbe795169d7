// topology.conf: switch trees and blocks as Slurm sites write them, the model they become,
// and the errors and warnings for files that do not describe the cluster.
#include "conf/topology_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/hostlist.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

using model::ClusterTopology;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::string_view kFile = "/etc/slurm/topology.conf";

std::string ErrorAt(int line) { return core::StrCat(kFile, ":", line, ": error: "); }
std::string ErrorText(const StatusOr<ClusterTopology>& r) {
  return r.ok() ? "<ok>" : std::string(r.status().message());
}

std::vector<std::string> Nodes(std::string_view expr) { return core::ExpandHostlist(expr).value(); }

StatusOr<ClusterTopology> Parse(std::string_view text, std::vector<Diagnostic>* warnings = nullptr,
                                std::string_view nodes = "n[1-16]") {
  return ParseTopologyConf(text, kFile, Nodes(nodes), warnings);
}

TEST(TopologyConf, TwoLevelTree) {
  std::vector<Diagnostic> warnings;
  auto t = Parse(
      "# leaves\n"
      "SwitchName=s0 Nodes=n[1-8] LinkSpeed=200\n"
      "switchname=s1 nodes=n[9-16]\n"
      "SwitchName=top Switches=s[0-1]\n",
      &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_EQ(t->kind, ClusterTopology::Kind::kTree);
  ASSERT_EQ(t->switches.size(), 3u);
  EXPECT_EQ(t->switches[0].name, "s0");
  EXPECT_EQ(t->switches[0].level, 0);
  EXPECT_EQ(t->switches[0].parent, 2);
  EXPECT_EQ(t->switches[0].link_speed, 200);
  EXPECT_THAT(t->switches[0].nodes, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(t->switches[2].level, 1);
  EXPECT_EQ(t->switches[2].parent, -1);
  EXPECT_THAT(t->switches[2].children, ElementsAre(0, 1));
  EXPECT_THAT(t->switches[2].nodes, IsEmpty());
  ASSERT_EQ(t->leaf_of.size(), 16u);
  EXPECT_EQ(t->leaf_of[0], 0);
  EXPECT_EQ(t->leaf_of[15], 1);
  EXPECT_FALSE(t->empty());
}

TEST(TopologyConf, LevelIsOneAboveTheHighestChild) {
  auto t = Parse(
      "SwitchName=top Switches=mid,l2\n"  // children defined later
      "SwitchName=mid Switches=l[0-1]\n"
      "SwitchName=l0 Nodes=n[1-4]\n"
      "SwitchName=l1 Nodes=n[5-8]\n"
      "SwitchName=l2 Nodes=n[9-16]\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_EQ(t->switches[0].level, 2);
  EXPECT_EQ(t->switches[1].level, 1);
  EXPECT_EQ(t->switches[4].level, 0);
  EXPECT_EQ(t->switches[4].parent, 0);
  EXPECT_EQ(t->leaf_of[10], 4);
}

TEST(TopologyConf, NodeIndicesFollowTheGivenOrder) {
  auto t = Parse("SwitchName=s Nodes=b,a\n", nullptr, "a,b,c");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(t->switches[0].nodes, ElementsAre(1, 0));
  EXPECT_THAT(t->leaf_of, ElementsAre(0, 0, -1));
}

TEST(TopologyConf, UnnamedNodesAreAWarning) {
  std::vector<Diagnostic> warnings;
  auto t = Parse("SwitchName=s0 Nodes=n[1-12]\n", &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_EQ(t->leaf_of[12], -1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].ToString(),
            core::StrCat(kFile,
                         ": warning: 4 nodes of slurm.conf are in no leaf switch: "
                         "n[13-16]; placement cannot tell how near other nodes they are. "
                         "Add them to a leaf switch's Nodes="));
}

TEST(TopologyConf, UnknownNodesAndSwitches) {
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n[15-18]\n")),
              HasSubstr(ErrorAt(1) + "Nodes= names 2 nodes slurm.conf does not define: "
                                     "n[17-18]; define them in slurm.conf or remove them here"));
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n[1-16]\nSwitchName=top Switches=s[0-2]\n")),
              HasSubstr(ErrorAt(2) + "Switches= names switches this file does not define: "
                                     "s[1-2]; each needs its own SwitchName line"));
}

TEST(TopologyConf, NodeUnderTwoLeaves) {
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n[1-8]\nSwitchName=s1 Nodes=n[7-16]\n")),
              HasSubstr(ErrorAt(2) + "nodes n[7-8] are already under switch s0 (line 1); a node "
                                     "hangs under one leaf switch"));
}

TEST(TopologyConf, SwitchShapeErrors) {
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n1 Switches=s1\nSwitchName=s1 Nodes=n2\n")),
              HasSubstr(ErrorAt(1) + "switch s0 has both Switches= and Nodes="));
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 LinkSpeed=5\n")),
              HasSubstr(ErrorAt(1) + "switch s0 has neither Nodes= nor Switches="));
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n1\nSwitchName=s0 Nodes=n2\n")),
              HasSubstr(ErrorAt(2) + "switch s0 is already defined at line 1"));
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n1 LinkSpeed=fast\n")),
              HasSubstr(ErrorAt(1) + "invalid value 'fast' for LinkSpeed"));
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Node=n1\n")),
              HasSubstr(ErrorAt(1) + "unknown key 'Node' on a SwitchName line; did you mean "
                                     "'Nodes'?"));
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n[3-1]\n")),
              HasSubstr(ErrorAt(1) + "invalid hostlist 'n[3-1]' for Nodes"));
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=\n")),
              HasSubstr(ErrorAt(1) + "Nodes= is empty"));
  EXPECT_THAT(ErrorText(Parse(core::StrCat("SwitchName=", std::string(65, 'x'), " Nodes=n1\n"))),
              HasSubstr("is 65 characters long; Slurm allows at most 64"));
}

TEST(TopologyConf, SwitchWithTwoParents) {
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n[1-16]\n"
                              "SwitchName=a Switches=s0\n"
                              "SwitchName=b Switches=s0\n")),
              HasSubstr(ErrorAt(3) + "switch s0 is already below switch a (line 2); Loom needs "
                                     "a tree"));
}

TEST(TopologyConf, Cycles) {
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n[1-16]\n"
                              "SwitchName=a Switches=b\n"
                              "SwitchName=b Switches=a\n")),
              HasSubstr(ErrorAt(2) + "switches form a cycle (each is below the next): a -> b -> "
                                     "a"));
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n[1-16]\nSwitchName=a Switches=a\n")),
              HasSubstr(ErrorAt(2) + "switches form a cycle (each is below the next): a -> a"));
}

TEST(TopologyConf, Blocks) {
  std::vector<Diagnostic> warnings;
  auto t = Parse(
      "BlockName=b1 Nodes=n[1-4]\n"
      "BlockName=b2 Nodes=n[5-8]\n"
      "BlockName=b3 Nodes=n[9-16]\n"
      "BlockSizes=4,8,16\n",
      &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_EQ(t->kind, ClusterTopology::Kind::kBlock);
  EXPECT_THAT(t->switches, IsEmpty());
  ASSERT_EQ(t->blocks.size(), 3u);
  EXPECT_EQ(t->blocks[1].name, "b2");
  EXPECT_THAT(t->blocks[1].nodes, ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(t->block_sizes, ElementsAre(4, 8, 16));
  EXPECT_EQ(t->leaf_of[0], 0);
  EXPECT_EQ(t->leaf_of[15], 2);
}

TEST(TopologyConf, BlockSizesDefaultToTheSmallestBlock) {
  auto t = Parse("BlockName=b1 Nodes=n[1-8]\nBlockName=b2 Nodes=n[9-12]\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(t->block_sizes, ElementsAre(4));
}

TEST(TopologyConf, BlockErrors) {
  EXPECT_THAT(ErrorText(Parse("BlockName=b1 Nodes=n[1-8]\nBlockName=b2 Nodes=n[8-16]\n")),
              HasSubstr(ErrorAt(2) + "node n8 is already in block b1 (line 1); a node belongs "
                                     "to one block"));
  EXPECT_THAT(ErrorText(Parse("BlockName=b1 Nodes=n[1-8]\nBlockName=b1 Nodes=n[9-16]\n")),
              HasSubstr(ErrorAt(2) + "block b1 is already defined at line 1"));
  EXPECT_THAT(ErrorText(Parse("BlockName=b1\n")), HasSubstr(ErrorAt(1) + "block b1 has no Nodes="));
  EXPECT_THAT(ErrorText(Parse("BlockName=b1 Nodes=n[1-8] BlockSizes=8\n")),
              HasSubstr(ErrorAt(1) + "BlockSizes goes on a line of its own"));
  EXPECT_THAT(ErrorText(Parse("BlockSizes=8\n")),
              HasSubstr(ErrorAt(1) + "BlockSizes is set but no BlockName line defines a block"));
}

TEST(TopologyConf, BlockSizesRules) {
  const std::string blocks = "BlockName=b1 Nodes=n[1-8]\nBlockName=b2 Nodes=n[9-16]\n";
  EXPECT_THAT(ErrorText(Parse(blocks + "BlockSizes=8,12\n")),
              HasSubstr(ErrorAt(3) + "BlockSizes=8,12: 12 is not 8 times a power of two; each "
                                     "size must be the one before it times 2, 4, 8, ... (e.g. "
                                     "8,16,32)"));
  EXPECT_THAT(ErrorText(Parse(blocks + "BlockSizes=8,8\n")), HasSubstr("8 is not 8 times"));
  EXPECT_THAT(ErrorText(Parse(blocks + "BlockSizes=16,8\n")), HasSubstr("8 is not 16 times"));
  EXPECT_THAT(ErrorText(Parse(blocks + "BlockSizes=8,x\n")),
              HasSubstr("invalid value '8,x' for BlockSizes: 'x' is not a whole number"));
  EXPECT_THAT(ErrorText(Parse(blocks + "BlockSizes=8\nBlockSizes=8\n")),
              HasSubstr(ErrorAt(4) + "BlockSizes is already set at line 3"));
  EXPECT_THAT(ErrorText(Parse("BlockName=b1 Nodes=n[1-4]\nBlockSizes=8\n")),
              HasSubstr(ErrorAt(1) + "block b1 has 4 nodes, fewer than the base block size 8 "
                                     "(BlockSizes at line 2)"));
  // A base size below the block size is allowed (Slurm's own example: 32-node blocks, 30).
  std::vector<Diagnostic> warnings;
  auto t = Parse(blocks + "BlockSizes=6,12,24\n", &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0].ToString(),
              HasSubstr(":3: warning: block size 24 is larger than all blocks together (16 "
                        "nodes)"));
}

TEST(TopologyConf, TreeAndBlocksDoNotMix) {
  EXPECT_THAT(ErrorText(Parse("SwitchName=s0 Nodes=n[1-8]\nBlockName=b1 Nodes=n[9-16]\n")),
              HasSubstr(ErrorAt(2) + "BlockName cannot be used with SwitchName lines (the first "
                                     "is at line 1)"));
  EXPECT_THAT(ErrorText(Parse("BlockName=b1 Nodes=n[9-16]\nSwitchName=s0 Nodes=n[1-8]\n")),
              HasSubstr(ErrorAt(2) + "SwitchName cannot be used with BlockName lines"));
}

TEST(TopologyConf, OtherLines) {
  EXPECT_THAT(ErrorText(Parse("RingName=r0 Nodes=n[1-8]\n")),
              HasSubstr(ErrorAt(1) + "topology/ring (RingName lines) is not supported"));
  EXPECT_THAT(ErrorText(Parse("Nodes=n1\n")),
              HasSubstr(ErrorAt(1) + "a topology.conf line starts with SwitchName=, BlockName= "
                                     "or BlockSizes=, not 'Nodes='"));
  EXPECT_THAT(ErrorText(Parse("SwitchName s0\n")), HasSubstr(ErrorAt(1) + "expected Key=Value"));
}

TEST(TopologyConf, EmptyFileIsFlat) {
  std::vector<Diagnostic> warnings;
  auto t = Parse("# nothing yet\n", &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_TRUE(t->empty());
  EXPECT_EQ(*t, ClusterTopology{});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0].message, HasSubstr("defines no switches and no blocks"));
}

TEST(TopologyConf, ContinuationLines) {
  auto t = Parse("SwitchName=s0 \\\n  Nodes=n[1-16]\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_EQ(t->leaf_of[15], 0);
}

TEST(TopologyConf, LoadNamesTheFile) {
  EXPECT_THAT(ErrorText(LoadTopologyConf("/nonexistent/topology.conf", {}, nullptr)),
              HasSubstr("cannot read topology.conf '/nonexistent/topology.conf'"));
}

}  // namespace
}  // namespace loom::conf
