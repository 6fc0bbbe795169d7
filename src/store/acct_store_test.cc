// The accounting store's contract, run against every implementation: SQLite always, and
// PostgreSQL on a private server the test starts itself (store/testing/pg_server.h). Where
// PostgreSQL's programs are missing its cases are skipped with a message naming the package.
// After the contract, what only one backend can show: SQLite's full disk; PostgreSQL's
// reconnect, read-only database, unix socket, and daemons migrating one database at once.
#include "store/acct_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <unordered_set>

#include "core/mutex.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/acct_pgsql.h"
#include "store/acct_schema.h"
#include "store/acct_sqlite.h"
#include "store/testing/pg_server.h"

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

// One PostgreSQL server for the whole binary, started by the first case that needs it (so a
// run filtered to SQLite starts none) and stopped when the tests end.
class PgEnvironment : public ::testing::Environment {
 public:
  // The server, or why there is none: NotFound when PostgreSQL's programs are missing.
  StatusOr<testing::PgServer*> Server() {
    if (!tried_) {
      tried_ = true;
      StatusOr<std::unique_ptr<testing::PgServer>> started = testing::PgServer::Create();
      if (started.ok()) {
        server_ = *std::move(started);
      } else {
        error_ = started.status();
      }
    }
    if (server_ != nullptr) return server_.get();
    return error_;
  }
  void TearDown() override { server_.reset(); }

 private:
  bool tried_ = false;
  std::unique_ptr<testing::PgServer> server_;
  Status error_;
};

PgEnvironment* const pg_environment =
    static_cast<PgEnvironment*>(::testing::AddGlobalTestEnvironment(new PgEnvironment));

// An implementation under test: opens stores by name, each name a database of its own, and
// runs SQL on one directly, as an older Loom or another program would have left it.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual StatusOr<std::unique_ptr<AcctStore>> Open(const std::string& name,
                                                    int schema_version = 0) = 0;
  virtual Status Execute(const std::string& name, const std::string& sql) = 0;
};

class SqliteBackend final : public Backend {
 public:
  explicit SqliteBackend(std::string dir) : dir_(std::move(dir)) {}

  StatusOr<std::unique_ptr<AcctStore>> Open(const std::string& name, int schema_version) override {
    return OpenSqliteAcctStore({.path = Path(name), .schema_version_for_testing = schema_version});
  }

  Status Execute(const std::string& name, const std::string& sql) override {
    std::filesystem::create_directories(std::filesystem::path(Path(name)).parent_path());
    sqlite3* db = nullptr;
    int rc = sqlite3_open(Path(name).c_str(), &db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
    Status s = rc == SQLITE_OK ? absl::OkStatus()
                               : absl::InternalError(core::StrCat(sql, ": ", sqlite3_errmsg(db)));
    sqlite3_close(db);
    return s;
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name + "/loom_acct.db"; }

 private:
  std::string dir_;
};

class PgsqlBackend final : public Backend {
 public:
  // `prefix` keeps one test's databases apart from another's on the shared server.
  PgsqlBackend(testing::PgServer* server, std::string prefix)
      : server_(server), prefix_(std::move(prefix)) {}

  StatusOr<std::unique_ptr<AcctStore>> Open(const std::string& name, int schema_version) override {
    RETURN_IF_ERROR(EnsureDatabase(name));
    PgsqlAcctOptions options = Options(name);
    options.schema_version_for_testing = schema_version;
    return OpenPgsqlAcctStore(options);
  }

  Status Execute(const std::string& name, const std::string& sql) override {
    RETURN_IF_ERROR(EnsureDatabase(name));
    return server_->Execute(Database(name), sql);
  }

  PgsqlAcctOptions Options(const std::string& name) const {
    PgsqlAcctOptions options;
    options.host = server_->host();
    options.port = server_->port();
    options.user = server_->user();
    options.database = Database(name);
    options.connect_timeout_s = 5;
    return options;
  }
  std::string Database(const std::string& name) const { return prefix_ + "_" + name; }
  testing::PgServer* server() const { return server_; }

 private:
  Status EnsureDatabase(const std::string& name) {
    core::MutexLock lock(&mu_);
    if (!created_.insert(name).second) return absl::OkStatus();
    return server_->CreateDatabase(Database(name));
  }

