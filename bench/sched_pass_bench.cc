// One scheduling pass of the `slurm` policy (main + backfill, every job tested) over a
// large, busy cluster: 10,000 nodes of mixed sizes, all running work, and 100,000 pending
// jobs of mixed shapes (1-64 CPUs, 1-120 min, every third asking for 1-8 GPUs, a few
// multi-node). Reports the pass time and the memory a pending job costs.
//
//   build/bin/sched_pass_bench [--benchmark_repetitions=3]
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "sched/backfill/policy.h"
#include "sched/limits/limits.h"
#include "sched/priority/fairshare.h"
#include "sched/types.h"

namespace loom::sched {
namespace {

int64_t RssKb() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4;
}

struct World {
  Cluster cluster;
  std::vector<RunningJob> running;
  std::vector<PendingJob> pending;
};

World MakeWorld(int nodes, int pending, int multi_every) {
  World w;
  std::mt19937_64 rng(42);
  auto uni = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  model::Partition part;
  part.name = "batch";
  part.is_default = true;
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.name = "n" + std::to_string(i);
    switch (i % 10) {
      case 0:
      case 1:
      case 2:
      case 3:
        n.capacity = {.cpus = 64, .gpus = 0, .mem_mb = 256000};
        n.weight = 1;
        break;
      case 4:
      case 5:
      case 6:
        n.capacity = {.cpus = 128, .gpus = 0, .mem_mb = 512000};
        n.weight = 2;
        break;
      default:
        n.capacity = {.cpus = 64, .gpus = 8, .mem_mb = 1024000};
        n.gpu_type = "a100";
        n.weight = 10;
        break;
    }
    part.nodes.push_back(i);
    w.cluster.nodes.push_back(n);
  }
  w.cluster.partitions.push_back(part);
  // Every node busy: one to three running jobs covering all of its CPUs, ending within a day.
  JobId id = 1;
  for (int i = 0; i < nodes; ++i) {
    const Resources cap = w.cluster.nodes[i].capacity;
    int parts = static_cast<int>(uni(1, 3));
    int32_t left = cap.cpus;
    for (int k = 0; k < parts; ++k) {
      int32_t cpus = k == parts - 1 ? left : static_cast<int32_t>(uni(1, left - (parts - k - 1)));
      left -= cpus;
      Resources amount{.cpus = cpus,
                       .gpus = k == parts - 1 ? cap.gpus : 0,
                       .mem_mb = cap.mem_mb * cpus / cap.cpus};
      Time start = -uni(0, 3600);
      w.running.push_back(RunningJob{id++, {NodeAlloc{i, amount}}, start, uni(60, 86400)});
    }
  }
  for (int j = 0; j < pending; ++j) {
    PendingJob p;
    p.id = id++;
    p.submit = -uni(0, 7200);
    p.priority = uni(1, 1000000);
    p.partition = 0;
    p.estimate = uni(1, 120) * 60;
    p.shape.cpus_per_task = 1;
    p.shape.ntasks = static_cast<int32_t>(uni(1, 64));
    p.shape.mem_per_cpu_mb = 1000;
    if (j % 3 == 0) p.shape.gpus_per_node = static_cast<int32_t>(uni(1, 8));
    if (multi_every > 0 && j % multi_every == 0) {
      int32_t n = static_cast<int32_t>(uni(2, 16));
      p.shape.min_nodes = p.shape.max_nodes = n;
      p.shape.ntasks = n * static_cast<int32_t>(uni(1, 32));
    }
    w.pending.push_back(std::move(p));
  }
  return w;
}

void BM_SlurmPass(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int pending = static_cast<int>(state.range(1));
  int64_t rss0 = RssKb();
  World w = MakeWorld(nodes, pending, static_cast<int>(state.range(2)));
  int64_t rss1 = RssKb();
  PolicyOptions opts;
  opts.bf_max_job_test = 0;  // every job tested
  auto policy = MakePolicy("slurm", opts);
  PassInput in;
  in.cluster = &w.cluster;
  in.running = w.running;
  in.pending = w.pending;
  in.now = 0;
  in.trigger = PassTrigger::kPeriodic;
  PassOutput out;
  for (auto _ : state) {
    (*policy)->Pass(in, &out);
    benchmark::DoNotOptimize(out.starts.data());
  }
  state.counters["started"] = static_cast<double>(out.stats.started);
  state.counters["reserved"] = static_cast<double>(out.stats.reservations);
  state.counters["tested"] = static_cast<double>(out.stats.jobs_tested);
  // What a pending job costs as scheduler input: the struct plus anything it owns on the
  // heap (constraint and GPU-type strings beyond the small-string buffer, a reservation).
  double heap = 0;
  for (const PendingJob& p : w.pending) {
    if (p.constraint.capacity() > 15) heap += static_cast<double>(p.constraint.capacity());
    if (p.shape.gpu_type.capacity() > 15) heap += static_cast<double>(p.shape.gpu_type.capacity());
  }
  state.counters["bytes_per_pending_job"] =
      static_cast<double>(sizeof(PendingJob)) + heap / static_cast<double>(pending);
  // What the pass itself grew the process by (timeline, indexes, output), per pending job.
  state.counters["pass_bytes_per_pending_job"] =
      static_cast<double>(std::max<int64_t>(0, RssKb() - rss1)) * 1024.0 /
      static_cast<double>(pending);
  state.counters["world_rss_kb"] = static_cast<double>(rss1 - rss0);
}

