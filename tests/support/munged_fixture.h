// A private munged for a test: its own key, socket, log, PID and seed files in a fresh
// directory, so tests authenticate against it without touching the host's munged
// (/run/munge). The daemon runs in the foreground as a child of the test process; it is
// stopped by the PID recorded when it was started (never by name), and the directory is
// removed, when the fixture is destroyed.
//
// Two fixtures with different keys model two clusters: a credential one encodes is "forged" for
// the other. Two fixtures sharing a key (MungedOptions::key_file) model two hosts of one cluster.
//
// Thread-safety: thread-compatible. The munged child gets SIGTERM if the thread that started it
// exits, so create fixtures on a thread that outlives them (the test's main thread).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "core/status.h"

namespace loom::test_support {

struct MungedOptions {
  // A key to copy in; empty means generate a new one with mungekey.
  std::string key_file;
  // The programs; empty means look in /usr/sbin, /sbin, /usr/local/sbin, then $PATH.
  std::string munged_path;
  std::string mungekey_path;
  // How long munged may take to answer on its socket.
  absl::Duration start_timeout = absl::Seconds(10);
};

class MungedFixture {
 public:
  // Creates the directory, the key (or its copy), starts munged on loopback only (its socket is
  // a unix socket in the directory) and returns once a credential can be encoded through it.
  // On failure everything started is stopped, and the status quotes munged's log.
  static StatusOr<std::unique_ptr<MungedFixture>> Start(MungedOptions options = {});

  // Stops munged (if still running) and removes the directory; set LOOM_KEEP_TEST_DIRS=1 in the
  // environment to keep it for inspection.
  ~MungedFixture();
  MungedFixture(const MungedFixture&) = delete;
  MungedFixture& operator=(const MungedFixture&) = delete;

  // Stops munged and starts it again on the same socket with the same key, as a host's munged
  // restart does: credentials it decoded before are forgotten by its replay cache.
  Status Restart();

  // Sends SIGTERM to the recorded PID, waits for it to exit (SIGKILL after 5 s) and reaps it.
  // Idempotent. Afterwards the socket no longer answers, so clients see "munged not running".
  Status Stop();

  const std::string& dir() const { return dir_; }
  const std::string& socket_path() const { return socket_path_; }
  const std::string& key_file() const { return key_file_; }
  const std::string& log_file() const { return log_file_; }
  // The munged process; 0 once stopped.
  pid_t pid() const { return pid_; }

  // The last lines of munged's log, for failure messages.
  std::string LogTail() const;

 private:
  MungedFixture() = default;
  // Starts munged and waits until it answers on the socket.
  Status Launch();

  std::string dir_;
  std::string socket_path_;
  std::string key_file_;
  std::string log_file_;
  std::string output_file_;  // stdout and stderr of mungekey and munged
  MungedOptions options_;
  pid_t pid_ = 0;
};

// The uid of local user `name`, creating it first (useradd, no home directory, nologin shell)
// when it does not exist. FailedPrecondition when it is absent and the process is not root.
StatusOr<uint32_t> EnsureTestUser(std::string_view name);

}  // namespace loom::test_support