  testing::PgServer* const server_;
  const std::string prefix_;
  core::Mutex mu_;  // cases open stores from several threads at once
  std::unordered_set<std::string> created_ ABSL_GUARDED_BY(mu_);
};

// Each case gets a fresh store named "main" in a backend of its own.
class AcctStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = TempDir();
    if (GetParam() == "sqlite") {
      backend_ = std::make_unique<SqliteBackend>(dir_);
    } else {
      StatusOr<testing::PgServer*> server = pg_environment->Server();
      if (server.status().code() == absl::StatusCode::kNotFound) {
        GTEST_SKIP() << server.status().message();
      }
      ASSERT_TRUE(server.ok()) << server.status();
      static int next_case = 0;
      auto pg = std::make_unique<PgsqlBackend>(*server, "case" + std::to_string(++next_case));
      pg_ = pg.get();
      backend_ = std::move(pg);
    }
    auto s = backend_->Open("main");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = *std::move(s);
  }
  void TearDown() override {
    store_.reset();
    backend_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string dir_;
  std::unique_ptr<Backend> backend_;
  PgsqlBackend* pg_ = nullptr;  // backend_, when it is PostgreSQL
  std::unique_ptr<AcctStore> store_;
};

std::string BackendName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Backends, AcctStoreTest, ::testing::Values("sqlite", "pgsql"),
                         BackendName);

TEST_P(AcctStoreTest, UpsertReplacesByKeyAndKeepsBytes) {
  ASSERT_TRUE(store_->UpsertJobs({Row(1, 100, 0, 1000, "RUNNING"), Row(2, 100, 150)}).ok());
  AcctJobRow done = Row(1, 100, 200);
  ASSERT_TRUE(store_->UpsertJobs({done}).ok());
  auto rows = store_->FindJobs({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0], done);
  EXPECT_EQ((*rows)[0].record, std::string("rec\0ord1", 8));
}

TEST_P(AcctStoreTest, RecordsKeepEveryByteAndExtremeNumbers) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  AcctJobRow r = Row(uint64_t{1} << 62, -5, 0, 4294967295u);
  r.array_task_id = -1;
  r.record = bytes + bytes;
  r.user = "zoë";
  ASSERT_TRUE(store_->UpsertJobs({r}).ok());
  auto rows = store_->FindJobs({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(r));

  ASSERT_TRUE(store_->ChangeEntities({{"user", "zoë", bytes}}, {}).ok());
  auto users = store_->ListEntities("user");
  ASSERT_TRUE(users.ok()) << users.status();
  EXPECT_THAT(*users, ElementsAre(AcctEntity{"user", "zoë", bytes}));
}

TEST_P(AcctStoreTest, FiltersNarrowByEveryColumn) {
  AcctJobRow task = Row(12, 100, 0, 1000, "PENDING");
  task.array_job_id = 10;
  task.array_task_id = 2;
  ASSERT_TRUE(store_
                  ->UpsertJobs({Row(10, 100, 300), Row(11, 100, 50, 0), task,
                                Row(13, 500, 0, 1000, "RUNNING")})
                  .ok());
  AcctJobFilter by_array;
  by_array.job_ids = {10};
  EXPECT_THAT(Ids(*store_->FindJobs(by_array)), ElementsAre(10, 12));
  AcctJobFilter by_ids;
  by_ids.job_ids = {11, 13};
  EXPECT_THAT(Ids(*store_->FindJobs(by_ids)), ElementsAre(11, 13));
  AcctJobFilter by_user;
  by_user.uids = {0};
  EXPECT_THAT(Ids(*store_->FindJobs(by_user)), ElementsAre(11));
  AcctJobFilter by_name;  // by name, or by uid: either selects
  by_name.users = {"root"};
  EXPECT_THAT(Ids(*store_->FindJobs(by_name)), ElementsAre(11));
  by_name.uids = {1000};
  by_name.users = {"nobody-here"};
  EXPECT_THAT(Ids(*store_->FindJobs(by_name)), ElementsAre(10, 12, 13));
  by_name.users = {"root"};
  EXPECT_THAT(Ids(*store_->FindJobs(by_name)), ElementsAre(10, 11, 12, 13));
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
  AcctJobFilter all;  // every condition at once, in the order they take their parameters
  all.cluster = "c1";
  all.job_ids = {10, 12};
  all.uids = {1000};
  all.users = {"alice"};
  all.accounts = {"physics"};
  all.partitions = {"batch"};
  all.states = {"PENDING"};
  all.active_from = 200;
  all.active_to = 400;
  EXPECT_THAT(Ids(*store_->FindJobs(all)), ElementsAre(12));
}

TEST_P(AcctStoreTest, PurgeDeletesOnlyJobsThatEndedBefore) {
  ASSERT_TRUE(
      store_->UpsertJobs({Row(1, 100, 200), Row(2, 100, 300), Row(3, 100, 0, 1000, "RUNNING")})
          .ok());
  auto purged = store_->PurgeJobs(250);
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(*purged, 1);
  EXPECT_THAT(Ids(*store_->FindJobs({})), ElementsAre(2, 3));
  EXPECT_EQ(*store_->PurgeJobs(250), 0);
}

