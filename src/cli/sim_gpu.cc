#include "cli/sim_gpu.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "core/strings.h"
#include "sim/accounting_records.h"
#include "sim/report.h"

namespace loom::cli {
namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "loom sim: %s\n", msg.c_str());
  return 1;
}

}  // namespace

Status WriteSimAccounting(const std::string& path, const sched::Cluster& cluster,
                          std::span<const sim::SimJob> jobs,
                          const std::vector<sim::SimResult>& results, int64_t epoch) {
  sim::AccountingFile file;
  for (const sim::SimResult& r : results) {
    const std::string name = sim::SimClusterName(r.policy);
    file.cluster_tres[name] = sim::ClusterTres(cluster);
    std::vector<sim::AccountingRecord> records =
        sim::SimAccountingRecords(name, cluster, jobs, r, epoch);
    file.records.insert(file.records.end(), std::make_move_iterator(records.begin()),
                        std::make_move_iterator(records.end()));
  }
  std::ofstream out(path);
  sim::WriteAccountingFile(out, file);
  out.close();
  if (!out) return absl::UnavailableError(core::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

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
  study.record_nodes = !args.accounting_out.empty();
  study.maint = args.maint;
  if (study.record_nodes && !args.accounting_start) {
    return Fail(
        "--accounting-out: a GPU workload does not say when it began; give its first day "
        "with --accounting-start (e.g. --accounting-start 2026-09-01)");
  }
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
  if (!args.accounting_out.empty()) {
    Status s = WriteSimAccounting(args.accounting_out, workload.cluster, workload.jobs,
                                  ran->results, *args.accounting_start);
    if (!s.ok()) return Fail(std::string(s.message()));
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