// GPU placement in the same pass: 10,000 DGX A100 nodes (8 GPUs on NVSwitch, 256 CPUs)
// under leaf switches of 32 nodes, most GPUs held by running jobs with exact device ids,
// and pending GPU jobs: 1-8 GPUs (half as --gpus=N, half -N1 --gpus-per-node=N) and one in
// `multi_every` asking 2-16 whole nodes. Compares first-fit and topology-aware placement.
World MakeGpuWorld(int nodes, int pending, int multi_every, Placement how) {
  World w;
  std::mt19937_64 rng(7);
  auto uni = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto topo = std::make_shared<const model::NodeTopology>(*model::CatalogTopology("dgx-a100"));
  model::Partition part;
  part.name = "gpu";
  part.is_default = true;
  model::ClusterTopology& t = w.cluster.topology;
  t.kind = model::ClusterTopology::Kind::kTree;
  const int per_leaf = 32, leaves = (nodes + per_leaf - 1) / per_leaf;
  model::Switch spine{.name = "spine", .level = 1};
  for (int l = 0; l < leaves; ++l) {
    t.switches.push_back(model::Switch{.name = "leaf" + std::to_string(l), .parent = leaves});
    spine.children.push_back(l);
  }
  t.switches.push_back(spine);
  JobId id = 1;
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.name = "dgx" + std::to_string(i);
    n.capacity = {.cpus = 256, .gpus = 8, .mem_mb = 1024000};
    n.gpu_type = "a100";
    n.topology = topo;
    part.nodes.push_back(i);
    w.cluster.nodes.push_back(n);
    t.switches[i / per_leaf].nodes.push_back(i);
    t.leaf_of.push_back(i / per_leaf);
    // One to three running jobs holding 5-8 of the GPUs, 32 CPUs each.
    int gpu = 0;
    const int busy = static_cast<int>(uni(5, 8));
    for (int k = 0; gpu < busy && k < 3; ++k) {
      int take = k == 2 ? busy - gpu : static_cast<int>(uni(1, busy - gpu));
      NodeAlloc a(i, Resources{.cpus = 32 * take, .gpus = take, .mem_mb = 0});
      for (int g = gpu; g < gpu + take; ++g) a.gpu_ids |= model::GpuMask{1} << g;
      for (int c = 32 * gpu; c < 32 * (gpu + take); ++c) a.cpu_ids.set(c);
      gpu += take;
      w.running.push_back(RunningJob{id++, {a}, -uni(0, 3600), uni(60, 86400)});
    }
  }
  w.cluster.partitions.push_back(part);
  w.cluster.placement = how;
  for (int j = 0; j < pending; ++j) {
    PendingJob p;
    p.id = id++;
    p.submit = -uni(0, 7200);
    p.priority = uni(1, 1000000);
    p.estimate = uni(1, 120) * 60;
    const int32_t k = static_cast<int32_t>(uni(1, 8));
    if (multi_every > 0 && j % multi_every == 0) {
      const int32_t n = static_cast<int32_t>(uni(2, 16));
      p.shape.min_nodes = p.shape.max_nodes = n;
      p.shape.ntasks = n;
      p.shape.ntasks_per_node = 1;
      p.shape.cpus_per_task = 128;
      p.shape.gpus_per_node = 8;
    } else if (j % 2 == 0) {
      p.shape.ntasks = k;
      p.shape.max_nodes = k;
      p.shape.gpus_per_task = 1;
      p.shape.cpus_per_task = 16;
    } else {
      p.shape.cpus_per_task = 16 * k;
      p.shape.gpus_per_node = k;
    }
    w.pending.push_back(std::move(p));
  }
  return w;
}

void BM_GpuPlacementPass(benchmark::State& state) {
  World w = MakeGpuWorld(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                         static_cast<int>(state.range(2)),
                         state.range(3) ? Placement::kTopology : Placement::kFirstFit);
  PolicyOptions opts;
  opts.bf_max_job_test = 0;
  auto policy = MakePolicy("slurm", opts);
  PassInput in;
  in.cluster = &w.cluster;
  in.running = w.running;
  in.pending = w.pending;
  in.trigger = PassTrigger::kPeriodic;
  PassOutput out;
  for (auto _ : state) {
    (*policy)->Pass(in, &out);
    benchmark::DoNotOptimize(out.starts.data());
  }
  state.SetLabel(state.range(3) ? "topo" : "first-fit");
  state.counters["started"] = static_cast<double>(out.stats.started);
  state.counters["reserved"] = static_cast<double>(out.stats.reservations);
}

