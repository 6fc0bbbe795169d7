// Runs the controller's own site programs (PrologSlurmctld, EpilogSlurmctld) off the owner
// thread, each on a thread of its own, so that a slow program never holds up scheduling or
// other jobs' programs: Slurm's documented throughput killer is its PrologSlurmctld running
// where it blocks job starts.
//
// Thread-safe.
#pragma once

#include <functional>
#include <list>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"

namespace loom::ctld {

class ScriptRunner {
 public:
  ScriptRunner() = default;
  // Waits for the programs that run (their results are then not acted on: see Stop).
  ~ScriptRunner();
  ScriptRunner(const ScriptRunner&) = delete;
  ScriptRunner& operator=(const ScriptRunner&) = delete;

  // Runs `work` on a new thread; threads that ended are joined here.
  void Run(std::function<void()> work);
  // Waits for every running program; later Run calls run nothing.
  void Stop();

 private:
  struct Worker {
    std::thread thread;
    bool done = false;
  };
  core::Mutex mu_;
  std::list<Worker> workers_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace loom::ctld
