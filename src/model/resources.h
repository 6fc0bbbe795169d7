// Per-node resource amounts (CPUs, memory, GPUs) and the request shape of a job, the two
// value types the scheduler reasons with. Pure values; thread-compatible.
#pragma once

#include <cstdint>
#include <string>

namespace loom::model {

// An amount of the resources the scheduler tracks per node. Used both for capacities and
// for allocations; components are never negative in a valid amount.
struct Resources {
  int32_t cpus = 0;
  int32_t gpus = 0;
  int64_t mem_mb = 0;

  friend bool operator==(const Resources&, const Resources&) = default;
  Resources& operator+=(const Resources& o) {
    cpus += o.cpus;
    gpus += o.gpus;
    mem_mb += o.mem_mb;
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    cpus -= o.cpus;
    gpus -= o.gpus;
    mem_mb -= o.mem_mb;
    return *this;
  }
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  // True when every component of `need` is at most the same component of *this.
  bool Covers(const Resources& need) const {
    return need.cpus <= cpus && need.gpus <= gpus && need.mem_mb <= mem_mb;
  }
};

// What a job asks for, in the terms of `sbatch`: -N min[-max], -n, -c, --ntasks-per-node,
// --mem / --mem-per-cpu / --mem-per-gpu, --gpus-per-node, --gpus-per-task, --cpus-per-gpu,
// --exclusive, --switches.
struct JobShape {
  int32_t min_nodes = 1;
  int32_t max_nodes = 1;          // >= min_nodes
  int32_t ntasks = 1;             // total tasks
  int32_t cpus_per_task = 1;
  int32_t ntasks_per_node = 0;    // 0: not given
  int64_t mem_per_node_mb = 0;    // --mem; 0: not given
  int64_t mem_per_cpu_mb = 0;     // --mem-per-cpu; 0: not given
  int32_t gpus_per_node = 0;
  int32_t gpus_per_task = 0;      // --gpus-per-task (and --gpus=N as N one-GPU tasks)
  int32_t cpus_per_gpu = 0;       // --cpus-per-gpu: at least this many CPUs per GPU held
  int64_t mem_per_gpu_mb = 0;     // --mem-per-gpu (when neither --mem nor --mem-per-cpu)
  std::string gpu_type;           // empty: any type
  bool exclusive = false;         // whole nodes
  // --switches=N[@max-time]: at most N leaf switches (blocks), waiting at most
  // switches_wait_s past submission for such a placement (0: Slurm's default of 300 s).
  // switches 0: no limit on leaves.
  int32_t switches = 0;
  int64_t switches_wait_s = 0;
  // --segment=N (topology/block): the nodes come in groups of N, each group inside one
  // block. 0: no segments.
  int32_t segment = 0;

  friend bool operator==(const JobShape&, const JobShape&) = default;
  int64_t TotalCpus() const { return int64_t{ntasks} * cpus_per_task; }
};

}  // namespace loom::model