// Args: nodes, pending jobs, one multi-node job every N (0: none).
// The same pass with association and QOS limits: 100,000 pending jobs from 1,000 users in
// 200 accounts; each job counts against its QOS's group (GrpTRES gres/gpu and GrpJobs),
// its user's scope in the QOS (MaxTRESPerUser cpu, MaxJobsPerUser) and its account's group
// (GrpTRES cpu). Caps are loose enough that most jobs pass the checks, so the pass does its
// full work plus the tally. Arg 2: 1 with limits, 0 without (the baseline).
void BM_SlurmPassLimits(benchmark::State& state) {
  World w = MakeWorld(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 0);
  LimitTable table;
  table.scopes.push_back({LimitKind::kQosGroup, {{"gres/gpu", 1 << 30}}, 1 << 30});
  for (int u = 0; u < 1000; ++u) {
    table.scopes.push_back({LimitKind::kQosPerUser, {{"cpu", 4096}}, 200});
  }
  for (int a = 0; a < 200; ++a) {
    table.scopes.push_back({LimitKind::kAssocGroup, {{"cpu", 100000}}, -1});
  }
  std::mt19937_64 rng(5);
  for (PendingJob& p : w.pending) {
    const int user = static_cast<int>(rng() % 1000);
    p.limit_scopes = {0, 1 + user, 1001 + user % 200};
    p.limit_tres.Set("cpu", p.shape.TotalCpus());
    p.limit_tres.Set("gres/gpu", p.shape.gpus_per_node);
  }
  PolicyOptions opts;
  opts.bf_max_job_test = 0;
  auto policy = MakePolicy("slurm", opts);
  PassInput in;
  in.cluster = &w.cluster;
  in.running = w.running;
  in.pending = w.pending;
  in.trigger = PassTrigger::kPeriodic;
  if (state.range(2) != 0) in.limits = &table;
  PassOutput out;
  for (auto _ : state) {
    (*policy)->Pass(in, &out);
    benchmark::DoNotOptimize(out.starts.data());
  }
  state.counters["started"] = static_cast<double>(out.stats.started);
  state.counters["tested"] = static_cast<double>(out.stats.jobs_tested);
}

// Fair share for 10,000 associations: 200 accounts (40 under each of 5 top ones) with 49
// users each, random usage; Fair Tree and classic.
void BM_FairShare(benchmark::State& state) {
  std::vector<ShareAssoc> tree = {{"root", "", -1, 1, 0}};
  std::mt19937_64 rng(9);
  for (int top = 0; top < 5; ++top)
    tree.push_back({"t" + std::to_string(top), "", 0, 1 + static_cast<int64_t>(rng() % 10), 0});
  for (int a = 0; a < 195; ++a) {
    const auto acc = static_cast<int32_t>(tree.size());
    tree.push_back(
        {"a" + std::to_string(a), "", 1 + a % 5, 1 + static_cast<int64_t>(rng() % 10), 0});
    for (int u = 0; u < 50 && tree.size() < 10000; ++u) {
      tree.push_back({tree[acc].account, "u" + std::to_string(u), acc, 1,
                      static_cast<double>(rng() % 1000000)});
    }
  }
  const auto algorithm =
      state.range(0) != 0 ? FairShareAlgorithm::kFairTree : FairShareAlgorithm::kClassic;
  for (auto _ : state) {
    std::vector<ShareValues> v = ComputeFairShare(tree, algorithm);
    benchmark::DoNotOptimize(v.data());
  }
  state.counters["associations"] = static_cast<double>(tree.size());
}

BENCHMARK(BM_SlurmPass)->Args({10000, 100000, 0})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SlurmPass)->Args({10000, 100000, 20})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SlurmPass)->Args({10000, 10000, 20})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SlurmPass)->Args({16, 2000, 20})->Unit(benchmark::kMillisecond)->Iterations(20);
// Args: nodes, pending GPU jobs, one multi-node job every N (0: none), topology-aware (1) or
// first fit (0).
// Args: nodes, pending jobs, limits on (1) or off (0).
BENCHMARK(BM_SlurmPassLimits)
    ->Args({1000, 100000, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK(BM_SlurmPassLimits)
    ->Args({1000, 100000, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
// Arg: Fair Tree (1) or classic (0).
BENCHMARK(BM_FairShare)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FairShare)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GpuPlacementPass)
    ->Args({1000, 1000, 20, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_GpuPlacementPass)
    ->Args({1000, 1000, 20, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_GpuPlacementPass)
    ->Args({1000, 1000, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_GpuPlacementPass)
    ->Args({1000, 1000, 0, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_GpuPlacementPass)
    ->Args({10000, 10000, 20, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_GpuPlacementPass)
    ->Args({10000, 10000, 20, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_GpuPlacementPass)
    ->Args({10000, 100000, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_GpuPlacementPass)
    ->Args({10000, 100000, 0, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace loom::sched

BENCHMARK_MAIN();
