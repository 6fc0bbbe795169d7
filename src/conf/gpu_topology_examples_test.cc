// The topology files under examples/: the GPU topology matrices describe exactly the
// machines of the built-in catalog (model::CatalogTopology), so a site can start from
// either; the gres.conf and topology.conf files load with the slurm.conf next to them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "conf/gpu_topo_matrix.h"
#include "conf/gres_conf.h"
#include "conf/slurm_conf.h"
#include "conf/topology_conf.h"
#include "model/gpu_topology.h"

namespace loom::conf {
namespace {

TEST(GpuTopologyExamples, EachMatrixEqualsItsCatalogMachine) {
  for (std::string_view name : model::CatalogNames()) {
    const model::NodeTopology* want = model::CatalogTopology(name);
    ASSERT_NE(want, nullptr) << name;
    std::string path = "examples/gpu-topology/" + std::string(name) + ".topo";
    std::string type = want->gpus.empty() ? "" : want->gpus[0].type;
    StatusOr<model::NodeTopology> got = LoadTopoMatrix(path, type);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(got->name, path);
    got->name = want->name;
    EXPECT_EQ(*got, *want) << path;
  }
}

TEST(GpuTopologyExamples, EveryMatrixFileIsACatalogMachine) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator("examples/gpu-topology")) {
    if (entry.path().extension() != ".topo") continue;
    ++files;
    EXPECT_NE(model::CatalogTopology(entry.path().stem().string()), nullptr) << entry.path();
  }
  EXPECT_EQ(files, static_cast<int>(model::CatalogNames().size()));
}

std::vector<std::string> NodeNames(const ClusterConfig& c) {
  std::vector<std::string> names;
  for (const NodeConfig& n : c.nodes) names.push_back(n.name);
  return names;
}

TEST(TopologyExamples, GpuClusterTree) {
  auto slurm = LoadSlurmConf("examples/slurm.conf", nullptr);
  ASSERT_TRUE(slurm.ok()) << slurm.status().message();
  std::vector<Diagnostic> warnings;
  auto t = LoadTopologyConf("examples/topology.conf", NodeNames(*slurm), &warnings);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_THAT(warnings, ::testing::IsEmpty());
  EXPECT_EQ(slurm->topology_plugin, "topology/tree");
  EXPECT_EQ(t->kind, model::ClusterTopology::Kind::kTree);
  ASSERT_EQ(t->switches.size(), 9u);
  EXPECT_EQ(t->switches[8].level, 1);
  for (int32_t leaf : t->leaf_of) EXPECT_GE(leaf, 0);
}

TEST(TopologyExamples, Nvl72RacksAreBlocksOfGb200Trays) {
  auto slurm = LoadSlurmConf("examples/nvl72/slurm.conf", nullptr);
  ASSERT_TRUE(slurm.ok()) << slurm.status().message();
  ASSERT_EQ(slurm->nodes.size(), 36u);
  EXPECT_EQ(slurm->topology_plugin, "topology/block");

  std::vector<Diagnostic> warnings;
  auto blocks = LoadTopologyConf("examples/nvl72/topology.conf", NodeNames(*slurm), &warnings);
  ASSERT_TRUE(blocks.ok()) << blocks.status().message();
  EXPECT_THAT(warnings, ::testing::IsEmpty());
  ASSERT_EQ(blocks->blocks.size(), 2u);
  EXPECT_EQ(blocks->blocks[1].nodes.size(), 18u);
  EXPECT_THAT(blocks->block_sizes, ::testing::ElementsAre(18, 36));

  auto gres = LoadGresConf("examples/nvl72/gres.conf", &warnings);
  ASSERT_TRUE(gres.ok()) << gres.status().message();
  auto topologies = BuildNodeTopologies(*gres, GresClusterOf(*slurm), &warnings);
  ASSERT_TRUE(topologies.ok()) << topologies.status().message();
  EXPECT_THAT(warnings, ::testing::IsEmpty());
  ASSERT_EQ(topologies->size(), 36u);
  const model::NodeTopology* tray = model::CatalogTopology("gb200-nvl72-tray");
  for (const auto& t : *topologies) {
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t, topologies->front());  // one object for all trays
  }
  model::NodeTopology got = *topologies->front();
  got.name = tray->name;
  EXPECT_EQ(got, *tray);
  EXPECT_EQ(got.num_cpus(), slurm->nodes[0].cpus);
}

}  // namespace
}  // namespace loom::conf
