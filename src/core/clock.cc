#include "core/clock.h"

namespace loom::core {
namespace {

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Wall() const override {
    return std::chrono::system_clock::now();
  }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::now();
  }
};

}  // namespace

const Clock& RealClock() {
  static const SystemClock* const clock = new SystemClock();
  return *clock;
}

SimulatedClock::SimulatedClock(int64_t unix_seconds)
    : wall_origin_ns_(unix_seconds * int64_t{1'000'000'000}) {}

std::chrono::system_clock::time_point SimulatedClock::Wall() const {
  const std::chrono::nanoseconds since_epoch(wall_origin_ns_ +
                                             elapsed_ns_.load(std::memory_order_acquire));
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(since_epoch));
}

std::chrono::steady_clock::time_point SimulatedClock::Monotonic() const {
  const std::chrono::nanoseconds elapsed(elapsed_ns_.load(std::memory_order_acquire));
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(elapsed));
}

void SimulatedClock::Advance(std::chrono::nanoseconds d) {
  if (d.count() > 0) elapsed_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
}

}  // namespace loom::core
