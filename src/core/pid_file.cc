#include "core/pid_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/strings.h"

namespace loom::core {

StatusOr<std::unique_ptr<PidFile>> PidFile::Write(std::string path) {
  // Written beside and renamed over: a reader never sees half a number.
  const std::string tmp = StrCat(path, ".", ::getpid(), ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        StrCat("cannot write the pid file ", path, ": ", std::strerror(errno)));
  }
  const std::string text = StrCat(::getpid(), "\n");
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int write_errno = errno;
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = written ? errno : write_errno;
    ::unlink(tmp.c_str());
    return absl::FailedPreconditionError(
        StrCat("cannot write the pid file ", path, ": ", std::strerror(err)));
  }
  return std::unique_ptr<PidFile>(new PidFile(std::move(path)));
}

PidFile::~PidFile() {
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  if (Trim(text.str()) == StrCat(::getpid())) ::unlink(path_.c_str());
}

}  // namespace loom::core
