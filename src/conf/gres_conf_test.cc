// gres.conf: the lines Slurm sites write (per node and for all nodes), Loom's Topology=
// key, the GPU topology derived for each node, and the errors and warnings for files that
// disagree with slurm.conf.
#include "conf/gres_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conf/slurm_conf.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using Topologies = std::vector<std::shared_ptr<const model::NodeTopology>>;

constexpr std::string_view kFile = "/etc/slurm/gres.conf";

std::string ErrorAt(int line) { return core::StrCat(kFile, ":", line, ": error: "); }
std::string WarningAt(int line) { return core::StrCat(kFile, ":", line, ": warning: "); }
template <typename T>
std::string ErrorText(const StatusOr<T>& r) {
  return r.ok() ? "<ok>" : std::string(r.status().message());
}

// A matrix of a 4-GPU node: NVLink pairs (0,1) and (2,3), one NUMA node per pair.
constexpr std::string_view kMatrix =
    "GPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\tX\tNV4\tSYS\tSYS\t0-15\t0\n"
    "GPU1\tNV4\tX\tSYS\tSYS\t0-15\t0\n"
    "GPU2\tSYS\tSYS\tX\tNV4\t16-31\t1\n"
    "GPU3\tSYS\tSYS\tNV4\tX\t16-31\t1\n";

InMemoryIncludeResolver Files() {
  InMemoryIncludeResolver files;
  files.Add("/etc/slurm/topo/quad.topo", std::string(kMatrix));
  files.Add("/etc/slurm/topo/broken.topo", "GPU0\tGPU1\nGPU0\tX\tNVX\nGPU1\tSYS\tX\n");
  return files;
}

StatusOr<GresConf> Parse(std::string_view text, std::vector<Diagnostic>* warnings = nullptr) {
  InMemoryIncludeResolver files = Files();
  return ParseGresConf(text, kFile, files, warnings);
}

// Nodes g[1-4] with 4 a100 GPUs and 32 CPUs on 2 sockets, c1 without GPUs.
GresCluster Cluster() {
  GresCluster c;
  c.gres_types = {"gpu", "mps"};
  for (int i = 1; i <= 4; ++i) {
    c.nodes.push_back({core::StrCat("g", i), {{"gpu", "a100", 4}}, 32, 2});
  }
  c.nodes.push_back({"c1", {}, 16, 1});
  return c;
}

StatusOr<Topologies> Build(std::string_view text, std::vector<Diagnostic>* warnings = nullptr,
                           const GresCluster& cluster = Cluster()) {
  StatusOr<GresConf> conf = Parse(text, warnings);
  if (!conf.ok()) return conf.status();
  return BuildNodeTopologies(*conf, cluster, warnings);
}

std::vector<int32_t> Of(const model::NodeTopology& t, int32_t model::Gpu::*field) {
  std::vector<int32_t> v;
  for (const model::Gpu& g : t.gpus) v.push_back(g.*field);
  return v;
}

