// A site's slurm.conf made local for `loom cluster up --config`: the controller, the nodes,
// the state and MUNGE move to this host; nodes, partitions and policies stay as written.
#include "conf/local_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conf/site_config.h"
#include "conf/slurm_conf.h"

namespace loom::conf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kSite = R"(# a site's file
ClusterName=site
SlurmctldHost=ctl-01(10.0.0.2)
SlurmctldHost=ctl-02(10.0.0.3)
SlurmctldPort=6817
AuthType=auth/munge
AuthInfo=socket=/run/munge/munge.socket.2
StateSaveLocation=/var/spool/slurmctld
SchedulerType=sched/backfill
GresTypes=gpu
NodeName=DEFAULT CPUs=64 RealMemory=256000 Port=6818
NodeName=gpu-[01-03] NodeAddr=10.1.0.[1-3] Port=17001-17003 Gres=gpu:h100:8 \
    Features=gpu,h100
NodeName=cpu-01 NodeHostname=cpu-01.site
PartitionName=train Nodes=gpu-[01-03] Default=YES MaxTime=7-00:00:00 \
    TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu=64.0"
PartitionName=compute Nodes=cpu-01
)";

LocalPlacement Placement(int32_t* next) {
  LocalPlacement p;
  p.controller_port = 40000;
  p.state_dir = "/tmp/c/state";
  p.munge_socket = "/tmp/c/munge/munge.socket";
  p.node_port = [next] { return (*next)++; };
  return p;
}

StatusOr<ClusterConfig> Reparse(const std::string& text) {
  NoIncludeResolver none;
  return ParseSlurmConf(text, "/tmp/c/etc/slurm.conf", none, nullptr);
}

TEST(LocalCluster, ControllerStateAndMungeMoveHere) {
  int32_t next = 41000;
  NoIncludeResolver none;
  auto text = LocalizeSlurmConf(kSite, "/etc/slurm/slurm.conf", none, Placement(&next));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("from /etc/slurm/slurm.conf"));
  auto c = Reparse(*text);
  ASSERT_TRUE(c.ok()) << c.status() << "\n" << *text;
  ASSERT_EQ(c->controllers.size(), 1u);  // the backup controller would be a second daemon
  EXPECT_EQ(c->controllers[0].addr, "127.0.0.1");
  EXPECT_EQ(c->slurmctld_port, 40000);
  EXPECT_EQ(c->state_save_location, "/tmp/c/state");
  EXPECT_EQ(MungeSocketOf(*c), "/tmp/c/munge/munge.socket");
  EXPECT_THAT(*text, Not(HasSubstr("10.0.0.2")));
}

TEST(LocalCluster, EachNodeGetsLoopbackAndAPortOfItsOwn) {
  int32_t next = 41000;
  NoIncludeResolver none;
  auto text = LocalizeSlurmConf(kSite, "/etc/slurm/slurm.conf", none, Placement(&next));
  ASSERT_TRUE(text.ok()) << text.status();
  auto c = Reparse(*text);
  ASSERT_TRUE(c.ok()) << c.status() << "\n" << *text;
  ASSERT_EQ(c->nodes.size(), 4u);
  for (size_t i = 0; i < c->nodes.size(); ++i) {
    EXPECT_EQ(c->nodes[i].addr, "127.0.0.1") << c->nodes[i].name;
    EXPECT_EQ(c->nodes[i].port, 41000 + static_cast<int32_t>(i)) << c->nodes[i].name;
  }
  EXPECT_EQ(next, 41004);
  // What the lines said besides the address stays: DEFAULT values, GRES, features.
  EXPECT_EQ(c->nodes[0].cpus, 64);
  EXPECT_EQ(c->nodes[2].GresCount("gpu", "h100"), 8);
  EXPECT_TRUE(c->nodes[2].HasFeature("h100"));
  EXPECT_EQ(c->nodes[3].hostname, "cpu-01.site");
}

TEST(LocalCluster, PartitionsAndPoliciesStayAsWritten) {
  int32_t next = 41000;
  NoIncludeResolver none;
  auto text = LocalizeSlurmConf(kSite, "/etc/slurm/slurm.conf", none, Placement(&next));
  ASSERT_TRUE(text.ok()) << text.status();
  auto c = Reparse(*text);
  ASSERT_TRUE(c.ok()) << c.status() << "\n" << *text;
  EXPECT_EQ(c->cluster_name, "site");
  ASSERT_EQ(c->partitions.size(), 2u);
  EXPECT_TRUE(c->partitions[0].is_default);
  EXPECT_EQ(c->partitions[0].max_time_s, 7 * 86400);
  EXPECT_EQ(c->partitions[0].billing_weights_text, "CPU=1.0,Mem=0.25G,GRES/gpu=64.0");
  EXPECT_EQ(c->partitions[1].nodes, std::vector<std::string>{"cpu-01"});
  EXPECT_EQ(c->scheduler_type, SchedulerType::kBackfill);
}

TEST(LocalCluster, IncludedFilesAreInlined) {
  InMemoryIncludeResolver files;
  files.Add("/etc/slurm/nodes.conf", "NodeName=n[1-2] CPUs=8\nPartitionName=p Nodes=n[1-2]\n");
  int32_t next = 41000;
  auto text = LocalizeSlurmConf("ClusterName=x\nSlurmctldHost=h\nInclude nodes.conf\n",
                                "/etc/slurm/slurm.conf", files, Placement(&next));
  ASSERT_TRUE(text.ok()) << text.status();
  auto c = Reparse(*text);
  ASSERT_TRUE(c.ok()) << c.status() << "\n" << *text;
  ASSERT_EQ(c->nodes.size(), 2u);
  EXPECT_EQ(c->nodes[1].port, 41001);
  EXPECT_THAT(*text, Not(HasSubstr("Include")));
}

TEST(LocalCluster, ErrorsNameTheLine) {
  int32_t next = 41000;
  NoIncludeResolver none;
  auto missing = LocalizeSlurmConf("ClusterName=x\nInclude nodes.conf\n", "/etc/slurm/slurm.conf",
                                   none, Placement(&next));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/etc/slurm/slurm.conf:2:"));
  auto bad = LocalizeSlurmConf("ClusterName=x\nNodeName=n[3-1]\n", "/etc/slurm/slurm.conf", none,
                               Placement(&next));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("/etc/slurm/slurm.conf:2: error: NodeName=n[3-1] is not a valid hostlist"));
}

}  // namespace
}  // namespace loom::conf
