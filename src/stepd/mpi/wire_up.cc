#include "stepd/mpi/wire_up.h"

#include <unistd.h>

#include <filesystem>

#include "core/log.h"
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

std::string WireUpDirPrefix(uint64_t job, std::optional<uint32_t> step, const std::string& node) {
  const char* root = ::access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
  return StrCat(root, "/loom-pmix.", job, ".", step ? std::to_string(*step) : "srun", ".", node,
                ".");
}

void RemoveWireUpDirs(uint64_t job, std::optional<uint32_t> step, const std::string& node) {
  const std::string prefix = WireUpDirPrefix(job, step, node);
  const std::filesystem::path dir = std::filesystem::path(prefix).parent_path();
  const std::string name = std::filesystem::path(prefix).filename().string();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string found = entry.path().filename().string();
    // The prefix and mkdtemp's six characters, nothing else.
    if (found.size() == name.size() + 6 && found.starts_with(name)) {
      std::filesystem::remove_all(entry.path(), ec);
    }
  }
}

int32_t WireUpStep::size() const {
  int32_t n = 0;
  for (const std::vector<int32_t>& r : ranks) n += static_cast<int32_t>(r.size());
  return n;
}

std::string WireUpStep::JobStep() const { return StrCat(job_id, ".", step_id.value_or(0)); }

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

StepLink::StepLink(const WireUpStep& step, std::string name, AbortStep abort_step)
    : step_(step),
      name_(std::move(name)),
      abort_step_(std::move(abort_step)),
      exchange_(std::make_unique<StepExchange>(
          static_cast<int32_t>(step.nodes.size()), step.tree_width, step.me,
          [this](const std::vector<int32_t>& nodes, const v1::StepMessage& m) {
            core::MutexLock lock(&mu_);
            if (channel_) channel_->Send(nodes, m);
          })) {
  exchange_->SetOnAbort([this](const v1::StepMessage::Abort& a) { EndStep(a); });
}

void StepLink::Abort(const v1::StepMessage::Abort& abort) {
  exchange_->Abort(abort);
  EndStep(abort);
}

void StepLink::EndStep(const v1::StepMessage::Abort& abort) {
  const std::string why =
      StrCat("rank ", abort.rank(), " aborted the step (status ", abort.status(),
             abort.message().empty() ? "" : ": ", abort.message(), ")");
  core::LogInfo("{}: {}", name_, why);
  if (abort_step_) abort_step_(why);
}

Status StepLink::Connect(const std::string& relay_socket) {
  if (step_.nodes.size() <= 1) return absl::OkStatus();
  StepExchange* exchange = exchange_.get();
  ASSIGN_OR_RETURN(
      std::unique_ptr<RelayChannel> channel,
      RelayChannel::Open(
          relay_socket, step_.job_id, step_.step_id, step_.me, step_.addresses,
          [exchange](int32_t from, const v1::StepMessage& m) { exchange->Receive(from, m); }));
  core::MutexLock lock(&mu_);
  channel_ = std::move(channel);
  return absl::OkStatus();
}

void StepLink::Close() {
  std::unique_ptr<RelayChannel> closing;
  {
    core::MutexLock lock(&mu_);
    closing = std::move(channel_);
  }
  closing.reset();  // joins its reader, which may be sending through mu_
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
