// The topology matrix reader: what each column of `nvidia-smi topo -m` becomes (NVLink
// domains, PCIe switches, NICs, NUMA nodes), the Loom directives, and the errors for
// malformed tables.
#include "conf/gpu_topo_matrix.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/strings.h"

namespace loom::conf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kFile = "/etc/slurm/topo/node.topo";

std::string ErrorText(const StatusOr<model::NodeTopology>& r) {
  return r.ok() ? "<ok>" : std::string(r.status().message());
}
std::string ErrorAt(int line) { return core::StrCat(kFile, ":", line, ": error: "); }

StatusOr<model::NodeTopology> Parse(std::string_view text, std::string_view type = "a100") {
  return ParseTopoMatrix(text, kFile, type);
}

// Field of every GPU, in index order.
std::vector<int32_t> Of(const model::NodeTopology& t, int32_t model::Gpu::*field) {
  std::vector<int32_t> v;
  for (const model::Gpu& g : t.gpus) v.push_back(g.*field);
  return v;
}

// Two sockets; GPU0-1 on NVLink behind one switch with NIC0; GPU2 and GPU3 on their own.
constexpr std::string_view kSmall =
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV4\tNODE\tSYS\tPIX\t0-7,16-23\t0\tN/A\n"
    "GPU1\tNV4\t X \tNODE\tSYS\tPIX\t0-7,16-23\t0\tN/A\n"
    "GPU2\tNODE\tNODE\t X \tSYS\tPHB\t0-7,16-23\t0\tN/A\n"
    "GPU3\tSYS\tSYS\tSYS\t X \tSYS\t8-15,24-31\t1\tN/A\n"
    "NIC0\tPIX\tPIX\tPHB\tSYS\t X \n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "\n"
    "NIC Legend:\n"
    "\n"
    "  NIC0: mlx5_0\n";

