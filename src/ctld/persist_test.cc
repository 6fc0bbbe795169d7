// Jobs survive a controller restart: entries go through the SQLite store and come back
// with their state, times and exact devices.
#include "ctld/persist.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "conf/testing/site_text.h"
#include "core/strings.h"
#include "store/sqlite_store.h"

namespace loom::ctld {
namespace {

conf::SiteConfig Site(const std::string& dir) {
  std::filesystem::create_directories(dir);
  auto site = conf::testing::SiteFromText(
      std::filesystem::path(dir).filename().string(),
      "ClusterName=t\nSlurmctldHost=localhost\nGresTypes=gpu\n"
         "NodeName=n[1-2] CPUs=8 RealMemory=16000 Gres=gpu:a100:4\n"
         "PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=1-00:00:00\n");
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

TEST(PersistTest, AllocationRoundTripsByNodeName) {
  auto site = Site(testing::TempDir() + "/persist_alloc");
  ControllerCore core(site, CoreOptions{}, 1);
  sched::NodeAlloc a(1, sched::Resources{.cpus = 4, .gpus = 2, .mem_mb = 1000});
  a.gpu_ids = 0b0110;
  a.cpu_ids.set(2);
  a.cpu_ids.set(3);
  std::string bytes = EncodeAllocation({a}, core.cluster());
  auto back = DecodeAllocation(bytes, core.cluster());
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0], a);
  EXPECT_FALSE(DecodeAllocation("{not json", core.cluster()).ok());
  EXPECT_FALSE(DecodeAllocation(R"([{"node":"gone"}])", core.cluster()).ok());
}

TEST(PersistTest, JobsComeBackAfterARestart) {
  const std::string dir = testing::TempDir() + "/persist_restart";
  std::filesystem::remove_all(dir);
  auto site = Site(dir);
  ControllerCore core(site, CoreOptions{}, 10);
  Effects fx;
  core.NodeAlive("n1", 0, &fx);
  core.NodeAlive("n2", 0, &fx);
  model::JobRequest req;
  req.name = "keep";
  req.shape.ntasks = 1;
  req.shape.cpus_per_task = 2;
  req.time_limit_s = 600;
  const Caller alice{1001, 1001, "alice"};
  JobId running = *core.Submit(req, alice, 0, &fx);
  JobId ended = *core.Submit(req, alice, 0, &fx);
  core.Schedule(1, &fx);
  // `ended` is requeued once, runs again and completes: it keeps where it ran and its count.
  const Caller root{0, 0, "root"};
  ASSERT_TRUE(core.Requeue(ended, false, root, 2, &fx).ok());
  core.JobEnded(ended, 15 /* SIGTERM */, false, 3, &fx, "");
  core.Schedule(4, &fx);
  ASSERT_EQ(core.Find(ended)->job.state, model::JobState::kRunning);
  core.JobEnded(ended, 0, false, 5, &fx, "");
  ASSERT_EQ(core.Find(ended)->job.state, model::JobState::kCompleted);
  ASSERT_FALSE(core.Find(ended)->history().ran.empty());
  JobId pending = *core.Submit(req, alice, 6, &fx);

  store::SqliteStoreOptions so;
  so.state_save_location = dir + "/state";
  {
    auto st = store::OpenSqliteStore(so);
    ASSERT_TRUE(st.ok()) << st.status();
    store::Batch batch;
    for (const auto& [key, e] : core.jobs()) {
      batch.Add(store::PutRequest{e.submission_id(), "request-bytes"});
      batch.Add(store::PutJob{ToRecord(e, core.cluster())});
    }
    batch.Add(store::SetNextJobId{core.next_job_id()});
    ASSERT_TRUE((*st)->Commit(batch).ok());
  }
  auto st = store::OpenSqliteStore(so);
  ASSERT_TRUE(st.ok()) << st.status();
  auto snap = (*st)->Recover();
  ASSERT_TRUE(snap.ok()) << snap.status();
  ControllerCore again(site, CoreOptions{}, 1);
  std::vector<JobEntry> entries;
  auto request = std::make_shared<const model::JobRequest>(req);
  for (const store::JobRecord& r : snap->jobs) {
    EXPECT_EQ(snap->requests.at(r.request_id), "request-bytes");
    auto e = FromRecord(r, again.cluster(), request);
    ASSERT_TRUE(e.ok()) << e.status();
    entries.push_back(std::move(*e));
  }
  again.Restore(std::move(entries), snap->next_job_id);
  EXPECT_EQ(again.next_job_id(), core.next_job_id());
  ASSERT_NE(again.Find(running), nullptr);
  EXPECT_EQ(again.Find(running)->job.state, model::JobState::kRunning);
  EXPECT_EQ(again.Find(running)->alloc(), core.Find(running)->alloc());
  EXPECT_EQ(again.Find(running)->job.start_time, 1);
  const JobEntry& done = *again.Find(ended);
  EXPECT_EQ(done.job.state, model::JobState::kCompleted);
  EXPECT_FALSE(done.completing);
  EXPECT_TRUE(done.alloc().empty());
  EXPECT_EQ(done.history().ran, core.Find(ended)->history().ran);
  EXPECT_EQ(done.history().restarts, 1);
  EXPECT_EQ(done.last_sched_eval, core.Find(ended)->last_sched_eval);
  EXPECT_EQ(again.Find(pending)->job.state, model::JobState::kPending);
  EXPECT_EQ(again.Find(pending)->job.user, "alice");
}

TEST(PersistTest, ProgressIsTheRecordsChangingPart) {
  auto site = Site(testing::TempDir() + "/persist_progress");
  ControllerCore core(site, CoreOptions{}, 1);
  Effects fx;
  core.NodeAlive("n1", 0, &fx);
  model::JobRequest req;
  req.shape.ntasks = 1;
  req.shape.cpus_per_task = 2;
  req.time_limit_s = 600;
  req.array = model::ParseArraySpec("0-1").value();
  JobId id = *core.Submit(req, Caller{1001, 1001, "alice"}, 0, &fx);
  core.Schedule(1, &fx);
  const JobEntry& task = *core.Find(id + 1);
  store::JobRecord r = ToRecord(task, core.cluster());
  EXPECT_EQ(r.request_id, id);  // the array's submission
  EXPECT_EQ(r.array_job_id, id);
  store::JobProgress p = ToProgress(task, core.cluster());
  EXPECT_EQ(p, r.progress());
  EXPECT_EQ(p.state, model::JobState::kRunning);
  EXPECT_EQ(p.nodes, "n1");

  // A task comes back as the same task of the same array.
  StatusOr<JobEntry> back = FromRecord(r, core.cluster(), task.request);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->array_job_id(), id);
  EXPECT_EQ(back->array_task_id(), std::optional<int32_t>(1));
  EXPECT_EQ(back->submission_id(), id);
  // A record naming an array after its own id, or a task without an index, is damage.
  store::JobRecord bad = r;
  bad.array_job_id = r.id + 1;
  StatusOr<JobEntry> refused = FromRecord(bad, core.cluster(), task.request);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(std::string(refused.status().message()).find(core::StrCat("stored job ", r.id)),
            std::string::npos)
      << refused.status();
  bad = r;
  bad.array_task_id.reset();
  EXPECT_EQ(FromRecord(bad, core.cluster(), task.request).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace loom::ctld
