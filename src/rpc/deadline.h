// gRPC takes deadlines as instants of the system's wall clock, whichever clock the caller
// makes its decisions by: a deadline is a timeout on this machine, never simulated time.
#pragma once

#include <chrono>

#include "core/clock.h"

namespace loom::rpc {

template <typename Rep, typename Period>
std::chrono::system_clock::time_point DeadlineIn(std::chrono::duration<Rep, Period> timeout) {
  return core::RealClock().Wall() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout);
}

}  // namespace loom::rpc
