#include "cli/sim_gpu.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>

#include "absl/strings/match.h"
#include "core/strings.h"
#include "sim/gpu_workload.h"
#include "sim/metrics.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "sim/synthetic.h"

namespace loom::cli {
namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "loom sim: %s\n", msg.c_str());
  return 1;
}

std::string Describe(const model::ClusterTopology& t) {
  switch (t.kind) {
    case model::ClusterTopology::Kind::kFlat:
      return "flat";
    case model::ClusterTopology::Kind::kTree: {
      int leaves = 0, levels = 0;
      for (const model::Switch& s : t.switches) {
        leaves += s.level == 0;
        levels = std::max(levels, s.level + 1);
      }
      return core::StrCat("tree (", levels, " levels, ", leaves, " leaf switches)");
    }
    case model::ClusterTopology::Kind::kBlock:
      return core::StrCat("blocks (", t.blocks.size(), " NVLink blocks)");
  }
  return "";
}

}  // namespace

bool IsGpuTrace(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return true;
  return absl::EndsWith(path, ".csv");
}

int RunGpuSim(const GpuSimArgs& args) {
  StatusOr<sim::GpuWorkload> workload = absl::InvalidArgumentError("no workload");
  if (!args.synthetic.empty()) {
    sim::SyntheticOptions so;
    so.kind = args.synthetic;
    so.seed = args.seed;
    if (args.synthetic_jobs > 0) so.jobs = args.synthetic_jobs;
    if (args.synthetic_nodes > 0) so.nodes = args.synthetic_nodes;
    if (args.load > 0) so.load = args.load;
    workload = sim::SyntheticWorkload(so);
  } else {
    workload = sim::ReadAlibabaGpuTrace(args.trace);
  }
  if (!workload.ok()) return Fail(std::string(workload.status().message()));
  if (workload->jobs.empty()) return Fail(core::StrCat("'", workload->name, "' has no jobs"));
  if (args.arrival_scale <= 0 || args.arrival_scale > 1) {
    return Fail("--arrival-scale must be in (0, 1]");
  }
  if (args.arrival_scale < 1) {
    // Same jobs, same order, arriving closer together: more of them wait at once.
    const sim::Time first = workload->jobs.front().submit;
    for (sim::SimJob& j : workload->jobs) {
      j.submit = first + static_cast<sim::Time>(static_cast<double>(j.submit - first) *
                                                args.arrival_scale);
    }
    workload->notes.push_back(core::StrCat("submit times scaled by ", args.arrival_scale,
                                           " toward the first submission"));
  }

  struct Run {
    std::string policy, placement;
    sched::Cluster cluster;
    std::unique_ptr<sched::Policy> policy_obj;
  };
  std::vector<Run> runs;
  for (const std::string& placement : args.placements) {
    for (const std::string& policy : args.policies) {
      Run r{policy, placement, workload->cluster, nullptr};
      if (placement == "topo") {
        r.cluster.placement = sched::Placement::kTopology;
      } else if (placement == "first-fit") {
        r.cluster.placement = sched::Placement::kFirstFit;
      } else {
        return Fail(core::StrCat("unknown placement '", placement, "' (use first-fit or topo)"));
      }
      auto p = sched::MakePolicy(policy, args.popts);
      if (!p.ok()) return Fail(std::string(p.status().message()));
      r.policy_obj = std::move(*p);
      runs.push_back(std::move(r));
    }
  }

  std::vector<std::future<StatusOr<sim::SimResult>>> futures;
  for (Run& r : runs) {
    futures.push_back(std::async(std::launch::async, [&r, &workload, &args] {
      sim::SimOptions so;
      so.comm_fraction = args.comm_fraction;
      return sim::Simulate(r.cluster, workload->jobs, *r.policy_obj, so);
    }));
  }
  std::vector<sim::SimResult> results;
  std::vector<sim::GpuSummary> rows;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto res = futures[i].get();
    if (!res.ok()) {
      return Fail(core::StrCat(runs[i].placement, "/", runs[i].policy, ": ",
                               std::string(res.status().message())));
    }
    rows.push_back(sim::SummarizeGpu(*res, runs[i].placement));
    res->policy = core::StrCat(runs[i].placement, "/", runs[i].policy);
    results.push_back(std::move(*res));
  }

  sim::GpuReportHeader h;
  h.workload = workload->name;
  h.nodes = static_cast<int64_t>(workload->cluster.nodes.size());
  for (const model::Node& n : workload->cluster.nodes) h.gpus += n.capacity.gpus;
  h.topology = Describe(workload->cluster.topology);
  h.comm_fraction = args.comm_fraction;
  h.notes = workload->notes;
  if (args.json) {
    sim::WriteGpuJson(std::cout, h, rows);
  } else {
    sim::WriteGpuTable(std::cout, h, rows);
  }
  if (!args.jobs_out.empty()) {
    std::ofstream out(args.jobs_out);
    sim::WriteJobsCsv(out, results);
    out.close();
    if (!out) return Fail(core::StrCat("cannot write '", args.jobs_out, "'"));
  }
  return 0;
}

}  // namespace loom::cli
