#include "sched/select/devices.h"

#include <algorithm>
#include <bit>
#include <utility>
#include <vector>

namespace loom::sched {
namespace {

using model::GpuMask;
using model::NodeTopology;

// Up to this many free GPUs, every subset of the requested size is scored (at most
// C(14,7) = 3,432); beyond it the greedy search runs.
constexpr int kExhaustiveFreeGpus = 14;

int32_t GroupsTouched(const NodeTopology& t, GpuMask pick, int32_t model::Gpu::*field) {
  uint64_t seen = 0;  // group ids are small (< 64) in any real machine
  int32_t extra = 0;
  for (GpuMask m = pick; m; m &= m - 1) {
    int32_t g = t.gpus[std::countr_zero(m)].*field;
    if (g >= 0 && g < 64) {
      seen |= uint64_t{1} << g;
    } else {
      ++extra;
    }
  }
  return std::popcount(seen) + extra;
}

// Free GPUs left, after `pick`, in the groups `pick` touches.
int32_t LeftInGroups(const NodeTopology& t, GpuMask free, GpuMask pick,
                     int32_t model::Gpu::*field) {
  GpuMask groups = 0;
  for (GpuMask m = pick; m; m &= m - 1) {
    int32_t g = t.gpus[std::countr_zero(m)].*field;
    for (const model::Gpu& gpu : t.gpus) {
      if (gpu.*field == g) groups |= GpuMask{1} << gpu.index;
    }
  }
  return std::popcount(groups & free & ~pick);
}

GpuMask LowestBits(GpuMask m, int32_t count) {
  GpuMask out = 0;
  for (int32_t i = 0; i < count && m; ++i) {
    out |= m & -m;
    m &= m - 1;
  }
  return out;
}

// Groups of `candidates` by `field`, as (group id, its candidate GPUs) in group-id order.
std::vector<std::pair<int32_t, GpuMask>> GroupBy(const NodeTopology& t, GpuMask candidates,
                                                 int32_t model::Gpu::*field) {
  std::vector<std::pair<int32_t, GpuMask>> groups;
  for (GpuMask m = candidates; m; m &= m - 1) {
    int32_t i = std::countr_zero(m);
    int32_t g = t.gpus[i].*field;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return p.first == g; });
    if (it == groups.end()) {
      groups.emplace_back(g, GpuMask{1} << i);
    } else {
      it->second |= GpuMask{1} << i;
    }
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

// Greedy choice for machines with many free GPUs: within the group level `level` (domain,
// then PCIe switch, then NUMA node), the tightest group that holds the rest of the
// request; when none does, the largest group whole.
GpuMask Greedy(const NodeTopology& t, GpuMask candidates, int32_t count, int level) {
  static constexpr int32_t model::Gpu::*kLevels[] = {&model::Gpu::domain,
                                                     &model::Gpu::pcie_switch, &model::Gpu::numa};
  if (level >= 3) return LowestBits(candidates, count);
  GpuMask chosen = 0;
  while (count > 0) {
    auto groups = GroupBy(t, candidates & ~chosen, kLevels[level]);
    const std::pair<int32_t, GpuMask>* tight = nullptr;
    const std::pair<int32_t, GpuMask>* largest = nullptr;
    for (const auto& g : groups) {
      int32_t n = std::popcount(g.second);
      if (n >= count && (!tight || n < std::popcount(tight->second))) tight = &g;
      if (!largest || n > std::popcount(largest->second)) largest = &g;
    }
    if (tight) return chosen | Greedy(t, tight->second, count, level + 1);
    chosen |= largest->second;
    count -= std::popcount(largest->second);
  }
  return chosen;
}

}  // namespace

GpuPickScore ScoreGpus(const NodeTopology& t, GpuMask free, GpuMask pick) {
  return GpuPickScore{GroupsTouched(t, pick, &model::Gpu::domain),
                      GroupsTouched(t, pick, &model::Gpu::pcie_switch),
                      GroupsTouched(t, pick, &model::Gpu::numa),
                      LeftInGroups(t, free, pick, &model::Gpu::domain),
                      LeftInGroups(t, free, pick, &model::Gpu::pcie_switch)};
}

std::optional<GpuMask> PickGpus(const NodeTopology& t, GpuMask free, int32_t count,
                                Placement how) {
  free &= t.AllGpus();
  if (count < 0 || std::popcount(free) < count) return std::nullopt;
  if (count == 0) return GpuMask{0};
  if (how == Placement::kFirstFit || std::popcount(free) == count) return LowestBits(free, count);
  if (std::popcount(free) > kExhaustiveFreeGpus) return Greedy(t, free, count, 0);

  // Every subset of `count` free GPUs, as `count`-bit patterns over the free positions.
  int positions[64];
  int n = 0;
  for (GpuMask m = free; m; m &= m - 1) positions[n++] = std::countr_zero(m);
  GpuMask best = 0;
  GpuPickScore best_score;
  for (uint32_t v = (1u << count) - 1; v < (1u << n);) {
    GpuMask pick = 0;
    for (uint32_t b = v; b; b &= b - 1) pick |= GpuMask{1} << positions[std::countr_zero(b)];
    GpuPickScore s = ScoreGpus(t, free, pick);
    if (best == 0 || s < best_score || (s == best_score && pick < best)) {
      best = pick;
      best_score = s;
    }
    // Next pattern with the same number of bits (Gosper's hack).
    uint32_t c = v & -v;
    uint32_t r = v + c;
    v = (((r ^ v) >> 2) / c) | r;
  }
  return best;
}

std::optional<core::CpuSet> PickCpus(const NodeTopology& t, const core::CpuSet& free,
                                     GpuMask gpus, int32_t count, Placement how) {
  if (count < 0 || free.count() < count) return std::nullopt;
  core::CpuSet out;
  int32_t left = count;
  auto take_from = [&](const std::vector<int32_t>& cpus) {
    for (int32_t c : cpus) {
      if (left == 0) return;
      if (free.test(c) && !out.test(c)) {
        out.set(c);
        --left;
      }
    }
  };
  if (how == Placement::kTopology && !t.numa_cpus.empty()) {
    const int32_t numa = t.num_numa();
    std::vector<int32_t> order;  // NUMA nodes, preferred first
    if (gpus != 0) {
      for (int32_t n = 0; n < numa; ++n) {
        if (t.NumaMask(n) & gpus) order.push_back(n);
      }
    } else {
      // No GPUs: the NUMA node with the fewest free CPUs that still holds them all.
      int32_t best = -1, best_free = 0;
      for (int32_t n = 0; n < numa; ++n) {
        int32_t f = 0;
        for (int32_t c : t.numa_cpus[n]) f += free.test(c);
        if (f >= count && (best < 0 || f < best_free)) {
          best = n;
          best_free = f;
        }
      }
      if (best >= 0) order.push_back(best);
    }
    for (int32_t n = 0; n < numa; ++n) {
      if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
    }
    for (int32_t n : order) take_from(t.numa_cpus[n]);
  }
  if (left > 0) take_from(free.ToVector());
  if (left > 0) return std::nullopt;
  return out;
}

int32_t DomainsSpanned(const Cluster& cluster, const Allocation& alloc) {
  std::vector<std::pair<int64_t, int32_t>> keys;  // (node, or -1 - block; domain)
  for (const NodeAlloc& a : alloc) {
    if (a.amount.gpus <= 0) continue;
    const model::Node& node = cluster.nodes[a.node];
    const NodeTopology* t = node.topology.get();
    const auto& topo = cluster.topology;
    if (t && t->nvlink_spans_nodes && topo.kind == model::ClusterTopology::Kind::kBlock &&
        a.node < static_cast<int32_t>(topo.leaf_of.size()) && topo.leaf_of[a.node] >= 0) {
      keys.emplace_back(-1 - int64_t{topo.leaf_of[a.node]}, 0);
      continue;
    }
    if (!t || a.gpu_ids == 0) {
      keys.emplace_back(a.node, 0);
      continue;
    }
    for (GpuMask m = a.gpu_ids; m; m &= m - 1) {
      keys.emplace_back(a.node, t->gpus[std::countr_zero(m)].domain);
    }
  }
  std::sort(keys.begin(), keys.end());
  return static_cast<int32_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
}

int32_t LeavesSpanned(const Cluster& cluster, const Allocation& alloc) {
  const auto& topo = cluster.topology;
  std::vector<int64_t> keys;
  for (const NodeAlloc& a : alloc) {
    int32_t leaf = a.node < static_cast<int32_t>(topo.leaf_of.size()) ? topo.leaf_of[a.node] : -1;
    keys.push_back(topo.empty() ? 0 : leaf >= 0 ? leaf : -1 - int64_t{a.node});
  }
  std::sort(keys.begin(), keys.end());
  return static_cast<int32_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
}

}  // namespace loom::sched
