// Runs a site's program to its end: a prolog or epilog (Prolog, Epilog, PrologSlurmctld,
// EpilogSlurmctld, TaskProlog, TaskEpilog, srun --prolog). The program runs with exactly the
// environment given, stdin from /dev/null, in a session of its own (so that a timeout kills
// whatever it started too), optionally as another user, with its standard output kept when
// asked (a task prolog's `export NAME=value` lines) and its standard error discarded.
//
// Thread-safety: thread-safe; each call waits for its own program only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace loom::core {

struct ProgramRun {
  std::string path;               // absolute; run with argv[0] = path
  std::vector<std::string> args;  // after argv[0]
  std::vector<std::string> env;   // "NAME=value", the whole environment
  int64_t timeout_ms = 0;         // 0: wait as long as it runs
  bool capture_stdout = false;    // keep up to 64 KiB of its standard output
  // Run as this user (setgroups, setgid, setuid before exec); unset: as the caller.
  struct User {
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::vector<uint32_t> groups;
  };
  std::optional<User> as_user;
  std::string work_dir;  // empty: the caller's
};

struct ProgramResult {
  int wait_status = 0;     // from waitpid
  bool timed_out = false;  // killed (SIGKILL to its session) after timeout_ms
  std::string out;         // its standard output, when captured

  bool ok() const { return !timed_out && wait_status == 0; }
  // "exit status 3", "killed by signal 9", "timed out after 5 s".
  std::string Describe(int64_t timeout_ms) const;
};

// Runs it and waits for its end. Fails only when it could not be started (the path is
// missing or not executable, no process could be made); its own failure is in the result.
StatusOr<ProgramResult> RunProgram(const ProgramRun& run);

// The programs a Prolog/Epilog-style setting names: the path itself, or, when it holds a
// glob pattern (`*`, `?`, `[`), every match in name order (Slurm runs them all, one after the
// other). Empty for an empty setting and for a pattern that matches nothing.
std::vector<std::string> ExpandProgramPattern(const std::string& setting);

// Runs every program `setting` names (ExpandProgramPattern) with `run`'s environment, user
// and timeout, one after the other, stopping at the first that fails. Returns why it failed
// ("PROGRAM: exit status 1", "cannot run PROGRAM: ..."); nullopt when all succeeded.
std::optional<std::string> RunPrograms(const std::string& setting, ProgramRun run);

}  // namespace loom::core
