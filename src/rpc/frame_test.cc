#include "rpc/frame.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <any>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "rpc/frame_server.h"

namespace loom::rpc {
namespace {

TEST(FrameDecoderTest, FramesArriveInAnyPieces) {
  const std::string stream = EncodeFrame("one") + EncodeFrame("") + EncodeFrame("three");
  FrameDecoder d;
  std::vector<std::string> got;
  for (char c : stream) {  // a byte at a time: the worst a socket can do
    d.Append(std::string_view(&c, 1));
    while (true) {
      auto next = d.Next();
      ASSERT_TRUE(next.ok()) << next.status();
      if (!*next) break;
      got.push_back(**next);
    }
  }
  EXPECT_EQ(got, (std::vector<std::string>{"one", "", "three"}));
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(FrameDecoderTest, CutShortAndOversizedFrames) {
  FrameDecoder d(8);
  const std::string frame = EncodeFrame("abc");
  d.Append(frame.substr(0, 5));
  auto next = d.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
  EXPECT_EQ(d.buffered(), 5u);  // a stream ending here was cut short

  FrameDecoder small(8);
  small.Append(EncodeFrame("123456789"));
  EXPECT_TRUE(absl::IsDataLoss(small.Next().status()));
}

// Frames that begin "anon" carry no valid credential; every other frame does.
class FrameServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(FrameServerOptions{}); }

  void StartServer(FrameServerOptions o) {
    if (server_) server_->Shutdown();
    o.address = "127.0.0.1:0";
    o.threads = 2;
    o.io_timeout_ms = 2000;
    auto s = FrameServer::Start(
        o,
        [this](std::string_view req, const std::any& admitted) {
          if (req == "block") {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [&] { return released_; });
          }
          FrameAnswer a;
          a.reply = "echo:" + std::string(req.substr(0, 64));
          if (const int* n = std::any_cast<int>(&admitted)) a.reply += ":admitted" + std::to_string(*n);
          a.authenticated = !req.starts_with("anon");
          return a;
        },
        [](const Status& why) { return "refused:" + std::string(why.message()); },
        [this](int fd) {
          handed_over_ = true;
          ::close(fd);
        },
        [this](std::string_view prefix) -> StatusOr<std::any> {
          admitted_prefix_ = prefix.size();
          if (!prefix.starts_with("cred")) return absl::UnauthenticatedError("no credential first");
          return std::any(7);
        });
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }

  void TearDown() override {
    Release();
    if (server_) server_->Shutdown();
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

  // A raw connection, for writing what no well-behaved client would.
  int RawConnect() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server_->port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }

  // True when the server has closed `fd` within `ms`.
  static bool ClosedWithin(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, ms) != 1) return false;
    char b[256];
    while (true) {
      const ssize_t n = ::recv(fd, b, sizeof b, MSG_DONTWAIT);
      if (n <= 0) return n == 0 || errno != EAGAIN;
    }
  }

  // The server counts a connection closed after the peer may already see it closed: waits
  // up to `ms` for the count of open connections to come down to `open`.
  bool OpenComesTo(int64_t open, int ms) {
    for (int waited = 0; server_->stats().open != open && waited < ms; waited += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return server_->stats().open == open;
  }

  std::unique_ptr<FrameServer> server_;
  std::atomic<bool> handed_over_{false};
  std::atomic<size_t> admitted_prefix_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

TEST_F(FrameServerTest, AnswersEachFrameOfAConnectionInOrder) {
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok()) << c.status();
  for (const std::string& msg : {std::string("one"), std::string(), std::string(1 << 20, 'x')}) {
    auto r = c->Call(msg, 2000);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, "echo:" + msg.substr(0, 64));
  }
}

