// The mutex every shared member is guarded by. Both checkers see it: clang's thread-safety
// analysis through the annotations (ABSL_GUARDED_BY(mu_) on the members it guards), and
// ThreadSanitizer through the pthread mutex and condition variable underneath. Debian's
// Mutex is built without ThreadSanitizer's hooks, so under TSan every access it
// guards reads as a race; and clang ignores annotations on a bare std::mutex under
// libstdc++, which declares no capability.
//
// As with absl::Mutex, a waiter names the condition it waits for and every unlock lets
// waiters check theirs again, so no code has to remember to notify.
//
//   MutexLock lock(&mu_);
//   mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); });
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

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
    const bool wake = waiters_ > 0;
    mu_.unlock();
    if (wake) changed_.notify_all();
  }

  // With the lock held: waits until `ready()` (called with the lock held) is true, the lock
  // released meanwhile.
  template <typename Ready>
  void Await(Ready ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    ++waiters_;
    changed_.wait(lock, ready);
    --waiters_;
    lock.release();
  }
  // The same for at most `timeout`; returns ready().
  template <typename Ready>
  bool AwaitFor(Ready ready, std::chrono::milliseconds timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    ++waiters_;
    const bool met = changed_.wait_for(lock, timeout, ready);
    --waiters_;
    lock.release();
    return met;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int waiters_ = 0;  // under mu_
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