TEST(TopoMatrix, DerivesDomainsSwitchesNicsAndNuma) {
  auto t = Parse(kSmall);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_EQ(t->name, kFile);
  ASSERT_EQ(t->num_gpus(), 4);
  EXPECT_THAT(Of(*t, &model::Gpu::index), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Of(*t, &model::Gpu::domain), ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(Of(*t, &model::Gpu::pcie_switch), ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(Of(*t, &model::Gpu::nic), ElementsAre(0, 0, -1, -1));
  EXPECT_THAT(Of(*t, &model::Gpu::numa), ElementsAre(0, 0, 0, 1));
  EXPECT_EQ(t->gpus[3].type, "a100");
  EXPECT_EQ(t->gpus[3].file, "/dev/nvidia3");
  ASSERT_EQ(t->num_numa(), 2);
  EXPECT_EQ(t->numa_cpus[0].size(), 16u);
  EXPECT_EQ(t->numa_cpus[0].front(), 0);
  EXPECT_EQ(t->numa_cpus[0].back(), 23);
  EXPECT_EQ(t->NumaOfCpu(24), 1);
  EXPECT_EQ(t->sockets, 2);
  EXPECT_FALSE(t->nvlink_spans_nodes);
}

TEST(TopoMatrix, SpacesCommentsDirectivesAndColourCodes) {
  auto t = Parse(
      "# saved on node gpu-01\n"
      "# sockets: 1\n"
      "#nvlink-spans-nodes\n"
      "        \x1b[4mGPU0    GPU1    CPU Affinity    NUMA Affinity\x1b[0m\r\n"
      "GPU0     X      PXB    0-3             0\r\n"
      "# a comment between rows\n"
      "GPU1    PXB      X     4-7             1\r\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_EQ(t->sockets, 1);
  EXPECT_EQ(t->num_numa(), 2);
  EXPECT_TRUE(t->nvlink_spans_nodes);
  EXPECT_THAT(Of(*t, &model::Gpu::domain), ElementsAre(0, 1));
  EXPECT_THAT(Of(*t, &model::Gpu::pcie_switch), ElementsAre(0, 0));
}

TEST(TopoMatrix, NicAtPixIsPreferredToPxbAndSharedNicJoinsSwitches) {
  auto t = Parse(
      "GPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\n"
      "GPU0\tX\tSYS\tPXB\tPIX\t0-3\n"
      "GPU1\tSYS\tX\tPXB\tSYS\t0-3\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(Of(*t, &model::Gpu::nic), ElementsAre(1, 0));
  // GPU0 and GPU1 are not PIX/PXB to each other but reach NIC0 through PCIe bridges.
  EXPECT_THAT(Of(*t, &model::Gpu::pcie_switch), ElementsAre(0, 0));
}

TEST(TopoMatrix, NumaNotAvailableGroupsByCpuAffinity) {
  auto t = Parse(
      "GPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\tX\tSYS\tSYS\t8-15\tN/A\n"
      "GPU1\tSYS\tX\tSYS\t0-7\tN/A\n"
      "GPU2\tSYS\tSYS\tX\t8-15\tN/A\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(Of(*t, &model::Gpu::numa), ElementsAre(0, 1, 0));
  EXPECT_EQ(t->numa_cpus[0].front(), 8);
  EXPECT_EQ(t->numa_cpus[1].front(), 0);
  EXPECT_EQ(t->sockets, 2);
}

TEST(TopoMatrix, NumaNodesKeepTheirNumbers) {
  // NPS4-style numbering: the GPUs sit on NUMA nodes 1 and 3 of four.
  auto t = Parse(
      "GPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\tX\tSYS\t16-31\t1\n"
      "GPU1\tSYS\tX\t48-63\t3\n"
      "# sockets: 2\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(Of(*t, &model::Gpu::numa), ElementsAre(1, 3));
  ASSERT_EQ(t->num_numa(), 4);
  EXPECT_TRUE(t->numa_cpus[0].empty());
  EXPECT_EQ(t->NumaOfCpu(50), 3);
  EXPECT_EQ(t->sockets, 2);
}

TEST(TopoMatrix, AllAffinitiesNotAvailable) {
  auto t = Parse(
      "GPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\tX\tNV2\tN/A\tN/A\n"
      "GPU1\tNV2\tX\tN/A\tN/A\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(Of(*t, &model::Gpu::numa), ElementsAre(0, 0));
  EXPECT_EQ(t->num_numa(), 1);
  EXPECT_EQ(t->num_cpus(), 0);
  EXPECT_EQ(t->sockets, 1);
}

TEST(TopoMatrix, OlderOutputWithDeviceNamesAndSoc) {
  auto t = Parse(
      "\tGPU0\tGPU1\tmlx5_0\tCPU Affinity\n"
      "GPU0\t X \tSOC\tPIX\t0-11\n"
      "GPU1\tSOC\t X \tSOC\t12-23\n"
      "mlx5_0\tPIX\tSOC\t X \n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(Of(*t, &model::Gpu::nic), ElementsAre(0, -1));
  EXPECT_THAT(Of(*t, &model::Gpu::numa), ElementsAre(0, 1));
}

TEST(TopoMatrix, UnknownEntryNamesRowColumnAndLine) {
  auto t = Parse(
      "GPU0\tGPU1\tCPU Affinity\n"
      "GPU0\tX\tNVX\t0-3\n"
      "GPU1\tNV2\tX\t0-3\n");
  EXPECT_THAT(ErrorText(t), HasSubstr(ErrorAt(2) + "row GPU0, column GPU1: unknown entry 'NVX'; "
                                                   "expected X, SYS, NODE, PHB, PXB, PIX or "
                                                   "NV<n>"));
}

TEST(TopoMatrix, WrongColumnCount) {
  auto t = Parse(
      "GPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\tX\tNV2\tPIX\t0-3\n"
      "GPU1\tNV2\tX\tPIX\t0-3\t0\n");
  EXPECT_THAT(ErrorText(t),
              HasSubstr(ErrorAt(2) + "row GPU0 has 4 values, but the header at line 1 has 3 "
                                     "device columns (2 GPUs, 1 NICs) and 2 affinity columns, so "
                                     "a GPU row needs 5"));
}

TEST(TopoMatrix, DuplicateAndMissingRows) {
  auto dup = Parse(
      "GPU0\tGPU1\n"
      "GPU0\tX\tSYS\n"
      "GPU1\tSYS\tX\n"
      "GPU0\tX\tSYS\n");
  EXPECT_THAT(ErrorText(dup), HasSubstr(ErrorAt(4) + "GPU0 has a second row; its first is at "
                                                     "line 2"));
  auto missing = Parse(
      "GPU0\tGPU1\n"
      "GPU0\tX\tSYS\n");
  EXPECT_THAT(ErrorText(missing),
              HasSubstr(ErrorAt(1) + "GPU1 has a column in this header but no valid row"));
}

TEST(TopoMatrix, AsymmetricMatrix) {
  auto t = Parse(
      "GPU0\tGPU1\tNIC0\n"
      "GPU0\tX\tNV12\tPIX\n"
      "GPU1\tNV8\tX\tSYS\n"
      "NIC0\tPXB\tSYS\tX\n");
  std::string e = ErrorText(t);
  EXPECT_THAT(e, HasSubstr(ErrorAt(3) + "the matrix is not symmetric: GPU1 to GPU0 is NV8 but "
                                        "GPU0 to GPU1 (line 2) is NV12; both must say the same"));
  EXPECT_THAT(e, HasSubstr(ErrorAt(4) + "the matrix is not symmetric: NIC0 to GPU0 is PXB"));
}

TEST(TopoMatrix, HeaderProblems) {
  EXPECT_THAT(ErrorText(Parse("$ nvidia-smi topo -m\nGPU0\nGPU0 X\n")),
              HasSubstr(ErrorAt(1) + "expected the header row of `nvidia-smi topo -m`"));
  EXPECT_THAT(ErrorText(Parse("# nothing here\n")),
              HasSubstr(std::string(kFile) + ": error: no topology matrix found"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tGPU2\nGPU0\tX\tSYS\nGPU2\tSYS\tX\n")),
              HasSubstr(ErrorAt(1) + "header column GPU2 is out of order: expected GPU1"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tNIC0\tGPU1\n")),
              HasSubstr("header column GPU1 comes after a NIC column"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tCPU Affinity\tFoo\n")),
              HasSubstr("unexpected header column 'Foo' after the affinity columns"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tGPU1\nGPU0\tX\tSYS\nGPU7\tSYS\tX\n")),
              HasSubstr(ErrorAt(3) + "row 'GPU7' names no column of the header at line 1"));
}

TEST(TopoMatrix, SelfAndNvlinkPlacement) {
  EXPECT_THAT(ErrorText(Parse("GPU0\tGPU1\nGPU0\tSYS\tSYS\nGPU1\tSYS\tX\n")),
              HasSubstr(ErrorAt(2) + "row GPU0 must have X in its own column, not 'SYS'"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tGPU1\nGPU0\tX\tX\nGPU1\tSYS\tX\n")),
              HasSubstr("row GPU0, column GPU1: X marks a device's own column"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tNIC0\nGPU0\tX\tNV2\n")),
              HasSubstr("row GPU0, column NIC0: NV2 joins a NIC"));
}

TEST(TopoMatrix, AffinityErrors) {
  EXPECT_THAT(ErrorText(Parse("GPU0\tCPU Affinity\nGPU0\tX\t7-3\n")),
              HasSubstr(ErrorAt(2) + "row GPU0: invalid CPU Affinity '7-3': range '7-3' ends "
                                     "before it starts"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tNUMA Affinity\nGPU0\tX\tzero\n")),
              HasSubstr("row GPU0: invalid NUMA Affinity 'zero'"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tGPU1\tNUMA Affinity\n"
                              "GPU0\tX\tSYS\t0\nGPU1\tSYS\tX\tN/A\n")),
              HasSubstr(ErrorAt(3) + "NUMA Affinity of GPU1 is N/A but that of GPU0 (line 2) "
                                     "is a number"));
  EXPECT_THAT(ErrorText(Parse("GPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
                              "GPU0\tX\tSYS\t0-7\t0\nGPU1\tSYS\tX\t4-11\t1\n")),
              HasSubstr(ErrorAt(3) + "CPU 4 is in the CPU Affinity of GPU0 (NUMA node 0, line "
                                     "2) and of GPU1 (NUMA node 1)"));
  EXPECT_THAT(ErrorText(Parse("# sockets: none\nGPU0\nGPU0\tX\n")),
              HasSubstr(ErrorAt(1) + "invalid '# sockets: none'"));
}

TEST(TopoMatrix, TooManyGpus) {
  std::string header;
  for (int i = 0; i < 65; ++i) header += core::StrCat("GPU", i, " ");
  EXPECT_THAT(ErrorText(Parse(header)),
              HasSubstr(ErrorAt(1) + "the header names 65 GPUs; a node may have at most 64"));
}

TEST(TopoMatrix, LoadReadsAFile) {
  auto t = LoadTopoMatrix("examples/gpu-topology/4gpu.topo", "a100");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_EQ(t->name, "examples/gpu-topology/4gpu.topo");
  EXPECT_THAT(ErrorText(LoadTopoMatrix("examples/gpu-topology/none.topo", "")),
              HasSubstr("cannot read topology matrix 'examples/gpu-topology/none.topo'"));
}

TEST(TopoMatrix, HandWrittenExampleOfTheReadmeParses) {
  std::ifstream in("examples/gpu-topology/README.md");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string readme = buf.str();
  size_t section = readme.find("## Writing one by hand");
  ASSERT_NE(section, std::string::npos);
  size_t open = readme.find("```\n", section);
  size_t close = readme.find("```", open + 4);
  ASSERT_NE(close, std::string::npos);
  auto t = Parse(readme.substr(open + 4, close - open - 4), "");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(Of(*t, &model::Gpu::domain), ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(Of(*t, &model::Gpu::pcie_switch), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(Of(*t, &model::Gpu::nic), ElementsAre(0, 0, 0, -1));
  EXPECT_THAT(Of(*t, &model::Gpu::numa), ElementsAre(0, 0, 0, 1));
  EXPECT_EQ(t->sockets, 2);
}

}  // namespace
}  // namespace loom::conf
