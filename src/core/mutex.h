// The mutex every shared member is guarded by. Both checkers see it: clang's thread-safety
// analysis through the annotations (ABSL_GUARDED_BY(mu_) on the members it guards), and
// ThreadSanitizer through the pthread mutex and condition variable underneath. Debian's
// Mutex is built without ThreadSanitizer's hooks, so under TSan every access it
// guards reads as a race; and clang ignores annotations on a bare std::mutex under
// libstdc++, which declares no capability.
//
// As with absl::Mutex, a waiter names the condition it waits for, and whoever unlocks wakes
// a waiter whose condition now holds, so no code has to remember to notify.
//
//   MutexLock lock(&mu_);
//   mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); });
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"

namespace loom::core {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    WakeOne();
    mu_.unlock();
  }

  // With the lock held: waits until `ready()` (called with the lock held) is true, the lock
  // released meanwhile.
  template <typename Ready>
  void Await(Ready ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    Wait(ready, std::nullopt);
  }
  // The same for at most `timeout`; returns ready().
  template <typename Ready>
  bool AwaitFor(Ready ready, std::chrono::milliseconds timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    return Wait(ready, std::chrono::steady_clock::now() + timeout);
  }

 private:
  // A thread in Await: its condition, evaluated by whoever unlocks, and its own wake-up.
  struct Waiter {
    bool (*ready)(void*) = nullptr;
    void* arg = nullptr;
    std::condition_variable cv;
    bool woken = false;  // notified, and not yet back to check
  };

  // As absl::Mutex does: the unlocking thread checks the waiters' conditions and wakes the
  // first that holds, so a change nobody waits for wakes nobody.
  void WakeOne() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (Waiter* w : waiters_) {
      if (!w->woken && w->ready(w->arg)) {
        w->woken = true;
        w->cv.notify_one();
        return;
      }
    }
  }

  template <typename Ready>
  static bool Call(void* ready) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return (*static_cast<Ready*>(ready))();
  }

  template <typename Ready>
  bool Wait(Ready& ready, std::optional<std::chrono::steady_clock::time_point> deadline)
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (ready()) return true;
    Waiter w;
    w.ready = &Call<Ready>;
    w.arg = &ready;
    waiters_.push_back(&w);
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    bool met = true;
    while (!ready()) {
      WakeOne();  // what the caller changed before it waits may be what another waits for
      w.woken = false;
      if (!deadline) {
        w.cv.wait(lock);
      } else if (w.cv.wait_until(lock, *deadline) == std::cv_status::timeout) {
        met = ready();
        break;
      }
    }
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &w));
    lock.release();
    return met;
  }

  std::mutex mu_;
  std::vector<Waiter*> waiters_;  // under mu_
};

// Holds `mu` for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace loom::core
