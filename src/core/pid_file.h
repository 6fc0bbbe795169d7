// A daemon's pid file (SlurmctldPidFile, SlurmdPidFile): the process id and a newline,
// written when the daemon is up and removed when it stops cleanly, for init scripts and
// monitoring that find a daemon by it.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

namespace loom::core {

class PidFile {
 public:
  // Writes this process's id to `path` (replacing a file left by a daemon that died). Fails
  // with the path and the system's reason when it cannot be written.
  static StatusOr<std::unique_ptr<PidFile>> Write(std::string path);
  // Removes the file, unless another process has written its own id there since.
  ~PidFile();
  PidFile(const PidFile&) = delete;
  PidFile& operator=(const PidFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit PidFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace loom::core
