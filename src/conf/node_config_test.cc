// NodeName (and DownNodes, NodeSet) lines: hostlists, DEFAULT merging, CPU topology, Gres,
// features, addresses and ports, and the errors for inconsistent node definitions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conf/slurm_conf.h"
#include "conf/test_util.h"

namespace loom::conf {
namespace {

using ::testing::ElementsAre;
using testing::ErrorAt;
using testing::ErrorText;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ParseBody;
using testing::WarningAt;
using testing::WarningText;

TEST(NodeConfig, HostlistExpandsInOrder) {
  auto c = ParseBody("NodeName=gpu-[01-03],login RealMemory=2000\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  ASSERT_EQ(c->nodes.size(), 4u);
  EXPECT_EQ(c->nodes[0].name, "gpu-01");
  EXPECT_EQ(c->nodes[2].name, "gpu-03");
  EXPECT_EQ(c->nodes[3].name, "login");
  EXPECT_EQ(c->nodes[3].real_memory_mb, 2000);
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n[3-1]\n")),
              HasSubstr(ErrorAt(3) + "invalid value 'n[3-1]' for NodeName:"));
}

TEST(NodeConfig, TooManyNodesIsAnError) {
  auto c = ParseBody(
      "NodeName=a[1-65536]\nNodeName=b[1-65536]\nNodeName=c[1-65536]\n"
      "NodeName=d[1-65536]\n");
  EXPECT_THAT(ErrorText(c), HasSubstr(ErrorAt(6) + "invalid value 'd[1-65536]' for NodeName: it "
                                                   "names 65536 hosts, more than the 200000 "
                                                   "nodes a configuration may define in all"));
}

TEST(NodeConfig, DefaultLinesApplyToLaterLinesOnly) {
  auto c = ParseBody(
      "NodeName=early\n"
      "NodeName=DEFAULT CPUs=16 RealMemory=64000 Features=x\n"
      "NodeName=a[1-2]\n"
      "NodeName=DEFAULT RealMemory=128000\n"  // merges with the earlier DEFAULT
      "NodeName=b1 Features=y\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const NodeConfig* early = c->FindNode("early");
  EXPECT_EQ(early->cpus, 1);
  EXPECT_EQ(early->real_memory_mb, 1);
  const NodeConfig* a2 = c->FindNode("a2");
  EXPECT_EQ(a2->cpus, 16);
  EXPECT_EQ(a2->real_memory_mb, 64000);
  EXPECT_THAT(a2->features, ElementsAre("x"));
  const NodeConfig* b1 = c->FindNode("b1");
  EXPECT_EQ(b1->cpus, 16);
  EXPECT_EQ(b1->real_memory_mb, 128000);
  EXPECT_THAT(b1->features, ElementsAre("y"));
}

TEST(NodeConfig, DefaultCannotNameHosts) {
  EXPECT_THAT(ErrorText(ParseBody("NodeName=DEFAULT NodeAddr=10.0.0.1\n")),
              HasSubstr(ErrorAt(3) + "NodeAddr is not allowed with NodeName=DEFAULT"));
  EXPECT_THAT(ErrorText(ParseBody("NodeName=default NodeHostname=h\n")),
              HasSubstr("NodeHostname is not allowed with NodeName=DEFAULT"));
}

TEST(NodeConfig, GresDefaultCanBeClearedWithEmptyString) {
  auto c =
      ParseBody("GresTypes=gpu\nNodeName=DEFAULT Gres=gpu:4\nNodeName=g1\nNodeName=c1 Gres=\"\"\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->FindNode("g1")->GpuCount(), 4);
  EXPECT_EQ(c->FindNode("c1")->GpuCount(), 0);
}

TEST(NodeConfig, DuplicateNodeIsAnErrorNamingBothLines) {
  auto c = ParseBody("NodeName=n[1-4]\nNodeName=n3\n");
  EXPECT_THAT(ErrorText(c), HasSubstr(ErrorAt(4) + "node n3 is already defined at "
                                                   "/etc/slurm/slurm.conf:3"));
}

TEST(NodeConfig, CpusDerivedFromTopology) {
  auto c = ParseBody(
      "NodeName=a Sockets=2 CoresPerSocket=32 ThreadsPerCore=2\n"
      "NodeName=b Boards=2 SocketsPerBoard=2 CoresPerSocket=8\n"
      "NodeName=c Boards=2 Sockets=2 CoresPerSocket=4\n"  // with Boards, Sockets is per board
      "NodeName=d CPUs=48 CoresPerSocket=12\n"            // sockets inferred: 4
      "NodeName=e CPUs=8\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const NodeConfig* a = c->FindNode("a");
  EXPECT_EQ(a->cpus, 128);
  EXPECT_EQ(a->sockets, 2);
  EXPECT_EQ(a->cores_per_socket, 32);
  EXPECT_EQ(a->threads_per_core, 2);
  EXPECT_EQ(c->FindNode("b")->cpus, 32);
  EXPECT_EQ(c->FindNode("b")->sockets, 4);
  EXPECT_EQ(c->FindNode("c")->cpus, 16);
  EXPECT_EQ(c->FindNode("c")->sockets_per_board, 2);
  EXPECT_EQ(c->FindNode("d")->sockets, 4);
  EXPECT_EQ(c->FindNode("e")->cpus, 8);
  EXPECT_EQ(c->FindNode("e")->sockets, 8);
}

TEST(NodeConfig, CpusMustMatchTopology) {
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 CPUs=96 Sockets=2 CoresPerSocket=32\n")),
              HasSubstr(ErrorAt(3) + "CPUs=96 does not match Boards(1) x Sockets(2) x "
                                     "CoresPerSocket(32) x ThreadsPerCore(1) = 64"));
  // CPUs may count cores instead of hardware threads, as Slurm allows.
  auto c = ParseBody("NodeName=n1 CPUs=64 Sockets=2 CoresPerSocket=32 ThreadsPerCore=2\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->nodes[0].cpus, 64);
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 Sockets=2 SocketsPerBoard=2\n")),
              HasSubstr("Sockets and SocketsPerBoard are mutually exclusive"));
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 CPUs=0\n")),
              HasSubstr("invalid value '0' for CPUs: expected a whole number from 1 to 65535"));
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 CPUs=4 Procs=4\n")),
              HasSubstr("CPUs is given twice on this NodeName line"));
}

TEST(NodeConfig, GresListsAndTypes) {
  auto c = ParseBody(
      "GresTypes=gpu,mps,bandwidth\n"
      "NodeName=a Gres=gpu:a100:8\n"
      "NodeName=b Gres=gpu:4,mps:400\n"
      "NodeName=c Gres=gpu:a100:2,gpu:h100:6,bandwidth:lustre:no_consume:4G\n"
      "NodeName=d Gres=gpu\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(c->FindNode("a")->gres, ElementsAre(GresSpec{"gpu", "a100", 8, false}));
  EXPECT_THAT(c->FindNode("b")->gres,
              ElementsAre(GresSpec{"gpu", "", 4, false}, GresSpec{"mps", "", 400, false}));
  const NodeConfig* n = c->FindNode("c");
  EXPECT_EQ(n->GpuCount(), 8);
  EXPECT_EQ(n->GresCount("gpu", "H100"), 6);
  using TypeCount = std::pair<std::string, int64_t>;
  EXPECT_THAT(n->GpusByType(), ElementsAre(TypeCount{"a100", 2}, TypeCount{"h100", 6}));
  EXPECT_EQ(n->gres[2], (GresSpec{"bandwidth", "lustre", int64_t{4} << 30, true}));
  EXPECT_EQ(c->FindNode("d")->GpuCount(), 1);
}

TEST(NodeConfig, GresErrors) {
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 Gres=gpu:a100:8\n")),
              HasSubstr(ErrorAt(3) + "node n1 has Gres 'gpu' which GresTypes does not list"));
  EXPECT_THAT(ErrorText(ParseBody("GresTypes=gpu\nNodeName=n1 Gres=gpu:a100:x:8\n")),
              HasSubstr(ErrorAt(4) + "invalid value 'gpu:a100:x:8' for Gres:"));
  EXPECT_THAT(ErrorText(ParseBody("GresTypes=gpu\nNodeName=n1 Gres=gpu:a100:2,gpu:2\n")),
              HasSubstr("mixes a typed and an untyped 'gpu'"));
  EXPECT_THAT(ErrorText(ParseBody("GresTypes=gpu\nNodeName=n1 Gres=gpu:2,gpu:3\n")),
              HasSubstr("is listed twice"));
}

TEST(NodeConfig, GresTypesMayComeAfterTheNodes) {
  auto c = ParseBody("NodeName=n1 Gres=gpu:2\nGresTypes=gpu\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
}

TEST(NodeConfig, FeaturesWeightStateAndDisk) {
  auto c = ParseBody(
      "NodeName=n1 Feature=h100,bigmem Weight=100 State=DRAIN Reason=\"bad dimm\" TmpDisk=100\n"
      "NodeName=n2 Features=a100 State=future Weight=INFINITE\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const NodeConfig* n1 = c->FindNode("n1");
  EXPECT_THAT(n1->features, ElementsAre("h100", "bigmem"));
  EXPECT_TRUE(n1->HasFeature("bigmem"));
  EXPECT_EQ(n1->weight, 100u);
  EXPECT_EQ(n1->state, NodeState::kDrain);
  EXPECT_EQ(n1->reason, "bad dimm");
  EXPECT_EQ(n1->tmp_disk_mb, 100);
  EXPECT_EQ(c->FindNode("n2")->state, NodeState::kFuture);
  EXPECT_EQ(c->FindNode("n2")->weight, 4294967295u);
  EXPECT_EQ(NodeStateName(NodeState::kFailing), "FAILING");
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 State=BROKEN\n")),
              HasSubstr("invalid value 'BROKEN' for State: expected UNKNOWN, CLOUD, DOWN, DRAIN, "
                        "FAIL, FAILING or FUTURE"));
  std::vector<Diagnostic> warnings;
  EXPECT_TRUE(ParseBody("NodeName=n1 State=IDLE\n", &warnings).ok());
  EXPECT_THAT(WarningText(warnings), HasSubstr("treated as UNKNOWN"));
}

TEST(NodeConfig, AddressesHostnamesAndPorts) {
  auto c = ParseBody(
      "SlurmdPort=7000\n"
      "NodeName=n[1-3] NodeAddr=10.0.0.[1-3] NodeHostname=h[1-3]\n"
      "NodeName=m[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Port=17001-17002\n"
      "NodeName=k1 Port=9000\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const NodeConfig* n2 = c->FindNode("n2");
  EXPECT_EQ(n2->addr, "10.0.0.2");
  EXPECT_EQ(n2->hostname, "h2");
  EXPECT_EQ(n2->port, 7000);  // from SlurmdPort
  EXPECT_EQ(c->FindNode("m2")->hostname, "localhost");
  EXPECT_EQ(c->FindNode("m2")->addr, "127.0.0.1");
  EXPECT_EQ(c->FindNode("m1")->port, 17001);
  EXPECT_EQ(c->FindNode("m2")->port, 17002);
  EXPECT_EQ(c->FindNode("k1")->port, 9000);
}

TEST(NodeConfig, SlurmdPortSetAfterTheNodesStillApplies) {
  auto c = ParseBody("NodeName=n1\nSlurmdPort=7100\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->nodes[0].port, 7100);
}

TEST(NodeConfig, PerNodeListsMustMatchTheNodeCount) {
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n[1-3] Port=17001-17002\n")),
              HasSubstr(ErrorAt(3) + "Port lists 2 ports for 3 nodes"));
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n[1-3] NodeAddr=a,b\n")),
              HasSubstr("NodeAddr=a,b names 2 hosts for 3 nodes"));
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 Port=70000\n")),
              HasSubstr("invalid value '70000' for Port"));
}

TEST(NodeConfig, SharedAddressAndPortIsWarned) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("NodeName=n[1-2] NodeAddr=127.0.0.1\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(WarningText(warnings),
              HasSubstr(WarningAt(3) + "nodes n1 and n2 both use 127.0.0.1 port 6818"));
}

TEST(NodeConfig, UnusedNodeOptionsWarnAndAreKept) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("NodeName=n1 CoreSpecCount=2 MemSpecLimit=2048\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->nodes[0].other_keys.at("CoreSpecCount"), "2");
  EXPECT_THAT(WarningText(warnings),
              HasSubstr(WarningAt(3) + "CoreSpecCount on NodeName lines is accepted but not "
                                       "acted on by Loom yet"));
}

TEST(NodeConfig, DownNodesSetStateAndReason) {
  auto c = ParseBody("NodeName=n[1-4]\nDownNodes=n[2-3] State=DRAIN Reason=\"psu\"\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->FindNode("n1")->state, NodeState::kUnknown);
  EXPECT_EQ(c->FindNode("n2")->state, NodeState::kDrain);
  EXPECT_EQ(c->FindNode("n3")->reason, "psu");
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1\nDownNodes=n9\n")),
              HasSubstr(ErrorAt(4) + "DownNodes names n9, which no NodeName defines"));
}

TEST(NodeConfig, NodeSetsServePartitions) {
  auto c = ParseBody(
      "NodeName=g[1-2] Feature=gpu\nNodeName=c[1-2]\n"
      "NodeSet=gpus Feature=gpu\nNodeSet=mix Nodes=c1\n"
      "PartitionName=p Nodes=mix,gpus\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(c->partitions[0].nodes, ElementsAre("g1", "g2", "c1"));
}

}  // namespace
}  // namespace loom::conf
