#include "cli/format/reference_scenario.h"

#include <fstream>
#include <sstream>

#include "core/strings.h"

namespace loom::cli::format::testing {
namespace {

using core::TresVector;
using model::JobState;

// 2026-11-29T18:56:18 UTC, the submit time of the scenario's first job.
constexpr int64_t kBase = 1795978578;
constexpr int64_t kBaseOfDay = 18 * 3600 + 56 * 60 + 18;

TresVector Tres(int64_t cpu, int64_t mem_mb, int64_t node, int64_t billing, int64_t gpus = 0) {
  TresVector t;
  t.Set(core::kTresCpu, cpu);
  t.Set(core::kTresMem, mem_mb);
  t.Set(core::kTresNode, node);
  t.Set(core::kTresBilling, billing);
  t.Set(core::kTresGpu, gpus);
  return t;
}

// What every job of the scenario shares: root's batch job in /tmp/slurm-ref/work with its
// output to /dev/null, one CPU and the cluster's DefMemPerCPU=1000.
JobView BaseJob(uint32_t id, std::string name) {
  JobView j;
  j.job_id = id;
  j.name = std::move(name);
  j.user_name = "root";
  j.group_name = "root";
  j.account = "root";
  j.qos = "normal";
  j.cluster = "slurmref";
  j.association_id = 2;
  j.partition = "batch";
  j.alloc_node = "localhost";
  j.alloc_sid = 3014;
  j.work_dir = "/tmp/slurm-ref/work";
  j.std_in = "/dev/null";
  j.std_out = "/dev/null";
  j.memory_per_cpu = true;
  j.min_memory_mb = 1000;
  j.tres_req = Tres(1, 1000, 1, 1);
  return j;
}

// Marks a job as running (or ran) on n001 with the given cores of socket 0.
void Allocate(JobView* j, std::vector<int32_t> cores, int64_t mem_mb) {
  j->nodes = "n001";
  j->batch_host = "n001";
  j->tres_alloc = j->tres_req;
  j->billable_tres = static_cast<double>(j->tres_req.Get(core::kTresBilling));
  std::string cpu_ids = cores.size() == 1 ? core::StrCat(cores.front())
                                          : core::StrCat(cores.front(), "-", cores.back());
  j->node_details.push_back(JobNodeDetail{"n001", cpu_ids, mem_mb, ""});
  JobNodeAllocation a;
  a.node_name = "n001";
  a.sockets.emplace_back(0, std::move(cores));
  a.memory_allocated_mb = mem_mb;
  j->allocation.push_back(std::move(a));
}

NodeView BaseNode(int index) {
  static constexpr int64_t kFreeMem[] = {23735, 23735, 23734, 23733, 23733, 23732, 23731, 23730,
                                         23729, 23728, 23727, 23726, 23725, 23724, 23723, 23722};
  NodeView n;
  char name[8];
  std::snprintf(name, sizeof name, "n%03d", index);
  n.name = name;
  n.state = model::NodeState::kIdle;
  n.cpus = 64;
  n.cpus_effective = 64;
  n.cpu_load = 3.62;
  n.boards = 1;
  n.sockets = 2;
  n.cores_per_socket = 32;
  n.threads_per_core = 1;
  n.real_memory_mb = 512000;
  n.free_memory_mb = kFreeMem[index - 1];
  n.gres = "gpu:8";
  n.node_addr = "127.0.0.1";
  n.node_hostname = "localhost";
  n.port = 17000 + index;
  n.version = "22.05.8";
  n.arch = "x86_64";
  n.os = "Linux 6.18.44-fc-v509 #1 SMP PREEMPT_DYNAMIC @0";
  n.partitions = {"batch"};
  n.boot_time = At(18, 7, 5);
  n.slurmd_start_time = At(18, 56, 18);
  n.last_busy_time = index == 1 ? At(18, 56, 21) : At(18, 56, 18);
  n.cfg_tres.Set(core::kTresCpu, 64);
  n.cfg_tres.Set(core::kTresMem, 512000);
  n.cfg_tres.Set(core::kTresBilling, 64);
  n.cfg_tres.Set(core::kTresGpu, 8);
  return n;
}

}  // namespace

int64_t At(int hour, int minute, int second) {
  return kBase + (hour * 3600 + minute * 60 + second) - kBaseOfDay;
}

std::vector<NodeView> IdleNodes() {
  std::vector<NodeView> nodes;
  for (int i = 1; i <= 16; ++i) nodes.push_back(BaseNode(i));
  return nodes;
}

std::vector<NodeView> BusyNodes() {
  std::vector<NodeView> nodes = IdleNodes();
  NodeView& n = nodes[0];
  n.state = model::NodeState::kMixed;
  n.cpus_alloc = 14;
  n.alloc_memory_mb = 12048;
  n.alloc_tres.Set(core::kTresCpu, 14);
  n.alloc_tres.Set(core::kTresMem, 12048);
  n.alloc_tres.Set(core::kTresGpu, 2);
  return nodes;
}

std::vector<PartitionView> Partitions() {
  PartitionView p;
  p.name = "batch";
  p.is_default = true;
  for (const NodeView& n : IdleNodes()) p.node_names.push_back(n.name);
  p.total_cpus = 1024;
  p.total_nodes = 16;
  p.tres = Tres(1024, 16 * 512000, 16, 1024, 128);
  return {p};
}

std::vector<JobView> BusyJobs() {
  std::vector<JobView> jobs;

  JobView smoke = BaseJob(1, "wrap");
  smoke.state = JobState::kCompleted;
  smoke.priority = 4294901759;
  smoke.submit_time = smoke.eligible_time = smoke.accrue_time = At(18, 56, 18);
  smoke.start_time = smoke.end_time = smoke.last_sched_eval = At(18, 56, 21);
  Allocate(&smoke, {0}, 1000);
  jobs.push_back(smoke);

  JobView sleeper = BaseJob(3, "sleeper");
  sleeper.state = JobState::kRunning;
  sleeper.priority = 4294901757;
  sleeper.submit_time = sleeper.eligible_time = sleeper.accrue_time = At(18, 56, 28);
  sleeper.start_time = sleeper.last_sched_eval = At(18, 56, 29);
  sleeper.end_time = At(19, 6, 29);
  sleeper.time_limit_s = 600;
  sleeper.num_cpus = sleeper.cpus_per_task = sleeper.min_cpus_node = 4;
  sleeper.memory_per_cpu = false;
  sleeper.min_memory_mb = 2048;
  sleeper.tres_req = Tres(4, 2048, 1, 4);
  sleeper.json_flags = {"JOB_CPUS_SET", "JOB_WAS_RUNNING", "JOB_MEM_SET"};
  Allocate(&sleeper, {0, 1, 2, 3}, 2048);
  jobs.push_back(sleeper);

  JobView gpu = BaseJob(4, "gpujob");
  gpu.state = JobState::kRunning;
  gpu.priority = 4294901756;
  gpu.submit_time = gpu.eligible_time = gpu.accrue_time = At(18, 56, 28);
  gpu.start_time = gpu.last_sched_eval = At(18, 56, 29);
  gpu.end_time = At(19, 6, 29);
  gpu.time_limit_s = 600;
  gpu.num_cpus = gpu.cpus_per_task = gpu.min_cpus_node = 8;
  gpu.tres_req = Tres(8, 8000, 1, 8, 2);
  gpu.tres_per_node = "gres:gpu:2";
  gpu.json_flags = {"JOB_CPUS_SET", "JOB_WAS_RUNNING"};
  Allocate(&gpu, {4, 5, 6, 7, 8, 9, 10, 11}, 8000);
  gpu.job_gres = "gpu:2";
  gpu.node_details.front().gres = "gpu:2(IDX:0-1)";
  jobs.push_back(gpu);

  JobView held = BaseJob(5, "heldjob");
  held.reason = "JobHeldUser";
  held.submit_time = held.last_sched_eval = At(18, 56, 28);
  jobs.push_back(held);

  JobView dep = BaseJob(6, "depjob");
  dep.reason = "Dependency";
  dep.priority = 4294901755;
  dep.dependency = "afterok:3(unfulfilled)";
  dep.submit_time = dep.last_sched_eval = At(18, 56, 29);
  jobs.push_back(dep);

  JobView array = BaseJob(7, "arr");
  array.array_job_id = 7;
  array.array_max_tasks = 2;
  array.priority = 4294901754;
  array.time_limit_s = 300;
  array.submit_time = array.accrue_time = At(18, 56, 29);
  array.last_sched_eval = At(18, 56, 32);
  auto task = [&](uint32_t id, uint32_t task_id, int32_t core) {
    JobView t = array;
    t.job_id = id;
    t.array_task_id = task_id;
    t.state = JobState::kRunning;
    t.eligible_time = At(18, 56, 29);
    t.start_time = At(18, 56, 32);
    t.end_time = At(19, 1, 32);
    t.json_flags = {"JOB_WAS_RUNNING"};
    Allocate(&t, {core}, 1000);
    return t;
  };
  jobs.push_back(task(9, 1, 12));

  JobView big = BaseJob(8, "toobig");
  big.reason = "Resources";
  big.priority = 4294901753;
  big.time_limit_s = 300;
  big.submit_time = big.eligible_time = big.accrue_time = At(18, 56, 29);
  big.last_sched_eval = At(18, 56, 32);
  big.num_nodes = big.max_nodes = 16;
  big.num_cpus = big.num_tasks = 16;
  big.oversubscribe = "NO";
  big.tres_req = Tres(16, 16000, 16, 16);
  jobs.push_back(big);

  jobs.push_back(task(10, 2, 13));

  array.reason = "JobArrayTaskLimit";
  array.array_task_string = "3-10%2";
  jobs.push_back(array);
  return jobs;
}

JobView BusyJob(uint32_t job_id) {
  for (JobView& j : BusyJobs()) {
    if (j.job_id == job_id) return j;
  }
  return JobView{};
}

RenderContext BusyContext() { return RenderContext{At(18, 56, 35), 0}; }

StatusOr<std::string> ReadReferenceOutput(const std::string& name, int* exit_status) {
  std::string path = core::StrCat(LOOM_SOURCE_DIR, "/tests/data/slurm-ref/", name);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(core::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  size_t first = text.find('\n');
  size_t exit_at = text.rfind("--- exit=");
  if (text.rfind("$ ", 0) != 0 || first == std::string::npos || exit_at == std::string::npos ||
      exit_at <= first) {
    return absl::InvalidArgumentError(core::StrCat(path, ": not a reference output file"));
  }
  if (exit_status != nullptr) {
    *exit_status = static_cast<int>(
        core::ParseInt(text.substr(exit_at + 9, text.find(' ', exit_at + 9) - exit_at - 9))
            .value_or(-1));
  }
  std::string out = text.substr(first + 1, exit_at - first - 1);
  size_t err = out.rfind("--- stderr ---\n");
  if (err != std::string::npos) out.resize(err);
  return out;
}

}  // namespace loom::cli::format::testing
