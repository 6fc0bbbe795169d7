// The controller's owner loop on a simulated clock, over a store that can be made to refuse
// or hold up commits: a refused batch is answered with the store's error and forgotten,
// queries go on, changes are taken again once the store is back, and every time the loop
// decides by (job times, node timeouts, begin times, the store's pause) is the clock's.
#include "ctld/controller.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/synchronization/notification.h"
#include "core/clock.h"
#include "ctld/service.h"
#include "store/sqlite_store.h"

namespace loom::ctld {
namespace {

// What the tests make a store do.
struct StoreFaults {
  std::atomic<bool> full{false};        // commits fail, as on a full disk
  std::atomic<bool> unreadable{false};  // reading back fails too
  // While set, a commit waits until it is released: a slow disk.
  std::atomic<bool> slow{false};
  absl::Notification* release = nullptr;
  std::atomic<int> tries{0};     // commits tried
  std::atomic<int> waiting{0};   // commits waiting for `release`
};

// A SQLite store with the faults the test switches on.
class FaultyStore final : public store::Store {
 public:
  FaultyStore(std::unique_ptr<store::Store> real, StoreFaults* faults)
      : real_(std::move(real)), faults_(faults) {}
  Status Open() override { return real_->Open(); }
  Status Commit(const store::Batch& batch) override {
    ++faults_->tries;
    if (faults_->slow) {
      ++faults_->waiting;
      faults_->release->WaitForNotification();
      --faults_->waiting;
    }
    if (faults_->full) {
      return absl::ResourceExhaustedError(
          "loom.db: the disk is full while committing a batch; free space, then retry");
    }
    return real_->Commit(batch);
  }
  StatusOr<store::Snapshot> Recover() override {
    if (faults_->unreadable) return absl::DataLossError("loom.db: disk I/O error while reading");
    return real_->Recover();
  }
  StatusOr<std::string> ReadRequest(model::JobId id) override { return real_->ReadRequest(id); }
  std::string Location() const override { return real_->Location(); }

 private:
  std::unique_ptr<store::Store> real_;
  StoreFaults* faults_;
};

// 2026-12-01 00:00:00 UTC.
constexpr Time kStart = 1'796'083'200;

class ControllerTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("controller_test." + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "slurm.conf")
        << "ClusterName=t\nSlurmctldHost=localhost(127.0.0.1)\nStateSaveLocation=" << dir_.string()
        << "/state\nNodeName=n[1-2] CPUs=4 RealMemory=4000 NodeAddr=127.0.0.1 Port=1\n"
           "PartitionName=batch Nodes=n[1-2] Default=YES\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  StatusOr<std::unique_ptr<Controller>> Start() {
    ControllerOptions o;
    o.slurm_conf = (dir_ / "slurm.conf").string();
    o.listen_address = "127.0.0.1:0";
    o.clock = &clock_;
    o.open_store = [this](const conf::ClusterConfig& cfg)
        -> StatusOr<std::unique_ptr<store::Store>> {
      store::SqliteStoreOptions so;
      so.state_save_location = cfg.state_save_location;
      ASSIGN_OR_RETURN(auto real, store::OpenSqliteStore(so));
      return std::make_unique<FaultyStore>(std::move(real), &faults_);
    };
    return Controller::Start(o);
  }

  static Status Submit(Controller& c, JobId* id) {
    return c.Post([id](ControllerCore& core, Effects& fx, Time now) -> Status {
      model::JobRequest r;
      r.name = "held";
      r.shape.ntasks = 1;
      r.time_limit_s = 60;
      r.hold = true;
      ASSIGN_OR_RETURN(*id, core.Submit(r, Caller{1001, 1001, "alice"}, now, &fx));
      return absl::OkStatus();
    });
  }

  static size_t Jobs(Controller& c) {
    size_t n = 0;
    EXPECT_TRUE(c.Post([&n](ControllerCore& core, Effects&, Time) {
                   n = core.jobs().size();
                   return absl::OkStatus();
                 }).ok());
    return n;
  }

  // Runs `fn` on the owner thread in a batch of its own, at the clock's time then.
  template <typename Fn>
  static void OnOwner(Controller& c, Fn fn) {
    ASSERT_TRUE(c.Post([&fn](ControllerCore& core, Effects& fx, Time now) {
                   fn(core, fx, now);
                   return absl::OkStatus();
                 }).ok());
  }

  // Moves the clock on and runs a batch at the new time, so that what the owner does when
  // time passes (time limits, node timeouts, begin times, passes) has happened.
  void Advance(Controller& c, std::chrono::seconds d) {
    clock_.Advance(d);
    OnOwner(c, [](ControllerCore&, Effects&, Time) {});
  }

