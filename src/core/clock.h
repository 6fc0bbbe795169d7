// Where Loom reads the time. Code that needs "now" takes a Clock instead of asking the
// system, so a test (or a replay) can run the daemons' logic at any time it chooses and
// move time on without waiting: RealClock() in production, a SimulatedClock in tests.
//
// Two readings, as the system has them: wall time (what job records, logs and users see;
// it can jump when an administrator sets the clock) and monotonic time (intervals,
// timeouts, pauses; it never goes back). scripts/check-layering allows reading the system's
// clocks only here, in tests and in benchmarks; what measures how long Loom's own work
// took (a scheduling pass, a commit) reads RealClock() on purpose, as that is a
// measurement of this machine rather than a decision.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace loom::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Wall() const = 0;
  virtual std::chrono::steady_clock::time_point Monotonic() const = 0;

  // Wall time in whole seconds since the epoch, as job records keep it.
  int64_t UnixSeconds() const {
    return std::chrono::duration_cast<std::chrono::seconds>(Wall().time_since_epoch()).count();
  }
  // Monotonic time in milliseconds from an arbitrary origin, for timeouts.
  int64_t MonotonicMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Monotonic().time_since_epoch())
        .count();
  }
};

// The system's clocks. One instance for the process; never destroyed.
const Clock& RealClock();

// A clock that moves only when told to. Both readings start where the constructor puts them
// and move together by Advance(), so every reader between two Advance() calls sees the same
// instant, in whatever order threads read it. Thread-safe.
class SimulatedClock final : public Clock {
 public:
  // Starts at `unix_seconds` of wall time; monotonic time starts at zero.
  explicit SimulatedClock(int64_t unix_seconds);

  std::chrono::system_clock::time_point Wall() const override;
  std::chrono::steady_clock::time_point Monotonic() const override;

  // Moves both readings on by `d` (not backwards: a negative `d` is ignored, as monotonic
  // time never goes back).
  void Advance(std::chrono::nanoseconds d);

 private:
  const int64_t wall_origin_ns_;
  std::atomic<int64_t> elapsed_ns_{0};
};

}  // namespace loom::core