TEST(GresConf, ParsesLinesAsSlurmSitesWriteThem) {
  std::vector<Diagnostic> warnings;
  auto c = Parse(
      "# GPUs\n"
      "nodename=g[1-2] name=GPU type=a100 file=/dev/nvidia[0-1] CORES=0-15,32-47\n"
      "NodeName=g[1-2] Name=gpu Type=a100 File=/dev/nvidia2 Cores=16-31 Links=0,0,-1,12 \\\n"
      "    Flags=nvidia_gpu_env\n"
      "Name=mps Count=2K\n"
      "Name=shard Count=8 File=/dev/nvidia0\n"
      "Name=gpu MultipleFiles=/dev/dri/card0,/dev/dri/renderD128\n",
      &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_THAT(c->source_files, ElementsAre(kFile));
  ASSERT_EQ(c->lines.size(), 5u);
  const GresConfLine& a = c->lines[0];
  EXPECT_EQ(a.location.line, 2);
  EXPECT_EQ(a.node_expr, "g[1-2]");
  EXPECT_THAT(a.nodes, ElementsAre("g1", "g2"));
  EXPECT_EQ(a.name, "gpu");
  EXPECT_EQ(a.type, "a100");
  EXPECT_THAT(a.files, ElementsAre("/dev/nvidia0", "/dev/nvidia1"));
  EXPECT_EQ(a.Count(), 2);
  ASSERT_TRUE(a.cores.has_value());
  EXPECT_EQ(a.cores->size(), 32u);
  const GresConfLine& b = c->lines[1];
  EXPECT_THAT(b.links, ElementsAre(0, 0, -1, 12));
  EXPECT_THAT(b.flags, ElementsAre("nvidia_gpu_env"));
  EXPECT_EQ(c->lines[2].Count(), 2048);
  EXPECT_TRUE(c->lines[2].nodes.empty());
  EXPECT_EQ(c->lines[3].Count(), 8);
  EXPECT_TRUE(c->lines[4].multiple_files);
  EXPECT_EQ(c->lines[4].Count(), 1);
}

TEST(GresConf, AutoDetectGlobalAndPerNode) {
  std::vector<Diagnostic> warnings;
  auto c = Parse("AutoDetect=nvml\nNodeName=g1 AutoDetect=off\nNodeName=g2 AutoDetect=RSMI\n",
                 &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->autodetect, GresAutoDetect::kNvml);
  EXPECT_EQ(c->autodetect_at.line, 1);
  EXPECT_EQ(c->lines[1].autodetect, GresAutoDetect::kOff);
  EXPECT_EQ(c->lines[2].autodetect, GresAutoDetect::kRsmi);
  EXPECT_EQ(AutoDetectFor(*c, "g1"), GresAutoDetect::kOff);
  EXPECT_EQ(AutoDetectFor(*c, "g2"), GresAutoDetect::kRsmi);
  EXPECT_EQ(AutoDetectFor(*c, "g3"), GresAutoDetect::kNvml);  // the file's
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_THAT(warnings[0].ToString(),
              HasSubstr(WarningAt(1) + "AutoDetect=nvml is honoured only on the node, at run "
                                       "time"));
  EXPECT_THAT(warnings[1].ToString(), HasSubstr(WarningAt(3) + "AutoDetect=rsmi for g2 is"));
  EXPECT_THAT(ErrorText(Parse("AutoDetect=nvml\nAutoDetect=off\n")),
              HasSubstr(ErrorAt(2) + "AutoDetect is already set for all nodes at line 1"));
  EXPECT_THAT(ErrorText(Parse("AutoDetect=cuda\n")),
              HasSubstr(ErrorAt(1) + "invalid value 'cuda' for AutoDetect: expected off, nvml, "
                                     "rsmi, oneapi, nrt or nvidia"));
}

TEST(GresConf, OldCpusKeyIsReadAsCores) {
  std::vector<Diagnostic> warnings;
  auto c = Parse("Name=gpu File=/dev/nvidia0 CPUs=0-3\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(*c->lines[0].cores, ElementsAre(0, 1, 2, 3));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0].message, HasSubstr("CPUs= is the old name of Cores="));
  EXPECT_THAT(ErrorText(Parse("Name=gpu Cores=0 CPUs=1\n")),
              HasSubstr("CPUs cannot be combined with Cores="));
}

TEST(GresConf, LineErrors) {
  EXPECT_THAT(ErrorText(Parse("Name=gpu Fiel=/dev/nvidia0\n")),
              HasSubstr(ErrorAt(1) + "unknown key 'Fiel' on a gres.conf line; did you mean "
                                     "'File'?"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu Count=lots\n")),
              HasSubstr(ErrorAt(1) + "invalid value 'lots' for Count: expected a whole number, "
                                     "optionally with a K, M, G, T or P suffix"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu File=nvidia0\n")),
              HasSubstr(ErrorAt(1) + "File= names 'nvidia0', which is not an absolute path"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu File=/dev/nvidia[0-3] Count=2\n")),
              HasSubstr(ErrorAt(1) + "Count=2 but File= names 4 devices; leave Count= out or "
                                     "make it 4"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu File=/dev/nvidia[0-1] Links=-1,4\n")),
              HasSubstr(ErrorAt(1) + "Links= describes one GPU, but this line has 2; write one "
                                     "line per GPU"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu File=/dev/nvidia0 Links=-1,x\n")),
              HasSubstr("invalid value '-1,x' for Links"));
  EXPECT_THAT(ErrorText(Parse("NodeName=g1 Type=a100 File=/dev/nvidia0\n")),
              HasSubstr(ErrorAt(1) + "Type= describes a GRES; this line needs Name="));
  EXPECT_THAT(ErrorText(Parse("Name=gpu Topology=topo/quad.topo\n")),
              HasSubstr(ErrorAt(1) + "Topology= goes on a NodeName line"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu Flags=nvidia_gpu_emv\n")),
              HasSubstr(ErrorAt(1) + "unknown flag 'nvidia_gpu_emv' in Flags=; did you mean "
                                     "'nvidia_gpu_env'?"));
  EXPECT_THAT(ErrorText(Parse("NodeName=g1\n")),
              HasSubstr(ErrorAt(1) + "this NodeName line says nothing about its nodes"));
  EXPECT_THAT(ErrorText(Parse("NodeName=g[3-1] Name=gpu\n")),
              HasSubstr(ErrorAt(1) + "invalid value 'g[3-1]' for NodeName"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu Name=mps\n")),
              HasSubstr(ErrorAt(1) + "Name is given twice on this line"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu File=/dev/a MultipleFiles=/dev/b\n")),
              HasSubstr("MultipleFiles cannot be combined with File= (give one or the other)"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu Cores=7-3\n")),
              HasSubstr("invalid value '7-3' for Cores: expected core ids such as 0-31,64-95 "
                        "(range '7-3' ends before it starts"));
  EXPECT_THAT(ErrorText(Parse("Name=gpu File\n")), HasSubstr(ErrorAt(1) + "expected Key=Value"));
}

TEST(GresConf, TopologyMatrixIsReadRelativeToGresConf) {
  auto c = Parse("NodeName=g[1-4] Topology=topo/quad.topo\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  ASSERT_NE(c->lines[0].topology_matrix, nullptr);
  EXPECT_EQ(c->lines[0].topology_matrix->num_gpus(), 4);
  EXPECT_THAT(c->source_files, ElementsAre(kFile, "/etc/slurm/topo/quad.topo"));
  EXPECT_TRUE(Parse("NodeName=g1 Topology=/etc/slurm/topo/quad.topo\n").ok());
}

TEST(GresConf, TopologyMatrixErrors) {
  EXPECT_THAT(ErrorText(Parse("NodeName=g1 Topology=topo/none.topo\n")),
              HasSubstr(ErrorAt(1) + "cannot read topology matrix 'topo/none.topo' (looked for "
                                     "/etc/slurm/topo/none.topo): no such file"));
  std::string e = ErrorText(Parse("NodeName=g1 Topology=topo/broken.topo\n"));
  EXPECT_THAT(e, HasSubstr(ErrorAt(1) + "topology matrix 'topo/broken.topo' has errors:\n"));
  EXPECT_THAT(e, HasSubstr("/etc/slurm/topo/broken.topo:2: error: row GPU0, column GPU1: "
                           "unknown entry 'NVX'"));
  EXPECT_THAT(ErrorText(Parse("NodeName=g1 Topology=topo/*.topo\n")),
              HasSubstr("Topology= names one file; 'topo/*.topo' is a pattern"));
}

TEST(GresConf, NodesShareTheTopologyOfTheirMatrix) {
  auto t = Build(
      "NodeName=g[1-2] Topology=topo/quad.topo\n"
      "NodeName=g[3-4] Topology=topo/quad.topo Name=gpu File=/dev/gpu[0-3]\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  ASSERT_EQ(t->size(), 5u);
  ASSERT_NE((*t)[0], nullptr);
  EXPECT_EQ((*t)[0], (*t)[1]);  // one object for both
  EXPECT_EQ((*t)[4], nullptr);  // c1 has no GPUs
  const model::NodeTopology& a = *(*t)[0];
  EXPECT_EQ(a.name, "/etc/slurm/topo/quad.topo");
  EXPECT_EQ(a.gpus[0].type, "a100");  // from slurm.conf's Gres=gpu:a100:4
  EXPECT_EQ(a.gpus[0].file, "/dev/nvidia0");
  EXPECT_THAT(Of(a, &model::Gpu::domain), ElementsAre(0, 0, 1, 1));
  const model::NodeTopology& b = *(*t)[2];
  EXPECT_EQ(b.gpus[3].file, "/dev/gpu3");  // gres.conf's File= names the devices
  EXPECT_EQ((*t)[2], (*t)[3]);
}

TEST(GresConf, TopologyFromFileCoresAndLinks) {
  auto t = Build(
      "NodeName=g[1-4] Name=gpu File=/dev/nvidia0 Cores=0-15 Links=-1,4,0,0\n"
      "NodeName=g[1-4] Name=gpu File=/dev/nvidia1 Cores=0-15 Links=4,-1,0,0\n"
      "NodeName=g[1-4] Name=gpu File=/dev/nvidia2 Cores=16-31 Links=0,0,-1,0\n"
      "NodeName=g[1-4] Name=gpu File=/dev/nvidia3 Cores=16-31 Links=0,0,0,-1\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  ASSERT_NE((*t)[0], nullptr);
  EXPECT_EQ((*t)[0], (*t)[3]);
  const model::NodeTopology& a = *(*t)[0];
  EXPECT_EQ(a.name, core::StrCat(kFile, ":1"));
  EXPECT_THAT(Of(a, &model::Gpu::domain), ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(Of(a, &model::Gpu::pcie_switch), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Of(a, &model::Gpu::numa), ElementsAre(0, 0, 1, 1));
  EXPECT_THAT(Of(a, &model::Gpu::nic), ElementsAre(-1, -1, -1, -1));
  EXPECT_EQ(a.gpus[2].file, "/dev/nvidia2");
  EXPECT_EQ(a.gpus[2].type, "a100");
  ASSERT_EQ(a.num_numa(), 2);
  EXPECT_EQ(a.numa_cpus[1].front(), 16);
  EXPECT_EQ(a.sockets, 2);
}

TEST(GresConf, WithoutCoresOrLinks) {
  auto t = Build("NodeName=g[1-4] Name=gpu Type=a100 File=/dev/nvidia[0-3]\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  const model::NodeTopology& a = *(*t)[0];
  EXPECT_THAT(Of(a, &model::Gpu::domain), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Of(a, &model::Gpu::numa), ElementsAre(0, 0, 0, 0));
  ASSERT_EQ(a.num_numa(), 1);
  EXPECT_EQ(a.num_cpus(), 32);  // all of the node's CPUs
}

TEST(GresConf, CountOnlyLinesGiveNoTopology) {
  auto t = Build("NodeName=g[1-4] Name=gpu Type=a100 Count=4\n");
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_EQ((*t)[0], nullptr);
}

TEST(GresConf, LinesWithoutNodeNameApplyToNodesWithThatGres) {
  std::vector<Diagnostic> warnings;
  auto t = Build("Name=gpu File=/dev/nvidia[0-3]\nName=mps Count=400\n", &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].ToString(),
            WarningAt(2) +
                "this line has no NodeName= and no node of slurm.conf has mps in its "
                "Gres=, so it applies to no node");
  warnings.clear();
  GresCluster cluster = Cluster();
  for (int i = 0; i < 4; ++i) cluster.nodes[i].gres.push_back({"mps", "", 400});
  t = Build("Name=gpu File=/dev/nvidia[0-3]\nName=mps Count=400\n", &warnings, cluster);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_NE((*t)[0], nullptr);
  EXPECT_EQ((*t)[4], nullptr);  // c1: no GPUs in slurm.conf, so the lines do not apply
}

TEST(GresConf, CountsMustAgreeWithSlurmConf) {
  EXPECT_THAT(ErrorText(Build("NodeName=g[1-4] Name=gpu File=/dev/nvidia[0-7]\n")),
              HasSubstr(ErrorAt(1) + "nodes g[1-4]: gres.conf lists 8 gpu but slurm.conf Gres= "
                                     "says 4; make them agree"));
  EXPECT_THAT(ErrorText(Build("NodeName=g[1-2] Name=gpu Count=4\nNodeName=g3 Name=gpu Count=3\n")),
              HasSubstr(ErrorAt(2) + "node g3: gres.conf lists 3 gpu"));
  EXPECT_THAT(ErrorText(Build("NodeName=g1 Name=gpu Type=h100 File=/dev/nvidia[0-3]\n")),
              HasSubstr(ErrorAt(1) + "node g1: gres.conf lists 4 gpu of Type=h100 but "
                                     "slurm.conf Gres= says 0"));
  EXPECT_THAT(ErrorText(Build("NodeName=c1 Name=gpu File=/dev/nvidia0\n")),
              HasSubstr("node c1: gres.conf lists 1 gpu but slurm.conf Gres= has none; add "
                        "gpu:1 to its Gres="));
}

TEST(GresConf, NodesAndNamesMustBeInSlurmConf) {
  EXPECT_THAT(ErrorText(Build("NodeName=g[3-6] Name=gpu Count=4\n")),
              HasSubstr(ErrorAt(1) + "NodeName= names 2 nodes slurm.conf does not define: "
                                     "g[5-6]; define them in slurm.conf or remove them here"));
  EXPECT_THAT(ErrorText(Build("NodeName=g1 Name=nic Count=1\n")),
              HasSubstr(ErrorAt(1) + "Name=nic is not in slurm.conf's GresTypes (gpu,mps); add "
                                     "it there"));
}

TEST(GresConf, LinksErrors) {
  EXPECT_THAT(ErrorText(Build("NodeName=g1 Name=gpu File=/dev/nvidia0 Links=-1,4\n"
                              "NodeName=g1 Name=gpu File=/dev/nvidia[1-3]\n")),
              HasSubstr(ErrorAt(1) + "node g1: Links= has 2 entries but the node has 4 GPUs; "
                                     "give one entry per GPU"));
  EXPECT_THAT(ErrorText(Build("NodeName=g1 Name=gpu File=/dev/nvidia0 Links=4,-1,0,0\n"
                              "NodeName=g1 Name=gpu File=/dev/nvidia[1-3]\n")),
              HasSubstr(ErrorAt(1) + "node g1: entry 1 of Links= is GPU 0 (/dev/nvidia0) itself "
                                     "and must be -1, not 4"));
}

TEST(GresConf, LinksAndCoresWarnings) {
  std::vector<Diagnostic> warnings;
  auto t = Build(
      "NodeName=g1 Name=gpu File=/dev/nvidia0 Cores=0-15 Links=-1,4,0,0\n"
      "NodeName=g1 Name=gpu File=/dev/nvidia1 Cores=8-23 Links=2,-1,0,0\n"
      "NodeName=g1 Name=gpu File=/dev/nvidia[2-3]\n",
      &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  std::string w = JoinDiagnostics(warnings);
  EXPECT_THAT(w, HasSubstr(WarningAt(2) + "node g1: Links= of GPU 1 (/dev/nvidia1) gives 2 links "
                                          "to GPU 0 (/dev/nvidia0), but that GPU's Links= (line "
                                          "1) gives 4"));
  EXPECT_THAT(w, HasSubstr(WarningAt(3) + "node g1: Links= is given for 2 of the node's 4 GPUs "
                                          "but not on this line"));
  EXPECT_THAT(w, HasSubstr(WarningAt(2) + "node g1: Cores=8-23 of GPU 1 (/dev/nvidia1) overlaps "
                                          "Cores=0-15 of GPU 0 (/dev/nvidia0) (line 1)"));
  EXPECT_THAT(w, HasSubstr(WarningAt(3) + "node g1: Cores= is given for 2 of the node's 4 GPUs"));
  const model::NodeTopology& a = *(*t)[0];
  EXPECT_THAT(Of(a, &model::Gpu::domain), ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(Of(a, &model::Gpu::numa), ElementsAre(0, 0, 1, 1));
  ASSERT_EQ(a.num_numa(), 2);
  EXPECT_EQ(a.numa_cpus[0].size(), 24u);  // 0-23
  EXPECT_EQ(a.numa_cpus[1].size(), 8u);   // 24-31, listed by no Cores=
}

TEST(GresConf, TopologyConflicts) {
  EXPECT_THAT(ErrorText(Build("NodeName=g[1-4] Topology=topo/quad.topo\n"
                              "NodeName=g2 Topology=topo/quad.topo\n")),
              HasSubstr(ErrorAt(2) + "node g2: a second Topology=; the first is at line 1"));
  GresCluster eight = Cluster();
  for (GresNode& n : eight.nodes) n.gres = {{"gpu", "a100", 8}};
  EXPECT_THAT(ErrorText(Build("NodeName=g[1-4] Topology=topo/quad.topo\n", nullptr, eight)),
              HasSubstr(ErrorAt(1) + "nodes g[1-4]: the topology matrix topo/quad.topo "
                                     "describes 4 GPUs but slurm.conf Gres= gives the node 8"));
}

TEST(GresConf, AutoDetectWithoutTopologyIsAWarning) {
  std::vector<Diagnostic> warnings;
  auto t = Build("AutoDetect=nvml\nNodeName=g[3-4] Topology=topo/quad.topo\n", &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  std::string w = JoinDiagnostics(warnings);
  EXPECT_THAT(w, HasSubstr(WarningAt(1) + "nodes g[1-2]: with AutoDetect=nvml and no "
                                          "File=/Cores=/Links= or Topology= in gres.conf"));
  EXPECT_THAT(w, Not(HasSubstr("g[1-4]")));
  warnings.clear();
  t = Build("AutoDetect=nvml\nNodeName=g[1-4] AutoDetect=off\n", &warnings);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_THAT(JoinDiagnostics(warnings), Not(HasSubstr("placement knows nothing")));
}

TEST(GresConf, ClusterFromSlurmConf) {
  NoIncludeResolver none;
  auto slurm = ParseSlurmConf(
      "ClusterName=c\nSlurmctldHost=ctl\nGresTypes=gpu\n"
      "NodeName=g[1-2] CPUs=64 Sockets=2 CoresPerSocket=32 Gres=gpu:h100:4\n",
      "/etc/slurm/slurm.conf", none, nullptr);
  ASSERT_TRUE(slurm.ok()) << ErrorText(slurm);
  GresCluster c = GresClusterOf(*slurm);
  ASSERT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.nodes[1].name, "g2");
  EXPECT_EQ(c.nodes[1].cpus, 64);
  EXPECT_EQ(c.nodes[1].sockets, 2);
  EXPECT_THAT(c.gres_types, ElementsAre("gpu"));
  auto t = Build("NodeName=g[1-2] Name=gpu File=/dev/nvidia[0-3]\n", nullptr, c);
  ASSERT_TRUE(t.ok()) << ErrorText(t);
  EXPECT_EQ((*t)[1]->gpus[0].type, "h100");
}

}  // namespace
}  // namespace loom::conf
