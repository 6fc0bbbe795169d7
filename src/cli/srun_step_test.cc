// srun's side of a step: labels as Slurm prints them, task lists, and a StepMonitor fed by
// real loopback connections playing the job's nodes (a stranger without the key included).
#include "cli/srun_step.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "core/clock.h"
#include "loom/v1/loom.pb.h"
#include "rpc/frame.h"

namespace loom::cli {
namespace {

using ::testing::ElementsAre;

int32_t Exited(int code) { return code << 8; }

TEST(LabelerTest, EachLineGetsItsTaskNumber) {
  Labeler l(true, 2);
  EXPECT_EQ(l.Apply(0, false, "a\nb\n"), "0: a\n0: b\n");
  EXPECT_EQ(l.Apply(1, false, "part"), "1: part");
  EXPECT_EQ(l.Apply(0, false, "c\n"), "0: c\n");
  EXPECT_EQ(l.Apply(1, false, "ial\nnext\n"), "ial\n1: next\n");  // continues its own line
  EXPECT_EQ(l.Apply(1, true, "err\n"), "1: err\n");               // stderr is a stream of its own
}

TEST(LabelerTest, NumbersArePaddedToTheWidestTask) {
  Labeler l(true, 12);
  EXPECT_EQ(l.Apply(3, false, "x\n"), " 3: x\n");
  EXPECT_EQ(l.Apply(11, false, "y\n"), "11: y\n");
  EXPECT_EQ(Labeler(true, 10).Apply(9, false, "z\n"), "9: z\n");
  EXPECT_EQ(Labeler(true, 101).Apply(7, false, "z\n"), "  7: z\n");
}

TEST(LabelerTest, WithoutLabelOutputIsUntouched) {
  Labeler l(false, 4);
  EXPECT_EQ(l.Apply(2, false, "a\nb"), "a\nb");
}

TEST(FormatTaskIdsTest, RangesAsSlurmListsThem) {
  EXPECT_EQ(FormatTaskIds({0}), "0");
  EXPECT_EQ(FormatTaskIds({2, 0, 1, 5}), "0-2,5");
  EXPECT_EQ(FormatTaskIds({7, 9}), "7,9");
}

// A node: connects to the monitor and sends StepIo frames.
class FakeNode {
 public:
  explicit FakeNode(int port) {
    auto c = rpc::FrameConnection::Connect("127.0.0.1", port, 2000);
    EXPECT_TRUE(c.ok()) << c.status();
    if (c.ok()) conn_.emplace(*std::move(c));
  }
  void Hello(model::JobId job, const std::string& key, const std::string& node,
             std::vector<int32_t> tasks) {
    v1::StepIo m;
    m.mutable_hello()->set_job_id(job);
    m.mutable_hello()->set_key(key);
    m.mutable_hello()->set_node(node);
    for (int32_t t : tasks) m.mutable_hello()->add_tasks(t);
    Send(m);
  }
  void Output(int32_t task, bool is_stderr, const std::string& data) {
    v1::StepIo m;
    m.mutable_output()->set_task(task);
    m.mutable_output()->set_is_stderr(is_stderr);
    m.mutable_output()->set_data(data);
    Send(m);
  }
  void Exit(std::vector<int32_t> tasks, int32_t status) {
    v1::StepIo m;
    for (int32_t t : tasks) m.mutable_exit()->add_tasks(t);
    m.mutable_exit()->set_status(status);
    Send(m);
  }
  void Failure(const std::string& why) {
    v1::StepIo m;
    m.mutable_failure()->set_message(why);
    Send(m);
  }
  void Close() { conn_.reset(); }

 private:
  void Send(const v1::StepIo& m) { ASSERT_TRUE(conn_->Send(m.SerializeAsString(), 2000).ok()); }
  std::optional<rpc::FrameConnection> conn_;
};

class StepMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int out[2], err[2];
    ASSERT_EQ(::pipe2(out, O_NONBLOCK), 0);
    ASSERT_EQ(::pipe2(err, O_NONBLOCK), 0);
    out_read_ = out[0];
    out_write_ = out[1];
    err_read_ = err[0];
    err_write_ = err[1];
    monitor_ = std::make_unique<StepMonitor>(
        "k3y", true, [this](const std::string& line) { said_.push_back(line); });
    ASSERT_TRUE(monitor_->Listen("127.0.0.1").ok());
    monitor_->SetJob(12);
    monitor_->SetOutputs(StepOutputs{out_write_, err_write_, std::nullopt, std::nullopt});
    monitor_->SetLayout({"n1", "n2"}, {2, 1});
  }
  void TearDown() override {
    for (int fd : {out_read_, out_write_, err_read_, err_write_}) ::close(fd);
  }

