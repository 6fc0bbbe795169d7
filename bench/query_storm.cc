// Whether a storm of queries lengthens the controller's owner loop. A controller on a scratch
// directory holds J held jobs; the main thread posts N empty commands one after another and
// times each round trip (one batch of the owner loop: apply, tick, pass, commit, publish,
// answer), first with no other load, then while T threads call QueryJobs (squeue),
// QuerySteps (`scontrol show step`) and QueryConfig (`scontrol show config`) through the
// controller's API as fast as they can. Queries read the published snapshot, so the storm
// costs the owner only the CPU it takes from it; on a machine with fewer cores than storm
// threads that share shows in the figures. Prints the round trip's median and 99th
// percentile, the owner's batches and the queries answered.
//
//   build/bin/query_storm [J [N [T]]]     # defaults: 2000 jobs, 2000 round trips, 2 threads
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "ctld/controller.h"
#include "ctld/service.h"

namespace {

using loom::ctld::Controller;

struct Figures {
  double p50_us = 0, p99_us = 0;
  int64_t batches = 0;
  int64_t queries = 0;
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

Figures Measure(Controller& c, int round_trips, int storm_threads) {
  loom::ctld::ControllerApi api(&c);
  const loom::ctld::Caller root{0, 0, "root"};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> queries{0};
  std::vector<std::thread> storm;
  for (int t = 0; t < storm_threads; ++t) {
    storm.emplace_back([&, t] {
      while (!stop.load(std::memory_order_relaxed)) {
        switch (t % 3) {
          case 0: {
            loom::v1::QueryStepsReply reply;
            (void)api.QuerySteps(root, loom::v1::QueryStepsRequest(), &reply);
            break;
          }
          case 1: {
            loom::v1::QueryConfigReply reply;
            (void)api.QueryConfig(root, loom::v1::QueryConfigRequest(), &reply);
            break;
          }
          default: {
            loom::v1::QueryJobsRequest req;
            req.add_job_ids(1);
            loom::v1::QueryJobsReply reply;
            (void)api.QueryJobs(root, req, &reply);
            break;
          }
        }
        queries.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  const int64_t batches_before = c.snapshot()->batches;
  std::vector<double> us;
  us.reserve(round_trips);
  for (int i = 0; i < round_trips; ++i) {
    const auto t0 = loom::core::RealClock().Monotonic();
    (void)c.Post([](loom::ctld::ControllerCore&, loom::ctld::Effects&, loom::ctld::Time) {
      return absl::OkStatus();
    });
    us.push_back(std::chrono::duration<double, std::micro>(loom::core::RealClock().Monotonic() - t0)
                     .count());
  }
  stop = true;
  for (std::thread& t : storm) t.join();
  return Figures{Percentile(us, 0.5), Percentile(us, 0.99), c.snapshot()->batches - batches_before,
                 queries.load()};
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int round_trips = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  if (jobs < 0 || round_trips <= 0 || threads <= 0) {
    std::fprintf(stderr, "usage: %s [JOBS [ROUND_TRIPS [STORM_THREADS]]]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("query_storm." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "slurm.conf")
      << "ClusterName=bench\nSlurmctldHost=localhost(127.0.0.1)\nMaxJobCount=1000000\n"
      << "StateSaveLocation=" << (dir / "state").string() << "\n"
      << "NodeName=n[001-064] CPUs=64 RealMemory=256000 NodeAddr=127.0.0.1 Port=1\n"
      << "PartitionName=batch Nodes=n[001-064] Default=YES\n";
  loom::ctld::ControllerOptions o;
  o.slurm_conf = (dir / "slurm.conf").string();
  o.listen_address = "127.0.0.1:0";
  auto c = Controller::Start(o);
  if (!c.ok()) {
    std::fprintf(stderr, "query_storm: %s\n", std::string(c.status().message()).c_str());
    std::filesystem::remove_all(dir);
    return 1;
  }
  const loom::ctld::Caller alice{1001, 1001, "alice"};
  for (int i = 0; i < jobs; ++i) {
    (void)(*c)->Post([&](loom::ctld::ControllerCore& core, loom::ctld::Effects& fx,
                         loom::ctld::Time now) -> loom::Status {
      loom::model::JobRequest r;
      r.name = "held";
      r.hold = true;
      r.shape.ntasks = 1;
      r.time_limit_s = 60;
      return core.Submit(r, alice, now, &fx).status();
    });
  }
  const Figures quiet = Measure(**c, round_trips, 0);
  const Figures storm = Measure(**c, round_trips, threads);
  std::printf("held jobs %d, round trips %d, storm threads %d\n", jobs, round_trips, threads);
  std::printf("%-6s %12s %12s %14s %16s\n", "load", "median_us", "p99_us", "owner_batches",
              "queries_answered");
  std::printf("%-6s %12.0f %12.0f %14lld %16lld\n", "quiet", quiet.p50_us, quiet.p99_us,
              static_cast<long long>(quiet.batches), static_cast<long long>(quiet.queries));
  std::printf("%-6s %12.0f %12.0f %14lld %16lld\n", "storm", storm.p50_us, storm.p99_us,
              static_cast<long long>(storm.batches), static_cast<long long>(storm.queries));
  (*c)->Shutdown();
  c->reset();
  std::filesystem::remove_all(dir);
  return 0;
}
