#include "sched/select/devices.h"

#include <gtest/gtest.h>

namespace loom::sched {
namespace {

using model::CatalogTopology;
using model::GpuMask;

GpuMask Mask(std::initializer_list<int> ids) {
  GpuMask m = 0;
  for (int i : ids) m |= GpuMask{1} << i;
  return m;
}

GpuMask Topo(const char* machine, GpuMask free, int count) {
  const model::NodeTopology* t = CatalogTopology(machine);
  EXPECT_NE(t, nullptr) << machine;
  return PickGpus(*t, free, count, Placement::kTopology).value_or(~GpuMask{0});
}

TEST(PickGpusTest, EveryCatalogMachineGivesWholeRequestsFromOneDomain) {
  for (std::string_view name : model::CatalogNames()) {
    const model::NodeTopology& t = *CatalogTopology(name);
    for (int k = 1; k <= t.num_gpus(); ++k) {
      std::optional<GpuMask> pick = PickGpus(t, t.AllGpus(), k, Placement::kTopology);
      ASSERT_TRUE(pick) << name << " k=" << k;
      EXPECT_EQ(model::GpuCount(*pick), k);
      // The fewest domains that can hold k GPUs on an empty machine.
      int largest = 0;
      for (int d = 0; d < t.num_domains(); ++d) {
        largest = std::max(largest, model::GpuCount(t.DomainMask(d)));
      }
      EXPECT_EQ(ScoreGpus(t, t.AllGpus(), *pick).domains, (k + largest - 1) / largest)
          << name << " k=" << k;
    }
  }
}

TEST(PickGpusTest, DgxPairsShareAPcieSwitchAndQuadsShareANumaNode) {
  EXPECT_EQ(Topo("dgx-a100", Mask({0, 1, 2, 3, 4, 5, 6, 7}), 2), Mask({0, 1}));
  EXPECT_EQ(Topo("dgx-a100", Mask({0, 1, 2, 3, 4, 5, 6, 7}), 4), Mask({0, 1, 2, 3}));
  EXPECT_EQ(Topo("dgx-h100", Mask({0, 1, 2, 3, 4, 5, 6, 7}), 4), Mask({0, 1, 2, 3}));
}

TEST(PickGpusTest, BestFitCompletesAPartlyUsedSwitch) {
  // GPU 0 is busy: a one-GPU job takes its PCIe neighbour, keeping pairs whole.
  EXPECT_EQ(Topo("dgx-a100", Mask({1, 2, 3, 4, 5, 6, 7}), 1), Mask({1}));
  // GPUs 0 and 4 busy: two GPUs still come as one whole pair.
  EXPECT_EQ(Topo("dgx-a100", Mask({1, 2, 3, 5, 6, 7}), 2), Mask({2, 3}));
}

TEST(PickGpusTest, ThreeGpusOnAPairedNvlinkBoxUseOnePairAndAPartner) {
  // No NVLink domain holds three: two domains, both behind one PCIe switch and socket.
  const model::NodeTopology& t = *CatalogTopology("pcie-8gpu-nvlink-pairs");
  GpuMask pick = *PickGpus(t, t.AllGpus(), 3, Placement::kTopology);
  GpuPickScore s = ScoreGpus(t, t.AllGpus(), pick);
  EXPECT_EQ(s.domains, 2);
  EXPECT_EQ(s.switches, 1);
  EXPECT_EQ(s.numa, 1);
  EXPECT_EQ(pick, Mask({0, 1, 2}));
  // With GPU 3 busy, the lone GPU 2 completes the set, and pairs 4-5 and 6-7 stay whole.
  EXPECT_EQ(Topo("pcie-8gpu-nvlink-pairs", Mask({0, 1, 2, 4, 5, 6, 7}), 3), Mask({0, 1, 2}));
  // Two GPUs: a whole bridged pair, even when a lower-numbered unpaired GPU is free.
  EXPECT_EQ(Topo("pcie-8gpu-nvlink-pairs", Mask({0, 2, 3, 5}), 2), Mask({2, 3}));
}

TEST(PickGpusTest, ScatteredFreeGpus) {
  // Eight requested while four are free: no.
  const model::NodeTopology& t = *CatalogTopology("pcie-8gpu-nvlink-pairs");
  EXPECT_FALSE(PickGpus(t, Mask({1, 3, 5, 7}), 8, Placement::kTopology));
  // Four from scattered ones: all of them, one per pair.
  EXPECT_EQ(Topo("pcie-8gpu-nvlink-pairs", Mask({1, 3, 5, 7}), 4), Mask({1, 3, 5, 7}));
  // Two out of 1,3,4,5: the intact pair 4-5 (one domain) beats the two singles.
  EXPECT_EQ(Topo("pcie-8gpu-nvlink-pairs", Mask({1, 3, 4, 5}), 2), Mask({4, 5}));
}

TEST(PickGpusTest, FourGpuAndGb200Trays) {
  EXPECT_EQ(Topo("4gpu", Mask({0, 1, 2, 3}), 2), Mask({0, 1}));
  EXPECT_EQ(Topo("4gpu", Mask({0, 2, 3}), 2), Mask({2, 3}));
  EXPECT_EQ(Topo("gb200-nvl72-tray", Mask({0, 1, 2, 3}), 2), Mask({0, 1}));
  EXPECT_EQ(Topo("gb200-nvl72-tray", Mask({1, 2, 3}), 2), Mask({2, 3}));
}

TEST(PickGpusTest, FirstFitTakesTheLowestIndices) {
  const model::NodeTopology& t = *CatalogTopology("pcie-8gpu-nvlink-pairs");
  EXPECT_EQ(*PickGpus(t, Mask({1, 3, 4, 5}), 2, Placement::kFirstFit), Mask({1, 3}));
}

TEST(PickGpusTest, LargeMachinesUseTheGreedySearch) {
  // 32 GPUs in four NVLink domains of 8: 12 GPUs come from two domains, 8 from one.
  model::NodeTopology t = model::PlainTopology(32, "x", 64, 4);
  for (model::Gpu& g : t.gpus) {
    g.domain = g.index / 8;
    g.pcie_switch = g.index / 4;
    g.numa = g.index / 8;
  }
  GpuMask all = t.AllGpus();
  EXPECT_EQ(ScoreGpus(t, all, *PickGpus(t, all, 8, Placement::kTopology)).domains, 1);
  EXPECT_EQ(ScoreGpus(t, all, *PickGpus(t, all, 12, Placement::kTopology)).domains, 2);
  // Best fit: with domain 1 partly used, a 3-GPU job goes there.
  GpuMask free = all & ~Mask({8, 9, 10, 11, 12});
  GpuMask pick = *PickGpus(t, free, 3, Placement::kTopology);
  EXPECT_EQ(pick, Mask({13, 14, 15}));
}

TEST(PickCpusTest, CpusComeFromTheGpusNumaNode) {
  const model::NodeTopology& t = *CatalogTopology("dgx-a100");
  core::CpuSet free;
  for (int c = 0; c < 256; ++c) free.set(c);
  core::CpuSet cpus = *PickCpus(t, free, Mask({4, 5}), 16, Placement::kTopology);
  EXPECT_EQ(cpus.ToList(), "64-79");
  // When the GPUs' node runs short, the rest come from the other node.
  core::CpuSet few;
  for (int c = 60; c < 70; ++c) few.set(c);
  EXPECT_EQ(PickCpus(t, few, Mask({0}), 6, Placement::kTopology)->ToList(), "60-65");
  EXPECT_FALSE(PickCpus(t, few, Mask({0}), 11, Placement::kTopology));
  // First fit ignores the GPUs.
  EXPECT_EQ(PickCpus(t, free, Mask({4, 5}), 4, Placement::kFirstFit)->ToList(), "0-3");
  // Without GPUs: the NUMA node that holds them most tightly.
  core::CpuSet lopsided;
  for (int c = 0; c < 8; ++c) lopsided.set(c);
  for (int c = 64; c < 128; ++c) lopsided.set(c);
  EXPECT_EQ(PickCpus(t, lopsided, 0, 4, Placement::kTopology)->ToList(), "0-3");
}

}  // namespace
}  // namespace loom::sched
