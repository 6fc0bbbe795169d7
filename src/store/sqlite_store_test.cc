#include "store/sqlite_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loom::store {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh, empty directory for one test.
std::string FreshDir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(testing::TempDir()) /
                 (std::string("loom_store_") + info->name() + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir.string();
}

// Each test gets a fresh, empty directory, removed afterwards.
class SqliteStoreTest : public testing::Test {
 protected:
  void SetUp() override { dir_ = FreshDir(); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAt(const std::string& path, std::streamoff offset, const std::string& bytes) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(offset);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs SQL on the file directly, as an administrator with the sqlite3 shell would.
void RawSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

JobRecord FullJob(model::JobId id) {
  JobRecord j;
  j.id = id;
  j.array_job_id = 7;
  j.array_task_id = 3;
  j.name = "train-llm";
  j.user = "alice";
  j.uid = 1001;
  j.gid = 100;
  j.account = "physics";
  j.partition = "gpu";
  j.state = model::JobState::kRunning;
  j.reason = model::PendingReason::kNone;
  j.priority = 4294901;
  j.time_limit_s = 86400;
  j.exit_code = 0;
  j.submit_time = 1700000000;
  j.eligible_time = 1700000001;
  j.start_time = 1700000100;
  j.end_time = 1700086500;
  j.nodes = "dgx[01-04]";
  j.request_id = 7;
  j.allocation = std::string("\x00\x01\x02\xff", 4);
  return j;
}

JobRecord SmallJob(model::JobId id) {
  JobRecord j;
  j.id = id;
  j.name = "job" + std::to_string(id);
  j.user = "bob";
  j.uid = 1002;
  j.partition = "batch";
  j.reason = model::PendingReason::kPriority;
  j.request_id = id;
  return j;
}

// A submission's bytes, with a NUL inside.
std::string RequestBytes(model::JobId id) {
  return std::string("#!/bin/bash\n\0srun python train.py\n", 35) + std::to_string(id);
}

// The part of `j` that UpdateJob writes.
JobProgress ProgressOf(const JobRecord& j) { return j.progress(); }

SqliteStoreOptions Options(const std::string& dir) {
  SqliteStoreOptions o;
  o.state_save_location = dir;
  return o;
}

TEST_F(SqliteStoreTest, NewStoreIsEmptyAndCreatesItsDirectory) {
  const std::string dir = dir_ + "/state/ctld";
  auto store = OpenSqliteStore(Options(dir));
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->Location(), dir + "/loom.db");
  EXPECT_TRUE(fs::exists(dir + "/loom.db"));
  auto snap = (*store)->Recover();
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_TRUE(snap->jobs.empty());
  EXPECT_TRUE(snap->nodes.empty());
  EXPECT_TRUE(snap->values.empty());
  EXPECT_EQ(snap->next_job_id, 0u);
}

TEST_F(SqliteStoreTest, EveryMutationKindSurvivesReopen) {
  const std::string dir = dir_;
  NodeRecord drained{"dgx01", model::NodeState::kIdle, true, "bad DIMM", 0, 1700000500};
  NodeRecord down{"cpu-7", model::NodeState::kDown, false, "Not responding", 0, 1700000600};
  JobRecord pending = SmallJob(1);
  pending.array_task_id.reset();
  {
    auto store = OpenSqliteStore(Options(dir));
    ASSERT_TRUE(store.ok()) << store.status();
    Batch first;
    first.Add(PutRequest{7, RequestBytes(7)})
        .Add(PutJob{FullJob(5)})
        .Add(PutRequest{1, RequestBytes(1)})
        .Add(PutJob{pending})
        .Add(PutRequest{9, RequestBytes(9)})
        .Add(PutJob{SmallJob(9)})
        .Add(PutNode{drained})
        .Add(PutNode{down})
        .Add(PutNode{{"gone", model::NodeState::kIdle, false, "", 0, 0}})
        .Add(SetNextJobId{10})
        .Add(PutValue{"config_digest", std::string("sha256:\0ab", 10)})
        .Add(PutValue{"stale", "x"})
        .Add(PutValue{"steps/5", "gone soon"});
    ASSERT_TRUE((*store)->Commit(first).ok());

    Batch second;
    JobRecord done = FullJob(5);
    done.state = model::JobState::kCompleted;
    done.exit_code = 256;
    done.ran_allocation = std::string("ran\0here", 8);
    done.restarts = 2;
    done.last_sched_eval = 1700000700;
    second.Add(UpdateJob{ProgressOf(done)})
        .Add(DeleteJob{9})
        .Add(DeleteRequest{9})
        .Add(DeleteRequest{12345})  // not there either
        .Add(DeleteJob{12345})  // not there: nothing to do
        .Add(DeleteNode{"gone"})
        .Add(SetNextJobId{11})
        .Add(PutValue{"stale", "y"})
        .Add(DeleteValue{"steps/5"})
        .Add(DeleteValue{"never-there"});
    ASSERT_TRUE((*store)->Commit(second).ok());
  }
  auto store = OpenSqliteStore(Options(dir));
  ASSERT_TRUE(store.ok()) << store.status();
  auto snap = (*store)->Recover();
  ASSERT_TRUE(snap.ok()) << snap.status();

  JobRecord done = FullJob(5);
  done.state = model::JobState::kCompleted;
  done.exit_code = 256;
  done.ran_allocation = std::string("ran\0here", 8);
  done.restarts = 2;
  done.last_sched_eval = 1700000700;
  ASSERT_EQ(snap->jobs.size(), 2u);
  EXPECT_EQ(snap->jobs[0], pending);
  EXPECT_EQ(snap->jobs[1], done);
  ASSERT_EQ(snap->requests.size(), 2u);
  EXPECT_EQ(snap->requests[1], RequestBytes(1));
  EXPECT_EQ(snap->requests[7], RequestBytes(7));  // bytes after a NUL are kept
  EXPECT_EQ((*store)->ReadRequest(7).value(), RequestBytes(7));
  EXPECT_EQ((*store)->ReadRequest(9).status().code(), absl::StatusCode::kNotFound);
  ASSERT_EQ(snap->nodes.size(), 2u);
  EXPECT_EQ(snap->nodes[0], down);  // by name: "cpu-7" < "dgx01"
  EXPECT_EQ(snap->nodes[1], drained);
  EXPECT_EQ(snap->next_job_id, 11u);
  EXPECT_EQ(snap->values.size(), 2u);
  EXPECT_EQ(snap->values["config_digest"], std::string("sha256:\0ab", 10));
  EXPECT_EQ(snap->values["stale"], "y");
}

TEST_F(SqliteStoreTest, EveryJobStateAndReasonRoundTrips) {
  auto store = OpenSqliteStore(Options(dir_));
  ASSERT_TRUE(store.ok()) << store.status();
  Batch batch;
  model::JobId id = 1;
  for (int s = 0; s <= static_cast<int>(model::JobState::kOutOfMemory); ++s) {
    for (int r = 0; r <= static_cast<int>(model::PendingReason::kAssocMaxWallDurationPerJobLimit);
         ++r) {
      JobRecord j = SmallJob(id++);
      j.state = static_cast<model::JobState>(s);
      j.reason = static_cast<model::PendingReason>(r);
      batch.Add(PutJob{j});
    }
  }
  for (int s = 0; s <= static_cast<int>(model::NodeState::kFuture); ++s) {
    batch.Add(PutNode{
        {"n" + std::to_string(s), static_cast<model::NodeState>(s), s % 2 == 0, "r", 0, 0}});
  }
  ASSERT_TRUE((*store)->Commit(batch).ok());
  auto snap = (*store)->Recover();
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_EQ(snap->jobs.size() + snap->nodes.size(), batch.size());
  for (size_t i = 0; i < snap->jobs.size(); ++i) {
    EXPECT_EQ(snap->jobs[i], std::get<PutJob>(batch.mutations[i]).job);
  }
  for (size_t i = 0; i < snap->nodes.size(); ++i) {
    EXPECT_EQ(snap->nodes[i], std::get<PutNode>(batch.mutations[snap->jobs.size() + i]).node);
  }
}

TEST_F(SqliteStoreTest, ABatchWithABadMutationLeavesNothing) {
  auto store = OpenSqliteStore(Options(dir_));
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Commit(Batch().Add(PutJob{SmallJob(1)}).Add(SetNextJobId{2})).ok());

