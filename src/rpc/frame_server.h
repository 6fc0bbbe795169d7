// The server side of Loom frames (frame.h), sharing one TCP port with gRPC: each accepted
// connection is classified by its first bytes. HTTP/2's client preface ("PRI * HTTP/2.0")
// is handed over to gRPC; anything else is read as frames, each answered by the handler in
// order.
//
// No thread ever waits on a peer. One event-loop thread (epoll) accepts, reads every frame
// and writes every answer on non-blocking sockets; a pool of `threads` workers runs the
// handler on frames that have arrived whole. The defenses hold on loopback, where every peer
// shares one address, so none of them is per address:
//
// - A connection is unauthenticated until the handler says a frame of it carried a valid
//   credential (FrameAnswer::authenticated). An unauthenticated connection must deliver a
//   whole frame within `frame_deadline_ms` of being accepted, gets one answer, and is closed.
// - Before authentication a frame may announce at most `max_unauthenticated_frame_bytes`.
//   A larger one is read only once `admit` has accepted its first bytes (Loom's frames carry
//   the credential before the body); its bytes are then kept as they arrive, never allocated
//   whole from the length it announces.
// - At most `max_unauthenticated_connections` are open at once; a new connection beyond that
//   closes the oldest unauthenticated one, so peers that open connections and stall can never
//   lock out a client that speaks. Authenticated connections do not count.
// - An authenticated connection has `io_timeout_ms` to finish a frame it has begun and to
//   take its answer, and is closed after `idle_timeout_ms` without a frame.
//
// Thread-safety: Start, Shutdown, port and stats may be called from any thread. The
// handlers run on the worker threads, several at once.
#pragma once

#include <any>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>  // std::once_flag
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "core/mutex.h"
#include "core/status.h"

namespace loom::rpc {

struct FrameServerOptions {
  std::string address;  // HOST:PORT to listen on (HOST a name or an address)
  int threads = 16;     // handlers running at once
  int idle_timeout_ms = 30000;  // an authenticated connection without a frame
  int io_timeout_ms = 10000;    // to finish a frame once begun, or to take the answer
  // An unauthenticated connection's first frame must have arrived whole this long after the
  // connection was accepted.
  int frame_deadline_ms = 5000;
  size_t max_unauthenticated_frame_bytes = size_t{64} << 10;
  int max_unauthenticated_connections = 4096;
};

// What the handler makes of one frame.
struct FrameAnswer {
  std::string reply;
  // The frame carried a valid credential: the connection is trusted from now on (it may send
  // large frames and more requests, and no longer counts against the unauthenticated cap).
  bool authenticated = false;
};

// What the server has seen, for tests, benchmarks and sdiag.
struct FrameServerStats {
  int64_t accepted = 0;
  int64_t open = 0;              // frame connections open now
  int64_t unauthenticated = 0;   // of them, not yet authenticated
  int64_t timed_out = 0;         // closed for missing a deadline
  int64_t evicted = 0;           // closed to admit a newer connection over the cap
  int64_t refused = 0;           // frames refused unread (too large, not admitted, cut short)
  int64_t answered = 0;
};

class FrameServer {
 public:
  // Answers one request frame. `admitted` holds what `Admit` returned for this frame when it
  // was large enough to need admission, and is empty otherwise.
  using Handler = std::function<FrameAnswer(std::string_view request, const std::any& admitted)>;
  // Decides, from the first `max_unauthenticated_frame_bytes` of a larger frame sent before
  // its connection authenticated, whether the rest may be read. What it returns is handed to
  // the handler with the whole frame. Unset: such frames are refused.
  using Admit = std::function<StatusOr<std::any>(std::string_view prefix)>;
  // The reply to a frame that cannot be read (too large, not admitted), sent before the
  // connection is closed so the client learns why.
  using Refusal = std::function<std::string(const Status& why)>;
  // Takes over a connection that speaks HTTP/2 (the fd is the callee's from then on, in
  // blocking mode, with nothing read from it).
  using Handoff = std::function<void(int fd)>;

  static StatusOr<std::unique_ptr<FrameServer>> Start(FrameServerOptions options, Handler handler,
                                                      Refusal refusal, Handoff http2,
                                                      Admit admit = nullptr);
  ~FrameServer();
  FrameServer(const FrameServer&) = delete;
  FrameServer& operator=(const FrameServer&) = delete;

  // Stops accepting, closes every frame connection and joins the threads. Idempotent.
  void Shutdown();
  // The port listened on (the one the system chose when the address asked for port 0).
  int port() const;
  FrameServerStats stats() const;

 private:
  struct Connection;
  struct Job {
    uint64_t id;
    std::string request;
    std::any admitted;
  };
  struct Done {
    uint64_t id;
    FrameAnswer answer;
  };

  FrameServer() = default;
  void EventLoop();
  void WorkerLoop();
  void AcceptAll();
  void OnReadable(Connection& c);
  void OnWritable(Connection& c);
  // Reads frames out of what `c` has buffered; false once `c` was closed.
  bool Consume(Connection& c);
  void Refuse(Connection& c, const Status& why);
  void StartWrite(Connection& c, std::string bytes, bool close_after);
  void CollectAnswers();
  void Sweep();
  void Close(Connection& c);
  // Closes the oldest unauthenticated connection (there must be one) to make room.
  void EvictOldest();
  void Watch(Connection& c, uint32_t events);
  void Trust(Connection& c);
  Connection* Find(uint64_t id);

  FrameServerOptions options_;
  Handler handler_;
  Refusal refusal_;
  Handoff http2_;
  Admit admit_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: answers are ready, or Shutdown was called
  std::thread loop_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stop_{false};
  std::once_flag shutdown_once_;

  // Event-loop thread only.
  struct State;
  std::unique_ptr<State> state_;

  // Frames waiting for a worker, and answers waiting for the event loop.
  core::Mutex mu_;
  std::deque<Job> jobs_ ABSL_GUARDED_BY(mu_);
  std::vector<Done> done_ ABSL_GUARDED_BY(mu_);
  bool workers_stop_ ABSL_GUARDED_BY(mu_) = false;

  mutable core::Mutex stats_mu_;
  FrameServerStats stats_ ABSL_GUARDED_BY(stats_mu_);
};

}  // namespace loom::rpc