  // Polls the monitor until `done` holds or two seconds pass.
  template <typename Done>
  void PumpUntil(Done done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      std::vector<pollfd> fds = monitor_->PollFds();
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      for (const pollfd& p : fds) {
        if (p.revents) monitor_->OnReadable(p.fd);
      }
    }
  }
  static std::string Drain(int fd) {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
    return text;
  }

  std::unique_ptr<StepMonitor> monitor_;
  std::vector<std::string> said_;
  int out_read_ = -1, out_write_ = -1, err_read_ = -1, err_write_ = -1;
};

TEST_F(StepMonitorTest, OutputIsLabelledAndExitsAddUp) {
  FakeNode n1(monitor_->port()), n2(monitor_->port());
  n1.Hello(12, "k3y", "n1", {0, 1});
  n2.Hello(12, "k3y", "n2", {2});
  n1.Output(0, false, "hello from 0\n");
  n2.Output(2, false, "hello from 2\n");
  n1.Output(1, true, "oops\n");
  n1.Exit({0}, Exited(0));
  n1.Exit({1}, Exited(3));
  n2.Exit({2}, Exited(1));
  n1.Close();
  n2.Close();
  PumpUntil([&] { return monitor_->AllTasksEnded() && !monitor_->AnyNodeConnected(); });
  ASSERT_TRUE(monitor_->AllTasksEnded());
  EXPECT_FALSE(monitor_->AnyNodeConnected());
  const std::string out = Drain(out_read_);
  EXPECT_THAT(out, ::testing::HasSubstr("0: hello from 0\n"));
  EXPECT_THAT(out, ::testing::HasSubstr("2: hello from 2\n"));
  EXPECT_EQ(Drain(err_read_), "1: oops\n");
  EXPECT_EQ(monitor_->status().ExitCode(), 3);
  EXPECT_THAT(said_,
              ::testing::UnorderedElementsAre("srun: error: n1: task 1: Exited with exit code 3",
                                              "srun: error: n2: task 2: Exited with exit code 1"));
}

TEST_F(StepMonitorTest, AConnectionWithoutTheKeyIsDroppedUnheard) {
  FakeNode stranger(monitor_->port());
  stranger.Hello(12, "wrong", "evil", {0});
  stranger.Output(0, false, "injected\n");
  FakeNode other_job(monitor_->port());
  other_job.Hello(13, "k3y", "n1", {0});
  PumpUntil([&] { return false; });
  EXPECT_EQ(Drain(out_read_), "");
  EXPECT_FALSE(monitor_->AnyNodeConnected());
}

TEST_F(StepMonitorTest, SignalsAreErrorsUnlessTheJobIsBeingEnded) {
  FakeNode n1(monitor_->port());
  n1.Hello(12, "k3y", "n1", {0, 1});
  n1.Exit({0, 1}, SIGSEGV);
  PumpUntil([&] { return monitor_->has_pending_reports(); });
  EXPECT_TRUE(said_.empty());  // not before srun knows whether the job is being ended
  monitor_->FlushReports();
  EXPECT_THAT(said_, ElementsAre("srun: error: n1: tasks 0-1: Segmentation fault"));
  monitor_->ExpectSignals();
  FakeNode n2(monitor_->port());
  n2.Hello(12, "k3y", "n2", {2});
  n2.Exit({2}, SIGTERM);
  PumpUntil([&] { return monitor_->AllTasksEnded(); });
  monitor_->FlushReports();
  EXPECT_EQ(said_.size(), 1u);
  EXPECT_EQ(monitor_->status().ExitCode(), 128 + SIGSEGV);
}

TEST_F(StepMonitorTest, CtrlCTwiceWithinASecondAborts) {
  core::SimulatedClock clock(1'796'083'200);
  InterruptHandler h(clock);
  std::vector<std::string> said;
  auto say = [&said](const std::string& line) { said.push_back(line); };
  using Action = InterruptHandler::Action;
  // The first reports the tasks (none connected yet: every one unknown).
  EXPECT_EQ(h.OnSignal(SIGINT, false, false, *monitor_, say), Action::kNone);
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said.front(), "srun: interrupt (one more within 1 sec to abort)");
  // A second after more than a second only reports again.
  clock.Advance(std::chrono::milliseconds(1001));
  said.clear();
  EXPECT_EQ(h.OnSignal(SIGINT, false, false, *monitor_, say), Action::kNone);
  EXPECT_EQ(said.front(), "srun: interrupt (one more within 1 sec to abort)");
  clock.Advance(std::chrono::milliseconds(999));
  EXPECT_EQ(h.OnSignal(SIGINT, false, false, *monitor_, say), Action::kAbortByInterrupt);
  // Once the abort is under way, a first Ctrl-C says so.
  clock.Advance(std::chrono::seconds(5));
  said.clear();
  EXPECT_EQ(h.OnSignal(SIGINT, false, true, *monitor_, say), Action::kNone);
  EXPECT_EQ(said.front(), "srun: interrupt (abort already in progress)");
}

