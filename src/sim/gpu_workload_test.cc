#include "sim/gpu_workload.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace loom::sim {
namespace {

namespace fs = std::filesystem;

std::string TraceDir() {
  return std::string(LOOM_SHARED_DIR) + "/data/gpu-traces/alibaba-gpu-v2023";
}

bool HasNote(const GpuWorkload& w, const std::string& text) {
  return std::any_of(w.notes.begin(), w.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

const model::Node* FindNode(const GpuWorkload& w, const std::string& name) {
  for (const model::Node& n : w.cluster.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// A scratch directory holding a node list and a pod list written by the test.
class ScratchTrace {
 public:
  explicit ScratchTrace(const std::string& test) {
    dir_ = fs::temp_directory_path() /
           ("loom-gpu-workload-" + test + "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~ScratchTrace() { fs::remove_all(dir_); }
  void Write(const std::string& file, const std::string& text) {
    std::ofstream(dir_ / file, std::ios::binary) << text;
  }
  std::string Path(const std::string& file = "") const {
    return file.empty() ? dir_.string() : (dir_ / file).string();
  }

 private:
  fs::path dir_;
};

constexpr char kNodes[] =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n-v100,96000,786432,8,V100M32\n"
    "n-t4,104000,524288,2,T4\n";
constexpr char kPodHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

TEST(AlibabaGpuTrace, RealTraceDefault) {
  if (!fs::exists(TraceDir())) GTEST_SKIP() << "no " << TraceDir();
  auto w = ReadAlibabaGpuTrace(TraceDir());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->name, "alibaba-gpu-v2023/openb_pod_list_default");

  ASSERT_EQ(w->cluster.nodes.size(), 1213u);
  int64_t gpus = 0;
  for (const model::Node& n : w->cluster.nodes) {
    gpus += n.capacity.gpus;
    ASSERT_NE(n.topology, nullptr) << n.name;
    EXPECT_EQ(n.topology->num_gpus(), n.capacity.gpus) << n.name;
    EXPECT_EQ(n.topology->num_cpus(), n.capacity.cpus) << n.name;
  }
  EXPECT_EQ(gpus, 6212);
  EXPECT_TRUE(w->cluster.topology.empty());
  ASSERT_EQ(w->cluster.partitions.size(), 1u);
  EXPECT_EQ(w->cluster.partitions[0].nodes.size(), 1213u);
  EXPECT_TRUE(w->cluster.partitions[0].is_default);

  const model::Node* p100 = FindNode(*w, "openb-node-0000");
  ASSERT_NE(p100, nullptr);
  EXPECT_EQ(p100->capacity, (model::Resources{64, 2, 262144}));
  EXPECT_EQ(p100->gpu_type, "p100");
  EXPECT_EQ(p100->features, std::vector<std::string>{"P100"});
  EXPECT_EQ(p100->topology->num_domains(), 2);  // PCIe cards: no NVLink
  EXPECT_EQ(p100->topology->num_numa(), 2);

  // 8-GPU V100: two NVLink quads, PCIe switches in pairs, a quad per NUMA node.
  const model::Node* v100 = FindNode(*w, "openb-node-0023");
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ(v100->gpu_type, "v100m32");
  EXPECT_EQ(v100->topology->num_domains(), 2);
  EXPECT_EQ(v100->topology->DomainMask(0), 0x0Fu);
  EXPECT_EQ(v100->topology->DomainMask(1), 0xF0u);
  EXPECT_EQ(v100->topology->num_pcie_switches(), 4);
  EXPECT_EQ(v100->topology->SwitchMask(1), 0x0Cu);
  EXPECT_EQ(v100->topology->NumaMask(1), 0xF0u);

  const model::Node* g2 = FindNode(*w, "openb-node-0026");
  ASSERT_NE(g2, nullptr);
  EXPECT_EQ(g2->features, std::vector<std::string>{"G2"});
  EXPECT_EQ(g2->topology->num_domains(), 8);

  // Nodes of one kind share one topology.
  EXPECT_EQ(FindNode(*w, "openb-node-0024")->topology, v100->topology);

  ASSERT_EQ(w->jobs.size(), 7255u);
  EXPECT_TRUE(std::is_sorted(w->jobs.begin(), w->jobs.end(),
                             [](const SimJob& a, const SimJob& b) { return a.submit < b.submit; }));
  // openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0
  const SimJob& first = w->jobs.front();
  EXPECT_EQ(first.id, 1u);
  EXPECT_EQ(first.submit, 0);
  EXPECT_EQ(first.run, 12537496);
  EXPECT_EQ(first.estimate, first.run);
  EXPECT_EQ(first.shape.ntasks, 1);
  EXPECT_EQ(first.shape.min_nodes, 1);
  EXPECT_EQ(first.shape.max_nodes, 1);
  EXPECT_EQ(first.shape.cpus_per_task, 12);
  EXPECT_EQ(first.shape.mem_per_node_mb, 16384);
  EXPECT_EQ(first.shape.gpus_per_node, 1);
  // openb-pod-8151,3152,5600,1,590,,BE,Failed,12901761,12901792,12901762: a fraction of a
  // GPU and of a CPU, both rounded up.
  const SimJob& last = w->jobs.back();
  EXPECT_EQ(last.id, 8152u);
  EXPECT_EQ(last.submit, 12901761);
  EXPECT_EQ(last.run, 30);
  EXPECT_EQ(last.shape.cpus_per_task, 4);
  EXPECT_EQ(last.shape.gpus_per_node, 1);

  int64_t cpu_only = 0, eight = 0;
  for (const SimJob& j : w->jobs) {
    EXPECT_TRUE(j.constraint.empty());
    EXPECT_GT(j.run, 0);
    cpu_only += j.shape.gpus_per_node == 0;
    eight += j.shape.gpus_per_node == 8;
  }
  EXPECT_GT(cpu_only, 0);
  EXPECT_GT(eight, 0);
  EXPECT_TRUE(HasNote(*w, "897 tasks never scheduled")) << w->notes.front();
  EXPECT_TRUE(HasNote(*w, "2,573 fractional-GPU tasks given one whole GPU each"));
  EXPECT_TRUE(HasNote(*w, "1,213 nodes (6,212 GPUs)"));
  EXPECT_FALSE(HasNote(*w, "no node could ever host"));
}

TEST(AlibabaGpuTrace, RealTraceWithGpuTypeConstraints) {
  if (!fs::exists(TraceDir())) GTEST_SKIP() << "no " << TraceDir();
  auto w = ReadAlibabaGpuTrace(TraceDir() + "/openb_pod_list_gpuspec33.csv");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->name, "alibaba-gpu-v2023/openb_pod_list_gpuspec33");
  EXPECT_EQ(w->cluster.nodes.size(), 1213u);
  ASSERT_EQ(w->jobs.size(), 7254u);
  int64_t constrained = 0;
  for (const SimJob& j : w->jobs) constrained += !j.constraint.empty();
  EXPECT_EQ(constrained, 2091);
  // A 120-CPU task that may only use G2 nodes (96 CPUs) can never run.
  EXPECT_TRUE(HasNote(*w, "1 task that no node could ever host skipped"));
  bool alternatives = std::any_of(w->jobs.begin(), w->jobs.end(), [](const SimJob& j) {
    return j.constraint == "V100M16|V100M32";
  });
  EXPECT_TRUE(alternatives);
}

TEST(AlibabaGpuTrace, PodListWithoutTimesIsRejected) {
  if (!fs::exists(TraceDir())) GTEST_SKIP() << "no " << TraceDir();
  auto w = ReadAlibabaGpuTrace(TraceDir() + "/openb_pod_list_multigpu50.csv");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("has no times"), std::string::npos)
      << w.status();
}

TEST(AlibabaGpuTrace, RulesOnASmallTrace) {
  ScratchTrace t("rules");
  t.Write("openb_node_list_gpu_node.csv", kNodes);
  t.Write("openb_pod_list_default.csv",
          std::string(kPodHeader) +
              "p0,4000,8192,1,1000,,LS,Running,10,110,20\n"           // job 1
              "p1,500,1024,1,250,,BE,Failed,5,50,6\n"                 // fractional GPU, 0.5 CPU
              "p2,2000,4096,0,0,,BE,Succeeded,7,17,7\n"               // CPU only
              "p3,8000,16384,8,1000,T4|V100M32,LS,Running,8,108,9\n"  // only a V100 node fits
              "p4,8000,16384,4,1000,T4,LS,Running,9,100,9\n"          // no T4 node has 4 GPUs
              "p5,200000,16384,1,1000,,LS,Running,9,100,9\n"          // more CPUs than any node
              "p6,1000,1024,1,1000,,LS,Pending,11,50,\n"              // never scheduled
              "p7,1000,1024,1,1000,,LS,Failed,12,30,30\n");           // no run time
  auto w = ReadAlibabaGpuTrace(t.Path());
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->jobs.size(), 4u);
  // Sorted by submit time; ids are row numbers.
  EXPECT_EQ(w->jobs[0].id, 2u);
  EXPECT_EQ(w->jobs[0].submit, 5);
  EXPECT_EQ(w->jobs[0].run, 44);
  EXPECT_EQ(w->jobs[0].shape.cpus_per_task, 1);
  EXPECT_EQ(w->jobs[0].shape.gpus_per_node, 1);
  EXPECT_EQ(w->jobs[1].id, 3u);
  EXPECT_EQ(w->jobs[1].shape.gpus_per_node, 0);
  EXPECT_EQ(w->jobs[2].id, 4u);
  EXPECT_EQ(w->jobs[2].constraint, "T4|V100M32");
  EXPECT_EQ(w->jobs[2].shape.gpus_per_node, 8);
  EXPECT_EQ(w->jobs[3].id, 1u);
  EXPECT_EQ(w->jobs[3].submit, 10);
  EXPECT_EQ(w->jobs[3].run, 90);
  EXPECT_EQ(w->jobs[3].estimate, 90);
  EXPECT_EQ(w->jobs[3].shape.cpus_per_task, 4);
  EXPECT_EQ(w->jobs[3].shape.mem_per_node_mb, 8192);

  EXPECT_TRUE(HasNote(*w, "4 of 8 tasks replayed"));
  EXPECT_TRUE(HasNote(*w, "1 task never scheduled"));
  EXPECT_TRUE(HasNote(*w, "1 task deleted no later than scheduled"));
  EXPECT_TRUE(HasNote(*w, "2 tasks that no node could ever host"));
  EXPECT_TRUE(HasNote(*w, "1 fractional-GPU task given one whole GPU"));
  EXPECT_TRUE(HasNote(*w, "CPU requests of 1 task rounded up"));
  EXPECT_EQ(w->name.substr(w->name.find('/') + 1), "openb_pod_list_default");

  const model::Node& t4 = w->cluster.nodes[1];
  EXPECT_EQ(t4.capacity, (model::Resources{104, 2, 524288}));
  EXPECT_EQ(t4.gpu_type, "t4");
  EXPECT_EQ(t4.topology->num_domains(), 2);
}

TEST(AlibabaGpuTrace, ErrorsNameFileAndLine) {
  ScratchTrace t("errors");
  t.Write("openb_node_list_gpu_node.csv", kNodes);
  t.Write("bad-number.csv", std::string(kPodHeader) +
                                "p0,4000,8192,1,1000,,LS,Running,10,110,20\n"
                                "p1,4000,lots,1,1000,,LS,Running,10,110,20\n");
  auto w = ReadAlibabaGpuTrace(t.Path("bad-number.csv"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("bad-number.csv:3: memory_mib 'lots'"),
            std::string::npos)
      << w.status();

  t.Write("short-row.csv", std::string(kPodHeader) + "\np0,4000,8192,1\n");
  w = ReadAlibabaGpuTrace(t.Path("short-row.csv"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("short-row.csv:3: 4 fields"), std::string::npos)
      << w.status();

  t.Write("bad-spec.csv", std::string(kPodHeader) + "p0,4000,8192,1,1000,T4|,LS,Running,1,2,1\n");
  w = ReadAlibabaGpuTrace(t.Path("bad-spec.csv"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("bad-spec.csv:2: gpu_spec 'T4|'"),
            std::string::npos)
      << w.status();

  t.Write("no-times.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,1000\n");
  w = ReadAlibabaGpuTrace(t.Path("no-times.csv"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("no-times.csv has no times"), std::string::npos)
      << w.status();

  w = ReadAlibabaGpuTrace(t.Path("absent.csv"));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kNotFound);

  t.Write("openb_node_list_gpu_node.csv", std::string(kNodes) + "n-x,8000,x,1,P100\n");
  w = ReadAlibabaGpuTrace(t.Path("bad-number.csv"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(
      std::string(w.status().message()).find("openb_node_list_gpu_node.csv:4: memory_mib 'x'"),
      std::string::npos)
      << w.status();

  t.Write("openb_node_list_gpu_node.csv", std::string(kNodes) + "n-t4,8000,1024,1,P100\n");
  w = ReadAlibabaGpuTrace(t.Path("bad-number.csv"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find(":4: node 'n-t4' is listed twice"),
            std::string::npos)
      << w.status();
}

TEST(AlibabaGpuTrace, NodeListMustBeNextToThePods) {
  ScratchTrace t("nonodes");
  t.Write("openb_pod_list_default.csv", kPodHeader);
  auto w = ReadAlibabaGpuTrace(t.Path());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(w.status().message()).find("openb_node_list_gpu_node.csv not found"),
            std::string::npos)
      << w.status();
}

}  // namespace
}  // namespace loom::sim
