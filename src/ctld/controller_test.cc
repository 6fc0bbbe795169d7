// The controller's owner loop over a store that can be made to refuse commits: a refused
// batch is answered with the store's error and forgotten, queries go on, and changes are
// taken again once the store is back.
#include "ctld/controller.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/sqlite_store.h"

namespace loom::ctld {
namespace {

// A SQLite store whose commits fail while `full` is set, as a full disk makes them fail.
class FillableStore final : public store::Store {
 public:
  FillableStore(std::unique_ptr<store::Store> real, std::atomic<bool>* full,
                std::atomic<bool>* unreadable, std::atomic<int>* tries)
      : real_(std::move(real)), full_(full), unreadable_(unreadable), tries_(tries) {}
  Status Open() override { return real_->Open(); }
  Status Commit(const store::Batch& batch) override {
    ++*tries_;
    if (*full_) {
      return absl::ResourceExhaustedError(
          "loom.db: the disk is full while committing a batch; free space, then retry");
    }
    return real_->Commit(batch);
  }
  StatusOr<store::Snapshot> Recover() override {
    if (*unreadable_) return absl::DataLossError("loom.db: disk I/O error while reading");
    return real_->Recover();
  }
  StatusOr<std::string> ReadRequest(model::JobId id) override { return real_->ReadRequest(id); }
  std::string Location() const override { return real_->Location(); }

 private:
  std::unique_ptr<store::Store> real_;
  std::atomic<bool>* full_;
  std::atomic<bool>* unreadable_;
  std::atomic<int>* tries_;
};

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
    o.open_store = [this](const conf::ClusterConfig& cfg)
        -> StatusOr<std::unique_ptr<store::Store>> {
      store::SqliteStoreOptions so;
      so.state_save_location = cfg.state_save_location;
      ASSIGN_OR_RETURN(auto real, store::OpenSqliteStore(so));
      return std::make_unique<FillableStore>(std::move(real), &full_, &unreadable_,
                                                     &tries_);
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

  std::filesystem::path dir_;
  std::atomic<bool> full_{false};
  std::atomic<bool> unreadable_{false};
  std::atomic<int> tries_{0};
};

TEST_F(ControllerTest, ARefusedCommitIsForgottenAndTheStoreIsTriedAgain) {
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  JobId first = 0;
  ASSERT_TRUE(Submit(**c, &first).ok());

  full_ = true;
  JobId refused = 0;
  Status s = Submit(**c, &refused);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(std::string(s.message()).find("the disk is full"), std::string::npos) << s;
  // None of it happened: the job is not there, and its id is given out again.
  EXPECT_EQ(Jobs(**c), 1u);
  EXPECT_EQ((*c)->snapshot()->jobs->size(), 1u);
  // While the store is paused, a change is refused without trying it.
  const int tries = tries_;
  s = Submit(**c, &refused);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(std::string(s.message()).find("tries the store again in"), std::string::npos) << s;
  EXPECT_EQ(tries_, tries);

  full_ = false;
  std::this_thread::sleep_for(std::chrono::milliseconds(250));  // past the first pause
  JobId second = 0;
  ASSERT_TRUE(Submit(**c, &second).ok());
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
  full_ = true;
  JobId id = 0;
  int refused = 0;
  const auto t0 = std::chrono::steady_clock::now();
  // Half a second of submissions: the store is tried after 0, 100, 300 ms (pauses of 100 and
  // 200 ms, then 400), not once per submission.
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500)) {
    ASSERT_FALSE(Submit(**c, &id).ok());
    ++refused;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GT(refused, 20);
  EXPECT_GE(tries_, 3);
  EXPECT_LE(tries_, 4);
  EXPECT_EQ(Jobs(**c), 0u);
}

TEST_F(ControllerTest, WhenTheStoreCannotEvenBeReadTheControllerStopsCleanly) {
  // The one failure the owner stops for: it cannot go back to what the store holds. Wait
  // returns, and Shutdown and the destructor join every thread rather than abort the process.
  auto c = Start();
  ASSERT_TRUE(c.ok()) << c.status();
  full_ = true;
  unreadable_ = true;
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
  full_ = true;
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
  full_ = false;
  std::vector<conf::Diagnostic> warnings;
  int64_t timeout_s = 0;
  ASSERT_TRUE((*c)->Reconfigure(&warnings, &timeout_s).ok());
  ASSERT_TRUE((*c)->Post([&](ControllerCore& core, Effects&, Time) {
                  nodes = core.cluster().nodes.size();
                  return absl::OkStatus();
                }).ok());
  EXPECT_EQ(nodes, 3u);
}

}  // namespace
}  // namespace loom::ctld
