// Confinement of a job step on its node: one cgroup per step, behind one interface with two
// implementations. cgroup v2 (the target) writes cpuset.cpus/cpuset.mems, memory.max and
// memory.swap.max, fences device files with a BPF_PROG_TYPE_CGROUP_DEVICE program, kills
// with cgroup.kill and freezes with cgroup.freeze. cgroup v1 does the same with the cpuset,
// memory, devices and freezer hierarchies. Which one a node uses comes from cgroup.conf
// (CgroupPlugin=autodetect looks at what is mounted).
//
// Steps live under "<root>/<scope>/job_<id>/step_<name>", the scope being "loom/<node>" so
// that emulated nodes sharing one host do not collide (v1: that path in every hierarchy).
// Thread-compatible; loomd (or a step's supervisor) owns each StepCgroup.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "conf/cgroup_conf.h"
#include "core/status.h"

namespace loom::stepd {

// A device file by its numbers, as cgroups name them.
struct DeviceId {
  char type = 'c';  // 'c' character, 'b' block
  uint32_t major = 0;
  uint32_t minor = 0;

  friend bool operator==(const DeviceId&, const DeviceId&) = default;
};

// The numbers of the device file at `path` (stat's st_rdev), or why not.
StatusOr<DeviceId> DeviceOf(const std::string& path);

// What one step may use. Empty/zero fields are not constrained.
struct StepLimits {
  std::string cpus;              // cpuset list, "0-3,8"
  std::string mems;              // NUMA nodes, "0"; empty: the parent's
  int64_t memory_bytes = 0;      // RAM
  int64_t memory_swap_bytes = 0; // RAM + swap (v1 memsw); v2 gets the difference as swap
  // Device files the step must not open (the node's GPUs it was not given); every other
  // device stays as it was, as Slurm's ConstrainDevices does.
  std::vector<DeviceId> denied_devices;
};

struct CgroupUsage {
  int64_t cpu_usec = 0;           // user + system CPU time of every process ever in it
  int64_t memory_peak_bytes = 0;  // 0 when the kernel does not report it
  int64_t oom_kills = 0;          // processes the OOM killer ended inside it
};

class StepCgroup {
 public:
  virtual ~StepCgroup() = default;
  // Moves `pid` (and its later children) into the step.
  virtual Status Attach(pid_t pid) = 0;
  virtual Status Freeze(bool frozen) = 0;
  // SIGKILL to every process in the step.
  virtual Status KillAll() = 0;
  virtual StatusOr<CgroupUsage> Usage() const = 0;
  // Removes the step's directories once its processes are gone (and the job's, when empty).
  virtual Status Remove() = 0;
  virtual std::vector<pid_t> Pids() const = 0;
  // The cgroup.procs files a process writes "0" to in order to join the step (one per v1
  // hierarchy): a launcher opens them before fork, so that the child joins before it
  // drops its privileges.
  virtual std::vector<std::string> ProcsFiles() const = 0;
};

class CgroupSystem {
 public:
  virtual ~CgroupSystem() = default;
  // Per cgroup.conf: v1, v2, or (autodetect) v2 when `mountpoint` is a cgroup2 mount with
  // the cpuset and memory controllers available, else v1 when its memory hierarchy is
  // mounted. Fails with what is missing.
  // Steps go under `scope` ("loom/<node>"), a relative path that starts with "loom/".
  static StatusOr<std::unique_ptr<CgroupSystem>> Open(const conf::CgroupConfig& config,
                                                      std::string scope);

  virtual std::string_view version() const = 0;  // "v1" or "v2"
  // Creates the step's cgroup, <scope>/job_<job_id>/step_<step>, with `limits` applied
  // (parents created as needed). `step` is "batch" or a step number.
  virtual StatusOr<std::unique_ptr<StepCgroup>> Create(uint64_t job_id, std::string_view step,
                                                       const StepLimits& limits) = 0;
};

// The implementations, over a root given explicitly (tests point them at a fake tree).
// v2: `root` is a cgroup2 mount (or a directory laid out like one). v1: `mountpoint` holds
// the per-controller hierarchies (cpuset/, memory/, devices/, freezer/, cpuacct/).
// `scope` as for Open (empty: "loom").
std::unique_ptr<CgroupSystem> MakeCgroupV2(std::string root, std::string scope = "loom");
std::unique_ptr<CgroupSystem> MakeCgroupV1(std::string mountpoint, std::string scope = "loom");

// The limits cgroup.conf asks for, for a step given `cpus` and `allocated_memory_bytes`.
StepLimits LimitsFor(const conf::CgroupConfig& config, std::string cpus,
                     int64_t allocated_memory_bytes, std::vector<DeviceId> denied_devices);

}  // namespace loom::stepd
