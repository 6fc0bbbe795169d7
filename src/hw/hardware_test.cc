#include "hw/hardware.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace loom::hw {
namespace {

using ::testing::HasSubstr;

TEST(DiscoverCpusTest, SeesThisMachine) {
  auto l = DiscoverCpus();
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_GE(l->cpus, 1);
  EXPECT_EQ(l->cpus, l->sockets * l->cores_per_socket * l->threads_per_core);
  EXPECT_GT(l->memory_mb, 0);
  ASSERT_GE(l->numa_cpus.size(), 1u);
  size_t listed = 0;
  for (const auto& cpus : l->numa_cpus) listed += cpus.size();
  EXPECT_EQ(static_cast<int32_t>(listed), l->cpus);
  // Every CPU in exactly one core; a valid layout for task binding.
  size_t threads = 0;
  for (const model::CpuCore& c : l->cores) threads += c.threads.size();
  EXPECT_EQ(static_cast<int32_t>(threads), l->cpus);
  auto topo = CpuTopologyOf(*l);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->num_cpus(), l->cpus);
  EXPECT_EQ(topo->num_sockets(), l->sockets);
}

TEST(CpuTopologyOfTest, NumaNodesFromTheLayoutAndDisagreementsRefused) {
  CpuLayout l;
  l.cores = {{0, {0, 2}}, {1, {1, 3}}};
  l.numa_cpus = {{0, 2}, {1, 3}};
  auto t = CpuTopologyOf(l);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->cpu_numa, (std::vector<int32_t>{0, 1, 0, 1}));
  l.numa_cpus = {{0, 2}};  // CPUs 1 and 3 without a NUMA node
  EXPECT_FALSE(CpuTopologyOf(l).ok());
}

CpuLayout TwoSockets() {
  CpuLayout l;
  l.sockets = 2;
  l.cores_per_socket = 4;
  l.threads_per_core = 1;
  l.cpus = 8;
  l.numa_cpus = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  l.memory_mb = 1000;
  return l;
}

TEST(DiscoverGpusTest, NvSwitchMachineIsOneDomainWithPcieSwitchPairs) {
  setenv("LOOM_FAKE_NVML", "nvswitch8", 1);
  auto gpus = DiscoverGpus(LOOM_FAKE_NVML);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[3].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[3].uuid, "GPU-00000000-0000-0000-0000-000000000003");
  EXPECT_EQ((*gpus)[3].pci_bus_id, "0000:4b:00.0");  // NVML's 8-digit domain, kernel's form
  EXPECT_EQ((*gpus)[3].memory_mb, 80 * 1024);
  EXPECT_EQ((*gpus)[3].minor, 3);
  model::NodeTopology t = TopologyFromHardware(*gpus, TwoSockets(), "h100");
  EXPECT_EQ(t.num_gpus(), 8);
  EXPECT_EQ(t.num_domains(), 1);
  EXPECT_EQ(t.num_pcie_switches(), 4);
  EXPECT_EQ(t.SwitchMask(t.gpus[6].pcie_switch), 0b11000000u);
  EXPECT_EQ(t.gpus[5].file, "/dev/nvidia5");
  EXPECT_EQ(t.gpus[5].type, "h100");
}

TEST(DiscoverGpusTest, NvLinkPairsAreTwoDomains) {
  setenv("LOOM_FAKE_NVML", "pairs4", 1);
  auto gpus = DiscoverGpus(LOOM_FAKE_NVML);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  model::NodeTopology t = TopologyFromHardware(*gpus, TwoSockets(), "a100");
  EXPECT_EQ(t.num_domains(), 2);
  EXPECT_EQ(t.DomainMask(t.gpus[0].domain), 0b0011u);
  EXPECT_EQ(t.DomainMask(t.gpus[2].domain), 0b1100u);
  EXPECT_EQ(t.num_pcie_switches(), 4);
}

TEST(DiscoverGpusTest, ErrorsSayWhat) {
  auto none = DiscoverGpus("libnvidia-ml-that-is-not-here.so.1");
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
  setenv("LOOM_FAKE_NVML", "broken", 1);
  auto broken = DiscoverGpus(LOOM_FAKE_NVML);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(std::string(broken.status().message()),
              HasSubstr("nvmlInit_v2 failed: RM has detected an NVML/RM version mismatch."));
}

TEST(NumaOfPciDeviceTest, ReadsSysfs) {
  const std::string sys = testing::TempDir() + "/fake_sys";
  std::filesystem::create_directories(sys + "/bus/pci/devices/0000:4b:00.0");
  std::ofstream(sys + "/bus/pci/devices/0000:4b:00.0/numa_node") << "1\n";
  EXPECT_EQ(NumaOfPciDevice("0000:4b:00.0", sys), 1);
  EXPECT_EQ(NumaOfPciDevice("0000:ff:00.0", sys), -1);
}

TEST(NodeConfigLineTest, AsSlurmdDashC) {
  setenv("LOOM_FAKE_NVML", "nvswitch8", 1);
  auto gpus = DiscoverGpus(LOOM_FAKE_NVML);
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ(NodeConfigLine("n1", TwoSockets(), *gpus, 3 * 86400 + 4 * 3600 + 5 * 60 + 6),
            "NodeName=n1 CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=1 "
            "RealMemory=1000 Gres=gpu:nvidia_h100_80gb_hbm3:8\nUpTime=3-04:05:06\n");
  EXPECT_EQ(NodeConfigLine("c1", TwoSockets(), {}, 59),
            "NodeName=c1 CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=1 "
            "RealMemory=1000\nUpTime=0-00:00:59\n");
}

}  // namespace
}  // namespace loom::hw
