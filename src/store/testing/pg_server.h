// A private PostgreSQL server for tests: a cluster initdb'd into a fresh temporary directory,
// listening on 127.0.0.1 at a free port and on a unix socket inside that directory, trusting
// every local connection, with the superuser "loom". PostgreSQL refuses to run as root, so a
// test running as root runs the server as an unprivileged user: "nobody", or a system user
// "loom-pgtest" created when there is no nobody.
//
// The postmaster is a child of the test process, stopped by that PID (never by name), and the
// directory is removed when the PgServer is destroyed. Not for production code.
//
// Thread-safety: thread-compatible. The server gets a fast-shutdown signal if the thread that
// started it exits, so create it on a thread that outlives it (the test's main thread).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace loom::store::testing {

struct PgServerOptions {
  // Where initdb and postgres are; empty: the newest /usr/lib/postgresql/<version>/bin, else
  // the directories of $PATH.
  std::string bin_dir;
  // How long the server may take to accept connections.
  int start_timeout_s = 60;
};

class PgServer {
 public:
  // Creates the cluster and starts the server; returns once it accepts connections.
  // NotFound, naming the package to install, when the PostgreSQL programs are not there;
  // other errors quote the server's log. On failure nothing is left running.
  static StatusOr<std::unique_ptr<PgServer>> Create(PgServerOptions options = {});

  // Stops the server and removes the directory; set LOOM_KEEP_TEST_DIRS=1 in the environment
  // to keep it for inspection.
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // Shuts the server down (PostgreSQL's fast shutdown: open connections are closed) and waits
  // for it to exit. Idempotent.
  Status Stop();
  // Starts the stopped server again, on the same port and data.
  Status Start();
  // Stop, then Start: what clients see when an administrator restarts the server.
  Status Restart();

  // Creates database `name` (letters, digits and underscores).
  Status CreateDatabase(std::string_view name);
  // Runs `sql`, one or more statements, in `database` as the superuser.
  Status Execute(std::string_view database, std::string_view sql);

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // The directory holding the server's unix socket; a libpq host too.
  const std::string& socket_dir() const { return dir_; }
  const std::string& user() const { return user_; }
  // The postmaster's PID; 0 while stopped.
  pid_t pid() const { return pid_; }

  // The last lines of the server's log, for failure messages.
  std::string LogTail() const;

 private:
  PgServer() = default;

  std::string bin_dir_;
  std::string dir_;       // the temporary directory: socket, logs, and data/
  std::string data_dir_;  // the cluster
  std::string log_file_;
  std::string host_ = "127.0.0.1";
  std::string user_ = "loom";
  int port_ = 0;
  int start_timeout_s_ = 60;
  // Who the server runs as: this process's user, unless that is root.
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  pid_t pid_ = 0;
};

}  // namespace loom::store::testing
