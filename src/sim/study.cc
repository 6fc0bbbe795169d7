#include "sim/study.h"

#include <sys/stat.h>

#include <algorithm>
#include <future>
#include <memory>

#include "absl/strings/match.h"
#include "conf/slurm_conf.h"
#include "core/strings.h"
#include "sched/config.h"
#include "sim/builtin_trace.h"
#include "sim/shares.h"

namespace loom::sim {

StatusOr<PolicyOptions> PolicyOptionsFromFile(const std::string& path, std::string* warnings,
                                              PriorityStudy* priority) {
  std::vector<conf::Diagnostic> diagnostics;
  auto config = conf::LoadSlurmConf(path, &diagnostics);
  if (!diagnostics.empty()) {
    if (!warnings->empty()) *warnings += '\n';
    *warnings += conf::JoinDiagnostics(diagnostics);
  }
  if (!config.ok()) return config.status();
  if (priority != nullptr && config->priority.type == conf::PriorityType::kMultifactor) {
    priority->params = config->priority;
    priority->billing = config->billing_weights;
  }
  return sched::PolicyOptionsFromConfig(*config);
}

conf::PriorityParams PriorityStudy::DefaultSimPriority() {
  conf::PriorityParams p;
  p.type = conf::PriorityType::kMultifactor;
  p.weight_age = 1000;
  p.weight_job_size = 1000;
  p.weight_fairshare = 10000;
  return p;
}

StatusOr<std::vector<PrioritySetup>> PrioritySetups(const PriorityStudy& study,
                                                    std::span<const SimJob> jobs,
                                                    const model::AssociationTable& accounts,
                                                    std::vector<std::string>* notes) {
  if (study.names.empty()) return std::vector<PrioritySetup>{};
  model::AssociationTable associations = accounts;
  if (!study.shares.empty()) {
    ASSIGN_OR_RETURN(associations, ReadShares(study.shares, notes));
  }
  AddWorkloadAssociations(jobs, &associations, notes);
  const conf::PriorityParams& p = study.params;
  notes->push_back(core::StrCat(
      "priority weights: PriorityWeightAge=", p.weight_age,
      " PriorityWeightJobSize=", p.weight_job_size, " PriorityWeightFairshare=", p.weight_fairshare,
      " (the multifactor runs: 0); PriorityMaxAge=", p.max_age_s,
      "s PriorityDecayHalfLife=", p.decay_half_life_s, "s PriorityCalcPeriod=", p.calc_period_s,
      "s; ", p.no_fair_tree ? "classic fair share" : "Fair Tree"));
  std::vector<PrioritySetup> out;
  for (const std::string& name : study.names) {
    PrioritySetup setup;
    setup.params = p;
    setup.billing = study.billing;
    setup.associations = associations;
    setup.sample_every_s = study.sample_every_s;
    if (name == "basic") {
      setup.params.type = conf::PriorityType::kBasic;
    } else if (name == "multifactor") {
      setup.params.type = conf::PriorityType::kMultifactor;
      setup.params.weight_fairshare = 0;
    } else if (name == "fairshare") {
      setup.params.type = conf::PriorityType::kMultifactor;
      if (p.weight_fairshare <= 0) {
        return absl::InvalidArgumentError(
            "--priority fairshare: the --config file sets PriorityWeightFairshare=0; give it a "
            "weight, or leave PriorityType out of the file for the simulator's defaults");
      }
    } else {
      return absl::InvalidArgumentError(
          core::StrCat("unknown priority '", name, "' (use basic, multifactor or fairshare)"));
    }
    out.push_back(std::move(setup));
  }
  return out;
}

namespace {

// --maint: the windows over the workload's submissions, said in the notes.
Status AddMaintenance(const MaintenanceSpec& spec, std::span<const SimJob> jobs,
                      sched::Cluster* cluster, std::vector<std::string>* notes) {
  if (!spec.enabled() || jobs.empty()) return absl::OkStatus();
  Time first = jobs.front().submit, last = jobs.front().submit;
  for (const SimJob& j : jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  ASSIGN_OR_RETURN(const int32_t windows, AddMaintenanceWindows(spec, first, last, cluster));
  notes->push_back(core::StrCat("maintenance: ", windows, " windows of ",
                                core::FormatDuration(spec.duration_s), " on ", spec.nodes,
                                " nodes each, every ", core::FormatDuration(spec.every_s)));
  return absl::OkStatus();
}

// Runs `run(i)` for every i in [0, n) on a thread each; the first failure, else the results.
StatusOr<std::vector<SimResult>> RunAll(size_t n,
                                        const std::function<StatusOr<SimResult>(size_t)>& run) {
  std::vector<std::future<StatusOr<SimResult>>> futures;
  for (size_t i = 0; i < n; ++i) futures.push_back(std::async(std::launch::async, run, i));
  std::vector<SimResult> results;
  Status first = absl::OkStatus();
  for (auto& f : futures) {
    auto r = f.get();
    if (!r.ok()) {
      if (first.ok()) first = r.status();
      continue;
    }
    results.push_back(std::move(*r));
  }
  if (!first.ok()) return first;
  return results;
}

}  // namespace

StatusOr<SwfStudyResult> RunSwfStudy(const SwfStudy& study) {
  for (const std::string& name : study.policies) {
    RETURN_IF_ERROR(sched::MakePolicy(name, study.policy_options).status());
  }
  SwfStudyResult out;
  ASSIGN_OR_RETURN(out.trace, study.trace_path.empty()
                                  ? DecodeSwf(std::string(BuiltinTraceGz()), BuiltinTraceName(),
                                              study.read)
                                  : ReadSwfFile(study.trace_path, study.read));
  if (out.trace.jobs.empty()) {
    return absl::InvalidArgumentError(core::StrCat(
        "no job of '", out.trace.name, "' passes the input filter (", out.trace.dropped,
        " dropped); traces without requested times need --estimate-from-runtime"));
  }
  if (study.require_unix_start && out.trace.unix_start <= 0) {
    return absl::InvalidArgumentError(core::StrCat(
        "--accounting-out: ", out.trace.name,
        " has no UnixStartTime in its header; give its first day with --accounting-start "
        "(e.g. --accounting-start 2026-09-01)"));
  }
  out.cluster = SwfCluster(out.trace);
  out.jobs = SwfJobs(out.trace, study.estimate);
  RETURN_IF_ERROR(AddMaintenance(study.maint, out.jobs, &out.cluster, &out.notes));
  const sched::Cluster& cluster = out.cluster;
  const std::vector<SimJob>& jobs = out.jobs;
  ASSIGN_OR_RETURN(const std::vector<PrioritySetup> setups,
                   PrioritySetups(study.priority, jobs, {}, &out.notes));
  // Each policy under each priority: policy-major, as asked.
  const size_t per_policy = std::max<size_t>(1, setups.size());
  std::vector<std::unique_ptr<sched::Policy>> runs;
  for (const std::string& name : study.policies) {
    for (size_t k = 0; k < per_policy; ++k) {
      ASSIGN_OR_RETURN(std::unique_ptr<sched::Policy> p,
                       sched::MakePolicy(name, study.policy_options));
      runs.push_back(std::move(p));
    }
  }
  ASSIGN_OR_RETURN(out.results, RunAll(runs.size(), [&](size_t i) {
                     SimOptions so;
                     if (study.progress) {
                       so.progress = [&study, i](double f) { study.progress(i, f); };
                     }
                     if (!setups.empty()) so.priority = &setups[i % per_policy];
                     so.record_nodes = study.record_nodes;
                     return Simulate(cluster, jobs, *runs[i], so);
                   }));
  for (size_t i = 0; i < out.results.size(); ++i) {
    SimResult& r = out.results[i];
    if (!setups.empty()) {
      r.policy = core::StrCat(r.policy, "+", study.priority.names[i % per_policy]);
      out.fairness.push_back(SummarizeFairness(r));
    }
    out.rows.push_back(Summarize(r));
  }
  return out;
}

std::vector<LateStart> LateStarts(std::span<const SimResult> results) {
  std::vector<LateStart> late;
  for (const SimResult& r : results) {
    for (const JobRecord& j : r.jobs) {
      if (r.policy == "slurm" && !j.promised_as_head) continue;
      if (j.start > j.promised_start) late.push_back(LateStart{r.policy, j.id, j.start, j.promised_start});
    }
  }
  return late;
}

StatusOr<GpuStudyResult> RunGpuStudy(const GpuStudy& study) {
  GpuStudyResult out;
  ASSIGN_OR_RETURN(out.workload, study.trace.empty() ? SyntheticWorkload(study.synthetic)
                                                     : ReadAlibabaGpuTrace(study.trace));
  GpuWorkload& workload = out.workload;
  if (workload.jobs.empty()) {
    return absl::InvalidArgumentError(core::StrCat("'", workload.name, "' has no jobs"));
  }
  if (study.arrival_scale <= 0 || study.arrival_scale > 1) {
    return absl::InvalidArgumentError("--arrival-scale must be in (0, 1]");
  }
  if (study.arrival_scale < 1) {
    // Same jobs, same order, arriving closer together: more of them wait at once.
    const Time first = workload.jobs.front().submit;
    for (SimJob& j : workload.jobs) {
      j.submit = first + static_cast<Time>(static_cast<double>(j.submit - first) *
                                           study.arrival_scale);
    }
    workload.notes.push_back(core::StrCat("submit times scaled by ", study.arrival_scale,
                                          " toward the first submission"));
  }

  RETURN_IF_ERROR(AddMaintenance(study.maint, workload.jobs, &workload.cluster, &workload.notes));

  // GPU clusters bill GPUs: a VC's quota is in GPUs.
  PriorityStudy priority = study.priority;
  if (priority.billing.empty()) {
    ASSIGN_OR_RETURN(priority.billing, core::TresBillingWeights::Parse("GRES/gpu=1"));
    if (!priority.names.empty()) {
      workload.notes.push_back("billing: TRESBillingWeights=GRES/gpu=1 (a GPU-second costs 1)");
    }
  }
  ASSIGN_OR_RETURN(const std::vector<PrioritySetup> setups,
                   PrioritySetups(priority, workload.jobs, workload.accounts, &workload.notes));
  struct Run {
    std::string name;
    sched::Cluster cluster;
    std::unique_ptr<sched::Policy> policy;
    std::string placement;
    const PrioritySetup* priority;
  };
  std::vector<Run> runs;
  for (const std::string& placement : study.placements) {
    for (const std::string& policy : study.policies) {
      for (size_t k = 0; k < std::max<size_t>(1, setups.size()); ++k) {
        Run r{core::StrCat(placement, "/", policy), workload.cluster, nullptr, placement, nullptr};
        if (!setups.empty()) {
          r.name += core::StrCat("+", study.priority.names[k]);
          r.priority = &setups[k];
        }
        if (placement == "topo") {
          r.cluster.placement = sched::Placement::kTopology;
        } else if (placement == "first-fit") {
          r.cluster.placement = sched::Placement::kFirstFit;
        } else {
          return absl::InvalidArgumentError(
              core::StrCat("unknown placement '", placement, "' (use first-fit or topo)"));
        }
        ASSIGN_OR_RETURN(r.policy, sched::MakePolicy(policy, study.policy_options));
        runs.push_back(std::move(r));
      }
    }
  }
  ASSIGN_OR_RETURN(out.results, RunAll(runs.size(), [&](size_t i) -> StatusOr<SimResult> {
                     SimOptions so;
                     so.comm_fraction = study.comm_fraction;
                     so.priority = runs[i].priority;
                     so.record_nodes = study.record_nodes;
                     auto r = Simulate(runs[i].cluster, workload.jobs, *runs[i].policy, so);
                     if (!r.ok()) {
                       return Status(r.status().code(),
                                     core::StrCat(runs[i].name, ": ", std::string(r.status().message())));
                     }
                     return r;
                   }));
  for (size_t i = 0; i < runs.size(); ++i) {
    // The row names the policy (and priority); the result, the whole run.
    out.results[i].policy = runs[i].name.substr(runs[i].placement.size() + 1);
    out.rows.push_back(SummarizeGpu(out.results[i], runs[i].placement));
    out.results[i].policy = runs[i].name;
    if (runs[i].priority) out.fairness.push_back(SummarizeFairness(out.results[i]));
  }
  return out;
}

bool IsGpuTrace(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return true;
  return absl::EndsWith(path, ".csv");
}

std::string DescribeTopology(const model::ClusterTopology& t) {
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

}  // namespace loom::sim
