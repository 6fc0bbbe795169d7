#include "stepd/cgroup/cgroup.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/strings.h"
#include "stepd/cgroup/files.h"

namespace loom::stepd {

using core::StrCat;

StatusOr<DeviceId> DeviceOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(StrCat("cannot stat ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return absl::InvalidArgumentError(StrCat(path, " is not a device file"));
  }
  return DeviceId{S_ISBLK(st.st_mode) ? 'b' : 'c', major(st.st_rdev), minor(st.st_rdev)};
}

StatusOr<std::unique_ptr<CgroupSystem>> CgroupSystem::Open(const conf::CgroupConfig& config,
                                                          std::string scope) {
  const std::string& mount = config.mountpoint;
  struct statfs fs {};
  const bool unified = ::statfs(mount.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
  switch (config.plugin) {
    case conf::CgroupPlugin::kV2:
      if (!unified) {
        return absl::FailedPreconditionError(StrCat(
            "CgroupPlugin=cgroup/v2 but ", mount, " is not a cgroup2 mount; set "
            "CgroupMountpoint or CgroupPlugin in cgroup.conf"));
      }
      return MakeCgroupV2(mount, scope);
    case conf::CgroupPlugin::kV1:
      return MakeCgroupV1(mount, scope);
    case conf::CgroupPlugin::kAutodetect:
      break;
  }
  if (unified) {
    auto controllers = cgroup_files::Read(mount + "/cgroup.controllers");
    if (controllers.ok() && controllers->find("memory") != std::string::npos &&
        controllers->find("cpuset") != std::string::npos) {
      return MakeCgroupV2(mount, scope);
    }
  }
  if (cgroup_files::Read(mount + "/memory/cgroup.procs").ok()) return MakeCgroupV1(mount, scope);
  return absl::FailedPreconditionError(StrCat(
      "no usable cgroups under ", mount, ": neither a cgroup2 mount with the cpuset and memory "
      "controllers nor a cgroup v1 memory hierarchy; set CgroupMountpoint in cgroup.conf"));
}

StepLimits LimitsFor(const conf::CgroupConfig& config, std::string cpus,
                     int64_t allocated_memory_bytes, std::vector<DeviceId> denied_devices) {
  StepLimits l;
  if (config.constrain_cores) l.cpus = std::move(cpus);
  if (config.constrain_ram_space && allocated_memory_bytes > 0) {
    l.memory_bytes = static_cast<int64_t>(
        std::llround(static_cast<double>(allocated_memory_bytes) * config.allowed_ram_space_percent / 100.0));
    if (config.constrain_swap_space) {
      l.memory_swap_bytes = l.memory_bytes + static_cast<int64_t>(std::llround(
          static_cast<double>(allocated_memory_bytes) * config.allowed_swap_space_percent / 100.0));
    }
  }
  if (config.constrain_devices) l.denied_devices = std::move(denied_devices);
  return l;
}

}  // namespace loom::stepd
