#include "sched/select/selector.h"

#include <algorithm>
#include <vector>

namespace loom::sched {

int32_t TasksThatFit(const model::JobShape& s, const Resources& free, const Resources& cap) {
  const int32_t cpt = std::max(1, s.cpus_per_task);
  if (s.exclusive) {
    if (!(free == cap)) return 0;
    if (s.gpus_per_node + s.gpus_per_task > cap.gpus || s.mem_per_node_mb > cap.mem_mb) return 0;
    int32_t t = s.ntasks_per_node > 0 ? s.ntasks_per_node : std::max(1, cap.cpus / cpt);
    return cap.cpus >= cpt * (s.ntasks_per_node > 0 ? s.ntasks_per_node : 1) ? t : 0;
  }
  if (free.gpus < s.gpus_per_node || free.mem_mb < s.mem_per_node_mb) return 0;
  int64_t t = free.cpus / cpt;
  if (s.gpus_per_task > 0) t = std::min<int64_t>(t, (free.gpus - s.gpus_per_node) / s.gpus_per_task);
  if (s.mem_per_cpu_mb > 0) t = std::min<int64_t>(t, free.mem_mb / (s.mem_per_cpu_mb * cpt));
  if (s.ntasks_per_node > 0) t = t >= s.ntasks_per_node ? s.ntasks_per_node : 0;
  t = std::min<int64_t>(t, s.ntasks);
  if (s.cpus_per_gpu > 0 || s.mem_per_gpu_mb > 0) {
    // CPUs and memory that follow the GPUs: fewer tasks may fit than the counts above say.
    while (t > 0 && !free.Covers(AmountFor(s, static_cast<int32_t>(t), cap))) {
      t = s.ntasks_per_node > 0 ? 0 : t - 1;
    }
  }
  return static_cast<int32_t>(t);
}

Resources AmountFor(const model::JobShape& s, int32_t tasks, const Resources& cap) {
  if (s.exclusive) {
    // Every CPU and GPU of the node. Memory as the job asked for it, per node or per CPU
    // (of all the node's CPUs), and the whole node's when it did not say, as Slurm
    // allocates it.
    Resources r = cap;
    if (s.mem_per_node_mb > 0) {
      r.mem_mb = std::min(cap.mem_mb, s.mem_per_node_mb);
    } else if (s.mem_per_cpu_mb > 0) {
      r.mem_mb = std::min<int64_t>(cap.mem_mb, s.mem_per_cpu_mb * cap.cpus);
    }
    return r;
  }
  Resources r;
  r.cpus = tasks * std::max(1, s.cpus_per_task);
  r.mem_mb = s.mem_per_node_mb > 0 ? s.mem_per_node_mb : s.mem_per_cpu_mb * r.cpus;
  r.gpus = s.gpus_per_node + tasks * s.gpus_per_task;
  if (s.cpus_per_gpu > 0) r.cpus = std::max(r.cpus, r.gpus * s.cpus_per_gpu);
  if (s.mem_per_gpu_mb > 0 && s.mem_per_node_mb == 0 && s.mem_per_cpu_mb == 0) {
    r.mem_mb = s.mem_per_gpu_mb * r.gpus;
  }
  return r;
}

Resources MinNodeNeed(const model::JobShape& s, const Resources& cap) {
  if (s.exclusive) return cap;
  int32_t tasks = s.ntasks_per_node > 0 ? s.ntasks_per_node : 1;
  if (SingleNode(s)) tasks = s.ntasks;
  return AmountFor(s, tasks, cap);
}

namespace {

// Greedy pass over `order`: each node takes as many tasks as fit, keeping one task for
// every node still needed to reach min_nodes. With an exact node count the tasks are then
// spread over the chosen nodes.
bool Greedy(const model::JobShape& s, std::span<const Candidate> cands,
            std::span<const int32_t> fit, std::span<const int32_t> order, Allocation* out) {
  out->clear();
  int64_t remaining = s.ntasks;
  int32_t used = 0;
  std::vector<int32_t> chosen;  // indexes into cands, in out's order
  for (int32_t idx : order) {
    if (remaining <= 0 && used >= s.min_nodes) break;
    if (used >= s.max_nodes) break;
    int32_t t = fit[idx];
    if (t <= 0) continue;
    int64_t still_needed_nodes = std::max<int64_t>(0, s.min_nodes - used - 1);
    int64_t take = std::min<int64_t>(t, std::max<int64_t>(1, remaining - still_needed_nodes));
    if (s.ntasks_per_node > 0) take = s.ntasks_per_node;
    remaining -= take;
    ++used;
    out->push_back(NodeAlloc{cands[idx].node,
                             AmountFor(s, static_cast<int32_t>(take), cands[idx].capacity)});
    chosen.push_back(idx);
  }
  if (remaining > 0 || used < s.min_nodes) return false;
  if (s.ntasks_per_node == 0 && !s.exclusive && s.min_nodes == s.max_nodes && used > 1) {
    // A node count given (-N) spreads the tasks as Slurm does: dealt round robin over the
    // chosen nodes, each up to what fits on it (-N2 -n4: 2 and 2, not 3 and 1).
    std::vector<int32_t> tasks(chosen.size(), 0);
    for (int64_t left = s.ntasks; left > 0;) {
      bool dealt = false;
      for (size_t i = 0; i < chosen.size() && left > 0; ++i) {
        if (tasks[i] >= fit[chosen[i]]) continue;
        ++tasks[i];
        --left;
        dealt = true;
      }
      if (!dealt) break;
    }
    for (size_t i = 0; i < chosen.size(); ++i) {
      (*out)[i].amount = AmountFor(s, std::max(1, tasks[i]), cands[chosen[i]].capacity);
    }
  }
  return true;
}

}  // namespace

bool SelectNodes(const model::JobShape& s, std::span<const Candidate> cands, Allocation* out) {
  out->clear();
  if (SingleNode(s)) {
    for (const Candidate& c : cands) {
      if (TasksThatFit(s, c.free, c.capacity) >= s.ntasks) {
        out->push_back(NodeAlloc{c.node, AmountFor(s, s.ntasks, c.capacity)});
        return true;
      }
    }
    return false;
  }
  std::vector<int32_t> fit(cands.size());
  std::vector<int32_t> order(cands.size());
  int64_t total = 0, usable = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    fit[i] = TasksThatFit(s, cands[i].free, cands[i].capacity);
    order[i] = static_cast<int32_t>(i);
    total += fit[i];
    usable += fit[i] > 0;
  }
  if (usable < s.min_nodes || (s.ntasks_per_node == 0 && total < s.ntasks)) return false;
  if (Greedy(s, cands, fit, order, out)) return true;
  // The preferred nodes were too small to stay within max_nodes: take the roomiest first.
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return fit[a] > fit[b]; });
  return Greedy(s, cands, fit, order, out);
}

}  // namespace loom::sched
