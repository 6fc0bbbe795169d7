// Rendering cost of the query commands with 10,000 queued jobs, the queue of the Slurm
// reference benchmark (10,000 held `sbatch -H --wrap=true` jobs): `squeue --json`, the
// default `squeue` table, `squeue -o '%i %j %T %R'` and `scontrol show jobs`. Only the
// rendering from views is timed, no RPC and no process start; Slurm's figures for the whole
// commands are in ../shared/bench/slurm-ref/README.md (`squeue --json` about 1.0 s and 31 MB).
//
//   build/bin/squeue_render_bench [--benchmark_repetitions=3]
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "cli/format/scontrol_format.h"
#include "cli/format/squeue_format.h"

namespace loom::cli::format {
namespace {

constexpr int64_t kNow = 1795978595;

// A held one-CPU job as `sbatch -H --wrap=true` leaves it, ids from 2 up.
std::vector<JobView> HeldJobs(int n) {
  std::vector<JobView> jobs;
  jobs.reserve(n);
  for (int i = 0; i < n; ++i) {
    JobView j;
    j.job_id = 2 + i;
    j.name = "wrap";
    j.user_name = j.group_name = j.account = "root";
    j.qos = "normal";
    j.cluster = "slurmref";
    j.association_id = 2;
    j.partition = "batch";
    j.alloc_node = "localhost";
    j.alloc_sid = 3014;
    j.reason = "JobHeldUser";
    j.submit_time = j.last_sched_eval = kNow - 60 + i / 500;
    j.work_dir = "/tmp/slurm-ref/work";
    j.std_in = "/dev/null";
    j.std_out = "/dev/null";
    j.memory_per_cpu = true;
    j.min_memory_mb = 1000;
    j.tres_req.Set(core::kTresCpu, 1);
    j.tres_req.Set(core::kTresMem, 1000);
    j.tres_req.Set(core::kTresNode, 1);
    j.tres_req.Set(core::kTresBilling, 1);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

void BM_SqueueJson(benchmark::State& state) {
  std::vector<JobView> jobs = HeldJobs(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string out = RenderSqueueJson(jobs, {}, RenderContext{kNow, 0});
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_job"] = static_cast<double>(bytes) / static_cast<double>(jobs.size());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(jobs.size()));
}
BENCHMARK(BM_SqueueJson)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_Squeue(benchmark::State& state, std::string format) {
  std::vector<JobView> jobs = HeldJobs(static_cast<int>(state.range(0)));
  SqueueOptions options;
  options.format = format;
  for (auto _ : state) {
    StatusOr<std::string> out = RenderSqueue(jobs, options, RenderContext{kNow, 0});
    benchmark::DoNotOptimize(out->data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(jobs.size()));
}
BENCHMARK_CAPTURE(BM_Squeue, default, std::string())->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Squeue, fmt_i_j_T_R, std::string("%i %j %T %R"))
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

void BM_ScontrolShowJobs(benchmark::State& state) {
  std::vector<JobView> jobs = HeldJobs(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    std::string out = RenderJobs(jobs, {}, RenderContext{kNow, 0});
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(jobs.size()));
}
BENCHMARK(BM_ScontrolShowJobs)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace loom::cli::format

BENCHMARK_MAIN();
