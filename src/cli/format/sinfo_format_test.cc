// sinfo rendering against Slurm 22.05's own output for the reference scenario
// (tests/data/slurm-ref/), byte for byte, plus the rules those files do not show.
#include "cli/format/sinfo_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/format/reference_scenario.h"

namespace loom::cli::format {
namespace {

using model::NodeState;
using testing::At;
using testing::BusyNodes;
using testing::IdleNodes;
using testing::Partitions;
using testing::ReadReferenceOutput;

std::string Expected(const std::string& file) {
  StatusOr<std::string> text = ReadReferenceOutput(file);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.value_or("");
}

std::string Render(const std::vector<NodeView>& nodes, const SinfoOptions& o,
                   int64_t now = At(18, 56, 35),
                   const std::vector<PartitionView>& parts = Partitions()) {
  StatusOr<std::string> out = RenderSinfo(parts, nodes, o, RenderContext{now, 0});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.value_or("");
}

// The nodes after n016 was drained and n015 set down while the backfill had planned the
// 16-node job on every idle node.
std::vector<NodeView> DrainedNodes() {
  std::vector<NodeView> nodes = BusyNodes();
  for (size_t i = 2; i < 16; ++i) nodes[i].flags |= kNodeFlagPlanned;
  nodes[14].state = NodeState::kDown;
  nodes[14].reason = "broken test";
  nodes[15].flags |= kNodeFlagDrain;
  nodes[15].reason = "maintenance test";
  for (size_t i : {14, 15}) {
    nodes[i].reason_user = "root";
    nodes[i].reason_time = At(18, 57, 4);
  }
  return nodes;
}

TEST(SinfoGolden, IdleSummary) {
  EXPECT_EQ(Render(IdleNodes(), {}), Expected("04-sinfo_idle.txt"));
}

TEST(SinfoGolden, IdleNodesLong) {
  SinfoOptions o;
  o.node_oriented = o.long_listing = true;
  EXPECT_EQ(Render(IdleNodes(), o, At(18, 56, 28)), Expected("05-sinfo_N_l_idle.txt"));
}

TEST(SinfoGolden, BusySummary) {
  EXPECT_EQ(Render(BusyNodes(), {}), Expected("24-sinfo_busy.txt"));
}

TEST(SinfoGolden, BusyNodes) {
  SinfoOptions o;
  o.node_oriented = true;
  EXPECT_EQ(Render(BusyNodes(), o), Expected("25-sinfo_N_busy.txt"));
}

TEST(SinfoGolden, FormatString) {
  SinfoOptions o;
  o.format = "%P %a %l %D %t %N %C %G";
  EXPECT_EQ(Render(BusyNodes(), o), Expected("26-sinfo_fmt.txt"));
}

TEST(SinfoGolden, DrainedAndDown) {
  EXPECT_EQ(Render(DrainedNodes(), {}), Expected("59-sinfo_with_drain.txt"));
}

TEST(SinfoGolden, Reasons) {
  SinfoOptions o;
  o.list_reasons = true;
  EXPECT_EQ(Render(DrainedNodes(), o), Expected("60-sinfo_R.txt"));
}

TEST(SinfoGolden, SomeNodesLong) {
  SinfoOptions o;
  o.node_oriented = o.long_listing = true;
  o.nodes = {"n014", "n015", "n016"};
  EXPECT_EQ(Render(DrainedNodes(), o, At(18, 57, 4)), Expected("61-sinfo_N_l_drain.txt"));
}

TEST(SinfoGolden, AfterResume) {
  EXPECT_EQ(Render(BusyNodes(), {}), Expected("64-sinfo_after_resume.txt"));
}

// ---------------------------------------------------------------------------------------------

TEST(SinfoFormat, PartitionColumnFitsLongNames) {
  std::vector<PartitionView> parts = Partitions();
  PartitionView gpu = parts[0];
  gpu.name = "gpu-long-partition";
  gpu.is_default = false;
  gpu.max_time_s = 2 * 86400;
  gpu.node_names = {"n001", "n002"};
  parts.push_back(gpu);
  std::string out = Render(IdleNodes(), {}, At(18, 56, 35), parts);
  EXPECT_EQ(out,
            "PARTITION          AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "batch*                up   infinite     16   idle n[001-016]\n"
            "gpu-long-partition    up 2-00:00:00      2   idle n[001-002]\n");
  SinfoOptions n;
  n.node_oriented = true;
  n.nodes = {"n002"};
  EXPECT_EQ(Render(IdleNodes(), n, At(18, 56, 35), parts),
            "NODELIST   NODES          PARTITION STATE \n"
            "n002           1             batch* idle  \n"
            "n002           1 gpu-long-partition idle  \n");
}

TEST(SinfoFormat, NodesWithoutPartitionAndPartitionFilter) {
  std::vector<NodeView> nodes = IdleNodes();
  NodeView spare = nodes[0];
  spare.name = "spare1";
  spare.partitions.clear();
  nodes.push_back(spare);
  SinfoOptions o;
  o.format = "%P %D %N";
  EXPECT_EQ(Render(nodes, o), "PARTITION NODES NODELIST\nbatch* 16 n[001-016]\nn/a 1 spare1\n");
  o.partitions = {"batch"};
  EXPECT_EQ(Render(nodes, o), "PARTITION NODES NODELIST\nbatch* 16 n[001-016]\n");
}

TEST(SinfoFormat, GroupsMinimumWithPlusUnlessExact) {
  std::vector<NodeView> nodes = IdleNodes();
  nodes[3].cpus = 32;
  nodes[3].real_memory_mb = 256000;
  SinfoOptions o;
  o.format = "%D %c %m %C %N";
  o.no_header = true;
  EXPECT_EQ(Render(nodes, o), "16 32+ 256000+ 0/992/0/992 n[001-016]\n");
  o.exact = true;
  EXPECT_EQ(Render(nodes, o),
            "15 64 512000 0/960/0/960 n[001-003,005-016]\n1 32 256000 0/32/0/32 n004\n");
}

TEST(SinfoFormat, CpuAndNodeCountsByState) {
  std::vector<NodeView> nodes = DrainedNodes();
  SinfoOptions o;
  o.format = "%C %A %F";
  o.no_header = true;
  // One line per partition when the state is not printed.
  EXPECT_EQ(Render(nodes, o), "14/882/128/1024 1/13 1/13/2/16\n");
}

TEST(SinfoFormat, BadFormat) {
  SinfoOptions o;
  o.format = "%P %q";
  Status s = ValidateSinfoOptions(o);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("%q"));
}

TEST(NodeStateNames, CompactLongComplete) {
  struct Case {
    NodeState state;
    uint32_t flags;
    const char* compact;
    const char* full;
    const char* complete;
  } cases[] = {
      {NodeState::kIdle, 0, "idle", "idle", "IDLE"},
      {NodeState::kMixed, 0, "mix", "mixed", "MIXED"},
      {NodeState::kAllocated, 0, "alloc", "allocated", "ALLOCATED"},
      {NodeState::kIdle, kNodeFlagDrain, "drain", "drained", "IDLE+DRAIN"},
      {NodeState::kMixed, kNodeFlagDrain, "drng", "draining", "MIXED+DRAIN"},
      {NodeState::kIdle, kNodeFlagDrain | kNodeFlagPlanned, "drain", "drained",
       "IDLE+DRAIN+PLANNED"},
      {NodeState::kIdle, kNodeFlagPlanned, "plnd", "planned", "IDLE+PLANNED"},
      {NodeState::kDown, kNodeFlagPlanned, "down", "down", "DOWN+PLANNED"},
      {NodeState::kDown, kNodeFlagNotResponding, "down*", "down*", "DOWN+NOT_RESPONDING"},
      {NodeState::kIdle, kNodeFlagPoweredDown | kNodeFlagCloud, "idle~", "idle~",
       "IDLE+CLOUD+POWERED_DOWN"},
      {NodeState::kAllocated, kNodeFlagFail, "failg", "failing", "ALLOCATED+FAIL"},
      {NodeState::kFuture, 0, "futr", "future", "FUTURE"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NodeStateCompact(c.state, c.flags), c.compact) << c.complete;
    EXPECT_EQ(NodeStateLong(c.state, c.flags), c.full) << c.complete;
    EXPECT_EQ(NodeStateComplete(c.state, c.flags), c.complete);
  }
}

}  // namespace
}  // namespace loom::cli::format
