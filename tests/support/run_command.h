// Runs a built command as a user would (standard input from /dev/null) and collects its
// standard output, standard error and exit status: for tests that compare a command's
// behaviour with a reference. Header-only; each call uses its own temporary files.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace loom::testing {

struct CommandResult {
  int exit_status = -1;
  std::string out;
  std::string err;
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `path` with `args` (argv[0] is `path`) in this process's environment, less the
// variables named in `drop`, plus `add`.
inline CommandResult RunCommand(const std::string& path, const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& add = {},
                                const std::vector<std::string>& drop = {}) {
  char out_path[] = "/tmp/loom_command_out_XXXXXX";
  char err_path[] = "/tmp/loom_command_err_XXXXXX";
  int out_fd = mkstemp(out_path);
  int err_fd = mkstemp(err_path);
  EXPECT_GE(out_fd, 0);
  EXPECT_GE(err_fd, 0);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry = *e;
    bool dropped = false;
    for (const std::string& name : drop) dropped = dropped || entry.starts_with(name + "=");
    if (!dropped) env_strings.emplace_back(entry);
  }
  for (const auto& [k, v] : add) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = {path};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  pid_t pid = 0;
  CommandResult r;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot run " << argv[0] << ": " << std::strerror(rc);
  if (rc == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  close(out_fd);
  close(err_fd);
  r.out = ReadWholeFile(out_path);
  r.err = ReadWholeFile(err_path);
  unlink(out_path);
  unlink(err_path);
  return r;
}

}  // namespace loom::testing
