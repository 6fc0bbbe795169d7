// What a task uses right now, read from /proc: the processes of its session (a task, or a
// batch script, leads a session of its own; what it starts stays in it unless it calls
// setsid). For sstat. Pure reads of the proc tree; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace loom::noded {

struct ProcessUsage {
  int32_t processes = 0;     // in the session now
  int64_t cpu_usec = 0;      // user + system CPU of them and of the children they reaped
  int64_t rss_bytes = 0;     // resident memory now, summed
  int64_t vsize_bytes = 0;   // virtual memory now, summed
  int64_t major_faults = 0;  // pages read in (Slurm's "Pages"), theirs and their reaped children's
};

// The usage of every process of each session of `sids` (by the session's id), from one pass
// over the stat files under `proc`. Processes that end while they are read are skipped; a
// session none of whose processes is left is absent.
std::map<pid_t, ProcessUsage> SessionsUsage(const std::set<pid_t>& sids,
                                            const std::string& proc = "/proc");

}  // namespace loom::noded
