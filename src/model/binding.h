// Task binding on one node: which CPUs and GPUs each task of a job step gets, as srun's
// --cpu-bind, --gpu-bind, --gpus-per-task and the second level of --distribution decide it,
// plus the CUDA_VISIBLE_DEVICES value and the verbose lines srun's users see. Pure values
// and pure functions (no I/O, no clock); thread-safe.
//
// The rules, and where Loom deliberately differs from Slurm 22.05, are in
// docs/design/binding.md. In short:
//   * CPUs are dealt to tasks in local-id order, in units of threads or whole cores, across
//     sockets by the distribution's second level (block, cyclic: one socket per task, round
//     robin; fcyclic: each unit from the next socket). sockets/ldoms widen a task's CPUs to
//     every allocated CPU of the sockets/NUMA nodes it touched.
//   * GPU ids are node indices (Gpu::index). CUDA_VISIBLE_DEVICES holds the task's GPUs by
//     node index, or, with device confinement (cgroup.conf ConstrainDevices=yes), by their
//     position among the GPUs the step holds on the node, counted from 0. That is what the
//     step's device cgroup lets CUDA see, and what Slurm 22.05 puts there (its gres code
//     numbers the step's allocated GPUs 0, 1, ...). For a step that uses all of the job's
//     GPUs on the node (the usual case) this is the same as "relative to the job's GPUs",
//     the wording of the srun page for map_gpu/mask_gpu. map_gpu/mask_gpu ids follow the
//     same rule: relative positions when confined, node indices otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cpu_set.h"
#include "core/status.h"
#include "model/gpu_topology.h"

namespace loom::model {

// ---------------------------------------------------------------------------------------
// The node's CPUs.

// One core: the socket it is on and the OS CPU ids of its hardware threads.
struct CpuCore {
  int32_t socket = 0;
  std::vector<int32_t> threads;  // OS ids, first thread first
  friend bool operator==(const CpuCore&, const CpuCore&) = default;
};

// The CPUs of one node, as hwloc finds them or as an emulated node describes them.
struct CpuTopology {
  std::vector<CpuCore> cores;     // socket 0's cores first, then socket 1's, ...
  std::vector<int32_t> cpu_numa;  // NUMA node (Slurm's "ldom") of each OS CPU id
  friend bool operator==(const CpuTopology&, const CpuTopology&) = default;

