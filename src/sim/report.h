// Reports of simulation runs: a side-by-side table, JSON (one object per policy), a per-job
// CSV, and gnuplot charts. Functions write to the stream or directory they are given.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/metrics.h"
#include "sim/simulator.h"

namespace loom::sim {

struct ReportHeader {
  std::string trace;
  int64_t machine_cpus = 0;
  int64_t jobs_in_trace = 0;   // job lines before filtering
  int64_t dropped = 0;
  int64_t bad_lines = 0;
  std::string estimate;        // "requested" or "exact"
  std::string backfill_order;  // "queue" or "sjf"
  bool estimates_from_runtime = false;
};

void WriteTable(std::ostream& os, const ReportHeader& h, const std::vector<Summary>& rows);
// With `fairness` (one per row), each object also has "fair_share".
void WriteJson(std::ostream& os, const ReportHeader& h, const std::vector<Summary>& rows,
               const std::vector<Fairness>& fairness = {});
// GPU workloads: one column (JSON object) per policy and placement.
struct GpuReportHeader {
  std::string workload;
  int64_t nodes = 0;
  int64_t gpus = 0;
  std::string topology;          // "flat", "tree (16 leaves)", "blocks (4 x 18 nodes)"
  double comm_fraction = 0;
  std::vector<std::string> notes;
};
void WriteGpuTable(std::ostream& os, const GpuReportHeader& h, const std::vector<GpuSummary>& rows);
void WriteGpuJson(std::ostream& os, const GpuReportHeader& h, const std::vector<GpuSummary>& rows,
                  const std::vector<Fairness>& fairness = {});
// Fair share, one column per run: Jain's index, then for the `top` accounts with the most jobs
// their configured share, part of the decayed usage (mean over time) and mean wait.
void WriteFairnessTable(std::ostream& os, const std::vector<Fairness>& runs, size_t top = 8);

void WriteJobsCsv(std::ostream& os, const std::vector<SimResult>& results);
// Writes data files, a gnuplot script and PNG + SVG charts (utilization and queue length
// over time, wait-time CDF per policy) into `dir`, running gnuplot.
Status WritePlots(const std::string& dir, const ReportHeader& h,
                  const std::vector<SimResult>& results);

}  // namespace loom::sim
