#include "cli/submit/internal/sbatch_checks.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <set>

#include "cli/submit/internal/sbatch_values.h"
#include "core/strings.h"
#include "model/constraint.h"

namespace loom::cli::submit::internal {
namespace {

using core::StrCat;
using model::JobRequest;

std::string GresError() { return "sbatch: error: Invalid generic resource (gres) specification"; }

}  // namespace

Status CheckRequest(const SbatchSettings& settings, int error_exit, State* state) {
  State& st = *state;
  // 5. The checks sbatch makes once every source is in.
  JobRequest& r = st.r;
  int mem_options =
      (r.mem_per_node_mb ? 1 : 0) + (r.mem_per_cpu_mb ? 1 : 0) + (r.mem_per_gpu_mb ? 1 : 0);
  if (mem_options > 1) {
    return Fail("sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.",
                kFatalExit);
  }
  if (r.ignored_options.count("core-spec") > 0 && r.ignored_options.count("thread-spec") > 0) {
    return Fail("sbatch: fatal: -S/--core-spec and --thred-spec options are mutually exclusive",
                kFatalExit);
  }
  if (r.ntasks_per_gpu) {
    if (st.gpus_per_task) {
      return Fail(
          "sbatch: fatal: --gpus-per-task is mutually exclusive with --ntasks-per-gpu "
          "and SLURM_NTASKS_PER_GPU",
          kFatalExit);
    }
    if (st.gpus_per_socket) {
      return Fail(
          "sbatch: fatal: --gpus-per-socket is mutually exclusive with --ntasks-per-gpu "
          "and SLURM_NTASKS_PER_GPU",
          kFatalExit);
    }
    if (r.ntasks_per_node) {
      return Fail(
          "sbatch: fatal: --ntasks-per-node is mutually exclusive with --ntasks-per-gpu "
          "and SLURM_NTASKS_PER_GPU",
          kFatalExit);
    }
  }
  if (r.ntasks && r.min_nodes && *r.ntasks < *r.min_nodes) {
    st.warnings.push_back(StrCat("sbatch: Warning: can't run ", *r.ntasks, " processes on ",
                                 *r.min_nodes, " nodes, setting nnodes to ", *r.ntasks));
    r.min_nodes = r.max_nodes = *r.ntasks;
  }
  if (r.cpus_per_gpu && r.cpus_per_task) {
    return Fail(StrCat("sbatch: error: --cpus-per-gpu is mutually exclusive with "
                       "--cpus-per-task\n",
                       GresError()),
                error_exit);
  }
  auto counts = [&](const std::optional<std::string>& text, bool gres,
                    std::vector<model::TypedCount>* out) -> Status {
    if (!text) return absl::OkStatus();
    std::optional<std::vector<model::TypedCount>> parsed = ParseCounts(*text, gres);
    if (!parsed) return Fail(GresError(), error_exit);
    for (const model::TypedCount& c : *parsed) {
      if (std::find(settings.gres_types.begin(), settings.gres_types.end(), c.name) ==
          settings.gres_types.end()) {
        return Fail(GresError(), error_exit);
      }
    }
    *out = std::move(*parsed);
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(counts(st.gres, true, &r.gres));
  RETURN_IF_ERROR(counts(st.gpus, false, &r.gpus));
  RETURN_IF_ERROR(counts(st.gpus_per_node, false, &r.gpus_per_node));
  RETURN_IF_ERROR(counts(st.gpus_per_task, false, &r.gpus_per_task));
  RETURN_IF_ERROR(counts(st.gpus_per_socket, false, &r.gpus_per_socket));
  if (!r.gpus_per_task.empty() && r.gpus.empty() && !r.ntasks && !r.min_nodes) {
    return Fail(StrCat("sbatch: error: Failed to validate job spec. --gpus-per-task used "
                       "without either --gpus or -n/--ntasks is not allowed.\n",
                       GresError()),
                error_exit);
  }
  if (st.export_text) {
    StatusOr<model::ExportPolicy> policy = model::ParseExportPolicy(*st.export_text);
    if (!policy.ok())
      return Fail(StrCat("sbatch: error: ", std::string(policy.status().message())),
                  kOptionErrorExit);
    r.export_policy = *policy;
  }

  // 6. What the controller would reject: reported as sbatch reports a refused submission.
  auto refused = [&](std::string_view why) {
    return Fail(StrCat("sbatch: error: Batch job submission failed: ", why), error_exit);
  };
  if (!r.constraint.empty()) {
    StatusOr<model::FeatureExpr> features = model::FeatureExpr::Parse(r.constraint);
    if (!features.ok()) {
      std::string why(features.status().message());
      // Valid for Slurm, but beyond Loom's feature expressions: say so rather than "invalid".
      if (why.find("not supported") != std::string::npos) {
        return Fail(StrCat("sbatch: error: ", why), error_exit);
      }
      return refused("Invalid feature specification");
    }
  }
  if (st.dependency && !st.dependency->empty()) {
    StatusOr<model::Dependency> dep = model::ParseDependency(*st.dependency);
    if (!dep.ok()) return refused("Job dependency problem");
    r.dependency = *std::move(dep);
  }
  if (st.array) {
    StatusOr<model::ArraySpec> array = model::ParseArraySpec(*st.array, settings.max_array_size);
    if (!array.ok()) return refused("Invalid job array specification");
    r.array = *std::move(array);
  }
  return absl::OkStatus();
}

// Derives the scheduler's JobShape from the options as given (see docs/user/sbatch.md).
}  // namespace loom::cli::submit::internal
