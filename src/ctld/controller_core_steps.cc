// ControllerCore's rules for steps inside a running job's allocation (srun from a batch
// script or a salloc shell): where a step's tasks go among the job's nodes, which CPUs
// --exclusive steps hold, and how the nodes' reports end a step without ending its job.
#include <signal.h>

#include <algorithm>

#include "core/strings.h"
#include "ctld/controller_core.h"

namespace loom::ctld {

using model::JobState;

StatusOr<std::optional<StepRecord>> ControllerCore::CreateStep(const StepAsk& ask,
                                                               const Caller& who, Time now,
                                                               Effects* fx) {
  JobEntry* e = FindMutable(ask.job_id);
  if (e == nullptr) return absl::NotFoundError("Invalid job id specified");
  if (!MayActOn(who, *e)) return absl::PermissionDeniedError("Access/permission denied");
  if (e->job.state == JobState::kPending) {
    return absl::FailedPreconditionError("Job is pending execution");
  }
  if (e->job.state != JobState::kRunning || e->completing || e->alloc().empty()) {
    return absl::FailedPreconditionError("Job/step already completing or completed");
  }
  const int32_t job_nodes = static_cast<int32_t>(e->alloc().size());
  const int32_t cpt = std::max(1, ask.cpus_per_task);
  if (ask.nodes > job_nodes) {
    return absl::InvalidArgumentError("Requested node configuration is not available");
  }
  int32_t want_nodes = ask.nodes > 0 ? ask.nodes : job_nodes;
  if (ask.nodes == 0 && ask.ntasks > 0 && ask.ntasks_per_node == 0) {
    want_nodes = std::min(want_nodes, ask.ntasks);
  }
  if (ask.ntasks > 0 && ask.ntasks < want_nodes) want_nodes = ask.ntasks;
  int32_t ntasks = ask.ntasks;
  if (ntasks == 0) ntasks = ask.ntasks_per_node > 0 ? ask.ntasks_per_node * want_nodes : want_nodes;

  // Could it ever run, on the job's CPUs with no other step?
  std::vector<int32_t> job_cpus;
  for (const sched::NodeAlloc& a : e->alloc()) job_cpus.push_back(a.amount.cpus);
  std::vector<int32_t> by_size = job_cpus;
  std::sort(by_size.rbegin(), by_size.rend());
  int64_t best = 0;
  for (int32_t i = 0; i < want_nodes; ++i) best += by_size[i] / cpt;
  if (int64_t{ntasks} > best ||
      (ask.ntasks_per_node > 0 && ask.ntasks_per_node * cpt > by_size[want_nodes - 1])) {
    return absl::InvalidArgumentError("More processors requested than permitted");
  }

  JobSteps& table = steps_[e->job.id];
  // CPUs running --exclusive steps hold, per job node.
  std::vector<int32_t> free = job_cpus;
  for (const auto& [id, s] : table.steps) {
    if (s.state != JobState::kRunning) continue;
    for (size_t i = 0; i < s.nodes.size(); ++i) free[s.nodes[i]] -= s.cpus_held[i];
  }
  StepRecord step;
  std::vector<int32_t> usable_cpus;
  for (int32_t n = 0; n < job_nodes && static_cast<int32_t>(step.nodes.size()) < want_nodes; ++n) {
    const int32_t cpus = ask.exclusive ? free[n] : job_cpus[n];
    const int32_t need = ask.ntasks_per_node > 0 ? ask.ntasks_per_node * cpt : cpt;
    if (cpus < need) continue;
    step.nodes.push_back(n);
    usable_cpus.push_back(cpus);
  }
  if (static_cast<int32_t>(step.nodes.size()) < want_nodes) return std::nullopt;  // busy
  const model::TaskRequest layout{
      ntasks > 0 ? std::optional<int32_t>(ntasks) : std::nullopt,
      ask.ntasks_per_node > 0 ? std::optional<int32_t>(ask.ntasks_per_node) : std::nullopt, cpt};
  step.tasks_per_node = model::TaskCounts(layout, usable_cpus);
  for (size_t i = 0; i < step.nodes.size(); ++i) {
    const int32_t cpus = step.tasks_per_node[i] * cpt;
    if (ask.exclusive && cpus > usable_cpus[i]) return std::nullopt;  // busy
    step.cpus_held.push_back(ask.exclusive ? cpus : 0);
  }
  if (site_.cluster.mpi_ports_low > 0) {
    std::vector<int32_t> on;
    for (int32_t i : step.nodes) on.push_back(e->alloc()[i].node);
    ASSIGN_OR_RETURN(step.resv_ports,
                     ReservePorts(on, *std::max_element(step.tasks_per_node.begin(),
                                                        step.tasks_per_node.end())));
  }
  step.id = table.next_id++;
  step.name = ask.name;
  step.command = ask.command;
  step.cpus_per_task = cpt;
  step.distribution = ask.distribution;
  step.start_time = now;
  // What srun did not say, the job's submission may (sbatch --gpu-bind, or job_submit.lua's
  // tres_bind); the nodes apply the same defaults (stepd/launch_request.cc).
  step.cpu_bind = ask.cpu_bind.empty() && e->request ? e->request->cpu_bind : ask.cpu_bind;
  step.gpu_bind = ask.gpu_bind.empty() && e->request ? e->request->gpu_bind : ask.gpu_bind;
  step.gpus_per_task = ask.gpus_per_task;
  table.steps.emplace(step.id, step);
  if (fx != nullptr) fx->steps_changed.push_back(e->job.id);
  return std::optional<StepRecord>(std::move(step));
}

void ControllerCore::RecordUsage(JobId job, std::optional<uint32_t> step, std::string_view node,
                                 int64_t user_cpu_usec, int64_t system_cpu_usec,
                                 int64_t max_rss_bytes) {
  if (step) {
    auto table = steps_.find(job);
    if (table == steps_.end()) return;
    auto it = table->second.steps.find(*step);
    if (it == table->second.steps.end() || it->second.nodes_done.contains(node)) return;
    it->second.usage.Add(node, user_cpu_usec, system_cpu_usec, max_rss_bytes);
    return;
  }
  JobEntry* e = FindMutable(job);
  if (e == nullptr || !RunsOn(*e, NodeIndex(node))) return;  // gone, or an earlier run
  e->mutable_history().usage.Add(node, user_cpu_usec, system_cpu_usec, max_rss_bytes);
}

void ControllerCore::StepNodeEnded(JobId job, uint32_t step_id, std::string_view node,
                                   int32_t status, std::string_view launch_error, Time now,
                                   Effects* fx, bool out_of_memory) {
  auto table = steps_.find(job);
  if (table == steps_.end()) return;
  auto it = table->second.steps.find(step_id);
  if (it == table->second.steps.end()) return;
  StepRecord& step = it->second;
  if (step.nodes_done.contains(node)) return;  // a repeated report
  const JobEntry* e = Find(job);
  static const sched::Allocation kNone;
  const sched::Allocation& alloc = e == nullptr ? kNone : e->placement();
  const bool its_node = std::any_of(step.nodes.begin(), step.nodes.end(), [&](int32_t n) {
    return static_cast<size_t>(n) < alloc.size() && cluster_.nodes[alloc[n].node].name == node;
  });
  if (!its_node) return;
  step.nodes_done.emplace(node);
  if (fx != nullptr) fx->steps_changed.push_back(job);
  step.status.Add(status);
  step.out_of_memory = step.out_of_memory || out_of_memory;
  if (!launch_error.empty() && !step.launch_failed) {
    step.launch_failed = true;
    step.launch_failed_node = std::string(node);
    step.launch_error = std::string(launch_error);
    // The step cannot go on without this node: its tasks elsewhere are ended.
    if (step.state == JobState::kRunning && e != nullptr && !e->alloc().empty()) {
      SignalJob s{job, SIGKILL, {}, step_id};
      for (int32_t n : step.nodes) s.nodes.push_back(e->alloc()[n].node);
      fx->signals.push_back(std::move(s));
    }
  }
  if (step.nodes_done.size() < step.nodes.size()) return;
  if (step.state == JobState::kRunning) {
    step.end_time = now;
    step.state = step.cancelled       ? JobState::kCancelled
                 : step.launch_failed ? JobState::kFailed
                                      : model::EndedState(step.status.wait_status(),
                                                          step.out_of_memory);
  }
  if (e != nullptr) fx->touched.push_back(e->job.id);
}

StatusOr<std::vector<int32_t>> ControllerCore::RunningNodes(JobId id, const Caller& who) const {
  const JobEntry* e = Find(id);
  if (e == nullptr) return absl::NotFoundError("Invalid job id specified");
  if (!MayActOn(who, *e)) return absl::PermissionDeniedError("Access/permission denied");
  if (e->job.state != JobState::kRunning) {
    return absl::FailedPreconditionError("Job is not running");
  }
  std::vector<int32_t> nodes;
  for (const sched::NodeAlloc& a : e->alloc()) nodes.push_back(a.node);
  return nodes;
}

Status ControllerCore::SignalStep(JobId job, uint32_t step_id, int32_t signal, const Caller& who,
                                  Time now, Effects* fx) {
  (void)now;
  JobEntry* e = FindMutable(job);
  if (e == nullptr) return absl::NotFoundError("Invalid job id specified");
  if (!MayActOn(who, *e)) return absl::PermissionDeniedError("Access/permission denied");
  auto table = steps_.find(job);
  StepRecord* step = nullptr;
  if (table != steps_.end()) {
    auto it = table->second.steps.find(step_id);
    if (it != table->second.steps.end()) step = &it->second;
  }
  if (step == nullptr) return absl::NotFoundError("Invalid job id specified");
  if (step->state != JobState::kRunning || e->alloc().empty()) {
    return absl::FailedPreconditionError("Job/step already completing or completed");
  }
  SignalJob s{job, signal == 0 ? SIGTERM : signal, {}, step_id};
  for (int32_t n : step->nodes) s.nodes.push_back(e->alloc()[n].node);
  fx->signals.push_back(std::move(s));
  if (signal == 0 || signal == SIGKILL) {
    step->cancelled = true;
    fx->steps_changed.push_back(job);
  }
  return absl::OkStatus();
}

Status ControllerCore::ReleaseAllocation(JobId job, int32_t status, const Caller& who, Time now,
                                         Effects* fx) {
  JobEntry* e = FindMutable(job);
  if (e == nullptr) return absl::NotFoundError("Invalid job id specified");
  if (!MayActOn(who, *e)) return absl::PermissionDeniedError("Access/permission denied");
  if (!e->request->allocation_only) {
    return absl::InvalidArgumentError(
        core::StrCat("job ", job, " is not an allocation of salloc's; only salloc releases one"));
  }
  if (e->job.state == JobState::kPending) {
    End(*e, JobState::kCancelled, status, now, fx);
    return absl::OkStatus();
  }
  if (e->job.state != JobState::kRunning) {
    return absl::FailedPreconditionError("Job/step already completing or completed");
  }
  End(*e, model::EndedState(status, false), status, now, fx);
  return absl::OkStatus();
}

void ControllerCore::EndSteps(JobEntry& e, bool kill, Time now, Effects* fx) {
  auto table = steps_.find(e.job.id);
  if (table == steps_.end()) return;
  for (auto& [id, step] : table->second.steps) {
    if (step.state != JobState::kRunning) continue;
    step.cancelled = true;
    step.state = JobState::kCancelled;
    step.end_time = now;
    if (fx != nullptr) fx->steps_changed.push_back(e.job.id);
    if (kill && fx != nullptr && !e.alloc().empty()) {
      SignalJob s{e.job.id, SIGKILL, {}, id};
      for (int32_t n : step.nodes) s.nodes.push_back(e.alloc()[n].node);
      fx->signals.push_back(std::move(s));
    }
  }
}

std::vector<std::pair<const JobEntry*, const StepRecord*>> ControllerCore::Steps(JobId job) const {
  std::vector<std::pair<const JobEntry*, const StepRecord*>> out;
  auto add = [&](JobId id, const JobSteps& table) {
    const JobEntry* e = Find(id);
    if (e == nullptr) return;
    for (const auto& [step_id, step] : table.steps) out.emplace_back(e, &step);
  };
  if (job != 0) {
    if (auto it = steps_.find(job); it != steps_.end()) add(job, it->second);
    return out;
  }
  for (const auto& [id, table] : steps_) add(id, table);
  return out;
}

const JobSteps* ControllerCore::StepsOf(JobId job) const {
  auto it = steps_.find(job);
  return it == steps_.end() ? nullptr : &it->second;
}

void ControllerCore::RestoreSteps(JobId job, JobSteps steps, std::optional<StepProgress> srun) {
  JobEntry* e = FindMutable(job);
  if (e == nullptr) return;
  if (!steps.steps.empty() || steps.next_id > 0) steps_[job] = std::move(steps);
  if (srun) e->mutable_history().step = std::make_shared<const StepProgress>(*std::move(srun));
}

StatusOr<std::vector<int32_t>> ControllerCore::ReservePorts(const std::vector<int32_t>& nodes,
                                                            int32_t count) const {
  const int32_t low = site_.cluster.mpi_ports_low, high = site_.cluster.mpi_ports_high;
  std::vector<bool> used(static_cast<size_t>(high - low + 1), false);
  auto mark = [&](const std::vector<int32_t>& ports) {
    for (int32_t p : ports) {
      if (p >= low && p <= high) used[static_cast<size_t>(p - low)] = true;
    }
  };
  auto shares = [&](int32_t node) {
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  };
  for (JobId id : live_) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || !it->second.holds_nodes()) continue;
    const JobEntry& e = it->second;
    if (!e.history().resv_ports.empty() &&
        std::any_of(e.alloc().begin(), e.alloc().end(),
                    [&](const sched::NodeAlloc& a) { return shares(a.node); })) {
      mark(e.history().resv_ports);
    }
    auto steps = steps_.find(id);
    if (steps == steps_.end()) continue;
    for (const auto& [step_id, s] : steps->second.steps) {
      if (s.state != JobState::kRunning || s.resv_ports.empty()) continue;
      for (int32_t i : s.nodes) {
        if (i >= 0 && static_cast<size_t>(i) < e.alloc().size() && shares(e.alloc()[i].node)) {
          mark(s.resv_ports);
          break;
        }
      }
    }
  }
  std::vector<int32_t> out;
  for (int32_t p = low; p <= high && static_cast<int32_t>(out.size()) < count; ++p) {
    if (!used[static_cast<size_t>(p - low)]) out.push_back(p);
  }
  if (static_cast<int32_t>(out.size()) < count) {
    return absl::ResourceExhaustedError(core::StrCat(
        "MpiParams=ports=", low, "-", high, " has not ", count,
        " ports free on the step's nodes; steps now running hold them (ask again once some end)"));
  }
  return out;
}

}  // namespace loom::ctld