  std::filesystem::path dir_;
  core::SimulatedClock clock_{kStart};
  StoreFaults faults_;
};

TEST_F(ControllerTest, ARefusedCommitIsForgottenAndTheStoreIsTriedAgain) {
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  JobId first = 0;
  ASSERT_TRUE(Submit(**c, &first).ok());

  faults_.full = true;
  JobId refused = 0;
  Status s = Submit(**c, &refused);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(std::string(s.message()).find("the disk is full"), std::string::npos) << s;
  // None of it happened: the job is not there, and its id is given out again.
  EXPECT_EQ(Jobs(**c), 1u);
  EXPECT_EQ((*c)->snapshot()->jobs->size(), 1u);
  // While the store is paused, a change is refused without trying it.
  const int tries = faults_.tries;
  s = Submit(**c, &refused);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(std::string(s.message()).find("tries the store again in"), std::string::npos) << s;
  EXPECT_EQ(faults_.tries, tries);

  faults_.full = false;
  clock_.Advance(std::chrono::milliseconds(100));  // past the first pause
  JobId second = 0;
  s = Submit(**c, &second);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(second, first + 1);
  EXPECT_EQ(Jobs(**c), 2u);

  // What was acknowledged is what a restart finds.
  (*c)->Shutdown();
  c->reset();
  auto again = Start();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(Jobs(**again), 2u);
}

