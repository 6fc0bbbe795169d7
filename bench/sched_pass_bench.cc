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
#include <random>
#include <string>

#include "sched/backfill/policy.h"
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

// Args: nodes, pending jobs, one multi-node job every N (0: none).
BENCHMARK(BM_SlurmPass)->Args({10000, 100000, 0})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SlurmPass)->Args({10000, 100000, 20})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SlurmPass)->Args({10000, 10000, 20})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SlurmPass)->Args({16, 2000, 20})->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace
}  // namespace loom::sched

BENCHMARK_MAIN();
