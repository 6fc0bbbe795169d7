// cgroup v2 has no devices controller: device access is decided by a BPF program of type
// BPF_PROG_TYPE_CGROUP_DEVICE attached to the cgroup. The program here is a few
// instructions (deny the listed devices, allow every other), so it is assembled directly and
// loaded with the bpf() system call rather than through libbpf and a compiler toolchain.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "stepd/cgroup/cgroup.h"

namespace loom::stepd {

// Loads a program that refuses any access to `denied` and allows everything else; returns
// its file descriptor (the caller closes it once attached). Needs CAP_BPF/CAP_SYS_ADMIN.
StatusOr<int> LoadDeviceFilter(const std::vector<DeviceId>& denied);

// Attaches program `prog_fd` to the cgroup directory `cgroup_dir` (alongside any others).
Status AttachDeviceFilter(int prog_fd, const std::string& cgroup_dir);

}  // namespace loom::stepd