TEST_P(AcctStoreTest, EntitiesPutReplaceAndDeleteTogether) {
  ASSERT_TRUE(store_->ChangeEntities({{"qos", "normal", "a"}, {"qos", "high", "b"}}, {}).ok());
  ASSERT_TRUE(store_->ChangeEntities({{"qos", "normal", "c"}}, {{"qos", "high"}}).ok());
  auto qos = store_->ListEntities("qos");
  ASSERT_TRUE(qos.ok());
  EXPECT_THAT(*qos, ElementsAre(AcctEntity{"qos", "normal", "c"}));
  EXPECT_TRUE(store_->ListEntities("user")->empty());
}

TEST_P(AcctStoreTest, EntityRangesAreInByteOrder) {
  ASSERT_TRUE(store_
                  ->ChangeEntities({{"usage", "c1/0000000100", "a"},
                                    {"usage", "c1/0000000200", "b"},
                                    {"usage", "c1/0000000300", "c"},
                                    {"usage", "c2/0000000200", "d"},
                                    {"usage", "C1/0000000200", "e"},
                                    {"qos", "c1/0000000200", "f"}},
                                   {})
                  .ok());
  auto range = store_->ListEntitiesBetween("usage", "c1/0000000150", "c1/0000000300");
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_THAT(*range, ElementsAre(AcctEntity{"usage", "c1/0000000200", "b"}));
  auto all = store_->ListEntitiesBetween("usage", "c1/", "c1/~");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
}

TEST_P(AcctStoreTest, ReopenKeepsEverything) {
  ASSERT_TRUE(store_->UpsertJobs({Row(7, 1, 2)}).ok());
  store_.reset();
  auto again = backend_->Open("main");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(Ids(*(*again)->FindJobs({})), ElementsAre(7));
}

TEST_P(AcctStoreTest, AnOlderSchemaIsUpgradedWithItsData) {
  {
    auto old = backend_->Open("old", /*schema_version=*/1);
    ASSERT_TRUE(old.ok()) << old.status();
    ASSERT_TRUE((*old)->UpsertJobs({Row(3, 1, 2)}).ok());
    // Version 1 has no entity table yet.
    EXPECT_FALSE((*old)->ListEntities("qos").ok());
  }
  auto now = backend_->Open("old");
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_THAT(Ids(*(*now)->FindJobs({})), ElementsAre(3));
  EXPECT_TRUE((*now)->ChangeEntities({{"qos", "normal", "x"}}, {}).ok());
}

TEST_P(AcctStoreTest, RefusesANewerSchemaAndForeignDatabases) {
  store_.reset();
  ASSERT_TRUE(
      backend_
          ->Execute("main", "UPDATE loom_acct_meta SET value = '99' WHERE key = 'schema_version'")
          .ok());
  auto newer = backend_->Open("main");
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(newer.status().message()), HasSubstr("newer Loom"));

  ASSERT_TRUE(backend_->Execute("foreign", "CREATE TABLE t (x INTEGER)").ok());
  auto other = backend_->Open("foreign");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(other.status().message()), HasSubstr("not a Loom accounting store"));
}

// What only SQLite can show cheaply: a file capped at a few pages.
class SqliteAcctStoreTest : public AcctStoreTest {};
INSTANTIATE_TEST_SUITE_P(Backends, SqliteAcctStoreTest, ::testing::Values("sqlite"), BackendName);

TEST_P(SqliteAcctStoreTest, AFullDiskRefusesTheWholeBatchAndStaysUsable) {
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

// What only a server shows: it restarts, goes away, turns read-only, has a socket, and serves
// several daemons.
class PgsqlAcctStoreTest : public AcctStoreTest {};
INSTANTIATE_TEST_SUITE_P(Backends, PgsqlAcctStoreTest, ::testing::Values("pgsql"), BackendName);

// Daemons started at once on an empty database: one creates the schema, the others wait and
// find it made, instead of failing on tables that appeared under them.
TEST_P(PgsqlAcctStoreTest, StoresOpenedAtOnceOnANewDatabaseAllSucceed) {
  // The databases are made first: that is not what is being tested.
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(backend_->Execute(std::to_string(i), "SELECT 1").ok());
  }
  constexpr int kStores = 4;
  for (int round = 0; round < 2; ++round) {
    std::vector<Status> results(kStores);
    std::vector<std::thread> threads;
    for (int i = 0; i < kStores; ++i) {
      threads.emplace_back([&, i] {
        auto s = backend_->Open(std::to_string(round));
        results[i] = s.status();
      });
    }
    for (std::thread& t : threads) t.join();
    for (const Status& s : results) EXPECT_TRUE(s.ok()) << s;
  }
}

