// How the controller talks to its job_submit.lua helper processes (ctld/job_submit_pool.h)
// over a socket pair: frames of a 4-byte big-endian length and JSON text. The first frame
// from the controller loads the script ({"script", "name", "part_list"}; answered {"ok"} or
// {"error"}); each later one is a call ({"call": "job_submit" | "job_modify", "job_desc",
// "job_rec", "uid"}; answered {"rc", "job_desc", "user_msgs", "log"} or {"error", ...}).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/clock.h"
#include "core/status.h"

namespace loom::policy {

inline constexpr uint32_t kMaxHelperFrame = 64u << 20;

// Sends one frame (never raising SIGPIPE). Errors: the peer is gone.
Status WriteHelperFrame(int fd, const nlohmann::json& message);

// Reads one frame. With `clock`, gives up at `deadline_ms` (clock->MonotonicMs()) with
// DeadlineExceeded; without, waits as long as it takes. NotFound when the peer closed the
// socket before a frame began; DataLoss for a frame cut short or not JSON.
StatusOr<nlohmann::json> ReadHelperFrame(int fd, const core::Clock* clock = nullptr,
                                         int64_t deadline_ms = 0);

}  // namespace loom::policy
