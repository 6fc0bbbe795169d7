// cgroup.conf, as Slurm reads it beside slurm.conf: how node daemons confine job steps.
//
//   CgroupPlugin=autodetect|cgroup/v1|cgroup/v2   which cgroup interface (default autodetect)
//   CgroupMountpoint=/sys/fs/cgroup               where the cgroup filesystems are mounted
//   ConstrainCores=yes|no                         cpuset: only the job's CPUs
//   ConstrainRAMSpace=yes|no                      memory limit = allocation x AllowedRAMSpace%
//   AllowedRAMSpace=100                           percent of the allocated memory
//   ConstrainSwapSpace=yes|no                     memory+swap limit = RAM limit + AllowedSwapSpace%
//   AllowedSwapSpace=0                            percent of the allocated memory, on top
//   ConstrainDevices=yes|no                       only the GPUs (device files) the job was given
//   AllowedDevicesFile=PATH                       (Slurm <= 21.08) devices every job may use
//
// Keys are case-insensitive; `#` starts a comment. Keys Slurm knows that Loom does not act on
// are warnings; unknown keys and bad values are errors naming file:line. Pure functions
// (LoadCgroupConf apart, which reads a file); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "conf/diagnostic.h"
#include "core/status.h"

namespace loom::conf {

enum class CgroupPlugin { kAutodetect, kV1, kV2 };

struct CgroupConfig {
  CgroupPlugin plugin = CgroupPlugin::kAutodetect;
  std::string mountpoint = "/sys/fs/cgroup";
  bool constrain_cores = false;
  bool constrain_ram_space = false;
  double allowed_ram_space_percent = 100;
  bool constrain_swap_space = false;
  double allowed_swap_space_percent = 0;
  bool constrain_devices = false;
  std::string allowed_devices_file;
};

StatusOr<CgroupConfig> ParseCgroupConf(std::string_view text, std::string_view file_name,
                                       std::vector<Diagnostic>* warnings);
// The cgroup.conf beside `slurm_conf_path`; a missing file gives the defaults (nothing
// constrained), as in Slurm.
StatusOr<CgroupConfig> LoadCgroupConf(const std::string& slurm_conf_path,
                                      std::vector<Diagnostic>* warnings);

}  // namespace loom::conf
