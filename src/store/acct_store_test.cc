// The accounting store's contract, run against every implementation: SQLite always;
// PostgreSQL where the test can start a private server (acct_pgsql_test.cc adds it).
#include "store/acct_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/acct_schema.h"
#include "store/acct_sqlite.h"

namespace loom::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "acct_store_test.XXXXXX").string();
  char* d = mkdtemp(tmpl.data());
  EXPECT_NE(d, nullptr);
  return tmpl;
}

AcctJobRow Row(uint64_t id, int64_t submit, int64_t end, uint32_t uid = 1000,
               std::string state = "COMPLETED") {
  AcctJobRow r;
  r.cluster = "c1";
  r.job_id = id;
  r.submit_time = submit;
  r.eligible_time = submit;
  r.start_time = end > 0 ? submit + 1 : 0;
  r.end_time = end;
  r.uid = uid;
  r.gid = uid;
  r.user = uid == 0 ? "root" : "alice";
  r.account = uid == 0 ? "root" : "physics";
  r.partition = "batch";
  r.qos = "normal";
  r.state = std::move(state);
  r.record = std::string("rec\0ord", 7) + std::to_string(id);
  return r;
}

std::vector<uint64_t> Ids(const std::vector<AcctJobRow>& rows) {
  std::vector<uint64_t> ids;
  for (const AcctJobRow& r : rows) ids.push_back(r.job_id);
  return ids;
}

class SqliteAcctStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir();
    auto s = OpenSqliteAcctStore({.path = dir_ + "/acct/loom_acct.db"});
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  std::unique_ptr<AcctStore> store_;
};

TEST_F(SqliteAcctStoreTest, UpsertReplacesByKeyAndKeepsBytes) {
  ASSERT_TRUE(store_->UpsertJobs({Row(1, 100, 0, 1000, "RUNNING"), Row(2, 100, 150)}).ok());
  AcctJobRow done = Row(1, 100, 200);
  ASSERT_TRUE(store_->UpsertJobs({done}).ok());
  auto rows = store_->FindJobs({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0], done);
  EXPECT_EQ((*rows)[0].record, std::string("rec\0ord1", 8));
}

TEST_F(SqliteAcctStoreTest, FiltersNarrowByEveryColumn) {
  AcctJobRow task = Row(12, 100, 0, 1000, "PENDING");
  task.array_job_id = 10;
  task.array_task_id = 2;
  ASSERT_TRUE(store_->UpsertJobs({Row(10, 100, 300), Row(11, 100, 50, 0), task,
                                  Row(13, 500, 0, 1000, "RUNNING")})
                  .ok());
  AcctJobFilter by_array;
  by_array.job_ids = {10};
  EXPECT_THAT(Ids(*store_->FindJobs(by_array)), ElementsAre(10, 12));
  AcctJobFilter by_user;
  by_user.uids = {0};
  EXPECT_THAT(Ids(*store_->FindJobs(by_user)), ElementsAre(11));
  AcctJobFilter by_state;
  by_state.states = {"RUNNING", "PENDING"};
  EXPECT_THAT(Ids(*store_->FindJobs(by_state)), ElementsAre(12, 13));
  AcctJobFilter window;  // alive at some time in [200, 400]
  window.active_from = 200;
  window.active_to = 400;
  EXPECT_THAT(Ids(*store_->FindJobs(window)), ElementsAre(10, 12));
  AcctJobFilter other;
  other.cluster = "c2";
  EXPECT_TRUE(store_->FindJobs(other)->empty());
  AcctJobFilter account;
  account.accounts = {"root"};
  account.partitions = {"batch"};
  EXPECT_THAT(Ids(*store_->FindJobs(account)), ElementsAre(11));
}

TEST_F(SqliteAcctStoreTest, EntitiesPutReplaceAndDeleteTogether) {
  ASSERT_TRUE(store_->ChangeEntities({{"qos", "normal", "a"}, {"qos", "high", "b"}}, {}).ok());
  ASSERT_TRUE(store_->ChangeEntities({{"qos", "normal", "c"}}, {{"qos", "high"}}).ok());
  auto qos = store_->ListEntities("qos");
  ASSERT_TRUE(qos.ok());
  EXPECT_THAT(*qos, ElementsAre(AcctEntity{"qos", "normal", "c"}));
  EXPECT_TRUE(store_->ListEntities("user")->empty());
}

TEST_F(SqliteAcctStoreTest, ReopenKeepsEverything) {
  ASSERT_TRUE(store_->UpsertJobs({Row(7, 1, 2)}).ok());
  store_.reset();
  auto again = OpenSqliteAcctStore({.path = dir_ + "/acct/loom_acct.db"});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(Ids(*(*again)->FindJobs({})), ElementsAre(7));
}

TEST_F(SqliteAcctStoreTest, AnOlderSchemaIsUpgradedWithItsData) {
  const std::string path = dir_ + "/old.db";
  {
    auto old = OpenSqliteAcctStore({.path = path, .schema_version_for_testing = 1});
    ASSERT_TRUE(old.ok()) << old.status();
    ASSERT_TRUE((*old)->UpsertJobs({Row(3, 1, 2)}).ok());
    // Version 1 has no entity table yet.
    EXPECT_FALSE((*old)->ListEntities("qos").ok());
  }
  auto now = OpenSqliteAcctStore({.path = path});
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_THAT(Ids(*(*now)->FindJobs({})), ElementsAre(3));
  EXPECT_TRUE((*now)->ChangeEntities({{"qos", "normal", "x"}}, {}).ok());
}

TEST_F(SqliteAcctStoreTest, RefusesANewerSchemaAndForeignDatabases) {
  store_.reset();
  const std::string path = dir_ + "/acct/loom_acct.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE loom_acct_meta SET value = '99' WHERE key = 'schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto newer = OpenSqliteAcctStore({.path = path});
  EXPECT_THAT(std::string(newer.status().message()), HasSubstr("newer Loom"));

  const std::string foreign = dir_ + "/foreign.db";
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto other = OpenSqliteAcctStore({.path = foreign});
  EXPECT_THAT(std::string(other.status().message()), HasSubstr("not a Loom accounting store"));
}

TEST_F(SqliteAcctStoreTest, AFullDiskRefusesTheWholeBatchAndStaysUsable) {
  store_.reset();
  auto small = OpenSqliteAcctStore({.path = dir_ + "/small.db", .max_page_count_for_testing = 16});
  ASSERT_TRUE(small.ok()) << small.status();
  std::vector<AcctJobRow> big;
  for (uint64_t i = 1; i <= 200; ++i) {
    AcctJobRow r = Row(i, 1, 2);
    r.record.assign(2000, 'x');
    big.push_back(r);
  }
  Status s = (*small)->UpsertJobs(big);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE((*small)->FindJobs({})->empty());
  EXPECT_TRUE((*small)->UpsertJobs({Row(1, 1, 2)}).ok());
}

}  // namespace
}  // namespace loom::store