TEST_F(FrameServerTest, ResolvesHostNames) {
  auto c = FrameConnection::Connect("localhost", server_->port(), 2000);
  ASSERT_TRUE(c.ok()) << c.status();
  auto r = c->Call("hi", 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:hi");
}

TEST_F(FrameServerTest, RefusesAnOversizedFrameWithAReason) {
  int fd = RawConnect();
  const unsigned char huge[4] = {0x7f, 0xff, 0xff, 0xff};
  ASSERT_EQ(::write(fd, huge, 4), 4);
  auto r = ReadFrame(fd, 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->find("refused:a frame announces 2147483647 bytes"), std::string::npos) << *r;
  ::close(fd);
}

TEST_F(FrameServerTest, SurvivesAClientThatHangsUpMidFrame) {
  int fd = RawConnect();
  const unsigned char partial[6] = {0, 0, 0, 10, 'a', 'b'};
  ASSERT_EQ(::write(fd, partial, sizeof partial), 6);
  ::close(fd);
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok());
  auto r = c->Call("after", 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:after");
}

TEST_F(FrameServerTest, HandsHttp2ConnectionsOver) {
  int fd = RawConnect();
  const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  // In two pieces: the protocol is decided only once four bytes have come.
  ASSERT_EQ(::write(fd, preface.data(), 2), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(handed_over_);
  ASSERT_EQ(::write(fd, preface.data() + 2, preface.size() - 2),
            static_cast<ssize_t>(preface.size() - 2));
  char b;
  EXPECT_LE(::read(fd, &b, 1), 0);  // the test's handoff closed it (EOF or reset)
  EXPECT_TRUE(handed_over_);
  ::close(fd);
}

TEST_F(FrameServerTest, ASlowHandlerHoldsUpNoOtherConnection) {
  // Both workers busy: frames wait for one, and every connection is still read.
  auto a = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  auto b = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(a.ok() && b.ok());
  std::thread ta([&] { EXPECT_TRUE(a->Call("block", 5000).ok()); });
  std::thread tb([&] { EXPECT_TRUE(b->Call("block", 5000).ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->Call("early", 300).ok());  // no worker free: no answer in time
  Release();
  ta.join();
  tb.join();
  auto d = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(d.ok());
  auto r = d->Call("later", 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:later");
}

TEST_F(FrameServerTest, PeersThatStallHoldNothingBack) {
  // More stalled connections than workers, each in a different way: silent, one byte of a
  // length, a length and part of the body. A client that speaks is answered at once.
  std::vector<int> stalled;
  for (int i = 0; i < 6; ++i) {
    int fd = RawConnect();
    const unsigned char partial[6] = {0, 0, 0, 100, 'a', 'b'};
    if (i % 3 == 1) ASSERT_EQ(::write(fd, partial, 1), 1);
    if (i % 3 == 2) ASSERT_EQ(::write(fd, partial, sizeof partial), 6);
    stalled.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok());
  auto r = c->Call("hello", 500);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:hello");
  for (int fd : stalled) ::close(fd);
}

TEST_F(FrameServerTest, AnUnauthenticatedConnectionHasADeadline) {
  FrameServerOptions o;
  o.frame_deadline_ms = 300;
  StartServer(o);
  int silent = RawConnect();
  int slow = RawConnect();
  const unsigned char partial[5] = {0, 0, 0, 10, 'a'};
  ASSERT_EQ(::write(slow, partial, sizeof partial), 5);
  EXPECT_TRUE(ClosedWithin(silent, 2000));
  EXPECT_TRUE(ClosedWithin(slow, 2000));
  EXPECT_TRUE(OpenComesTo(0, 2000));
  EXPECT_EQ(server_->stats().timed_out, 2);
  EXPECT_EQ(server_->stats().open, 0);
  ::close(silent);
  ::close(slow);
  // An authenticated connection is not held to it between frames.
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok() && c->Call("hi", 2000).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  auto r = c->Call("again", 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:again");
}

TEST_F(FrameServerTest, AnUnauthenticatedConnectionGetsOneAnswer) {
  int fd = RawConnect();
  const std::string two = EncodeFrame("anon1") + EncodeFrame("anon2");
  ASSERT_EQ(::write(fd, two.data(), two.size()), static_cast<ssize_t>(two.size()));
  auto r = ReadFrame(fd, 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:anon1");
  EXPECT_TRUE(ClosedWithin(fd, 2000));
  ::close(fd);
}

TEST_F(FrameServerTest, ALargeFrameIsReadOnlyOnceItsFirstBytesAreAdmitted) {
  FrameServerOptions o;
  o.max_unauthenticated_frame_bytes = 1024;
  StartServer(o);
  // Announces 64 MiB, sends a little: refused after the first 1,024 bytes are judged.
  int fd = RawConnect();
  std::string liar = EncodeFrame(std::string(1 << 16, '\n')).substr(0, 2048);
  liar[0] = 0x03;  // 0x03ff0000 bytes, under the 64 MiB ceiling
  liar[1] = static_cast<char>(0xff);
  ASSERT_EQ(::write(fd, liar.data(), liar.size()), static_cast<ssize_t>(liar.size()));
  auto r = ReadFrame(fd, 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "refused:no credential first");
  EXPECT_EQ(admitted_prefix_, 1024u);
  ::close(fd);
  // One that opens with what vouches for it is read whole, and the handler learns so.
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok());
  auto big = c->Call("cred" + std::string(3 << 20, 'b'), 5000);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->substr(0, 9), "echo:cred");
  EXPECT_NE(big->find(":admitted7"), std::string::npos);
  // Small frames need no admission.
  auto small = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(small.ok());
  auto s = small->Call("tiny", 2000);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, "echo:tiny");
}

TEST_F(FrameServerTest, TheOldestUnauthenticatedConnectionMakesRoom) {
  FrameServerOptions o;
  o.max_unauthenticated_connections = 4;
  StartServer(o);
  // Two trusted connections, which the cap does not count.
  auto t1 = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  auto t2 = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(t1.ok() && t2.ok());
  ASSERT_TRUE(t1->Call("a", 2000).ok() && t2->Call("b", 2000).ok());
  std::vector<int> stalled;
  for (int i = 0; i < 4; ++i) {
    stalled.push_back(RawConnect());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // accepted in this order
  }
  // A fifth unauthenticated connection, a client, closes the oldest stalled one.
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok());
  auto r = c->Call("client", 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(ClosedWithin(stalled[0], 2000));
  EXPECT_FALSE(ClosedWithin(stalled[1], 100));
  EXPECT_EQ(server_->stats().evicted, 1);
  // The trusted ones are still served.
  EXPECT_TRUE(t1->Call("c", 2000).ok());
  EXPECT_TRUE(t2->Call("d", 2000).ok());
  for (int fd : stalled) ::close(fd);
}

TEST_F(FrameServerTest, ShutdownClosesIdleConnections) {
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->Call("x", 2000).ok());
  const auto t0 = std::chrono::steady_clock::now();
  server_->Shutdown();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_FALSE(c->Call("y", 1000).ok());
}

TEST(FrameConnectTest, NamesTheAddressWhenNobodyListens) {
  auto c = FrameConnection::Connect("127.0.0.1", 1, 1000);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("cannot connect to 127.0.0.1:1"),
            std::string::npos)
      << c.status();
}

}  // namespace
}  // namespace loom::rpc
