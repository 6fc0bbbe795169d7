#include "ctld/script_runner.h"

#include <vector>

namespace loom::ctld {

ScriptRunner::~ScriptRunner() { Stop(); }

void ScriptRunner::Run(std::function<void()> work) {
  std::vector<std::thread> finished;
  {
    core::MutexLock lock(&mu_);
    if (stopped_) return;
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (!it->done) {
        ++it;
        continue;
      }
      finished.push_back(std::move(it->thread));
      it = workers_.erase(it);
    }
    Worker& w = workers_.emplace_back();
    w.thread = std::thread([this, &w, work = std::move(work)] {
      work();
      core::MutexLock done(&mu_);
      w.done = true;
    });
  }
  // Joined outside the lock: their last step takes it.
  for (std::thread& t : finished) t.join();
}

void ScriptRunner::Stop() {
  std::list<Worker> running;
  {
    core::MutexLock lock(&mu_);
    stopped_ = true;
    running.swap(workers_);
  }
  for (Worker& w : running) w.thread.join();
}

}  // namespace loom::ctld
