#include "stepd/cgroup/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/strings.h"

namespace loom::stepd::cgroup_files {

using core::StrCat;

Status Write(const std::string& path, std::string_view value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(StrCat("cannot open ", path, ": ", std::strerror(errno)));
  const ssize_t n = ::write(fd, value.data(), value.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return absl::InternalError(
        StrCat("cannot write '", value, "' to ", path, ": ", std::strerror(n < 0 ? err : EIO)));
  }
  return absl::OkStatus();
}

StatusOr<std::string> Read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

int64_t KeyedValue(std::string_view text, std::string_view key) {
  for (std::string_view line : core::Split(text, '\n')) {
    line = core::Trim(line);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ') {
      return core::ParseInt(core::Trim(line.substr(key.size() + 1))).value_or(0);
    }
  }
  return 0;
}

std::vector<pid_t> Pids(const std::string& path) {
  std::vector<pid_t> out;
  auto text = Read(path);
  if (!text.ok()) return out;
  for (std::string_view line : core::Split(*text, '\n')) {
    if (auto pid = core::ParseInt(core::Trim(line)); pid && *pid > 0) {
      out.push_back(static_cast<pid_t>(*pid));
    }
  }
  return out;
}

Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return absl::InternalError(StrCat("cannot create ", path, ": ", ec.message()));
  return absl::OkStatus();
}

Status RemoveUpTo(const std::string& path, const std::string& stop) {
  std::filesystem::path p(path);
  while (!p.empty() && p.string().size() > stop.size() && p.string().starts_with(stop)) {
    if (::rmdir(p.c_str()) != 0) {
      if (errno == ENOENT) {
        p = p.parent_path();
        continue;
      }
      if (errno == EBUSY || errno == ENOTEMPTY) {
        if (p.string() == path) {
          return absl::FailedPreconditionError(
              StrCat("cannot remove ", path, ": processes still run in it"));
        }
        return absl::OkStatus();  // a parent still holds other steps
      }
      return absl::InternalError(StrCat("cannot remove ", p.string(), ": ", std::strerror(errno)));
    }
    p = p.parent_path();
  }
  return absl::OkStatus();
}

}  // namespace loom::stepd::cgroup_files
