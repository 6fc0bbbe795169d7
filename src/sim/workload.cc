#include "sim/workload.h"

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
  for (const SwfJob& s : trace.jobs) {
    SimJob j;
    j.id = static_cast<sched::JobId>(jobs.size() + 1);
    j.submit = s.submit;
    j.run = s.run;
    j.estimate = estimate == EstimateKind::kExact ? s.run : s.estimate;
    j.shape.ntasks = s.procs;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace loom::sim