  for (const Mutation& bad : std::vector<Mutation>{
           PutJob{SmallJob(0)}, DeleteJob{0}, PutNode{{}}, DeleteNode{""}, SetNextJobId{0},
           PutValue{"", "v"}, PutJob{SmallJob(model::JobId{1} << 63)}, PutRequest{0, "r"},
           DeleteRequest{0}, UpdateJob{JobProgress{}}, PutJob{[] {
             JobRecord j = SmallJob(4);
             j.request_id = 0;
             return j;
           }()}}) {
    Batch batch;
    batch.Add(PutJob{SmallJob(2)})
        .Add(DeleteJob{1})
        .Add(PutNode{{"n1", model::NodeState::kDown, false, "", 0, 0}})
        .Add(SetNextJobId{3})
        .Add(PutRequest{2, "r"})
        .Add(bad)
        .Add(PutJob{SmallJob(3)});
    Status status = (*store)->Commit(batch);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr("rolled back at mutation 6 of 7"));

    auto snap = (*store)->Recover();
    ASSERT_TRUE(snap.ok()) << snap.status();
    ASSERT_EQ(snap->jobs.size(), 1u);
    EXPECT_EQ(snap->jobs[0], SmallJob(1));
    EXPECT_TRUE(snap->nodes.empty());
    EXPECT_TRUE(snap->requests.empty());
    EXPECT_EQ(snap->next_job_id, 2u);
  }
  // The store is still usable.
  ASSERT_TRUE((*store)->Commit(Batch().Add(PutJob{SmallJob(2)})).ok());
  EXPECT_EQ((*store)->Recover()->jobs.size(), 2u);
}