  int32_t num_sockets() const;
  int32_t num_numa() const;
  int32_t num_cpus() const;
  // The node's usual layout: `sockets` x `cores_per_socket` cores of `threads_per_core`
  // threads, numbered as Linux numbers x86 CPUs: the first threads of all cores get ids
  // 0..n-1 (socket by socket), the second threads n..2n-1, and so on. Each socket is split
  // into `numa_per_socket` NUMA nodes of consecutive cores.
  static CpuTopology Uniform(int32_t sockets, int32_t cores_per_socket, int32_t threads_per_core,
                             int32_t numa_per_socket = 1);
};

// The Uniform layout of a node whose NUMA nodes a NodeTopology lists (an emulated node, or
// one described by the catalog): each CPU's NUMA node is taken from `topo.numa_cpus`.
// Errors when those lists do not name each CPU of the layout exactly once.
StatusOr<CpuTopology> CpuTopologyFor(const NodeTopology& topo, int32_t sockets,
                                     int32_t cores_per_socket, int32_t threads_per_core);

// Checks that every CPU id appears in one core only, that the cores are grouped by socket in
// ascending order, and that each CPU has a NUMA node. Errors name the core or CPU.
Status ValidateCpuTopology(const CpuTopology& topo);

// ---------------------------------------------------------------------------------------
// The options, parsed.

// --cpu-bind types. kAuto: the option was not given (Slurm's auto binding, see BindTasks).
enum class CpuBindType : uint8_t {
  kAuto,
  kNone,
  kThreads,
  kCores,
  kSockets,
  kLdoms,
  kRank,
  kMapCpu,
  kMaskCpu,
  kMapLdom,
  kMaskLdom,
};

struct CpuBind {
  CpuBindType type = CpuBindType::kAuto;
  // map_cpu: one CPU id per entry; mask_cpu: a CPU set per entry; map_ldom: one NUMA node
  // per entry; mask_ldom: a set of NUMA nodes per entry. Repetitions ("0*4") are expanded.
  std::vector<core::CpuSet> list;
  bool verbose = false;
  friend bool operator==(const CpuBind&, const CpuBind&) = default;
};

// --cpu-bind=[{quiet|verbose},]TYPE, TYPE one of none (no), threads, cores, sockets, ldoms,
// rank, map_cpu:<list>, mask_cpu:<list>, map_ldom:<list>, mask_ldom:<list>. map_cpu and
// map_ldom entries are decimal, or hexadecimal with 0x; mask entries are always hexadecimal
// (0x optional); any entry may carry a repetition "*N". Errors read as Slurm's
// ("Invalid --cpu-bind argument: ...") followed by what the option accepts.
StatusOr<CpuBind> ParseCpuBind(std::string_view arg);

// --gpu-bind types. kDefault: the option was not given.
enum class GpuBindType : uint8_t { kDefault, kNone, kClosest, kMapGpu, kMaskGpu, kSingle, kPerTask };

struct GpuBind {
  GpuBindType type = GpuBindType::kDefault;
  std::vector<GpuMask> list;  // map_gpu: one bit per entry; mask_gpu: the mask
  int32_t tasks_per_gpu = 0;  // single:<n>
  int32_t gpus_per_task = 0;  // per_task:<n>
  bool verbose = false;
  friend bool operator==(const GpuBind&, const GpuBind&) = default;
};

// --gpu-bind=[verbose,]TYPE, TYPE one of none, closest, map_gpu:<list>, mask_gpu:<list>,
// single:<tasks_per_gpu>, per_task:<gpus_per_task>. map_gpu entries are decimal (0x for hexadecimal), mask_gpu
// entries hexadecimal; both take "*N". Errors: "Invalid --gpu-bind argument: ...".
StatusOr<GpuBind> ParseGpuBind(std::string_view arg);

// --hint=TYPE: nomultithread, multithread, compute_bound or memory_bound. Errors name the
// value and list those.
Status ValidateHint(std::string_view hint);

// The threads of each core a step's tasks use: `threads_per_core` when given
// (--threads-per-core), else 1 for --hint=nomultithread, compute_bound and memory_bound;
// 0 (every thread) otherwise.
int32_t StepThreadsPerCore(std::string_view hint, std::optional<int32_t> threads_per_core);

// How a task takes its CPUs across sockets: the second level of --distribution.
enum class SocketDistribution : uint8_t { kBlock, kCyclic, kFcyclic };

// The second level of a whole --distribution value
// ("{*|block|cyclic|arbitrary|plane=N}[:{*|block|cyclic|fcyclic}[:...]][,Pack|NoPack]");
// cyclic, Slurm's default, when the value has no second level or gives "*".
// Errors: "Invalid --distribution specification: ...".
StatusOr<SocketDistribution> ParseSocketDistribution(std::string_view arg);

// ---------------------------------------------------------------------------------------
// Binding.

// The node as binding sees it.
struct BindNode {
  std::string name;  // for the verbose lines
  CpuTopology cpus;
  std::vector<Gpu> gpus;  // by index; index, numa and pcie_switch are used
};

// One step's share of the node and its tasks there.
struct StepOnNode {
  core::CpuSet cpus;              // CPU ids the step holds on this node
  GpuMask gpus = 0;               // GPU indices it holds on this node
  std::vector<int32_t> task_ids;  // the global id (SLURM_PROCID) of each local task, by local id
  int32_t cpus_per_task = 1;      // -c
  int32_t gpus_per_task = 0;      // --gpus-per-task; 0: not given
  SocketDistribution distribution = SocketDistribution::kCyclic;
  CpuBind cpu_bind;
  GpuBind gpu_bind;
  // The binding for kAuto when auto binding finds no match (slurm.conf TaskPluginParam):
  // kNone, kThreads, kCores, kSockets or kLdoms.
  CpuBindType default_cpu_bind = CpuBindType::kNone;
  bool constrain_devices = false;  // cgroup.conf ConstrainDevices=yes
  bool overcommit = false;         // -O: tasks may share CPUs when there are too few
  // Threads of each core the tasks use (--hint=nomultithread: 1); 0: all. The step's other
  // threads stay idle, and auto binding binds to threads. Where the step holds fewer cores
  // than its tasks need CPUs, every thread is used.
  int32_t threads_per_core = 0;
};

struct TaskBinding {
  int32_t task_id = 0;   // SLURM_PROCID
  int32_t local_id = 0;  // SLURM_LOCALID
  core::CpuSet cpus;     // OS CPU ids the task may run on
  GpuMask gpus = 0;      // node GPU indices the task sees
  // CUDA_VISIBLE_DEVICES (and GPU_DEVICE_ORDINAL); empty when the step has no GPUs here,
  // and then the variable is not set.
  std::string cuda_visible_devices;
  friend bool operator==(const TaskBinding&, const TaskBinding&) = default;
};

struct StepBinding {
  // The CPU binding applied: the requested type, or for kAuto what auto binding chose.
  CpuBindType cpu_bind = CpuBindType::kNone;
  std::vector<TaskBinding> tasks;  // by local id
};

// Binds the step's tasks on this node. Every task gets a non-empty subset of step.cpus
// and (when the step holds GPUs) of step.gpus. Errors (InvalidArgument, worded for srun's
// user, naming the option and what to change) when a list names a CPU, NUMA node or GPU the
// step does not hold, when the tasks need more CPUs than the step holds here (unless
// overcommit), or when --gpus-per-task asks more GPUs than the step holds here.
StatusOr<StepBinding> BindTasks(const BindNode& node, const StepOnNode& step);

// The line --cpu-bind=verbose prints for one task, with `pid` the task's process id:
//   "cpu-bind-cores=MASK - n1, task  0  0 [4242]: mask 0x10001 set"
// (the mask in hexadecimal without leading zeros; "cpu-bind=NONE - ..." without " set" for
// an unbound task). No trailing newline.
std::string CpuBindVerboseLine(const StepBinding& binding, const TaskBinding& task,
                               std::string_view node, int64_t pid);

// The line --gpu-bind=verbose prints for one task:
//   "gpu-bind: usable_gres=0x2; bit_alloc=0xF; local_inx=4; global_list=1; local_list=1"
// usable_gres and bit_alloc are the task's and the step's GPUs as masks over the node's
// indices; local_inx the number of GPUs the step holds; global_list the task's node
// indices; local_list its positions among the step's GPUs.
std::string GpuBindVerboseLine(const StepOnNode& step, const TaskBinding& task);

// The mask as the verbose lines print it: hexadecimal, lower case, no leading zeros ("0" for
// an empty set), without "0x".
std::string HexMask(const core::CpuSet& cpus);

}  // namespace loom::model
