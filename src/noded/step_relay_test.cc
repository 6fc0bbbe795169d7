#include "noded/step_relay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "stepd/mpi/relay_channel.h"

namespace loom::noded {
namespace {

using ::testing::ElementsAre;

// A supervisor's connection as loom-stepd makes it, collecting what comes in.
class Supervisor {
 public:
  Supervisor(const std::string& socket, uint64_t job, std::optional<uint32_t> step, int32_t me) {
    auto opened = stepd::RelayChannel::Open(
        socket, job, step, me, {"node0:1", "node1:1", "node2:1"},
        [this](int32_t from, const v1::StepMessage& m) {
          core::MutexLock lock(&mu_);
          got_.push_back(std::to_string(from) + ":" + std::to_string(m.contribution().seq()));
        });
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (opened.ok()) channel_ = *std::move(opened);
  }
  stepd::RelayChannel& channel() { return *channel_; }
  // What came so far, once `n` messages have (or after 5 s).
  std::vector<std::string> Got(size_t n) {
    core::MutexLock lock(&mu_);
    mu_.AwaitFor([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return got_.size() >= n; },
                 std::chrono::seconds(5));
    return got_;
  }

 private:
  core::Mutex mu_;
  std::vector<std::string> got_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<stepd::RelayChannel> channel_;
};

v1::StepRelay Message(uint64_t job, std::optional<uint32_t> step, int32_t from, uint64_t seq) {
  v1::StepRelay m;
  m.set_job_id(job);
  if (step) m.set_step_id(*step);
  m.set_from_node(from);
  m.mutable_message()->mutable_contribution()->set_seq(seq);
  return m;
}

class StepRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/loom-relay-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    socket_ = dir_ + "/n1.relay";
    hub_ = std::make_unique<StepRelayHub>(
        socket_, [this](const std::string& address, const v1::StepRelay& m) -> Status {
          core::MutexLock lock(&mu_);
          sent_.push_back(address + " " + std::to_string(m.from_node()) + " " +
                          std::to_string(m.to_size()));
          return absl::OkStatus();
        });
    ASSERT_TRUE(hub_->Start().ok());
  }
  void TearDown() override {
    hub_.reset();
    std::string cmd = "rm -rf " + dir_;
    (void)!std::system(cmd.c_str());
  }
  std::vector<std::string> Sent(size_t n) {
    core::MutexLock lock(&mu_);
    mu_.AwaitFor([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sent_.size() >= n; },
                 std::chrono::seconds(5));
    return sent_;
  }

  std::string dir_, socket_;
  std::unique_ptr<StepRelayHub> hub_;
  core::Mutex mu_;
  std::vector<std::string> sent_ ABSL_GUARDED_BY(mu_);
};

TEST_F(StepRelayTest, ASupervisorsMessagesGoToEachTargetsLoomdWithoutTheirTargets) {
  Supervisor s(socket_, 7, 2, 1);
  v1::StepMessage m;
  m.mutable_contribution()->set_seq(1);
  s.channel().Send({0, 2}, m);
  std::vector<std::string> sent = Sent(2);
  std::sort(sent.begin(), sent.end());
  EXPECT_THAT(sent, ElementsAre("node0:1 1 0", "node2:1 1 0"));
}

TEST_F(StepRelayTest, MessagesForASupervisorNotYetConnectedWaitForItInOrder) {
  hub_->Deliver(Message(7, 2, 0, 1));
  hub_->Deliver(Message(7, 2, 2, 2));
  hub_->Deliver(Message(8, std::nullopt, 0, 9));  // another job's, kept apart
  EXPECT_EQ(hub_->undelivered(), 3u);
  Supervisor s(socket_, 7, 2, 1);
  EXPECT_THAT(s.Got(2), ElementsAre("0:1", "2:2"));
  hub_->Deliver(Message(7, 2, 0, 3));  // now straight through
  EXPECT_THAT(s.Got(3), ElementsAre("0:1", "2:2", "0:3"));
  EXPECT_EQ(hub_->undelivered(), 1u);
  // The job srun submitted (no step id) is a step of its own.
  Supervisor only(socket_, 8, std::nullopt, 1);
  EXPECT_THAT(only.Got(1), ElementsAre("0:9"));
  EXPECT_EQ(hub_->undelivered(), 0u);
}

TEST_F(StepRelayTest, AGoneSupervisorsMessagesAreKeptForTheNextOne) {
  {
    Supervisor first(socket_, 7, 2, 1);
    hub_->Deliver(Message(7, 2, 0, 1));
    EXPECT_THAT(first.Got(1), ElementsAre("0:1"));
  }
  // Its connection closed: a message now is kept, not lost on a dead connection.
  for (int i = 0; i < 100 && hub_->undelivered() == 0; ++i) {
    hub_->Deliver(Message(7, 2, 0, static_cast<uint64_t>(2 + i)));
    if (hub_->undelivered() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(hub_->undelivered(), 1u);
}

}  // namespace
}  // namespace loom::noded