TEST_F(SqliteStoreTest, UpdateJobWritesTheProgressAndLeavesTheRestAlone) {
  auto store = OpenSqliteStore(Options(dir_));
  ASSERT_TRUE(store.ok()) << store.status();
  JobRecord job = FullJob(5);
  ASSERT_TRUE(
      (*store)->Commit(Batch().Add(PutRequest{7, RequestBytes(7)}).Add(PutJob{job})).ok());

  JobRecord changed = job;
  changed.state = model::JobState::kTimeout;
  changed.reason = model::PendingReason::kNone;
  changed.priority = 1;
  changed.time_limit_s = 60;
  changed.exit_code = 9;
  changed.eligible_time += 1;
  changed.start_time += 2;
  changed.end_time += 3;
  changed.nodes = "";
  changed.allocation = "";
  // Only the progress travels; a record with other identity fields would not change them.
  ASSERT_TRUE((*store)->Commit(Batch().Add(UpdateJob{ProgressOf(changed)})).ok());
  auto snap = (*store)->Recover();
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_EQ(snap->jobs.size(), 1u);
  EXPECT_EQ(snap->jobs[0], changed);
  EXPECT_EQ(snap->requests.at(7), RequestBytes(7));

  // A job that was never put cannot be updated: the batch fails whole.
  Status status = (*store)->Commit(
      Batch().Add(SetNextJobId{40}).Add(UpdateJob{ProgressOf(SmallJob(12))}));
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("job 12 has no record to update"));
  EXPECT_EQ((*store)->Recover()->next_job_id, 0u);
}

// The schema of version 1, as that Loom wrote it.
constexpr const char* kVersion1Sql = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY CHECK (id > 0),
  array_job_id INTEGER CHECK (array_job_id IS NULL OR array_job_id > 0),
  array_task_id INTEGER CHECK (array_task_id IS NULL OR array_task_id >= 0),
  job_name TEXT NOT NULL, user_name TEXT NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL,
  account TEXT NOT NULL, partition_name TEXT NOT NULL, state TEXT NOT NULL,
  reason TEXT NOT NULL, priority INTEGER NOT NULL, time_limit_s INTEGER NOT NULL,
  exit_code INTEGER NOT NULL, submit_time INTEGER NOT NULL, eligible_time INTEGER NOT NULL,
  start_time INTEGER NOT NULL, end_time INTEGER NOT NULL, nodes TEXT NOT NULL,
  request BLOB NOT NULL, allocation BLOB NOT NULL);
