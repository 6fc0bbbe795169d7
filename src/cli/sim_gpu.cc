#include "cli/sim_gpu.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "core/strings.h"
#include "sim/report.h"

namespace loom::cli {
namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "loom sim: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int RunGpuSim(const GpuSimArgs& args) {
  sim::GpuStudy study;
  study.trace = args.trace;
  study.synthetic.kind = args.synthetic;
  study.synthetic.seed = args.seed;
  if (args.synthetic_jobs > 0) study.synthetic.jobs = args.synthetic_jobs;
  if (args.synthetic_nodes > 0) study.synthetic.nodes = args.synthetic_nodes;
  if (args.load > 0) study.synthetic.load = args.load;
  study.arrival_scale = args.arrival_scale;
  study.policies = args.policies;
  study.placements = args.placements;
  study.policy_options = args.popts;
  study.comm_fraction = args.comm_fraction;
  study.priority = args.priority;
  auto ran = sim::RunGpuStudy(study);
  if (!ran.ok()) return Fail(std::string(ran.status().message()));
  const sim::GpuWorkload& workload = ran->workload;

  sim::GpuReportHeader h;
  h.workload = workload.name;
  h.nodes = static_cast<int64_t>(workload.cluster.nodes.size());
  for (const model::Node& n : workload.cluster.nodes) h.gpus += n.capacity.gpus;
  h.topology = sim::DescribeTopology(workload.cluster.topology);
  h.comm_fraction = args.comm_fraction;
  h.notes = workload.notes;
  if (args.json) {
    sim::WriteGpuJson(std::cout, h, ran->rows, ran->fairness);
  } else {
    sim::WriteGpuTable(std::cout, h, ran->rows);
    sim::WriteFairnessTable(std::cout, ran->fairness);
  }
  if (!args.jobs_out.empty()) {
    std::ofstream out(args.jobs_out);
    sim::WriteJobsCsv(out, ran->results);
    out.close();
    if (!out) return Fail(core::StrCat("cannot write '", args.jobs_out, "'"));
  }
  if (!args.plot_dir.empty()) {
    sim::ReportHeader plot;
    plot.trace = workload.name;
    Status s = sim::WritePlots(args.plot_dir, plot, ran->results);
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  return 0;
}

}  // namespace loom::cli
