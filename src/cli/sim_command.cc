// `loom sim`: replays a workload trace through one or more scheduling policies and reports
// the results side by side (table, --json, --jobs-out CSV, --plot charts).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "cli/sim_gpu.h"
#include "cli/submit/begin_time.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/strings.h"
#include "sim/report.h"
#include "sim/study.h"

namespace loom::cli {
namespace {

// A one-line progress bar on stderr, shared by the policies running side by side.
class Progress {
 public:
  Progress(std::vector<std::string> names, bool enabled)
      : names_(std::move(names)), done_(names_.size(), 0.0), enabled_(enabled) {}
  void Update(size_t i, double fraction) {
    if (!enabled_) return;
    core::MutexLock lock(&mu_);
    done_[i] = fraction;
    std::string line = "\r";
    for (size_t k = 0; k < names_.size(); ++k) {
      int filled = static_cast<int>(done_[k] * 20);
      line += core::StrCat(names_[k], " [", std::string(filled, '#'), std::string(20 - filled, ' '),
                           "] ");
    }
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
  }
  void Finish() {
    if (!enabled_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  std::vector<std::string> names_;
  core::Mutex mu_;
  std::vector<double> done_ ABSL_GUARDED_BY(mu_);
  bool enabled_;
};

int Fail(const std::string& msg) {
  std::fprintf(stderr, "loom sim: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int RunSim(int argc, char** argv) {
  CLI::App app{"Replay a workload trace through Loom's scheduler and compare policies.", "sim"};
  std::string trace_path, policies = "fcfs,easy,conservative,slurm", estimate = "requested";
  std::string order = "queue", jobs_out, plot_dir, config_path, maint;
  bool json = false, skip_bad = false, from_runtime = false, check = false;
  int64_t machine_procs = 0;
  sim::PolicyOptions popts;
  app.add_option("--trace", trace_path,
                 "SWF trace file (plain or .gz), or a GPU trace (the Alibaba GPU trace "
                 "directory or one of its pod CSV files); default: the built-in KTH SP2 trace");
  GpuSimArgs gpu;
  std::string placements = "first-fit,topo";
  app.add_option("--synthetic", gpu.synthetic,
                 "simulate a generated GPU workload instead of a trace: dgx (DGX A100 nodes "
                 "under a two-level switch tree) or nvl72 (GB200 NVL72 racks as NVLink blocks)");
  app.add_option("--seed", gpu.seed, "seed of the --synthetic workload")->capture_default_str();
  app.add_option("--synthetic-jobs", gpu.synthetic_jobs, "jobs in the --synthetic workload");
  app.add_option("--synthetic-nodes", gpu.synthetic_nodes, "nodes of the --synthetic cluster");
  app.add_option("--load", gpu.load, "offered load of the --synthetic workload (GPU time asked / GPU time available)");
  app.add_option("--placement", placements,
                 "GPU workloads: comma-separated placements to compare: first-fit, topo")
      ->capture_default_str();
  app.add_option("--arrival-scale", gpu.arrival_scale,
                 "GPU workloads: multiply the time between each submission and the first by "
                 "this factor (0 < f <= 1), to replay a lightly loaded trace under contention")
      ->capture_default_str();
  app.add_option("--comm-fraction", gpu.comm_fraction,
                 "GPU workloads: share of a multi-GPU job's run time spent communicating, "
                 "slowed when placement spans more NVLink domains or leaf switches than needed "
                 "(0: off)")
      ->capture_default_str();
  app.add_option("--policy", policies, "comma-separated policies: fcfs, easy, conservative, slurm")
      ->capture_default_str();
  app.add_option("--estimate", estimate,
                 "runtime estimate the scheduler uses: requested (the trace's requested "
                 "time) or exact (the real run time)")
      ->check(CLI::IsMember({"requested", "exact"}))
      ->capture_default_str();
  app.add_option("--backfill-order", order, "backfill candidate order: queue or sjf")
      ->check(CLI::IsMember({"queue", "sjf"}))
      ->capture_default_str();
  app.add_flag("--json", json, "print a JSON array, one object per policy");
  app.add_option("--jobs-out", jobs_out, "write one CSV row per job and policy to FILE");
  app.add_option("--plot", plot_dir, "write PNG/SVG charts into DIR (needs gnuplot)");
  std::string accounting_out, accounting_start;
  app.add_option("--accounting-out", accounting_out,
                 "write every run's job records to FILE as sacct -P lists them, one cluster per "
                 "run, for `sacctmgr archive load file=FILE` (then sacct and sreport answer "
                 "about the simulated time)");
  app.add_option("--accounting-start", accounting_start,
                 "when the workload's time 0 was, for --accounting-out (a date or time as "
                 "sbatch --begin takes it); default: an SWF trace's UnixStartTime");
  app.add_option("--maint", maint,
                 "maintenance windows added to the workload: EVERY,DURATION,NODES (e.g. "
                 "7-0,12:00:00,32: every 7 days from the first submission, 12 hours on the next "
                 "32 nodes); jobs are kept off them as advance reservations keep them");
  app.add_flag("--skip-bad-lines", skip_bad, "skip malformed trace lines and count them");
  app.add_option("--machine-procs", machine_procs,
                 "machine size in processors (default: the trace header's MaxProcs)");
  app.add_flag("--estimate-from-runtime", from_runtime,
               "use the run time as the requested time where the trace has none");
  app.add_flag("--check", check,
               "verify that no job started later than a reservation promised it (under "
               "slurm: the first waiting job of its partition) and exit 1 if one did; "
               "meaningful with --estimate exact");
  app.add_option("--config", config_path,
                 "slurm.conf whose SchedulerParameters (bf_*) the slurm policy uses; "
                 "--bf-* options override them");
  app.add_option("--bf-window", popts.bf_window_s, "slurm policy: bf_window in seconds")
      ->capture_default_str();
  app.add_option("--bf-resolution", popts.bf_resolution_s, "slurm policy: bf_resolution in seconds")
      ->capture_default_str();
  app.add_option("--bf-interval", popts.bf_interval_s, "slurm policy: bf_interval in seconds")
      ->capture_default_str();
  app.add_option("--bf-max-job-test", popts.bf_max_job_test,
                 "slurm policy: bf_max_job_test (0: no limit)")
      ->capture_default_str();
  std::string priorities;
  sim::PriorityStudy priority;
  app.add_option("--priority", priorities,
                 "comma-separated priorities to run each policy under, with a fair-share "
                 "report: basic (submission order), multifactor (age and job size), fairshare "
                 "(multifactor with fair share); weights from --config's Priority* keys when it "
                 "sets PriorityType=priority/multifactor");
  app.add_option("--shares", priority.shares,
                 "fair share's account tree: a file as `sacctmgr dump` writes it, or "
                 "ACCOUNT=SHARES,... under root; accounts the workload names and the file does "
                 "not get Fairshare=1 (SWF traces: the group is the account, the user the user)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (std::string_view n : core::Split(priorities, ',')) {
    if (!core::Trim(n).empty()) priority.names.emplace_back(core::Trim(n));
  }
  if (!priority.shares.empty() && priority.names.empty()) {
    return Fail("--shares needs --priority (e.g. --priority basic,fairshare)");
  }
  if (!config_path.empty()) {
    std::string warnings;
    auto config = sim::PolicyOptionsFromFile(config_path, &warnings, &priority);
    if (!warnings.empty()) std::fprintf(stderr, "%s\n", warnings.c_str());
    if (!config.ok()) return Fail(std::string(config.status().message()));
    sim::PolicyOptions from = *config;
    if (app.count("--bf-window")) from.bf_window_s = popts.bf_window_s;
    if (app.count("--bf-resolution")) from.bf_resolution_s = popts.bf_resolution_s;
    if (app.count("--bf-interval")) from.bf_interval_s = popts.bf_interval_s;
    if (app.count("--bf-max-job-test")) from.bf_max_job_test = popts.bf_max_job_test;
    popts = from;
  }
  popts.order =
      order == "sjf" ? sim::BackfillOrder::kShortestFirst : sim::BackfillOrder::kQueue;
  std::optional<int64_t> epoch;
  if (!accounting_start.empty()) {
    if (accounting_out.empty()) return Fail("--accounting-start needs --accounting-out");
    auto t = submit::ParseSlurmDateTime(accounting_start, core::RealClock().UnixSeconds(),
                                        absl::LocalTimeZone());
    if (!t.ok()) {
      return Fail(core::StrCat("--accounting-start: ", std::string(t.status().message())));
    }
    epoch = *t;
  }

  sim::MaintenanceSpec maint_spec;
  if (!maint.empty()) {
    auto parsed = sim::ParseMaintenance(maint);
    if (!parsed.ok()) return Fail(std::string(parsed.status().message()));
    maint_spec = *parsed;
  }
  if (!gpu.synthetic.empty() || (!trace_path.empty() && sim::IsGpuTrace(trace_path))) {
    gpu.maint = maint_spec;
    if (!gpu.synthetic.empty() && !trace_path.empty()) {
      return Fail("give either --trace or --synthetic, not both");
    }
    gpu.trace = trace_path;
    // One policy unless asked: the comparison is between placements.
    for (std::string_view n : core::Split(app.count("--policy") ? policies : "easy", ',')) {
      gpu.policies.emplace_back(core::Trim(n));
    }
    for (std::string_view n : core::Split(placements, ',')) gpu.placements.emplace_back(core::Trim(n));
    gpu.popts = popts;
    gpu.json = json;
    gpu.jobs_out = jobs_out;
    gpu.priority = priority;
    gpu.plot_dir = plot_dir;
    gpu.accounting_out = accounting_out;
    gpu.accounting_start = epoch;
    if (check || skip_bad || from_runtime || machine_procs > 0) {
      return Fail(
          "--check, --skip-bad-lines, --estimate-from-runtime and "
          "--machine-procs apply to SWF traces only");
    }
    return RunGpuSim(gpu);
  }
  for (const char* opt : {"--placement", "--comm-fraction", "--arrival-scale", "--seed",
                          "--synthetic-jobs",
                          "--synthetic-nodes", "--load"}) {
    if (app.count(opt)) {
      return Fail(core::StrCat(opt, " applies to GPU workloads (--synthetic, or a GPU trace)"));
    }
  }

  sim::SwfStudy study;
  study.trace_path = trace_path;
  study.read.skip_bad_lines = skip_bad;
  study.read.machine_procs = machine_procs;
  study.read.estimate_from_runtime = from_runtime;
  study.estimate = estimate == "exact" ? sim::EstimateKind::kExact : sim::EstimateKind::kRequested;
  for (std::string_view n : core::Split(policies, ',')) study.policies.emplace_back(core::Trim(n));
  study.policy_options = popts;
  study.priority = priority;
  study.record_nodes = !accounting_out.empty();
  study.maint = maint_spec;
  study.require_unix_start = !accounting_out.empty() && !epoch;
  // One bar per run: each policy under each priority.
  std::vector<std::string> runs;
  for (const std::string& p : study.policies) {
    if (priority.names.empty()) runs.push_back(p);
    for (const std::string& q : priority.names) runs.push_back(core::StrCat(p, "+", q));
  }
  Progress progress(runs, ::isatty(STDERR_FILENO) != 0);
  study.progress = [&progress](size_t i, double f) { progress.Update(i, f); };
  auto ran = sim::RunSwfStudy(study);
  progress.Finish();
  if (!ran.ok()) return Fail(std::string(ran.status().message()));
  const sim::SwfTrace& trace = ran->trace;
  const std::vector<sim::SimResult>& results = ran->results;
  const std::vector<sim::Summary>& rows = ran->rows;

  sim::ReportHeader h;
  h.trace = trace.name;
  h.machine_cpus = trace.machine_procs;
  h.jobs_in_trace = trace.job_lines;
  h.dropped = trace.dropped;
  h.bad_lines = trace.bad_lines;
  h.estimate = estimate;
  h.backfill_order = order;
  h.estimates_from_runtime = trace.estimates_from_runtime;
  if (json) {
    sim::WriteJson(std::cout, h, rows, ran->fairness);
  } else {
    for (const std::string& n : ran->notes) std::cout << "note: " << n << "\n";
    sim::WriteTable(std::cout, h, rows);
    sim::WriteFairnessTable(std::cout, ran->fairness);
  }
  if (!jobs_out.empty()) {
    std::ofstream out(jobs_out);
    sim::WriteJobsCsv(out, results);
    out.close();
    if (!out) return Fail(core::StrCat("cannot write '", jobs_out, "'"));
  }
  if (!accounting_out.empty()) {
    Status s = WriteSimAccounting(accounting_out, ran->cluster, ran->jobs, results,
                                  epoch ? *epoch : trace.unix_start);
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  if (!plot_dir.empty()) {
    Status s = sim::WritePlots(plot_dir, h, results);
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  if (check) {
    const std::vector<sim::LateStart> late = sim::LateStarts(results);
    for (size_t i = 0; i < late.size() && i < 5; ++i) {
      std::fprintf(stderr, "loom sim: %s: job %llu started at %lld, reserved for %lld\n",
                   late[i].policy.c_str(), static_cast<unsigned long long>(late[i].id),
                   static_cast<long long>(late[i].start), static_cast<long long>(late[i].promised));
    }
    if (!late.empty()) return Fail(core::StrCat(late.size(), " jobs started later than reserved"));
  }
  return 0;
}

}  // namespace loom::cli
