// The controller's calls to node daemons, against fake daemons in this process: one node
// that does not answer holds up only its own calls, calls to one node arrive in order, one
// channel serves every call to a node, and failed launches are reported.
#include "ctld/node_links.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/munged_fixture.h"

namespace loom::ctld {
namespace {

using namespace std::chrono_literals;

// A node daemon that records what it is asked, in arrival order. While `blocked`, calls wait
// (up to 20 s) until Unblock().
class FakeNode final : public v1::NodeDaemon::Service {
 public:
  explicit FakeNode(bool blocked = false) : blocked_(blocked) {
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    b.RegisterService(this);
    server_ = b.BuildAndStart();
  }
  ~FakeNode() override {
    Unblock();
    server_->Shutdown(std::chrono::system_clock::now() + 1s);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  grpc::Status LaunchBatch(grpc::ServerContext*, const v1::LaunchBatchRequest* req,
                           v1::LaunchBatchReply* reply) override {
    Record("launch " + std::to_string(req->job_id()));
    // The daemon's answer lost on the way: gRPC ends the call as it does for a broken
    // connection.
    if (req->script() == "vanish")
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "Socket closed");
    if (req->script() == "refuse") {
      reply->mutable_error()->set_code(v1::INVALID_ARGUMENT);
      reply->mutable_error()->set_message("bad work dir");
    }
    return grpc::Status::OK;
  }
  grpc::Status SignalTasks(grpc::ServerContext*, const v1::SignalTasksRequest* req,
                           v1::SignalTasksReply*) override {
    Record("signal " + std::to_string(req->job_id()) + " " + std::to_string(req->signal()));
    return grpc::Status::OK;
  }

  void Unblock() {
    std::lock_guard<std::mutex> lock(mu_);
    blocked_ = false;
    cv_.notify_all();
  }
  // Waits until `n` calls have arrived; returns them.
  std::vector<std::string> WaitFor(size_t n, std::chrono::milliseconds limit = 5s) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, limit, [&] { return calls_.size() >= n; });
    return calls_;
  }

 private:
  void Record(std::string call) {
    std::unique_lock<std::mutex> lock(mu_);
    calls_.push_back(std::move(call));
    cv_.notify_all();
    cv_.wait_for(lock, 20s, [&] { return !blocked_; });
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool blocked_;
  std::vector<std::string> calls_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

class NodeLinksTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto m = test_support::MungedFixture::Start();
    ASSERT_TRUE(m.ok()) << m.status();
    munged_ = m->release();
  }
  static void TearDownTestSuite() { delete munged_; }

  NodeLinksTest() {
    auth::MungeOptions mo;
    mo.socket_path = munged_->socket_path();
    munge_ = std::make_unique<auth::MungeCredentials>(mo);
  }
  NodeLinksOptions Options() {
    NodeLinksOptions o;
    o.deadline = 1s;
    o.launch_failed = [this](model::JobId job, const std::string&, const Status& why) {
      std::lock_guard<std::mutex> lock(mu_);
      failed_.push_back(job);
      why_.push_back(std::string(why.message()));
      codes_.push_back(why.code());
      cv_.notify_all();
    };
    return o;
  }
  std::vector<model::JobId> WaitForFailures(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, 5s, [&] { return failed_.size() >= n; });
    return failed_;
  }
  static v1::LaunchBatchRequest Launch(model::JobId id, std::string script = "") {
    v1::LaunchBatchRequest r;
    r.set_job_id(id);
    r.set_script(std::move(script));
    return r;
  }
  static v1::SignalTasksRequest Signal(model::JobId id, int32_t sig) {
    v1::SignalTasksRequest r;
    r.set_job_id(id);
    r.set_signal(sig);
    return r;
  }

  static test_support::MungedFixture* munged_;
  std::unique_ptr<auth::MungeCredentials> munge_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<model::JobId> failed_;
  std::vector<std::string> why_;
  std::vector<absl::StatusCode> codes_;
};
test_support::MungedFixture* NodeLinksTest::munged_ = nullptr;

TEST_F(NodeLinksTest, ASlowNodeHoldsUpOnlyItsOwnCallsAndEachNodeKeepsItsOrder) {
  FakeNode slow(/*blocked=*/true);
  FakeNode fast;
  NodeLinks links(munge_.get(), Options());
  links.Launch(slow.address(), "n1", Launch(1));
  links.Signal(slow.address(), Signal(1, 15));
  links.Launch(slow.address(), "n1", Launch(2));
  for (model::JobId id = 10; id < 15; ++id) links.Launch(fast.address(), "n1", Launch(id));
  links.Signal(fast.address(), Signal(12, 9));

  // Every call to the fast node arrives, in order, while the slow node still sits on its first.
  EXPECT_EQ(fast.WaitFor(6), (std::vector<std::string>{"launch 10", "launch 11", "launch 12",
                                                        "launch 13", "launch 14", "signal 12 9"}));
  EXPECT_EQ(slow.WaitFor(1), std::vector<std::string>{"launch 1"});
  slow.Unblock();
  EXPECT_EQ(slow.WaitFor(3), (std::vector<std::string>{"launch 1", "signal 1 15", "launch 2"}));
  EXPECT_EQ(links.channels(), 2u);
  links.Drain();
  EXPECT_TRUE(failed_.empty());
}

TEST_F(NodeLinksTest, LaunchesThatFailAreReportedWithTheirJob) {
  FakeNode node;
  // A port nothing listens on: take one from a server that is gone.
  std::string gone;
  {
    FakeNode briefly;
    gone = briefly.address();
  }
  NodeLinks links(munge_.get(), Options());
  links.Launch(node.address(), "n1", Launch(7, "refuse"));
  links.Launch(gone, "n1", Launch(8));
  links.Signal(gone, Signal(8, 15));  // a lost signal is not reported
  links.Launch(node.address(), "n1", Launch(9));
  links.Launch(node.address(), "n1", Launch(10, "vanish"));
  std::vector<model::JobId> failed = WaitForFailures(3);
  EXPECT_EQ(node.WaitFor(3), (std::vector<std::string>{"launch 7", "launch 9", "launch 10"}));
  links.Drain();
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(failed_.size(), 3u);
  std::map<model::JobId, std::pair<absl::StatusCode, std::string>> by_job;
  for (size_t i = 0; i < failed_.size(); ++i) by_job[failed_[i]] = {codes_[i], why_[i]};
  // Refused by the node: its reason.
  EXPECT_EQ(by_job[7].first, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(by_job[7].second.find("bad work dir"), std::string::npos) << by_job[7].second;
  // Never connected: known not to run there.
  EXPECT_EQ(by_job[8].first, absl::StatusCode::kUnavailable) << by_job[8].second;
  EXPECT_NE(by_job[8].second.find("node " + gone), std::string::npos) << by_job[8].second;
  // Sent, but no answer came back: it may run there.
  EXPECT_EQ(by_job[10].first, absl::StatusCode::kDeadlineExceeded) << by_job[10].second;
}

TEST_F(NodeLinksTest, DrainWaitsForQueuedCallsAndDropsLaterOnes) {
  FakeNode node;
  NodeLinks links(munge_.get(), Options());
  for (model::JobId id = 1; id <= 20; ++id) links.Launch(node.address(), "n1", Launch(id));
  links.Drain();
  EXPECT_EQ(node.WaitFor(20, 0ms).size(), 20u);
  links.Launch(node.address(), "n1", Launch(21));
  EXPECT_EQ(node.WaitFor(21, 200ms).size(), 20u);
}

}  // namespace
}  // namespace loom::ctld
