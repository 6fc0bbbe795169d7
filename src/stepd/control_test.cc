#include "stepd/control.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

namespace loom::stepd {
namespace {

using ::testing::HasSubstr;

TEST(ControlTest, RequestsRoundTrip) {
  for (ControlRequest r : {ControlRequest{}, ControlRequest{ControlRequest::Kind::kSignal, 10},
                           ControlRequest{ControlRequest::Kind::kTerminate, 30}}) {
    auto back = ParseRequest(FormatRequest(r));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, r);
  }
}

TEST(ControlTest, BadRequestsAreRefusedWithTheLine) {
  for (const char* line : {"signal", "signal 0", "signal 99", "terminate -1", "kill 9", "ping 1"}) {
    auto r = ParseRequest(line);
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(line));
  }
}

TEST(ControlTest, RepliesCarryTheError) {
  EXPECT_TRUE(ParseReply(FormatReply(absl::OkStatus())).ok());
  Status s = ParseReply(FormatReply(absl::NotFoundError("job 3\nis gone")));
  EXPECT_EQ(s.message(), "job 3 is gone");
  EXPECT_TRUE(absl::IsInternal(ParseReply("what")));
}

TEST(ControlTest, RequestOverASocket) {
  const std::string dir = testing::TempDir() + "/control_socket";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/socket";
  auto fd = ListenUnix(path);
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::string seen;
  std::thread server([&] {
    pollfd p{*fd, POLLIN, 0};
    ::poll(&p, 1, 5000);
    const int conn = ::accept4(*fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    auto line = ReadLine(conn, 5000);
    seen = line.ok() ? *line : "";
    const std::string reply =
        FormatReply(absl::FailedPreconditionError("job 5 is not running")) + "\n";
    (void)!::send(conn, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::close(conn);
  });
  Status s = SendRequest(path, ControlRequest{ControlRequest::Kind::kSignal, 10});
  server.join();
  ::close(*fd);
  EXPECT_EQ(seen, "signal 10");
  EXPECT_EQ(s.message(), "job 5 is not running");
  Status none = SendRequest(dir + "/nobody", ControlRequest{});
  EXPECT_TRUE(absl::IsUnavailable(none)) << none;
  EXPECT_THAT(std::string(none.message()), HasSubstr(dir + "/nobody"));
}

}  // namespace
}  // namespace loom::stepd