CREATE TABLE nodes (node_name TEXT PRIMARY KEY CHECK (node_name <> ''), state TEXT NOT NULL,
  drain INTEGER NOT NULL, reason TEXT NOT NULL, reason_uid INTEGER NOT NULL,
  reason_time INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE counters (counter_name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE named_values (value_name TEXT PRIMARY KEY CHECK (value_name <> ''),
  value BLOB NOT NULL) WITHOUT ROWID;
INSERT INTO schema_version (version) VALUES (1);
PRAGMA application_id=1280266061;
INSERT INTO jobs VALUES (3, NULL, NULL, 'plain', 'bob', 1002, 1002, '', 'batch', 'PENDING',
  'Priority', 100, 600, 0, 1700000000, 1700000000, 0, 0, '', X'706C61696E00', '');
INSERT INTO jobs VALUES (4, 4, 0, 'arr', 'bob', 1002, 1002, '', 'batch', 'RUNNING', 'None',
  99, 600, 0, 1700000001, 1700000001, 1700000002, 1700000602, 'n1', X'61727261790A',
  '[{"node":"n1"}]');
INSERT INTO jobs VALUES (5, 4, 1, 'arr', 'bob', 1002, 1002, '', 'batch', 'PENDING', 'None',
  98, 600, 0, 1700000001, 1700000001, 0, 0, '', X'61727261790A', '');
INSERT INTO counters VALUES ('next_job_id', 6);
)sql";

TEST_F(SqliteStoreTest, AVersion1FileIsUpgradedOnOpen) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/loom.db";
  RawSql(path, kVersion1Sql);
  for (int round = 0; round < 2; ++round) {  // upgraded once, then opened as it is
    auto store = OpenSqliteStore(Options(dir_));
    ASSERT_TRUE(store.ok()) << store.status();
    auto snap = (*store)->Recover();
    ASSERT_TRUE(snap.ok()) << snap.status();
    ASSERT_EQ(snap->jobs.size(), 3u);
    EXPECT_EQ(snap->jobs[0].request_id, 3u);
    EXPECT_EQ(snap->jobs[0].reason, model::PendingReason::kPriority);
    EXPECT_EQ(snap->jobs[1].request_id, 4u);  // the array's tasks share one submission
    EXPECT_EQ(snap->jobs[1].nodes, "n1");
    EXPECT_EQ(snap->jobs[1].allocation, R"([{"node":"n1"}])");
    EXPECT_EQ(snap->jobs[2].request_id, 4u);
    EXPECT_EQ(snap->jobs[2].array_task_id, 1u);
    ASSERT_EQ(snap->requests.size(), 2u);
    EXPECT_EQ(snap->requests.at(3), std::string("plain\0", 6));
    EXPECT_EQ(snap->requests.at(4), "array\n");
    EXPECT_EQ(snap->next_job_id, 6u);
    // The upgraded file takes the new mutations.
    ASSERT_TRUE((*store)->Commit(Batch().Add(UpdateJob{ProgressOf(snap->jobs[0])})).ok());
  }
}

// The jobs table of version 2, as that Loom wrote it (the other tables are version 1's).
constexpr const char* kVersion2JobsSql = R"sql(
CREATE TABLE requests (id INTEGER PRIMARY KEY CHECK (id > 0), request BLOB NOT NULL);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY CHECK (id > 0),
  array_job_id INTEGER CHECK (array_job_id IS NULL OR array_job_id > 0),
  array_task_id INTEGER CHECK (array_task_id IS NULL OR array_task_id >= 0),
  request_id INTEGER NOT NULL CHECK (request_id > 0),
  job_name TEXT NOT NULL, user_name TEXT NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL,
  account TEXT NOT NULL, partition_name TEXT NOT NULL, state TEXT NOT NULL,
  reason TEXT NOT NULL, priority INTEGER NOT NULL, time_limit_s INTEGER NOT NULL,
  exit_code INTEGER NOT NULL, submit_time INTEGER NOT NULL, eligible_time INTEGER NOT NULL,
  start_time INTEGER NOT NULL, end_time INTEGER NOT NULL, nodes TEXT NOT NULL,
  allocation BLOB NOT NULL);
UPDATE schema_version SET version = 2;
INSERT INTO requests VALUES (3, X'706C61696E00');
INSERT INTO jobs VALUES (3, NULL, NULL, 3, 'plain', 'bob', 1002, 1002, '', 'batch',
  'COMPLETED', 'None', 100, 600, 0, 1700000000, 1700000000, 1700000001, 1700000009, '', '');
)sql";

