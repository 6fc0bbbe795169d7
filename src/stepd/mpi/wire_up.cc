#include "stepd/mpi/wire_up.h"

#include "core/strings.h"
#include "model/step.h"
#include "stepd/mpi/pmi_server.h"
#include "stepd/mpi/pmix_server.h"

namespace loom::stepd {

using core::StrCat;

std::string MpiTypeOf(const StepJob& step) {
  auto it = step.job.environment.find("SLURM_MPI_TYPE");
  if (it == step.job.environment.end()) return "";
  if (it->second == "pmix" || it->second == "pmix_v4") return "pmix";
  if (it->second == "pmi2") return "pmi2";
  return "";
}

int32_t WireUpStep::size() const {
  int32_t n = 0;
  for (const std::vector<int32_t>& r : ranks) n += static_cast<int32_t>(r.size());
  return n;
}

int32_t WireUpStep::NodeOf(uint32_t rank) const {
  for (size_t n = 0; n < ranks.size(); ++n) {
    for (int32_t r : ranks[n]) {
      if (static_cast<uint32_t>(r) == rank) return static_cast<int32_t>(n);
    }
  }
  return -1;
}

StatusOr<WireUpStep> WireUpStepOf(const StepJob& step) {
  WireUpStep w;
  w.job_id = step.job.job_id;
  w.uid = step.job.uid;
  w.gid = step.job.gid;
  w.work_dir = step.job.work_dir;
  w.tree_width = step.tree_width > 0 ? step.tree_width : 50;
  w.addresses = step.node_addresses;
  w.shared_memory_dir_given =
      step.job.environment.contains("OMPI_MCA_btl_vader_backing_directory") ||
      step.job.environment.contains("OMPI_MCA_btl_sm_backing_directory");
  if (step.placement) {
    const StepPlacement& p = *step.placement;
    w.step_id = p.step_id;
    w.nodes = p.nodes;
    w.ranks = model::TaskIds(p.tasks_per_node, p.distribution);
    w.me = p.node_index;
  } else {
    w.nodes = step.job.nodes;
    w.ranks = model::TaskIds(TasksPerNode(step.job), step.distribution);
    w.me = step.job.node_index;
  }
  const std::string what =
      w.step_id ? StrCat("step ", w.job_id, ".", *w.step_id) : StrCat("job ", w.job_id);
  if (w.nodes.empty() || w.ranks.size() != w.nodes.size() || w.me < 0 ||
      static_cast<size_t>(w.me) >= w.nodes.size()) {
    return absl::InvalidArgumentError(
        StrCat(what, ": the launch does not say where its ranks run"));
  }
  if (w.addresses.size() != w.nodes.size()) {
    return absl::InvalidArgumentError(StrCat(
        what, " asks for MPI wire-up, but its launch names ", w.addresses.size(),
        " node daemons for ", w.nodes.size(), " nodes (a controller older than this node?)"));
  }
  return w;
}

StatusOr<std::unique_ptr<WireUp>> StartWireUp(const StepJob& step, const std::string& relay_socket,
                                              AbortStep abort_step) {
  const std::string type = MpiTypeOf(step);
  if (type.empty()) return std::unique_ptr<WireUp>();
  ASSIGN_OR_RETURN(WireUpStep layout, WireUpStepOf(step));
  if (type == "pmix") return StartPmixServer(layout, relay_socket, std::move(abort_step));
  return StartPmiServer(layout, relay_socket, std::move(abort_step));
}

}  // namespace loom::stepd
