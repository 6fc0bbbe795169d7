// ControllerCore's rules for the jobs srun submits, whose tasks run on every node of the job:
// such a job ends once each of its nodes has reported (see core.h).
#include <algorithm>

#include "ctld/controller_core.h"

namespace loom::ctld {

using model::JobState;

void ControllerCore::StepNodeEnded(JobEntry& e, std::string_view node, int32_t status,
                                   bool out_of_memory, Time now, Effects* fx) {
  if (!e.holds_nodes()) return;  // ended and released
  const bool its_node =
      std::any_of(e.alloc().begin(), e.alloc().end(),
                  [&](const sched::NodeAlloc& a) { return cluster_.nodes[a.node].name == node; });
  if (!its_node) return;
  const std::shared_ptr<const StepProgress>& before = e.history().step;
  if (before && before->nodes_done.contains(node)) return;  // a repeated report
  auto next = before ? std::make_shared<StepProgress>(*before) : std::make_shared<StepProgress>();
  next->nodes_done.emplace(node);
  next->status.Add(status);
  next->out_of_memory = next->out_of_memory || out_of_memory;
  e.mutable_history().step = next;
  const StepProgress& step = *next;
  if (step.nodes_done.size() < e.alloc().size()) {
    if (fx != nullptr) fx->steps_changed.push_back(e.job.id);  // the reports so far
    return;
  }
  const int32_t combined = step.status.wait_status();
  if (e.completing) {
    e.job.exit_code = combined;
    Release(e, fx);
  } else {
    End(e, model::EndedState(combined, step.out_of_memory), combined, now, fx);
  }
}

void ControllerCore::EndStep(JobEntry& e, JobState as, std::string_view node, int32_t status,
                             Time now, Effects* fx) {
  Kill(e, as, now, fx);  // the tasks on the other nodes are ended, and report
  StepNodeEnded(e, node, status, false, now, fx);
}

}  // namespace loom::ctld
