// How loomd talks to a job's loom-stepd: one request per connection over the unix socket in
// the job's supervisor directory (records.h), one line each way.
//
//   ping               -> ok
//   signal SIG         -> ok | error: MESSAGE      (SIG to the job's processes)
//   terminate SECONDS  -> ok | error: MESSAGE      (SIGTERM, SIGKILL after SECONDS)
//
// Thread-safe: nothing here keeps state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace loom::stepd {

struct ControlRequest {
  enum class Kind { kPing, kSignal, kTerminate };
  Kind kind = Kind::kPing;
  int64_t value = 0;  // the signal, or the seconds before SIGKILL
  friend bool operator==(const ControlRequest&, const ControlRequest&) = default;
};

std::string FormatRequest(const ControlRequest& r);
// InvalidArgument quoting the line when it is not a request.
StatusOr<ControlRequest> ParseRequest(std::string_view line);
// "ok", or "error: MESSAGE" for a failed status.
std::string FormatReply(const Status& s);
// The status a reply line stands for (an unreadable reply is an Internal error).
Status ParseReply(std::string_view line);

// A listening unix socket at `path` (an old socket file there is replaced), mode 0600,
// close-on-exec and non-blocking; the caller closes it.
StatusOr<int> ListenUnix(const std::string& path);
// A connection to the unix socket at `path`, close-on-exec and non-blocking; Unavailable
// when nothing listens there.
StatusOr<int> ConnectUnix(const std::string& path);
// Reads one line (up to 4 KiB, without its newline) from `fd`, waiting at most timeout_ms.
StatusOr<std::string> ReadLine(int fd, int timeout_ms);
// Sends `request` to the loom-stepd listening at `socket_path` and returns its answer.
// Unavailable when nothing listens there; DeadlineExceeded when it does not answer in time.
Status SendRequest(const std::string& socket_path, const ControlRequest& request,
                   int timeout_ms = 5000);

}  // namespace loom::stepd
