// The controller's round trip through its store: a submission is written once (one blob for
// a whole array), later changes write only a job's progress, the script and environment stay
// out of the job table and are read back from the store, and a restart rebuilds every job
// exactly.
#include "ctld/durable.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ctld/persist.h"
#include "store/sqlite_store.h"
#include "conf/testing/site_text.h"

namespace loom::ctld {
namespace {

namespace fs = std::filesystem;

conf::SiteConfig Site(const std::string& dir) {
  fs::create_directories(dir);
  auto site = conf::testing::SiteFromText(
      fs::path(dir).filename().string(),
      "ClusterName=t\nSlurmctldHost=localhost\nGresTypes=gpu\nMinJobAge=60\n"
         "NodeName=n[1-2] CPUs=8 RealMemory=16000 Gres=gpu:a100:4\n"
         "PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=1-00:00:00\n");
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

model::JobRequest Request(std::string script, std::string array = "") {
  model::JobRequest r;
  r.name = "job";
  r.shape.ntasks = 1;
  r.shape.cpus_per_task = 2;
  r.time_limit_s = 600;
  r.work_dir = "/home/alice/project";
  r.script = std::move(script);
  r.environment = {{"PATH", "/usr/bin"}, {"HOME", "/home/alice"}, {"BIG", std::string(4000, 'x')}};
  if (!array.empty()) r.array = model::ParseArraySpec(array).value();
  return r;
}

// How many mutations of each kind a batch holds.
template <typename M>
size_t Count(const store::Batch& b) {
  size_t n = 0;
  for (const store::Mutation& m : b.mutations) n += std::holds_alternative<M>(m);
  return n;
}

class DurableTest : public testing::Test {
 protected:
  DurableTest()
      : dir_(testing::TempDir() + "/durable_" + testing::UnitTest::GetInstance()
                                                     ->current_test_info()
                                                     ->name()),
        site_(Site((fs::remove_all(dir_), dir_))),
        core_(site_, CoreOptions{.min_job_age_s = 60}, 1) {
    Reopen();
  }
  void Reopen() {
    store_.reset();
    store::SqliteStoreOptions so;
    so.state_save_location = dir_ + "/state";
    auto st = store::OpenSqliteStore(so);
    EXPECT_TRUE(st.ok()) << st.status();
    store_ = std::move(*st);
  }
  // Makes `fx` durable, as the controller does after each batch; returns the batch.
  store::Batch Commit(const Effects& fx) {
    store::Batch b = BatchFor(fx, core_);
    Status s = store_->Commit(b);
    EXPECT_TRUE(s.ok()) << s;
    return b;
  }

  std::string dir_;
  conf::SiteConfig site_;
  ControllerCore core_;
  std::unique_ptr<store::SqliteStore> store_;
  const Caller alice_{1001, 1001, "alice"};
};

TEST_F(DurableTest, ASubmissionIsStoredOnceAndLaterChangesWriteOnlyProgress) {
  Effects fx;
  const JobId plain = *core_.Submit(Request("#!/bin/sh\necho plain\n"), alice_, 10, &fx);
  const JobId array = *core_.Submit(Request("#!/bin/sh\necho $SLURM_ARRAY_TASK_ID\n", "0-2"),
                                    alice_, 11, &fx);
  store::Batch first = Commit(fx);
  EXPECT_EQ(Count<store::PutRequest>(first), 2u);  // one for the array's three tasks
  EXPECT_EQ(Count<store::PutJob>(first), 4u);
  EXPECT_EQ(Count<store::UpdateJob>(first), 0u);
  EXPECT_EQ(Count<store::SetNextJobId>(first), 1u);

  // The table keeps neither script nor environment; the tasks share one request.
  for (JobId id : {plain, array, array + 1, array + 2}) {
    EXPECT_TRUE(core_.Find(id)->request->script.empty()) << id;
    EXPECT_TRUE(core_.Find(id)->request->environment.empty()) << id;
  }
  EXPECT_EQ(core_.Find(array)->request, core_.Find(array + 2)->request);

  // Jobs start, one is held: only their progress is written.
  Effects run;
  core_.NodeAlive("n1", 20, &run);
  core_.NodeAlive("n2", 20, &run);
  ASSERT_TRUE(core_.Hold(array + 2, alice_, &run).ok());
  core_.Schedule(21, &run);
  ASSERT_EQ(run.launches.size(), 3u);
  store::Batch second = Commit(run);
  EXPECT_EQ(Count<store::UpdateJob>(second), 4u);
  EXPECT_EQ(second.size(), 4u);

  // The launch reads what the table does not hold back from the store.
  auto full = ReadSubmission(*store_, array);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->script, "#!/bin/sh\necho $SLURM_ARRAY_TASK_ID\n");
  EXPECT_EQ(full->environment.at("BIG"), std::string(4000, 'x'));
  model::JobRequest stripped = *full;
  stripped.script.clear();
  stripped.environment.clear();
  EXPECT_EQ(stripped, *core_.Find(array)->request);
  EXPECT_EQ(ReadSubmission(*store_, 99).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DurableTest, ARestartRebuildsEveryJobExactly) {
  Effects fx;
  core_.NodeAlive("n1", 0, &fx);
  core_.NodeAlive("n2", 0, &fx);
  ASSERT_TRUE(core_.Submit(Request("a"), alice_, 1, &fx).ok());
  const JobId array = *core_.Submit(Request("b", "0-3%2"), alice_, 2, &fx);
  core_.Schedule(3, &fx);
  core_.JobEnded(array, 0, false, 4, &fx);
  ASSERT_TRUE(core_.Signal(array + 3, std::nullopt, 0, alice_, 5, &fx).ok());
  model::JobRequest held = Request("c");
  held.hold = true;
  ASSERT_TRUE(core_.Submit(held, alice_, 6, &fx).ok());
  Commit(fx);

  Reopen();
  auto snap = store_->Recover();
  ASSERT_TRUE(snap.ok()) << snap.status();
  auto entries = EntriesFrom(*snap, core_.cluster(), store_->Location());
  ASSERT_TRUE(entries.ok()) << entries.status();
  ControllerCore again(site_, CoreOptions{.min_job_age_s = 60}, 1);
  again.Restore(std::move(*entries), snap->next_job_id);

  EXPECT_EQ(again.next_job_id(), core_.next_job_id());
  ASSERT_EQ(again.jobs().size(), core_.jobs().size());
  for (const auto& [key, e] : core_.jobs()) {
    const JobEntry* back = again.Find(e.job.id);
    ASSERT_NE(back, nullptr) << e.job.id;
    EXPECT_EQ(ToRecord(*back, again.cluster()), ToRecord(e, core_.cluster())) << e.job.id;
    EXPECT_EQ(back->alloc(), e.alloc()) << e.job.id;
    EXPECT_EQ(back->array_task_id(), e.array_task_id()) << e.job.id;
    EXPECT_EQ(back->partition, e.partition) << e.job.id;
    EXPECT_EQ(*back->request, *e.request) << e.job.id;
  }
  EXPECT_EQ(again.Find(array)->request, again.Find(array + 3)->request);
}

TEST_F(DurableTest, ASubmissionIsForgottenWithItsLastJob) {
  Effects fx;
  core_.NodeAlive("n1", 0, &fx);
  const JobId plain = *core_.Submit(Request("a"), alice_, 0, &fx);
  const JobId array = *core_.Submit(Request("b", "0-1"), alice_, 0, &fx);
  Commit(fx);
  Effects cancel;
  ASSERT_TRUE(core_.Signal(plain, std::nullopt, 0, alice_, 10, &cancel).ok());
  ASSERT_TRUE(core_.Signal(array, 0, 0, alice_, 10, &cancel).ok());
  ASSERT_TRUE(core_.Signal(array, 1, 0, alice_, 50, &cancel).ok());
  Commit(cancel);

  Effects first;  // MinJobAge after the first two ended, not the third
  core_.Tick(80, &first);
  EXPECT_EQ(first.deleted, (std::vector<JobId>{plain, array}));
  EXPECT_EQ(first.forgotten, std::vector<JobId>{plain});
  Commit(first);
  EXPECT_EQ(store_->Recover()->requests.count(array), 1u);

  Effects last;
  core_.Tick(120, &last);
  EXPECT_EQ(last.deleted, std::vector<JobId>{array + 1});
  EXPECT_EQ(last.forgotten, std::vector<JobId>{array});
  Commit(last);
  auto snap = store_->Recover();
  EXPECT_TRUE(snap->jobs.empty());
  EXPECT_TRUE(snap->requests.empty());
}

TEST_F(DurableTest, AJobWithoutItsSubmissionIsDataLoss) {
  store::Snapshot snap;
  store::JobRecord r;
  r.id = 5;
  r.request_id = 4;
  r.partition = "batch";
  snap.jobs.push_back(r);
  auto entries = EntriesFrom(snap, core_.cluster(), "/state/loom.db");
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(entries.status().message(),
            "job 5 in /state/loom.db: its submission (4) is missing from the store");
  snap.requests[4] = "\xff\xff not a JobSpec";
  entries = EntriesFrom(snap, core_.cluster(), "/state/loom.db");
  EXPECT_EQ(entries.status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace loom::ctld
