// The server side of Loom frames (frame.h), sharing one TCP port with gRPC: each accepted
// connection is classified by its first bytes. HTTP/2's client preface ("PRI * HTTP/2.0")
// is handed over to gRPC; anything else is read as frames, each answered by the handler in
// order. A fixed pool of threads serves the frame connections, each accepting its own; a
// connection idle for longer than `idle_timeout_ms` is closed.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/status.h"

namespace loom::rpc {

struct FrameServerOptions {
  std::string address;  // HOST:PORT to listen on (HOST a name or an address)
  int threads = 16;     // concurrent frame connections
  int idle_timeout_ms = 30000;
  int io_timeout_ms = 10000;  // to receive a whole frame, or to send the answer
};

class FrameServer {
 public:
  // Answers one request frame with the reply frame's bytes.
  using Handler = std::function<std::string(std::string_view request)>;
  // The reply to a frame that cannot be read (too large, cut short), sent before the
  // connection is closed so the client learns why.
  using Refusal = std::function<std::string(const Status& why)>;
  // Takes over a connection that speaks HTTP/2 (the fd is the callee's from then on).
  using Handoff = std::function<void(int fd)>;

  static StatusOr<std::unique_ptr<FrameServer>> Start(FrameServerOptions options, Handler handler,
                                                      Refusal refusal, Handoff http2);
  ~FrameServer();
  // Stops accepting, closes every frame connection and joins the threads. Idempotent.
  void Shutdown();
  // The port listened on (the one the system chose when the address asked for port 0).
  int port() const;

 private:
  FrameServer() = default;
  void WorkerLoop();
  void Serve(int fd);

  FrameServerOptions options_;
  Handler handler_;
  Refusal refusal_;
  Handoff http2_;
  int listen_fd_ = -1;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::set<int> serving_;  // connections being served, shut down by Shutdown()
  bool stop_ = false;
};

}  // namespace loom::rpc