TEST_F(ControllerTest, APauseGrowsWhileTheStoreKeepsFailing) {
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  faults_.full = true;
  JobId id = 0;
  // Half a second of submissions, one every 5 ms of the clock: the store is tried at 0, 100
  // and 300 ms (pauses of 100 and 200 ms, then 400), not once per submission.
  for (int ms = 0; ms < 500; ms += 5) {
    ASSERT_FALSE(Submit(**c, &id).ok());
    clock_.Advance(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(faults_.tries, 3);
  EXPECT_EQ(Jobs(**c), 0u);
  // The pause stops growing at kMaxStoreBackoffMs.
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(std::chrono::milliseconds(Controller::kMaxStoreBackoffMs));
    ASSERT_FALSE(Submit(**c, &id).ok());
  }
  EXPECT_EQ(faults_.tries, 13);
  faults_.full = false;
  clock_.Advance(std::chrono::milliseconds(Controller::kMaxStoreBackoffMs));
  EXPECT_TRUE(Submit(**c, &id).ok());
}

TEST_F(ControllerTest, WhenTheStoreCannotEvenBeReadTheControllerStopsCleanly) {
  // The one failure the owner stops for: it cannot go back to what the store holds. Wait
  // returns, and Shutdown and the destructor join every thread rather than abort the process.
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  faults_.full = true;
  faults_.unreadable = true;
  JobId id = 0;
  EXPECT_FALSE(Submit(**c, &id).ok());
  (*c)->Wait();
  EXPECT_TRUE(absl::IsUnavailable(Submit(**c, &id)));
  (*c)->Shutdown();
  c->reset();
}

TEST_F(ControllerTest, AReconfigureInARefusedBatchDidNotHappen) {
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  std::ofstream(dir_ / "slurm.conf", std::ios::app)
      << "NodeName=n3 CPUs=4 RealMemory=4000 NodeAddr=127.0.0.1 Port=1\n";
  faults_.full = true;
  // The owner is held busy so that the submission and the reconfigure queue up behind it
  // and run as one batch, which the store refuses.
  (*c)->PostNoWait([](ControllerCore&, Effects&, Time) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return absl::OkStatus();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Status submitted, reconfigured;
  std::thread submit([&] {
    JobId id = 0;
    submitted = Submit(**c, &id);
  });
  std::thread reconfigure([&] {
    std::vector<conf::Diagnostic> warnings;
    int64_t timeout_s = 0;
    reconfigured = (*c)->Reconfigure(&warnings, &timeout_s);
  });
  submit.join();
  reconfigure.join();
  EXPECT_TRUE(absl::IsResourceExhausted(submitted)) << submitted;
  EXPECT_TRUE(absl::IsResourceExhausted(reconfigured)) << reconfigured;
  size_t nodes = 0, configured = 0;
  ASSERT_TRUE((*c)->Post([&](ControllerCore& core, Effects&, Time) {
                  nodes = core.cluster().nodes.size();
                  configured = (*c)->site().cluster.nodes.size();
                  return absl::OkStatus();
                }).ok());
  EXPECT_EQ(nodes, 2u);
  EXPECT_EQ(configured, 2u);

  // In a batch of its own it goes through: it writes nothing to the store.
  faults_.full = false;
  std::vector<conf::Diagnostic> warnings;
  int64_t timeout_s = 0;
  ASSERT_TRUE((*c)->Reconfigure(&warnings, &timeout_s).ok());
  ASSERT_TRUE((*c)->Post([&](ControllerCore& core, Effects&, Time) {
                  nodes = core.cluster().nodes.size();
                  return absl::OkStatus();
                }).ok());
  EXPECT_EQ(nodes, 3u);
}

TEST_F(ControllerTest, JobTimesAreTheClocks) {
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  JobId held = 0;
  ASSERT_TRUE(Submit(**c, &held).ok());
  JobId later = 0;
  ASSERT_TRUE((*c)->Post([&later](ControllerCore& core, Effects& fx, Time now) -> Status {
                  model::JobRequest r;
                  r.name = "later";
                  r.shape.ntasks = 1;
                  r.time_limit_s = 60;
                  r.begin_time = now + 120;
                  ASSIGN_OR_RETURN(later, core.Submit(r, Caller{1001, 1001, "alice"}, now, &fx));
                  return absl::OkStatus();
                }).ok());
  model::PendingReason reason{};
  OnOwner(**c, [&](ControllerCore& core, Effects&, Time now) {
    EXPECT_EQ(now, kStart);
    EXPECT_EQ(core.Find(held)->job.submit_time, kStart);
    reason = core.Find(later)->job.reason;
  });
  EXPECT_EQ(reason, model::PendingReason::kBeginTime);
  EXPECT_EQ((*c)->snapshot()->time, kStart);

  Advance(**c, std::chrono::seconds(119));
  OnOwner(**c, [&](ControllerCore& core, Effects&, Time) { reason = core.Find(later)->job.reason; });
  EXPECT_EQ(reason, model::PendingReason::kBeginTime);
  Advance(**c, std::chrono::seconds(1));
  OnOwner(**c, [&](ControllerCore& core, Effects&, Time) { reason = core.Find(later)->job.reason; });
  EXPECT_NE(reason, model::PendingReason::kBeginTime);  // no node has registered: it waits on
}

TEST_F(ControllerTest, ANodeThatStopsReportingIsDownAfterSlurmdTimeoutOfTheClock) {
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  OnOwner(**c, [](ControllerCore& core, Effects& fx, Time now) {
    core.NodeRegistered("n1", model::Resources{4, 0, 4000}, now, &fx);
  });
  auto n1 = [&] {
    model::Node node;
    OnOwner(**c, [&](ControllerCore& core, Effects&, Time) { node = core.cluster().nodes[0]; });
    return node;
  };
  EXPECT_EQ(n1().state, model::NodeState::kIdle);
  // SlurmdTimeout is 300 s by default: on the wall clock this test would wait five minutes.
  Advance(**c, std::chrono::seconds(300));
  EXPECT_EQ(n1().state, model::NodeState::kIdle);
  Advance(**c, std::chrono::seconds(1));
  const model::Node down = n1();
  EXPECT_EQ(down.state, model::NodeState::kDown);
  EXPECT_EQ(down.reason, "Not responding");
}

TEST_F(ControllerTest, QueriesAreAnsweredWhileACommitIsSlow) {
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  absl::Notification release;
  faults_.release = &release;
  faults_.slow = true;
  JobId id = 0;
  Status submitted = absl::UnknownError("not answered");
  std::thread submit([&] { submitted = Submit(**c, &id); });
  while (faults_.waiting == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // The owner thread is inside the commit: the published state answers, and it does not
  // show the job, which is not durable yet. So do the queries that used to be run by the
  // owner thread: `scontrol show step` and `scontrol show config`.
  EXPECT_EQ((*c)->snapshot()->jobs->size(), 0u);
  EXPECT_EQ((*c)->snapshot()->submitted, 0);
  ControllerApi api(c->get());
  const Caller root{0, 0, "root"};
  v1::QueryStepsReply steps;
  EXPECT_TRUE(api.QuerySteps(root, v1::QueryStepsRequest(), &steps).ok());
  EXPECT_EQ(steps.steps_size(), 0);
  v1::QueryConfigReply config;
  EXPECT_TRUE(api.QueryConfig(root, v1::QueryConfigRequest(), &config).ok());
  bool next_job_id = false;
  for (const v1::ConfigEntry& e : config.entries()) {
    if (e.key() == "NEXT_JOB_ID") next_job_id = e.value() == "1";
  }
  EXPECT_TRUE(next_job_id);
  faults_.slow = false;
  release.Notify();
  submit.join();
  ASSERT_TRUE(submitted.ok()) << submitted;
  // Answered only once published.
  EXPECT_EQ((*c)->snapshot()->jobs->size(), 1u);
}

}  // namespace
}  // namespace loom::ctld