TEST_F(StepMonitorTest, OtherSignalsAbortAtOnceAndASecondLeaves) {
  InterruptHandler h;
  std::vector<std::string> said;
  auto say = [&said](const std::string& line) { said.push_back(line); };
  using Action = InterruptHandler::Action;
  EXPECT_EQ(h.OnSignal(SIGTERM, false, false, *monitor_, say), Action::kAbort);
  EXPECT_EQ(h.OnSignal(SIGHUP, false, true, *monitor_, say), Action::kLeave);
  EXPECT_THAT(said,
              ElementsAre("srun: forcing job termination",
                          "srun: job abort in progress; leaving without waiting for the tasks"));
  // srun -q: the first Ctrl-C aborts, without a word.
  said.clear();
  EXPECT_EQ(h.OnSignal(SIGINT, true, false, *monitor_, say), Action::kAbort);
  EXPECT_TRUE(said.empty());
}

TEST_F(StepMonitorTest, TaskStatesOnInterrupt) {
  FakeNode n1(monitor_->port());
  n1.Hello(12, "k3y", "n1", {0, 1});
  n1.Exit({1}, Exited(0));
  PumpUntil([&] { return monitor_->TaskStates().size() == 3; });
  EXPECT_THAT(monitor_->TaskStates(),
              ElementsAre("srun: step:12.0 task 0: running", "srun: step:12.0 task 1: exited",
                          "srun: step:12.0 task 2: unknown"));
}

TEST_F(StepMonitorTest, OutputBeforeTheLayoutWaitsForItsLabelWidth) {
  StepMonitor early("k3y", true, [](const std::string&) {});
  ASSERT_TRUE(early.Listen("127.0.0.1").ok());
  early.SetJob(12);
  early.SetOutputs(StepOutputs{out_write_, err_write_, std::nullopt, std::nullopt});
  FakeNode n1(early.port());
  n1.Hello(12, "k3y", "n1", {3});
  n1.Output(3, false, "early\n");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<pollfd> fds = early.PollFds();
    if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
    for (const pollfd& p : fds) {
      if (p.revents) early.OnReadable(p.fd);
    }
  }
  EXPECT_EQ(Drain(out_read_), "");
  early.SetLayout({"n1", "n2"}, {6, 6});
  EXPECT_EQ(Drain(out_read_), " 3: early\n");
}

TEST_F(StepMonitorTest, LaunchFailureIsTold) {
  FakeNode n2(monitor_->port());
  n2.Hello(12, "k3y", "n2", {2});
  n2.Failure("launch failed on n2: user id 5 has no passwd entry on this node");
  PumpUntil([&] { return monitor_->launch_failed(); });
  EXPECT_THAT(said_, ElementsAre("srun: error: Task launch for StepId=12.0 failed on node n2: "
                                 "launch failed on n2: user id 5 has no passwd entry on this "
                                 "node"));
}

TEST_F(StepMonitorTest, ANodeThatGoesWithoutItsTasksEndsLosesThem) {
  FakeNode n1(monitor_->port()), n2(monitor_->port());
  n1.Hello(12, "k3y", "n1", {0, 1});
  n2.Hello(12, "k3y", "n2", {2});
  PumpUntil([&] { return monitor_->AnyNodeConnected(); });
  EXPECT_FALSE(monitor_->TaskFailedWhileOthersRun());
  n2.Close();  // its supervisor died: no exit came for task 2
  PumpUntil([&] { return monitor_->TaskFailedWhileOthersRun(); });
  EXPECT_TRUE(monitor_->TaskFailedWhileOthersRun());  // -K ends tasks 0 and 1
  EXPECT_THAT(said_, ElementsAre("srun: error: Node failure on n2"));
  n1.Exit({0, 1}, Exited(0));
  n1.Close();
  PumpUntil([&] { return !monitor_->AnyNodeConnected(); });
  EXPECT_FALSE(monitor_->AllTasksEnded());
  EXPECT_EQ(monitor_->ExitCode(1), 1);  // not every task's end is known: srun fails
}

TEST_F(StepMonitorTest, OnlyOneTasksStreamWhenAskedFor) {
  monitor_->SetOutputs(StepOutputs{out_write_, err_write_, 1, std::nullopt});
  FakeNode n1(monitor_->port());
  n1.Hello(12, "k3y", "n1", {0, 1});
  n1.Output(0, false, "zero\n");
  n1.Output(1, false, "one\n");
  n1.Exit({0, 1}, 0);
  PumpUntil([&] { return monitor_->TaskStates().front() == "srun: step:12.0 tasks 0-1: exited"; });
  EXPECT_EQ(Drain(out_read_), "1: one\n");
}

}  // namespace
}  // namespace loom::cli
