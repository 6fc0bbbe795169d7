// Test support: the views of the reference cluster scenario that produced Slurm 22.05's
// outputs in tests/data/slurm-ref/ (see its README): 16 nodes n001..n016 with 64 CPUs in 2
// sockets, 512000 MB and 8 GPUs each, one partition `batch`, and the jobs the scenario
// submitted (1 = a finished smoke job, 3 = sleeper, 4 = gpujob, 5 = held, 6 = afterok:3,
// 7 = array 1-10%2 with tasks 1 and 2 (job ids 9, 10) running, 8 = 16-node exclusive job).
// Each function returns the state at one moment of that scenario, in the controller's order.
// Also the reader of the reference files. Not thread-safe in any interesting way: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/format/views.h"
#include "core/status.h"

namespace loom::cli::format::testing {

// Unix time of hh:mm:ss on the scenario's day (2026-11-29, the zone is UTC).
int64_t At(int hour, int minute, int second);

// The 16 nodes, all idle (the first sinfo/scontrol outputs, before any job ran).
std::vector<NodeView> IdleNodes();
// The nodes while jobs 3, 4, 9 and 10 run on n001 (14 CPUs, 12048 MB and 2 GPUs in use).
std::vector<NodeView> BusyNodes();
std::vector<PartitionView> Partitions();

// The jobs at 18:56:35, when squeue was run: 1 completed; 3, 4, 7_1, 7_2 running; 5, 6, 7's
// pending tasks and 8 pending. In the order the controller lists them (1 3 4 5 6 9 8 10 7).
std::vector<JobView> BusyJobs();
// One job of BusyJobs() by job id.
JobView BusyJob(uint32_t job_id);
RenderContext BusyContext();  // now = 18:56:35

// The standard output a reference file recorded: the file is "$ <command>", the output,
// optionally "--- stderr ---" and its text, then "--- exit=N ---". Fails when the file is
// missing or not in that form; `exit_status` receives N.
StatusOr<std::string> ReadReferenceOutput(const std::string& name, int* exit_status = nullptr);

}  // namespace loom::cli::format::testing
