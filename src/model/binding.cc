#include "model/binding.h"

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/strings.h"

namespace loom::model {
namespace {

using core::CpuSet;
using core::StrCat;

// A piece of CPU a task takes at a time: one hardware thread, or the allocated threads of
// one core.
struct Unit {
  std::vector<int32_t> cpus;
};

// The step's CPUs as units, by socket, in core order (a core's threads together).
std::vector<std::vector<Unit>> UnitsBySocket(const CpuTopology& topo, const CpuSet& alloc,
                                             bool whole_cores) {
  std::vector<std::vector<Unit>> by_socket(static_cast<size_t>(topo.num_sockets()));
  for (const CpuCore& core : topo.cores) {
    Unit core_unit;
    for (int32_t cpu : core.threads) {
      if (!alloc.test(cpu)) continue;
      if (whole_cores) {
        core_unit.cpus.push_back(cpu);
      } else {
        by_socket[core.socket].push_back(Unit{{cpu}});
      }
    }
    if (!core_unit.cpus.empty()) by_socket[core.socket].push_back(std::move(core_unit));
  }
  return by_socket;
}

// Deals units to `ntasks` tasks of `cpt` CPUs each by the distribution. nullopt when the
// units run out and `wrap` is false; with `wrap` the units are dealt again from the start.
std::optional<std::vector<CpuSet>> Deal(const std::vector<std::vector<Unit>>& by_socket,
                                        int32_t ntasks, int32_t cpt, SocketDistribution dist,
                                        bool wrap) {
  const int32_t sockets = static_cast<int32_t>(by_socket.size());
  std::vector<size_t> next(by_socket.size(), 0);  // first unit not yet dealt, per socket
  auto left_cpus = [&](int32_t s) {
    int32_t n = 0;
    for (size_t i = next[s]; i < by_socket[s].size(); ++i) {
      n += static_cast<int32_t>(by_socket[s][i].cpus.size());
    }
    return n;
  };
  auto any_left = [&]() {
    for (int32_t s = 0; s < sockets; ++s) {
      if (next[s] < by_socket[s].size()) return true;
    }
    return false;
  };
  // The first socket at or after `from` (round robin) with a unit left; -1 when none.
  auto socket_with_units = [&](int32_t from) {
    for (int32_t i = 0; i < sockets; ++i) {
      int32_t s = (from + i) % sockets;
      if (next[s] < by_socket[s].size()) return s;
    }
    return -1;
  };
  std::vector<CpuSet> tasks;
  int32_t cursor = 0;  // cyclic: the socket the next task starts on; fcyclic: the next unit's
  for (int32_t t = 0; t < ntasks; ++t) {
    CpuSet set;
    int32_t got = 0;
    int32_t start = -1;
    if (dist == SocketDistribution::kCyclic) {
      // One socket for the whole task when one has room, starting at the cursor.
      for (int32_t i = 0; i < sockets && start < 0; ++i) {
        int32_t s = (cursor + i) % sockets;
        if (left_cpus(s) >= cpt) start = s;
      }
      if (start < 0) start = std::max(0, socket_with_units(cursor));
    }
    int32_t s = dist == SocketDistribution::kBlock ? 0 : (start >= 0 ? start : cursor);
    while (got < cpt) {
      if (!any_left()) {
        if (!wrap) return std::nullopt;
        std::fill(next.begin(), next.end(), 0);
      }
      s = socket_with_units(s);
      const Unit& u = by_socket[s][next[s]++];
      for (int32_t cpu : u.cpus) set.set(cpu);
      got += static_cast<int32_t>(u.cpus.size());
      if (dist == SocketDistribution::kFcyclic) s = (s + 1) % sockets;
    }
    if (dist == SocketDistribution::kCyclic) cursor = (start + 1) % sockets;
    if (dist == SocketDistribution::kFcyclic) cursor = s;
    tasks.push_back(std::move(set));
  }
  return tasks;
}

// Widens a CPU set to every allocated CPU of the groups (cores, sockets or NUMA nodes) it
// touches; `group_of` maps a CPU id to its group.
template <typename GroupOf>
CpuSet Widen(const CpuSet& cpus, const CpuSet& alloc, GroupOf group_of) {
  std::set<int32_t> groups;
  for (int32_t cpu : cpus.ToVector()) groups.insert(group_of(cpu));
  CpuSet out;
  for (int32_t cpu : alloc.ToVector()) {
    if (groups.count(group_of(cpu))) out.set(cpu);
  }
  return out;
}

struct CpuIndex {
  std::vector<int32_t> socket_of;  // by CPU id, -1 when not on the node
  std::vector<int32_t> core_of;
  int32_t numa_of(const CpuTopology& t, int32_t cpu) const {
    return static_cast<size_t>(cpu) < t.cpu_numa.size() ? t.cpu_numa[cpu] : -1;
  }
};

CpuIndex IndexCpus(const CpuTopology& topo) {
  CpuIndex idx;
  for (size_t c = 0; c < topo.cores.size(); ++c) {
    for (int32_t cpu : topo.cores[c].threads) {
      if (static_cast<size_t>(cpu) >= idx.socket_of.size()) {
        idx.socket_of.resize(cpu + 1, -1);
        idx.core_of.resize(cpu + 1, -1);
      }
      idx.socket_of[cpu] = topo.cores[c].socket;
      idx.core_of[cpu] = static_cast<int32_t>(c);
    }
  }
  return idx;
}

// Slurm's auto binding: the entity whose count of wholly allocated units equals the tasks'
// CPUs; otherwise the configured default.
CpuBindType AutoBind(const CpuTopology& topo, const CpuSet& alloc, int64_t need,
                     CpuBindType fallback) {
  std::map<int32_t, std::pair<int32_t, int32_t>> socket_cpus;  // socket -> (allocated, all)
  int32_t whole_cores = 0;
  for (const CpuCore& core : topo.cores) {
    int32_t held = 0;
    for (int32_t cpu : core.threads) held += alloc.test(cpu) ? 1 : 0;
    if (held == static_cast<int32_t>(core.threads.size())) ++whole_cores;
    socket_cpus[core.socket].first += held;
    socket_cpus[core.socket].second += static_cast<int32_t>(core.threads.size());
  }
  int32_t whole_sockets = 0;
  for (const auto& [s, counts] : socket_cpus) {
    if (counts.first == counts.second) ++whole_sockets;
  }
  if (need == whole_sockets) return CpuBindType::kSockets;
  if (need == whole_cores) return CpuBindType::kCores;
  if (need == alloc.count()) return CpuBindType::kThreads;
  return fallback;
}

std::string_view CpuBindName(CpuBindType t) {
  switch (t) {
    case CpuBindType::kAuto:
      return "auto";
    case CpuBindType::kNone:
      return "none";
    case CpuBindType::kThreads:
      return "threads";
    case CpuBindType::kCores:
      return "cores";
    case CpuBindType::kSockets:
      return "sockets";
    case CpuBindType::kLdoms:
      return "ldoms";
    case CpuBindType::kRank:
      return "rank";
    case CpuBindType::kMapCpu:
      return "map_cpu";
    case CpuBindType::kMaskCpu:
      return "mask_cpu";
    case CpuBindType::kMapLdom:
      return "map_ldom";
    case CpuBindType::kMaskLdom:
      return "mask_ldom";
  }
  return "?";
}

// The CPUs of each task.
StatusOr<std::vector<CpuSet>> BindCpus(const BindNode& node, const StepOnNode& step,
                                       CpuBindType type) {
  const CpuTopology& topo = node.cpus;
  const int32_t ntasks = static_cast<int32_t>(step.task_ids.size());
  const int32_t cpt = step.cpus_per_task;
  const int32_t held = step.cpus.count();
  const CpuIndex idx = IndexCpus(topo);
  std::vector<CpuSet> out;
  auto too_few = [&]() {
    return absl::InvalidArgumentError(
        StrCat("--cpu-bind=", CpuBindName(type), ": ", ntasks, " tasks of ", cpt, " CPUs need ",
               int64_t{ntasks} * cpt, " CPUs but the step holds ", held, " on node ", node.name,
               "; ask for fewer tasks (-n) or CPUs per task (-c), or let tasks share CPUs "
               "with --overcommit"));
  };
  const bool listed = type == CpuBindType::kMapCpu || type == CpuBindType::kMaskCpu ||
                      type == CpuBindType::kMapLdom || type == CpuBindType::kMaskLdom;
  if (listed && step.cpu_bind.list.empty()) {
    return absl::InvalidArgumentError(
        StrCat("--cpu-bind=", CpuBindName(type), ": the list is empty; give one entry or more"));
  }
  auto list_entry = [&](int32_t local) -> const CpuSet& {
    return step.cpu_bind.list[static_cast<size_t>(local) % step.cpu_bind.list.size()];
  };
  switch (type) {
    case CpuBindType::kAuto:
    case CpuBindType::kNone:
      out.assign(ntasks, step.cpus);
      return out;
    case CpuBindType::kThreads:
    case CpuBindType::kCores:
    case CpuBindType::kSockets:
    case CpuBindType::kLdoms: {
      if (int64_t{ntasks} * cpt > held && !step.overcommit) return too_few();
      const bool threads = type == CpuBindType::kThreads;
      // Whole cores first; when there are too few for a core (or more) per task, the tasks
      // take threads and then widen to the cores those threads are on, sharing cores.
      std::optional<std::vector<CpuSet>> dealt =
          Deal(UnitsBySocket(topo, step.cpus, !threads), ntasks, cpt, step.distribution, false);
      if (!dealt && !threads) {
        dealt = Deal(UnitsBySocket(topo, step.cpus, false), ntasks, cpt, step.distribution,
                     step.overcommit);
        if (dealt) {
          for (CpuSet& s : *dealt) {
            s = Widen(s, step.cpus, [&](int32_t cpu) { return idx.core_of[cpu]; });
          }
        }
      }
      if (!dealt && threads) {
        dealt = Deal(UnitsBySocket(topo, step.cpus, false), ntasks, cpt, step.distribution,
                     step.overcommit);
      }
      if (!dealt) return too_few();
      if (type == CpuBindType::kSockets) {
        for (CpuSet& s : *dealt) {
          s = Widen(s, step.cpus, [&](int32_t cpu) { return idx.socket_of[cpu]; });
        }
      } else if (type == CpuBindType::kLdoms) {
        for (CpuSet& s : *dealt) {
          s = Widen(s, step.cpus, [&](int32_t cpu) { return idx.numa_of(topo, cpu); });
        }
      }
      return std::move(*dealt);
    }
    case CpuBindType::kRank: {
      if (int64_t{ntasks} * cpt > held && !step.overcommit) return too_few();
      const std::vector<int32_t> cpus = step.cpus.ToVector();
      for (int32_t t = 0; t < ntasks; ++t) {
        CpuSet s;
        for (int32_t k = 0; k < cpt; ++k) {
          s.set(cpus[static_cast<size_t>(int64_t{t} * cpt + k) % cpus.size()]);
        }
        out.push_back(std::move(s));
      }
      return out;
    }
    case CpuBindType::kMapCpu:
    case CpuBindType::kMaskCpu: {
      for (int32_t t = 0; t < ntasks; ++t) {
        const CpuSet& want = list_entry(t);
        CpuSet outside = want;
        outside.Subtract(step.cpus);
        if (want.empty() || !outside.empty()) {
          return absl::InvalidArgumentError(
              StrCat("--cpu-bind=", CpuBindName(type), ": local task ", t, " is given CPUs ",
                     want.empty() ? std::string("(none)") : want.ToList(),
                     " but the step holds only CPUs ", step.cpus.ToList(), " on node ", node.name,
                     "; name CPUs of the allocation, or ask for the whole node (--exclusive)"));
        }
        out.push_back(want);
      }
      return out;
    }
    case CpuBindType::kMapLdom:
    case CpuBindType::kMaskLdom: {
      const int32_t numa = topo.num_numa();
      for (int32_t t = 0; t < ntasks; ++t) {
        CpuSet s;
        for (int32_t ldom : list_entry(t).ToVector()) {
          CpuSet in_ldom;
          for (int32_t cpu : step.cpus.ToVector()) {
            if (idx.numa_of(topo, cpu) == ldom) in_ldom.set(cpu);
          }
          if (ldom >= numa || in_ldom.empty()) {
            return absl::InvalidArgumentError(StrCat(
                "--cpu-bind=", CpuBindName(type), ": local task ", t, " is given NUMA node ", ldom,
                " but the step holds no CPUs there on node ", node.name, " (it has ", numa,
                " NUMA nodes, 0-", numa - 1, "); name NUMA nodes the allocation covers"));
          }
          s |= in_ldom;
        }
        if (s.empty()) {
          return absl::InvalidArgumentError(
              StrCat("--cpu-bind=mask_ldom: local task ", t, " is given an empty mask"));
        }
        out.push_back(std::move(s));
      }
      return out;
    }
  }
  return out;
}

// Of `held`, the first `n` threads of each core (in the order the topology lists them).
CpuSet FirstThreads(const CpuTopology& topo, const CpuSet& held, int32_t n) {
  CpuSet out;
  for (const CpuCore& core : topo.cores) {
    int32_t taken = 0;
    for (int32_t cpu : core.threads) {
      if (taken == n) break;
      if (!held.test(cpu)) continue;
      out.set(cpu);
      ++taken;
    }
  }
  return out;
}

std::vector<int32_t> Bits(GpuMask m) {
  std::vector<int32_t> v;
  for (; m; m &= m - 1) v.push_back(std::countr_zero(m));
  return v;
}

// The step's GPUs whose NUMA node is one of the task's CPUs' NUMA nodes; all of the step's
// GPUs when none is.
GpuMask ClosestGpus(const BindNode& node, GpuMask step_gpus, const CpuSet& cpus) {
  std::set<int32_t> numa;
  for (int32_t cpu : cpus.ToVector()) {
    if (static_cast<size_t>(cpu) < node.cpus.cpu_numa.size()) numa.insert(node.cpus.cpu_numa[cpu]);
  }
  GpuMask close = 0;
  for (int32_t g : Bits(step_gpus)) {
    if (numa.count(node.gpus[g].numa)) close |= GpuMask{1} << g;
  }
  return close ? close : step_gpus;
}

// `count` GPUs of `step_gpus` for one task, one at a time: the least used (`uses`, updated)
// first, then those in `close`, then, for a task of several GPUs, those on a PCIe switch with
// GPUs already picked (for the first: on the switch with the most equally good GPUs), then the
// lowest index.
GpuMask PickOwnGpus(const BindNode& node, GpuMask step_gpus, GpuMask close, int32_t count,
                    std::vector<int32_t>& uses) {
  GpuMask picked = 0;
  auto on_switch = [&](GpuMask among, int32_t sw) {
    int32_t n = 0;
    for (int32_t g : Bits(among)) n += node.gpus[g].pcie_switch == sw ? 1 : 0;
    return n;
  };
  for (int32_t i = 0; i < count; ++i) {
    int32_t best = -1;
    std::tuple<int32_t, bool, int32_t> best_key;
    for (int32_t g : Bits(step_gpus & ~picked)) {
      const bool near = close >> g & 1;
      int32_t mates = 0;
      if (count > 1) {
        GpuMask equal = 0;  // unpicked GPUs as good as g on use and closeness
        for (int32_t h : Bits(step_gpus & ~picked)) {
          if (uses[h] == uses[g] && ((close >> h & 1) == near)) equal |= GpuMask{1} << h;
        }
        const int32_t sw = node.gpus[g].pcie_switch;
        mates = picked ? on_switch(picked, sw) : on_switch(equal, sw);
      }
      const auto key = std::make_tuple(uses[g], !near, -mates);
      if (best < 0 || key < best_key) {
        best = g;
        best_key = key;
      }
    }
    picked |= GpuMask{1} << best;
    ++uses[best];
  }
  return picked;
}

// A map_gpu/mask_gpu entry in node indices: relative positions among the step's GPUs when
// devices are confined, node indices otherwise. nullopt when it names a GPU the step lacks.
std::optional<GpuMask> ResolveGpuEntry(GpuMask entry, GpuMask step_gpus, bool relative) {
  if (entry == 0) return std::nullopt;
  if (!relative) {
    if ((entry & ~step_gpus) != 0) return std::nullopt;
    return entry;
  }
  const std::vector<int32_t> held = Bits(step_gpus);
  GpuMask out = 0;
  for (int32_t pos : Bits(entry)) {
    if (static_cast<size_t>(pos) >= held.size()) return std::nullopt;
    out |= GpuMask{1} << held[pos];
  }
  return out;
}

// `gpus` as a comma-separated list of node indices, or of positions among `step_gpus`.
std::string GpuList(GpuMask gpus, GpuMask step_gpus, bool relative) {
  std::vector<std::string> v;
  const std::vector<int32_t> held = Bits(step_gpus);
  for (int32_t g : Bits(gpus)) {
    if (!relative) {
      v.push_back(std::to_string(g));
      continue;
    }
    v.push_back(std::to_string(std::find(held.begin(), held.end(), g) - held.begin()));
  }
  return core::Join(v, ",");
}

// The GPUs of each task.
StatusOr<std::vector<GpuMask>> BindGpus(const BindNode& node, const StepOnNode& step,
                                        const std::vector<CpuSet>& task_cpus) {
  const int32_t ntasks = static_cast<int32_t>(task_cpus.size());
  const GpuBind& bind = step.gpu_bind;
  const int32_t held = GpuCount(step.gpus);
  std::vector<GpuMask> out(ntasks, step.gpus);
  if (step.gpus_per_task > held) {
    return absl::InvalidArgumentError(
        StrCat("--gpus-per-task=", step.gpus_per_task, ": the step holds ", held, " GPUs on node ",
               node.name, "; ask for at most ", held, " GPUs per task or for more GPUs per node"));
  }
  if ((bind.type == GpuBindType::kMapGpu || bind.type == GpuBindType::kMaskGpu) && held == 0) {
    return absl::InvalidArgumentError(
        StrCat("--gpu-bind: the step holds no GPUs on node ", node.name,
               "; ask for GPUs (--gpus-per-node, --gpus-per-task) or drop --gpu-bind"));
  }
  if ((bind.type == GpuBindType::kMapGpu || bind.type == GpuBindType::kMaskGpu) &&
      bind.list.empty()) {
    return absl::InvalidArgumentError("--gpu-bind: the list is empty; give one entry or more");
  }
  if (bind.type == GpuBindType::kSingle && bind.tasks_per_gpu < 1) {
    return absl::InvalidArgumentError("--gpu-bind=single: give at least 1 task per GPU");
  }
  if (bind.type == GpuBindType::kPerTask && (bind.gpus_per_task < 1 || bind.gpus_per_task > held)) {
    return absl::InvalidArgumentError(
        StrCat("--gpu-bind=per_task:", bind.gpus_per_task, ": the step holds ", held,
               " GPUs on node ", node.name, "; ask for at most ", held,
               " per task or for more GPUs per node"));
  }
  if (held == 0) return out;
  switch (bind.type) {
    case GpuBindType::kNone:
      return out;
    case GpuBindType::kDefault:
    case GpuBindType::kClosest: {
      if (step.gpus_per_task == 0) {
        if (bind.type == GpuBindType::kClosest) {
          for (int32_t t = 0; t < ntasks; ++t) {
            out[t] = ClosestGpus(node, step.gpus, task_cpus[t]);
          }
        }
        return out;
      }
      // Each task its own GPUs.
      std::vector<int32_t> uses(kMaxGpusPerNode, 0);
      for (int32_t t = 0; t < ntasks; ++t) {
        const GpuMask close = ClosestGpus(node, step.gpus, task_cpus[t]);
        out[t] = PickOwnGpus(node, step.gpus, close, step.gpus_per_task, uses);
      }
      return out;
    }
    case GpuBindType::kSingle: {
      // Tasks that share the same closest GPUs are dealt onto them in blocks of
      // tasks_per_gpu, in local-id order.
      std::map<GpuMask, int32_t> rank_in_group;
      for (int32_t t = 0; t < ntasks; ++t) {
        const GpuMask close = ClosestGpus(node, step.gpus, task_cpus[t]);
        const std::vector<int32_t> gpus = Bits(close);
        const int32_t rank = rank_in_group[close]++;
        out[t] = GpuMask{1} << gpus[static_cast<size_t>(rank / bind.tasks_per_gpu) % gpus.size()];
      }
      return out;
    }
    case GpuBindType::kPerTask: {
      // The step's GPUs dealt out in order, gpus_per_task to each task in local-id order
      // (starting over when they run out).
      const std::vector<int32_t> gpus = Bits(step.gpus);
      for (int32_t t = 0; t < ntasks; ++t) {
        out[t] = 0;
        for (int32_t i = 0; i < bind.gpus_per_task; ++i) {
          const size_t at = static_cast<size_t>(t * bind.gpus_per_task + i) % gpus.size();
          out[t] |= GpuMask{1} << gpus[at];
        }
      }
      return out;
    }
    case GpuBindType::kMapGpu:
    case GpuBindType::kMaskGpu: {
      for (int32_t t = 0; t < ntasks; ++t) {
        const GpuMask entry = bind.list[static_cast<size_t>(t) % bind.list.size()];
        std::optional<GpuMask> gpus = ResolveGpuEntry(entry, step.gpus, step.constrain_devices);
        if (!gpus) {
          const std::string_view name = bind.type == GpuBindType::kMapGpu ? "map_gpu" : "mask_gpu";
          return absl::InvalidArgumentError(StrCat(
              "--gpu-bind=", name, ": local task ", t, " is given GPU(s) ",
              GpuList(entry, 0, false), " but the step holds ", held, " GPUs on node ", node.name,
              step.constrain_devices
                  ? StrCat(", numbered 0-", held - 1,
                           " (devices are confined, so ids count the step's GPUs from 0)")
                  : StrCat(" with indices ", GpuList(step.gpus, 0, false)),
              "; name GPUs of the allocation"));
        }
        out[t] = *gpus;
      }
      return out;
    }
  }
  return out;
}

std::string HexGpuMask(GpuMask m) {
  CpuSet s;
  for (int32_t b : Bits(m)) s.set(b);
  return StrCat("0x", HexMask(s));
}

std::string Pad2(int64_t v) {
  std::string s = std::to_string(v);
  return s.size() < 2 ? std::string(2 - s.size(), ' ') + s : s;
}

}  // namespace

int32_t CpuTopology::num_sockets() const {
  int32_t n = 0;
  for (const CpuCore& c : cores) n = std::max(n, c.socket + 1);
  return n;
}

int32_t CpuTopology::num_numa() const {
  int32_t n = 0;
  for (int32_t numa : cpu_numa) n = std::max(n, numa + 1);
  return n;
}

int32_t CpuTopology::num_cpus() const {
  int32_t n = 0;
  for (const CpuCore& c : cores) n += static_cast<int32_t>(c.threads.size());
  return n;
}

CpuTopology CpuTopology::Uniform(int32_t sockets, int32_t cores_per_socket,
                                 int32_t threads_per_core, int32_t numa_per_socket) {
  CpuTopology t;
  const int32_t cores = sockets * cores_per_socket;
  const int32_t per_numa = std::max(1, cores_per_socket / std::max(1, numa_per_socket));
  t.cpu_numa.assign(static_cast<size_t>(cores) * threads_per_core, 0);
  for (int32_t s = 0; s < sockets; ++s) {
    for (int32_t c = 0; c < cores_per_socket; ++c) {
      const int32_t core = s * cores_per_socket + c;
      const int32_t numa = s * numa_per_socket + std::min(c / per_numa, numa_per_socket - 1);
      CpuCore cc{s, {}};
      for (int32_t th = 0; th < threads_per_core; ++th) {
        const int32_t cpu = th * cores + core;
        cc.threads.push_back(cpu);
        t.cpu_numa[cpu] = numa;
      }
      t.cores.push_back(std::move(cc));
    }
  }
  return t;
}

StatusOr<CpuTopology> CpuTopologyFor(const NodeTopology& topo, int32_t sockets,
                                     int32_t cores_per_socket, int32_t threads_per_core) {
  CpuTopology t = CpuTopology::Uniform(sockets, cores_per_socket, threads_per_core);
  std::vector<int32_t> numa(t.cpu_numa.size(), -1);
  for (size_t n = 0; n < topo.numa_cpus.size(); ++n) {
    for (int32_t cpu : topo.numa_cpus[n]) {
      if (cpu < 0 || static_cast<size_t>(cpu) >= numa.size() || numa[cpu] != -1) {
        return absl::InvalidArgumentError(StrCat(
            "node topology ", topo.name, ": NUMA node ", n, " lists CPU ", cpu, ", which is not ",
            "one of the ", numa.size(), " CPUs of ", sockets, " sockets x ", cores_per_socket,
            " cores x ", threads_per_core, " threads, or is listed twice"));
      }
      numa[cpu] = static_cast<int32_t>(n);
    }
  }
  for (size_t cpu = 0; cpu < numa.size(); ++cpu) {
    if (numa[cpu] < 0) {
      return absl::InvalidArgumentError(StrCat("node topology ", topo.name, ": CPU ", cpu,
                                               " is in no NUMA node; list it under one"));
    }
  }
  t.cpu_numa = std::move(numa);
  return t;
}

Status ValidateCpuTopology(const CpuTopology& topo) {
  CpuSet seen;
  int32_t last_socket = 0;
  for (size_t c = 0; c < topo.cores.size(); ++c) {
    const CpuCore& core = topo.cores[c];
    if (core.socket < last_socket || core.socket < 0) {
      return absl::InvalidArgumentError(StrCat("CPU layout: core ", c, " is on socket ",
                                               core.socket, " after a core of socket ", last_socket,
                                               "; list the cores socket by socket"));
    }
    last_socket = core.socket;
    if (core.threads.empty()) {
      return absl::InvalidArgumentError(StrCat("CPU layout: core ", c, " has no CPUs"));
    }
    for (int32_t cpu : core.threads) {
      if (cpu < 0 || seen.test(cpu)) {
        return absl::InvalidArgumentError(
            StrCat("CPU layout: CPU ", cpu, " of core ", c, " is negative or in two cores"));
      }
      seen.set(cpu);
      if (static_cast<size_t>(cpu) >= topo.cpu_numa.size() || topo.cpu_numa[cpu] < 0) {
        return absl::InvalidArgumentError(
            StrCat("CPU layout: CPU ", cpu, " has no NUMA node; give every CPU one"));
      }
    }
  }
  return absl::OkStatus();
}

StatusOr<StepBinding> BindTasks(const BindNode& node, const StepOnNode& step) {
  RETURN_IF_ERROR(ValidateCpuTopology(node.cpus));
  if (step.cpus_per_task < 1) {
    return absl::InvalidArgumentError(
        StrCat("--cpus-per-task=", step.cpus_per_task, ": give at least 1 CPU per task"));
  }
  CpuSet node_cpus;
  for (const CpuCore& c : node.cpus.cores) {
    for (int32_t cpu : c.threads) node_cpus.set(cpu);
  }
  CpuSet stray = step.cpus;
  stray.Subtract(node_cpus);
  if (step.cpus.empty() || !stray.empty()) {
    return absl::InvalidArgumentError(
        StrCat("step on node ", node.name, ": its CPUs (", step.cpus.ToList(),
               ") must be a non-empty subset of the node's (", node_cpus.ToList(), ")"));
  }
  for (int32_t g : Bits(step.gpus)) {
    if (static_cast<size_t>(g) >= node.gpus.size() || node.gpus[g].index != g) {
      return absl::InvalidArgumentError(StrCat("step on node ", node.name, ": it holds GPU ", g,
                                               " but the node lists ", node.gpus.size(),
                                               " GPUs (by index)"));
    }
  }
  const int32_t ntasks = static_cast<int32_t>(step.task_ids.size());
  StepBinding result;
  result.cpu_bind = step.cpu_bind.type;
  // --hint=nomultithread and --threads-per-core: the tasks see only the first threads of
  // each core the step holds, and auto binding binds each task to threads of its own cores.
  // When the step holds too few cores for that, the tasks use every thread after all (the
  // allocation counts threads: docs/design/binding.md); --cpu-bind=none binds nothing.
  StepOnNode used = step;
  if (step.threads_per_core > 0 && result.cpu_bind != CpuBindType::kNone) {
    CpuSet first = FirstThreads(node.cpus, step.cpus, step.threads_per_core);
    if (first.count() >= int64_t{ntasks} * step.cpus_per_task) {
      used.cpus = std::move(first);
      if (result.cpu_bind == CpuBindType::kAuto) result.cpu_bind = CpuBindType::kThreads;
    }
  }
  if (result.cpu_bind == CpuBindType::kAuto) {
    result.cpu_bind =
        AutoBind(node.cpus, step.cpus, int64_t{ntasks} * step.cpus_per_task, step.default_cpu_bind);
    if (result.cpu_bind == CpuBindType::kAuto) result.cpu_bind = CpuBindType::kNone;
  }
  ASSIGN_OR_RETURN(std::vector<CpuSet> cpus, BindCpus(node, used, result.cpu_bind));
  ASSIGN_OR_RETURN(std::vector<GpuMask> gpus, BindGpus(node, step, cpus));
  for (int32_t t = 0; t < ntasks; ++t) {
    TaskBinding tb;
    tb.task_id = step.task_ids[t];
    tb.local_id = t;
    tb.cpus = std::move(cpus[t]);
    tb.gpus = gpus[t];
    if (step.gpus != 0) {
      tb.cuda_visible_devices = GpuList(tb.gpus, step.gpus, step.constrain_devices);
    }
    result.tasks.push_back(std::move(tb));
  }
  return result;
}

Status ValidateHint(std::string_view hint) {
  static constexpr std::string_view kHints[] = {"nomultithread", "multithread", "compute_bound",
                                                "memory_bound"};
  for (std::string_view h : kHints) {
    if (hint == h) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      StrCat("Invalid --hint argument: ", hint,
             " (use nomultithread, multithread, compute_bound or memory_bound)"));
}

int32_t StepThreadsPerCore(std::string_view hint, std::optional<int32_t> threads_per_core) {
  if (threads_per_core && *threads_per_core > 0) return *threads_per_core;
  return hint == "nomultithread" || hint == "compute_bound" || hint == "memory_bound" ? 1 : 0;
}

std::string HexMask(const CpuSet& cpus) {
  const std::vector<int32_t> v = cpus.ToVector();
  if (v.empty()) return "0";
  std::string out;
  for (int32_t nibble = v.back() / 4; nibble >= 0; --nibble) {
    int d = 0;
    for (int b = 0; b < 4; ++b) d |= cpus.test(nibble * 4 + b) ? 1 << b : 0;
    out.push_back("0123456789abcdef"[d]);
  }
  return out;
}

std::string CpuBindVerboseLine(const StepBinding& binding, const TaskBinding& task,
                               std::string_view node, int64_t pid) {
  std::string_view units;
  std::string_view type = "MASK";
  switch (binding.cpu_bind) {
    case CpuBindType::kThreads:
      units = "-threads";
      break;
    case CpuBindType::kCores:
      units = "-cores";
      break;
    case CpuBindType::kSockets:
      units = "-sockets";
      break;
    case CpuBindType::kLdoms:
      units = "-ldoms";
      break;
    case CpuBindType::kRank:
      type = "RANK";
      break;
    case CpuBindType::kMapCpu:
      type = "MAP ";
      break;
    case CpuBindType::kMapLdom:
      type = "LDMAP ";
      break;
    case CpuBindType::kMaskLdom:
      type = "LDMASK";
      break;
    case CpuBindType::kAuto:
    case CpuBindType::kNone:
      type = "NONE";
      break;
    case CpuBindType::kMaskCpu:
      break;
  }
  const bool none =
      binding.cpu_bind == CpuBindType::kNone || binding.cpu_bind == CpuBindType::kAuto;
  return StrCat("cpu-bind", units, "=", type, " - ", node, ", task ", Pad2(task.task_id), " ",
                Pad2(task.local_id), " [", pid, "]: mask 0x", HexMask(task.cpus),
                none ? "" : " set");
}

std::string GpuBindVerboseLine(const StepOnNode& step, const TaskBinding& task) {
  return StrCat("gpu-bind: usable_gres=", HexGpuMask(task.gpus),
                "; bit_alloc=", HexGpuMask(step.gpus), "; local_inx=", GpuCount(step.gpus),
                "; global_list=", GpuList(task.gpus, step.gpus, false),
                "; local_list=", task.cuda_visible_devices);
}

}  // namespace loom::model
