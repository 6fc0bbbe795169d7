#include "sim/workload.h"

#include <unordered_map>

#include "core/strings.h"

namespace loom::sim {

sched::Cluster SwfCluster(const SwfTrace& trace) {
  sched::Cluster c;
  model::Node n;
  n.name = "pool";
  n.capacity.cpus = static_cast<int32_t>(trace.machine_procs);
  c.nodes.push_back(n);
  model::Partition p;
  p.name = "all";
  p.nodes = {0};
  p.is_default = true;
  c.partitions.push_back(p);
  return c;
}

std::vector<SimJob> SwfJobs(const SwfTrace& trace, EstimateKind estimate) {
  std::vector<SimJob> jobs;
  jobs.reserve(trace.jobs.size());
  std::unordered_map<int64_t, sched::JobId> renumbered;  // SWF job number -> SimJob id
  for (const SwfJob& s : trace.jobs) {
    SimJob j;
    j.id = static_cast<sched::JobId>(jobs.size() + 1);
    renumbered.emplace(s.id, j.id);
    j.submit = s.submit;
    j.run = s.run;
    j.estimate = estimate == EstimateKind::kExact ? s.run : s.estimate;
    j.shape.ntasks = s.procs;
    j.uid = s.user >= 0 ? static_cast<uint32_t>(s.user) : 0;
    // Fair share's association: the group is the account, the user the user.
    j.account = s.group >= 0 ? core::StrCat("g", s.group) : "nogroup";
    j.user = s.user >= 0 ? core::StrCat("u", s.user) : "nouser";
    // The preceding job must end first (afterany). A job the filter dropped, or one that
    // comes later in the trace, holds nothing back.
    if (auto before = renumbered.find(s.preceding);
        s.preceding > 0 && before != renumbered.end() && before->second != j.id) {
      model::DependencyClause c;
      c.type = model::DependencyType::kAfterAny;
      c.jobs.push_back(model::DependencyTarget{before->second, std::nullopt, false, 0});
      j.dependency.clauses.push_back(std::move(c));
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace loom::sim
