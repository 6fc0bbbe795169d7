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

namespace loom::sim {

StatusOr<PolicyOptions> PolicyOptionsFromFile(const std::string& path, std::string* warnings) {
  std::vector<conf::Diagnostic> diagnostics;
  auto config = conf::LoadSlurmConf(path, &diagnostics);
  if (!diagnostics.empty()) {
    if (!warnings->empty()) *warnings += '\n';
    *warnings += conf::JoinDiagnostics(diagnostics);
  }
  if (!config.ok()) return config.status();
  return sched::PolicyOptionsFromConfig(*config);
}

namespace {

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
  std::vector<std::unique_ptr<sched::Policy>> policies;
  for (const std::string& name : study.policies) {
    ASSIGN_OR_RETURN(std::unique_ptr<sched::Policy> p, sched::MakePolicy(name, study.policy_options));
    policies.push_back(std::move(p));
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
  const sched::Cluster cluster = SwfCluster(out.trace);
  const std::vector<SimJob> jobs = SwfJobs(out.trace, study.estimate);
  ASSIGN_OR_RETURN(out.results, RunAll(policies.size(), [&](size_t i) {
                     SimOptions so;
                     if (study.progress) {
                       so.progress = [&study, i](double f) { study.progress(i, f); };
                     }
                     return Simulate(cluster, jobs, *policies[i], so);
                   }));
  for (const SimResult& r : out.results) out.rows.push_back(Summarize(r));
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

  struct Run {
    std::string name;
    sched::Cluster cluster;
    std::unique_ptr<sched::Policy> policy;
    std::string placement;
  };
  std::vector<Run> runs;
  for (const std::string& placement : study.placements) {
    for (const std::string& policy : study.policies) {
      Run r{core::StrCat(placement, "/", policy), workload.cluster, nullptr, placement};
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
  ASSIGN_OR_RETURN(out.results, RunAll(runs.size(), [&](size_t i) -> StatusOr<SimResult> {
                     SimOptions so;
                     so.comm_fraction = study.comm_fraction;
                     auto r = Simulate(runs[i].cluster, workload.jobs, *runs[i].policy, so);
                     if (!r.ok()) {
                       return Status(r.status().code(),
                                     core::StrCat(runs[i].name, ": ", std::string(r.status().message())));
                     }
                     return r;
                   }));
  for (size_t i = 0; i < runs.size(); ++i) {
    out.rows.push_back(SummarizeGpu(out.results[i], runs[i].placement));
    out.results[i].policy = runs[i].name;
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
