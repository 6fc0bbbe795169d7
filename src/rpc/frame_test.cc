#include "rpc/frame.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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

class FrameServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FrameServerOptions o;
    o.address = "127.0.0.1:0";
    o.threads = 2;
    o.io_timeout_ms = 2000;
    auto s = FrameServer::Start(
        o, [](std::string_view req) { return "echo:" + std::string(req); },
        [](const Status& why) { return "refused:" + std::string(why.message()); },
        [this](int fd) {
          handed_over_ = true;
          ::close(fd);
        });
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
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

  std::unique_ptr<FrameServer> server_;
  std::atomic<bool> handed_over_{false};
};

TEST_F(FrameServerTest, AnswersEachFrameOfAConnectionInOrder) {
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok()) << c.status();
  for (const std::string& msg : {std::string("one"), std::string(), std::string(1 << 20, 'x')}) {
    auto r = c->Call(msg, 2000);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, "echo:" + msg);
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
  ASSERT_EQ(::write(fd, preface.data(), preface.size()), static_cast<ssize_t>(preface.size()));
  char b;
  EXPECT_LE(::read(fd, &b, 1), 0);  // the test's handoff closed it (EOF or reset)
  EXPECT_TRUE(handed_over_);
  ::close(fd);
}

TEST_F(FrameServerTest, ConnectionsBeyondThePoolWaitForAFreeWorker) {
  // Both workers hold an open connection; a third is answered once one of them closes.
  auto a = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  auto b = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a->Call("a", 2000).ok());
  ASSERT_TRUE(b->Call("b", 2000).ok());
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->Call("early", 300).ok());  // no worker free: no answer in time
  *a = FrameConnection(std::move(*c));       // closes a; c lives on in a
  auto r = a->Call("c", 2000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:early");  // the frame sent before is answered first
}

TEST_F(FrameServerTest, ClientsThatSayNothingHoldNoWorker) {
  // More silent connections than workers: a client that speaks is answered at once.
  std::vector<int> silent;
  for (int i = 0; i < 4; ++i) silent.push_back(RawConnect());
  auto c = FrameConnection::Connect("127.0.0.1", server_->port(), 2000);
  ASSERT_TRUE(c.ok());
  auto r = c->Call("hello", 500);  // well within the 2 s a silent connection could hold a worker
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "echo:hello");
  for (int fd : silent) ::close(fd);
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
