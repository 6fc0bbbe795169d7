#include "stepd/node_layout.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "conf/testing/site_text.h"

namespace loom::stepd {
namespace {

conf::SiteConfig Site(const std::string& body) {
  auto site = conf::testing::SiteFromText("node_layout_test",
                                          "ClusterName=t\nSlurmctldHost=localhost\n" + body);
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

const conf::NodeConfig& Node(const conf::SiteConfig& site, const std::string& name) {
  for (const conf::NodeConfig& n : site.cluster.nodes) {
    if (n.name == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return site.cluster.nodes.front();
}

TEST(NodeLayoutTest, AGpuNodeFromTheConfigurationWhenItOverridesTheHardware) {
  auto site = Site(
      "GresTypes=gpu\nSlurmdParameters=config_overrides\n"
      "NodeName=g1 CPUs=16 Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 Gres=gpu:a100:4\n"
      "PartitionName=p Nodes=g1 Default=YES\n");
  hw::CpuLayout host;  // what hwloc found: ignored under config_overrides
  host.cpus = 16;
  host.cores = {{0, {0}}};
  model::BindNode n = NodeLayout(site, Node(site, "g1"), host);
  EXPECT_EQ(n.name, "g1");
  EXPECT_EQ(n.cpus.num_cpus(), 16);
  EXPECT_EQ(n.cpus.num_sockets(), 2);
  EXPECT_EQ(n.cpus.cores.size(), 8u);
  ASSERT_EQ(n.gpus.size(), 4u);
  // A plain inside: GPUs split over the sockets' NUMA nodes.
  EXPECT_EQ(n.gpus.front().numa, 0);
  EXPECT_EQ(n.gpus.back().numa, 1);
  // Linux numbering: core 0's threads are CPUs 0 and 8.
  EXPECT_EQ(n.cpus.cores[0].threads, (std::vector<int32_t>{0, 8}));
}

TEST(NodeLayoutTest, TheHostsCpusWhenTheyAreTheConfiguredOnes) {
  auto site = Site("NodeName=c1 CPUs=4 Sockets=1 CoresPerSocket=2 ThreadsPerCore=2\n"
                   "PartitionName=p Nodes=c1 Default=YES\n");
  hw::CpuLayout host;
  host.cpus = 4;
  host.cores = {{0, {0, 1}}, {0, {2, 3}}};  // siblings numbered side by side
  host.numa_cpus = {{0, 1, 2, 3}};
  model::BindNode n = NodeLayout(site, Node(site, "c1"), host);
  EXPECT_EQ(n.cpus.cores[0].threads, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(n.gpus.empty());
  // Other hardware than configured: slurm.conf's layout.
  host.cpus = 8;
  n = NodeLayout(site, Node(site, "c1"), host);
  EXPECT_EQ(n.cpus.cores[0].threads, (std::vector<int32_t>{0, 2}));
  n = NodeLayout(site, Node(site, "c1"), std::nullopt);
  EXPECT_EQ(n.cpus.num_cpus(), 4);
}

TEST(NodeLayoutTest, TaskPluginAndItsParameter) {
  NodeSettings s;
  conf::ClusterConfig c;
  ApplyTaskPlugin(c, &s);
  EXPECT_FALSE(s.auto_cpu_bind);
  EXPECT_EQ(s.default_cpu_bind, model::CpuBindType::kNone);
  c.task_plugins = {"task/cgroup", "task/affinity"};
  c.task_plugin_param = "Verbose,Cores";
  ApplyTaskPlugin(c, &s);
  EXPECT_TRUE(s.auto_cpu_bind);
  EXPECT_EQ(s.default_cpu_bind, model::CpuBindType::kCores);
}

}  // namespace
}  // namespace loom::stepd
