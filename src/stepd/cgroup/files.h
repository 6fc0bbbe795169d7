// The small file operations every cgroup implementation needs, with errors that name the
// file and what was being done.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::stepd::cgroup_files {

Status Write(const std::string& path, std::string_view value);
StatusOr<std::string> Read(const std::string& path);
// The number after `key` in a "key value" per line file (memory.events, cpu.stat), or 0.
int64_t KeyedValue(std::string_view text, std::string_view key);
// The pids listed one per line in a cgroup.procs file.
std::vector<pid_t> Pids(const std::string& path);
// mkdir -p; an existing directory is fine.
Status MakeDirs(const std::string& path);
// rmdir of `path`, then of its parents up to (not including) `stop`, while they are empty.
Status RemoveUpTo(const std::string& path, const std::string& stop);

}  // namespace loom::stepd::cgroup_files