TEST_F(SqliteStoreTest, AVersion2FileIsUpgradedOnOpen) {
  fs::create_directories(dir_);
  const std::string path = dir_ + "/loom.db";
  RawSql(path, "CREATE TABLE schema_version (version INTEGER NOT NULL);"
               "INSERT INTO schema_version (version) VALUES (1);"
               "CREATE TABLE nodes (node_name TEXT PRIMARY KEY, state TEXT NOT NULL,"
               "  drain INTEGER NOT NULL, reason TEXT NOT NULL, reason_uid INTEGER NOT NULL,"
               "  reason_time INTEGER NOT NULL) WITHOUT ROWID;"
               "CREATE TABLE counters (counter_name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
               "  WITHOUT ROWID;"
               "CREATE TABLE named_values (value_name TEXT PRIMARY KEY, value BLOB NOT NULL)"
               "  WITHOUT ROWID;"
               "PRAGMA application_id=1280266061;");
  RawSql(path, kVersion2JobsSql);
  for (int round = 0; round < 2; ++round) {  // upgraded once, then opened as it is
    auto store = OpenSqliteStore(Options(dir_));
    ASSERT_TRUE(store.ok()) << store.status();
    auto snap = (*store)->Recover();
    ASSERT_TRUE(snap.ok()) << snap.status();
    ASSERT_EQ(snap->jobs.size(), 1u);
    JobRecord j = snap->jobs[0];
    EXPECT_EQ(j.state, model::JobState::kCompleted);
    EXPECT_EQ(j.ran_allocation, "");  // version 2 did not keep it
    EXPECT_EQ(j.restarts, 0);
    EXPECT_EQ(j.last_sched_eval, 0);
    if (round == 0) {
      j.restarts = 1;
      j.ran_allocation = "[]";
      ASSERT_TRUE((*store)->Commit(Batch().Add(UpdateJob{ProgressOf(j)})).ok());
      auto again = (*store)->Recover();
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_EQ(again->jobs[0].restarts, 1);
      EXPECT_EQ(again->jobs[0].ran_allocation, "[]");
      // Back as it was, for the second round's checks.
      ASSERT_TRUE((*store)->Commit(Batch().Add(UpdateJob{ProgressOf(snap->jobs[0])})).ok());
    }
  }
}

TEST_F(SqliteStoreTest, EmptyBatchAndUseBeforeOpen) {
  SqliteStore store(Options(dir_));
  EXPECT_EQ(store.Commit(Batch().Add(SetNextJobId{1})).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.Recover().status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store.Open().ok());
  EXPECT_EQ(store.Open().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store.Commit(Batch()).ok());
}

TEST_F(SqliteStoreTest, FullDiskFailsTheBatchNamesTheFileAndKeepsEarlierState) {
  const std::string dir = dir_;
  SqliteStoreOptions options = Options(dir);
  options.max_page_count_for_testing = 32;  // 128 KiB with 4 KiB pages
  auto store = OpenSqliteStore(options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Commit(Batch().Add(PutJob{SmallJob(1)}).Add(SetNextJobId{2})).ok());

  Batch big;
  for (model::JobId id = 2; id < 50; ++id) {
    big.Add(PutRequest{id, std::string(8192, 'x')}).Add(PutJob{SmallJob(id)});
  }
  big.Add(SetNextJobId{50});
  Status status = (*store)->Commit(big);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(status.message(), HasSubstr(dir + "/loom.db"));
  EXPECT_THAT(status.message(), HasSubstr("the disk is full"));
  EXPECT_THAT(status.message(), HasSubstr("batch not committed"));
  EXPECT_THAT(status.message(), HasSubstr("everything committed before is intact"));

  auto check = [&](Store& s) {
    auto snap = s.Recover();
    ASSERT_TRUE(snap.ok()) << snap.status();
    ASSERT_EQ(snap->jobs.size(), 1u);
    EXPECT_EQ(snap->jobs[0], SmallJob(1));
    EXPECT_EQ(snap->next_job_id, 2u);
  };
  check(**store);
  // Small batches still fit; after a restart everything acknowledged is there.
  ASSERT_TRUE((*store)->Commit(Batch().Add(PutValue{"after", "full"})).ok());
  store->reset();
  auto reopened = OpenSqliteStore(Options(dir));
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  check(**reopened);
  EXPECT_EQ((*reopened)->Recover()->values.at("after"), "full");
}

