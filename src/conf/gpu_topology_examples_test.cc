// The topology matrices under examples/gpu-topology/ describe exactly the machines of the
// built-in catalog (model::CatalogTopology), so a site can start from either.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "conf/gpu_topo_matrix.h"
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

}  // namespace
}  // namespace loom::conf