TEST_P(PgsqlAcctStoreTest, EveryCallReconnectsAfterTheServerRestarts) {
  ASSERT_TRUE(store_->UpsertJobs({Row(1, 1, 2)}).ok());
  ASSERT_TRUE(pg_->server()->Restart().ok()) << pg_->server()->LogTail();
  Status stored = store_->UpsertJobs({Row(2, 1, 2)});
  EXPECT_TRUE(stored.ok()) << stored;

  ASSERT_TRUE(pg_->server()->Restart().ok()) << pg_->server()->LogTail();
  auto rows = store_->FindJobs({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(Ids(*rows), ElementsAre(1, 2));

  ASSERT_TRUE(pg_->server()->Restart().ok()) << pg_->server()->LogTail();
  EXPECT_TRUE(store_->ChangeEntities({{"qos", "normal", "x"}}, {}).ok());
  ASSERT_TRUE(pg_->server()->Restart().ok()) << pg_->server()->LogTail();
  auto qos = store_->ListEntities("qos");
  ASSERT_TRUE(qos.ok()) << qos.status();
  EXPECT_EQ(qos->size(), 1u);
}

TEST_P(PgsqlAcctStoreTest, AServerThatStaysAwayIsUnavailableUntilItReturns) {
  ASSERT_TRUE(pg_->server()->Stop().ok());
  Status down = store_->UpsertJobs({Row(1, 1, 2)});
  EXPECT_EQ(down.code(), absl::StatusCode::kUnavailable) << down;
  EXPECT_THAT(std::string(down.message()), HasSubstr(store_->Location()));
  EXPECT_THAT(std::string(down.message()), HasSubstr("StorageHost"));
  EXPECT_EQ(store_->FindJobs({}).status().code(), absl::StatusCode::kUnavailable);

  ASSERT_TRUE(pg_->server()->Start().ok()) << pg_->server()->LogTail();
  Status up = store_->UpsertJobs({Row(1, 1, 2)});
  EXPECT_TRUE(up.ok()) << up;
  EXPECT_THAT(Ids(*store_->FindJobs({})), ElementsAre(1));
}

TEST_P(PgsqlAcctStoreTest, OpeningWithoutAServerSaysWhere) {
  PgsqlAcctOptions options = pg_->Options("main");
  ASSERT_TRUE(pg_->server()->Stop().ok());
  auto s = OpenPgsqlAcctStore(options);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr(pg_->server()->host() + ":" + std::to_string(pg_->server()->port()) + "/" +
                        options.database));
  ASSERT_TRUE(pg_->server()->Start().ok()) << pg_->server()->LogTail();
}

TEST_P(PgsqlAcctStoreTest, AReadOnlyDatabaseRefusesWritesAsAPrecondition) {
  ASSERT_TRUE(pg_->server()
                  ->Execute("postgres", "ALTER DATABASE " + pg_->Database("main") +
                                            " SET default_transaction_read_only = on")
                  .ok());
  auto read_only = backend_->Open("main");  // a new session takes the setting
  ASSERT_TRUE(read_only.ok()) << read_only.status();
  Status s = (*read_only)->UpsertJobs({Row(1, 1, 2)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("read-only"));
  EXPECT_TRUE((*read_only)->FindJobs({}).ok());
}

TEST_P(PgsqlAcctStoreTest, ARefusedRowRefusesTheWholeBatchAndStaysUsable) {
  AcctJobRow bad = Row(2, 1, 2);
  bad.cluster = std::string("c\0", 2);  // PostgreSQL's text holds no NUL
  Status s = store_->UpsertJobs({Row(1, 1, 2), bad});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("storing job 2"));
  EXPECT_TRUE(store_->FindJobs({})->empty());
  EXPECT_TRUE(store_->UpsertJobs({Row(1, 1, 2)}).ok());
  EXPECT_THAT(Ids(*store_->FindJobs({})), ElementsAre(1));
}

TEST_P(PgsqlAcctStoreTest, ConnectsThroughTheUnixSocketDirectory) {
  PgsqlAcctOptions options = pg_->Options("main");
  options.host = pg_->server()->socket_dir();
  auto s = OpenPgsqlAcctStore(options);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->UpsertJobs({Row(1, 1, 2)}).ok());
  EXPECT_THAT(Ids(*store_->FindJobs({})), ElementsAre(1));
}

}  // namespace
}  // namespace loom::store