// A store with a few records, closed; returns the database file's path.
std::string MakeStore(const std::string& dir) {
  auto store = OpenSqliteStore(Options(dir));
  EXPECT_TRUE(store.ok()) << store.status();
  Batch batch;
  batch.Add(PutRequest{7, RequestBytes(7)});
  for (model::JobId id = 1; id <= 200; ++id) batch.Add(PutJob{FullJob(id)});
  EXPECT_TRUE((*store)->Commit(batch).ok());
  return (*store)->Location();
}

TEST_F(SqliteStoreTest, GarbageFileIsRefusedAndLeftUntouched) {
  const std::string dir = dir_;
  fs::create_directories(dir);
  const std::string path = dir + "/loom.db";
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 1000; ++i) out << "this is not a database " << i << "\n";
  }
  const std::string before = ReadFile(path);
  auto store = OpenSqliteStore(Options(dir));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), HasSubstr(path + " is damaged or is not a database"));
  EXPECT_THAT(store.status().message(), HasSubstr("Loom has not changed the file"));
  EXPECT_THAT(store.status().message(), HasSubstr("restore it from a backup"));
  EXPECT_EQ(ReadFile(path), before);
}

TEST_F(SqliteStoreTest, DamagedPagesAreRefusedAndLeftUntouched) {
  const std::string dir = dir_;
  const std::string path = MakeStore(dir);
  const size_t size = fs::file_size(path);
  ASSERT_GT(size, 8u * 4096);
  // Scribble over the middle of the b-tree pages, leaving the header readable.
  WriteAt(path, 2 * 4096 + 100, std::string(3 * 4096, '\x5a'));
  const std::string before = ReadFile(path);
  auto store = OpenSqliteStore(Options(dir));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(path + " is damaged"));
  EXPECT_THAT(store.status().message(), HasSubstr("Loom has not changed the file"));
  EXPECT_EQ(ReadFile(path), before);
}

TEST_F(SqliteStoreTest, NewerSchemaIsRefusedAndLeftUntouched) {
  const std::string dir = dir_;
  const std::string path = MakeStore(dir);
  RawSql(path, "UPDATE schema_version SET version = 99");
  const std::string before = ReadFile(path);
  auto store = OpenSqliteStore(Options(dir));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(),
              HasSubstr(path + " was written by a newer Loom (schema version 99; this "
                               "loomctld knows versions up to 3)"));
  EXPECT_EQ(ReadFile(path), before);
}

TEST_F(SqliteStoreTest, ForeignSqliteDatabaseIsRefused) {
  const std::string dir = dir_;
  fs::create_directories(dir);
  const std::string path = dir + "/loom.db";
  RawSql(path, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
  const std::string before = ReadFile(path);
  auto store = OpenSqliteStore(Options(dir));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("is an SQLite database but not a Loom store"));
  EXPECT_EQ(ReadFile(path), before);
}

TEST_F(SqliteStoreTest, UnknownStateNameIsDataLoss) {
  const std::string dir = dir_;
  const std::string path = MakeStore(dir);
  RawSql(path, "UPDATE jobs SET state = 'HIBERNATING' WHERE id = 17");
  auto store = OpenSqliteStore(Options(dir));
  ASSERT_TRUE(store.ok()) << store.status();
  auto snap = (*store)->Recover();
  EXPECT_EQ(snap.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(snap.status().message(), HasSubstr("job 17 has state 'HIBERNATING'"));
}

TEST_F(SqliteStoreTest, SecondStoreOnTheSameDirectoryIsRefused) {
  const std::string dir = dir_;
  auto first = OpenSqliteStore(Options(dir));
  ASSERT_TRUE(first.ok()) << first.status();
  SqliteStoreOptions options = Options(dir);
  options.busy_timeout_ms = 50;
  auto second = OpenSqliteStore(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("locked by another process"));
  // The first is unaffected.
  EXPECT_TRUE((*first)->Commit(Batch().Add(SetNextJobId{5})).ok());
}

TEST_F(SqliteStoreTest, StateSaveLocationThatIsAFileIsRefused) {
  const std::string dir = dir_;
  fs::create_directories(fs::path(dir).parent_path());
  std::ofstream(dir) << "x";
  auto store = OpenSqliteStore(Options(dir));
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("is not a directory"));
}

}  // namespace
}  // namespace loom::store
