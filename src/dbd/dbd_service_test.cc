// loomdbd's API on a real SQLite store: records in, sacct's selection out, sacctmgr's
// changes, and who may do what.
#include <unistd.h>

#include <filesystem>
#include <map>

#include "dbd/service.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/acct_sqlite.h"

namespace loom::dbd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const DbdCaller kRoot{0, "root"};
const DbdCaller kAlice{4242, "alice"};
const DbdCaller kBob{4343, "bob"};

class DbdServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }
  void TearDown() override {
    service_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Start(conf::DbdConfig config, const core::Clock* clock = &core::RealClock()) {
    service_.reset();
    if (dir_.empty()) {
      std::string tmpl = (std::filesystem::temp_directory_path() / "dbd_test.XXXXXX").string();
      ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
      dir_ = tmpl;
    }
    auto store = store::OpenSqliteAcctStore({.path = dir_ + "/acct.db"});
    ASSERT_TRUE(store.ok()) << store.status();
    service_ = std::make_unique<DbdService>(std::move(config), *std::move(store), nullptr, clock);
    ASSERT_TRUE(service_->Bootstrap().ok());
  }
  Status Change(const DbdCaller& who, std::string verb, std::string entity,
                std::vector<std::string> words, std::string* message = nullptr) {
    v1::AcctChangeRequest req;
    req.set_verb(std::move(verb));
    req.set_entity(std::move(entity));
    for (std::string& w : words) req.add_words(std::move(w));
    req.set_cluster("c1");
    v1::AcctChangeReply reply;
    Status s = service_->AcctChange(who, req, &reply);
    if (message != nullptr) *message = reply.message();
    return s;
  }
  static v1::AcctJob Job(uint64_t id, uint32_t uid, const std::string& user, std::string state,
                         int64_t submit, int64_t start, int64_t end) {
    v1::AcctJob a;
    v1::JobInfo& j = *a.mutable_job();
    j.set_job_id(id);
    j.set_array_task_id(-1);
    j.set_uid(uid);
    j.set_user(user);
    j.set_name("job" + std::to_string(id));
    j.set_state(std::move(state));
    j.set_partition("batch");
    j.set_submit_time(submit);
    j.set_eligible_time(submit);
    j.set_start_time(start);
    j.set_end_time(end);
    return a;
  }
  Status Record(std::vector<v1::AcctJob> jobs) {
    v1::AcctRecordRequest req;
    req.set_cluster("c1");
    req.set_cluster_tres("cpu=10,mem=1000M,node=1,billing=10,gres/gpu=4");
    req.set_control_host("127.0.0.1");
    req.set_control_port(6817);
    for (v1::AcctJob& j : jobs) *req.add_jobs() = std::move(j);
    v1::AcctRecordReply reply;
    return service_->AcctRecord(kRoot, req, &reply);
  }
  std::vector<uint64_t> Query(const DbdCaller& who, v1::AcctQueryJobsRequest req) {
    v1::AcctQueryJobsReply reply;
    Status s = service_->AcctQueryJobs(who, req, &reply);
    EXPECT_TRUE(s.ok()) << s;
    std::vector<uint64_t> ids;
    for (const v1::AcctJob& j : reply.jobs()) ids.push_back(j.job().job_id());
    return ids;
  }

  std::string dir_;
  std::unique_ptr<DbdService> service_;
};

TEST_F(DbdServiceTest, TheFirstRecordRegistersTheClusterWithRootsAssociations) {
  ASSERT_TRUE(Record({Job(1, 0, "root", "COMPLETED", 100, 101, 102)}).ok());
  v1::AcctShowReply show;
  ASSERT_TRUE(service_->AcctShow(kRoot, {}, &show).ok());
  ASSERT_EQ(show.clusters_size(), 1);
  EXPECT_EQ(show.clusters(0).control_port(), 6817);
  ASSERT_EQ(show.assocs_size(), 2);
  EXPECT_EQ(show.assocs(0).account(), "root");
  EXPECT_EQ(show.assocs(1).user(), "root");
  ASSERT_EQ(show.qos_size(), 1);
  EXPECT_EQ(show.qos(0).name(), "normal");
  // A job without an account is its user's default account's.
  v1::AcctQueryJobsReply jobs;
  v1::AcctQueryJobsRequest all;
  ASSERT_TRUE(service_->AcctQueryJobs(kRoot, all, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).job().spec().account(), "root");
  EXPECT_EQ(jobs.jobs(0).qos(), "normal");
}

TEST_F(DbdServiceTest, OnlyTheControllersUsersSendRecords) {
  v1::AcctRecordRequest req;
  req.set_cluster("c1");
  v1::AcctRecordReply reply;
  Status s = service_->AcctRecord(kAlice, req, &reply);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(DbdServiceTest, TheWindowFollowsSacctsRules) {
  ASSERT_TRUE(
      Record({Job(1, 0, "root", "COMPLETED", 100, 110, 120),
              Job(2, 0, "root", "FAILED", 100, 110, 300), Job(3, 0, "root", "RUNNING", 100, 250, 0),
              Job(4, 0, "root", "PENDING", 100, 0, 0)})
          .ok());
  v1::AcctQueryJobsRequest window;
  window.set_start(200);
  window.set_end(400);
  EXPECT_THAT(Query(kRoot, window), ElementsAre(2, 3, 4));
  // A pending job never eligible is not listed by a window.
  v1::AcctJob held = Job(5, 0, "root", "PENDING", 100, 0, 0);
  held.mutable_job()->set_eligible_time(0);
  ASSERT_TRUE(Record({held}).ok());
  EXPECT_THAT(Query(kRoot, window), ElementsAre(2, 3, 4));
  // States: an ended state counts by its end inside the window.
  v1::AcctQueryJobsRequest failed = window;
  failed.add_states("FAILED");
  failed.add_states("COMPLETED");
  EXPECT_THAT(Query(kRoot, failed), ElementsAre(2));
  // Job ids without a window: every record of them.
  v1::AcctQueryJobsRequest ids;
  ids.add_job_ids(1);
  ids.add_job_ids(5);
  EXPECT_THAT(Query(kRoot, ids), ElementsAre(1, 5));
}

TEST_F(DbdServiceTest, UsersSeeTheirOwnJobsAndPrivateDataHidesOthers) {
  ASSERT_TRUE(Record({Job(1, kAlice.uid, "alice", "COMPLETED", 1, 2, 3),
                      Job(2, kBob.uid, "bob", "COMPLETED", 1, 2, 3)})
                  .ok());
  EXPECT_THAT(Query(kAlice, {}), ElementsAre(1));
  v1::AcctQueryJobsRequest all;
  all.set_all_users(true);
  EXPECT_THAT(Query(kAlice, all), ElementsAre(1, 2));
  EXPECT_THAT(Query(kRoot, {}), ElementsAre(1, 2));
  conf::DbdConfig priv;
  priv.private_data = {"jobs"};
  Start(priv);
  EXPECT_THAT(Query(kAlice, all), ElementsAre(1));
  EXPECT_THAT(Query(kRoot, all), ElementsAre(1, 2));
}

TEST_F(DbdServiceTest, SacctmgrBuildsTheTreeAndChecksNames) {
  ASSERT_TRUE(Record({Job(1, 0, "root", "COMPLETED", 1, 2, 3)}).ok());
  std::string msg;
  ASSERT_TRUE(Change(kRoot, "add", "qos",
                     {"high", "Priority=100", "MaxWall=2:00:00", "GrpTRES=cpu=16,gres/gpu=4"}, &msg)
                  .ok());
  EXPECT_THAT(msg, HasSubstr(" Adding QOS(s)\n  high\n"));
  // A TRES limit that does not parse is refused, naming it, and changes nothing.
  Status bad = Change(kRoot, "add", "qos", {"broken", "GrpTRES=gres/gpu=lots"}, &msg);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.message()), HasSubstr("gres/gpu=lots"));
  ASSERT_TRUE(Change(kRoot, "add", "account",
                     {"physics", "Description=Physics dept", "Fairshare=10", "QOS=normal,high"})
                  .ok());
  ASSERT_TRUE(Change(kRoot, "add", "user", {"alice", "Account=physics"}, &msg).ok());
  EXPECT_THAT(msg, HasSubstr("C = c1 A = physics U = alice"));
  // Adding again adds nothing.
  ASSERT_TRUE(Change(kRoot, "add", "user", {"alice", "Account=physics"}, &msg).ok());
  EXPECT_EQ(msg, " Nothing new added.\n");

  v1::AcctShowReply show;
  ASSERT_TRUE(service_->AcctShow(kRoot, {}, &show).ok());
  const v1::AcctQos* high = nullptr;
  for (const v1::AcctQos& q : show.qos()) {
    if (q.name() == "high") high = &q;
  }
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->priority(), 100);
  EXPECT_EQ(high->max_wall_min(), 120);
  EXPECT_EQ(high->grp_tres(), "cpu=16,gres/gpu=4");
  bool found = false;
  for (const v1::AcctAssoc& a : show.assocs()) {
    if (a.account() == "physics" && a.user().empty()) {
      found = true;
      EXPECT_EQ(a.parent(), "root");
      EXPECT_EQ(a.shares(), 10);
      EXPECT_THAT(a.qos(), ElementsAre("normal", "high"));
    }
  }
  EXPECT_TRUE(found);

  EXPECT_THAT(std::string(Change(kRoot, "add", "user", {"bob", "Account=nosuch"}).message()),
              HasSubstr("This account 'nosuch' doesn't exist"));
  EXPECT_THAT(std::string(Change(kRoot, "add", "account", {"x", "QOS=gold"}).message()),
              HasSubstr("Unknown QOS name 'gold'"));
  EXPECT_THAT(std::string(Change(kRoot, "add", "qos", {"q2", "Bogus=1"}).message()),
              HasSubstr("Unknown option: Bogus=1"));
  EXPECT_THAT(std::string(Change(kRoot, "add", "qos", {"q2", "MaxWall=soon"}).message()),
              HasSubstr("Invalid value 'soon' for MaxWall"));
  EXPECT_THAT(std::string(Change(kRoot, "delete", "account", {"physics"}).message()),
              HasSubstr("still has users or sub-accounts"));

  ASSERT_TRUE(Change(kRoot, "modify", "user", {"where", "name=alice", "set", "MaxJobs=5"}).ok());
  ASSERT_TRUE(Change(kRoot, "delete", "user", {"alice"}).ok());
  ASSERT_TRUE(Change(kRoot, "delete", "account", {"physics"}).ok());
}

TEST_F(DbdServiceTest, AccountsMoveButNeverUnderThemselves) {
  ASSERT_TRUE(Change(kRoot, "add", "account", {"science"}).ok());
  ASSERT_TRUE(Change(kRoot, "add", "account", {"physics", "Parent=science"}).ok());
  ASSERT_TRUE(Change(kRoot, "add", "account", {"optics", "Parent=physics"}).ok());
  // Under its own grandchild, under itself, the root: refused, naming why.
  EXPECT_THAT(std::string(Change(kRoot, "modify", "account",
                                 {"where", "name=science", "set", "Parent=optics"})
                              .message()),
              HasSubstr("Account 'science' cannot move under 'optics': it is one of its "
                        "sub-accounts, so the move would make a cycle"));
  EXPECT_THAT(std::string(Change(kRoot, "modify", "account",
                                 {"where", "name=physics", "set", "Parent=physics"})
                              .message()),
              HasSubstr("an account cannot be its own parent"));
  EXPECT_THAT(std::string(Change(kRoot, "modify", "account",
                                 {"where", "name=root", "set", "Parent=science"})
                              .message()),
              HasSubstr("The root account cannot be moved"));
  // A move elsewhere takes the subtree along.
  ASSERT_TRUE(
      Change(kRoot, "modify", "account", {"where", "name=physics", "set", "Parent=root"}).ok());
  v1::AcctShowReply show;
  ASSERT_TRUE(service_->AcctShow(kRoot, {}, &show).ok());
  std::map<std::string, std::string> parent;
  for (const v1::AcctAssoc& a : show.assocs()) {
    if (a.user().empty()) parent[a.account()] = a.parent();
  }
  EXPECT_EQ(parent["physics"], "root");
  EXPECT_EQ(parent["optics"], "physics");
}

TEST_F(DbdServiceTest, OnlyAdministratorsChangeTheTree) {
  Status s = Change(kAlice, "add", "account", {"physics"});
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  ASSERT_TRUE(Change(kRoot, "add", "account", {"ops"}).ok());
  ASSERT_TRUE(Change(kRoot, "add", "user", {"alice", "Account=ops", "AdminLevel=Operator"}).ok());
  EXPECT_TRUE(Change(kAlice, "add", "account", {"physics"}).ok());
  // An Operator cannot make an Administrator.
  EXPECT_EQ(
      Change(kAlice, "add", "user", {"bob", "Account=ops", "AdminLevel=Administrator"}).code(),
      absl::StatusCode::kPermissionDenied);
}

TEST_F(DbdServiceTest, CoordinatorsManageTheUsersOfTheirAccountsOnly) {
  ASSERT_TRUE(Record({}).ok());  // cluster c1
  ASSERT_TRUE(Change(kRoot, "add", "account", {"physics"}).ok());
  ASSERT_TRUE(Change(kRoot, "add", "account", {"theory", "Parent=physics"}).ok());
  ASSERT_TRUE(Change(kRoot, "add", "account", {"chem"}).ok());
  ASSERT_TRUE(Change(kRoot, "add", "user", {"alice", "Account=physics"}).ok());
  ASSERT_TRUE(Change(kRoot, "add", "user", {"bob", "Account=chem"}).ok());
  EXPECT_EQ(Change(kAlice, "add", "user", {"carol", "Account=physics"}).code(),
            absl::StatusCode::kPermissionDenied);  // not a coordinator yet
  std::string message;
  ASSERT_TRUE(
      Change(kRoot, "add", "coordinator", {"Account=physics", "Names=alice"}, &message).ok());
  EXPECT_THAT(message, HasSubstr("Adding Coordinator User(s)\n  alice\n"));
  // Users of physics and of the accounts below it; a new account below it.
  EXPECT_TRUE(Change(kAlice, "add", "user", {"carol", "Account=theory"}).ok());
  EXPECT_TRUE(Change(kAlice, "modify", "user",
                     {"where", "name=carol", "account=theory", "set", "MaxJobs=2"})
                  .ok());
  EXPECT_TRUE(Change(kAlice, "add", "account", {"strings", "Parent=theory"}).ok());
  // Not another account's users, not without naming the account, not AdminLevel, not QOS.
  Status s = Change(kAlice, "add", "user", {"dave", "Account=chem"});
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), HasSubstr("not account 'chem'"));
  EXPECT_EQ(Change(kAlice, "delete", "user", {"bob"}).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(
      Change(kAlice, "add", "user", {"erin", "Account=physics", "AdminLevel=Operator"}).code(),
      absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Change(kAlice, "add", "qos", {"fast"}).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Change(kAlice, "add", "coordinator", {"Account=chem", "Names=alice"}).code(),
            absl::StatusCode::kPermissionDenied);
  v1::AcctShowRequest ask;
  ask.set_kind("user");
  v1::AcctShowReply users;
  ASSERT_TRUE(service_->AcctShow(kRoot, ask, &users).ok());
  for (const v1::AcctUser& u : users.users()) {
    if (u.name() == "alice") {
      EXPECT_THAT(u.coordinates(), ElementsAre("physics"));
    }
  }
  ASSERT_TRUE(Change(kRoot, "delete", "coordinator", {"Account=physics", "Names=alice"}).ok());
  EXPECT_EQ(Change(kAlice, "add", "user", {"frank", "Account=physics"}).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(DbdServiceTest, HourlyRollupsAddUpAndLateRecordsAreRolledUpAgain) {
  // The cluster registers at 10:00 (hour 36000 s); jobs run, the report comes at 13:30.
  core::SimulatedClock clock(10 * 3600);
  Start({}, &clock);
  ASSERT_TRUE(Record({}).ok());
  v1::AcctJob a = Job(1, 0, "root", "COMPLETED", 10 * 3600, 10 * 3600 + 1800, 11 * 3600 + 1800);
  a.mutable_job()->set_tres_alloc("cpu=4,mem=100M,node=1,billing=4,gres/gpu=2");
  a.mutable_job()->set_num_cpus(4);
  clock.Advance(std::chrono::seconds(2 * 3600));
  ASSERT_TRUE(Record({a}).ok());
  clock.Advance(std::chrono::seconds(3600 + 1800));  // 13:30
  v1::AcctReportRequest req;
  req.set_start(10 * 3600);
  req.set_end(14 * 3600);
  v1::AcctReportReply reply;
  ASSERT_TRUE(service_->AcctReport(kRoot, req, &reply).ok());
  ASSERT_EQ(reply.hours_size(), 1);
  EXPECT_EQ(reply.rolled_until(), 13 * 3600);
  const v1::AcctUsageHour& sum = reply.hours(0);
  // Three whole hours rolled up (10, 11, 12): 10 CPUs each; the job ran 4 CPUs for 1 h.
  EXPECT_DOUBLE_EQ(sum.capacity().at("cpu"), 3 * 3600 * 10.0);
  EXPECT_DOUBLE_EQ(sum.alloc().at("cpu"), 4 * 3600.0);
  EXPECT_DOUBLE_EQ(sum.alloc().at("gres/gpu"), 2 * 3600.0);
  ASSERT_EQ(sum.assocs_size(), 1);
  EXPECT_EQ(sum.assocs(0).account(), "root");

  // A record of 10:00-11:00 arrives late (loomdbd was away): the hour is rolled up again.
  v1::AcctJob late = Job(2, 0, "root", "COMPLETED", 10 * 3600, 10 * 3600, 11 * 3600);
  late.mutable_job()->set_tres_alloc("cpu=2,node=1,billing=2");
  ASSERT_TRUE(Record({late}).ok());
  reply.Clear();
  ASSERT_TRUE(service_->AcctReport(kRoot, req, &reply).ok());
  EXPECT_DOUBLE_EQ(reply.hours(0).alloc().at("cpu"), 4 * 3600.0 + 2 * 3600.0);

  // Job sizes by account: CPU-seconds in the window, by bin.
  v1::AcctReportRequest sizes = req;
  sizes.set_kind("sizes");
  sizes.add_grouping(3);
  reply.Clear();
  ASSERT_TRUE(service_->AcctReport(kRoot, sizes, &reply).ok());
  ASSERT_EQ(reply.sizes_size(), 1);
  ASSERT_EQ(reply.sizes(0).cpu_seconds_size(), 2);
  EXPECT_DOUBLE_EQ(reply.sizes(0).cpu_seconds(1), 4 * 3600.0);  // job 1: 4 CPUs, >= 3
}

TEST_F(DbdServiceTest, NodeEventsOpenCloseAndCountAsDown) {
  core::SimulatedClock clock(10 * 3600);
  Start({}, &clock);
  ASSERT_TRUE(Record({}).ok());
  auto send = [&](const std::string& node, const std::string& state, const std::string& reason,
                  int64_t at) {
    v1::AcctRecordRequest req;
    req.set_cluster("c1");
    req.set_control_host("127.0.0.1");
    req.set_control_port(6817);
    v1::AcctEvent& e = *req.add_events();
    e.set_node(node);
    e.set_state(state);
    e.set_reason(reason);
    e.set_time_start(at);
    e.set_tres("cpu=4,mem=100M,node=1,billing=4");
    v1::AcctRecordReply reply;
    return service_->AcctRecord(kRoot, req, &reply);
  };
  ASSERT_TRUE(send("n1", "DRAIN", "bad gpu", 10 * 3600).ok());
  // A restarted controller says the same again: nothing changes.
  ASSERT_TRUE(send("n1", "DRAIN", "bad gpu", 10 * 3600 + 1800).ok());
  ASSERT_TRUE(send("n2", "", "", 10 * 3600).ok());  // up, and never down: no event
  ASSERT_TRUE(send("n1", "", "", 11 * 3600).ok());
  ASSERT_TRUE(send("n1", "DOWN", "Not responding", 11 * 3600 + 1800).ok());
  clock.Advance(std::chrono::seconds(2 * 3600 + 1800));  // 12:30
  v1::AcctShowRequest ask;
  ask.set_kind("event");
  v1::AcctShowReply events;
  ASSERT_TRUE(service_->AcctShow(kAlice, ask, &events).ok());
  ASSERT_EQ(events.events_size(), 2);
  EXPECT_EQ(events.events(0).node(), "n1");
  EXPECT_EQ(events.events(0).state(), "DRAIN");
  EXPECT_EQ(events.events(0).time_start(), 10 * 3600);
  EXPECT_EQ(events.events(0).time_end(), 11 * 3600);
  EXPECT_EQ(events.events(1).state(), "DOWN");
  EXPECT_EQ(events.events(1).time_end(), 0);
  // The window: those not ended before its start.
  ask.set_start(11 * 3600 + 60);
  events.Clear();
  ASSERT_TRUE(service_->AcctShow(kAlice, ask, &events).ok());
  ASSERT_EQ(events.events_size(), 1);
  EXPECT_EQ(events.events(0).state(), "DOWN");

  // Down time: the drain's hour, and half of the next (the open event, up to 12:00).
  v1::AcctReportRequest req;
  req.set_start(10 * 3600);
  req.set_end(12 * 3600);
  v1::AcctReportReply reply;
  ASSERT_TRUE(service_->AcctReport(kRoot, req, &reply).ok());
  ASSERT_EQ(reply.hours_size(), 1);
  EXPECT_DOUBLE_EQ(reply.hours(0).down().at("cpu"), 4 * 3600.0 + 4 * 1800.0);
  EXPECT_DOUBLE_EQ(reply.hours(0).capacity().at("cpu"), 2 * 3600 * 10.0);
}

TEST_F(DbdServiceTest, ArchiveLoadsKeepTheControllerAndBoundTheHistory) {
  core::SimulatedClock clock(100 * 3600);
  Start({}, &clock);
  ASSERT_TRUE(Record({}).ok());  // c1's controller registers
  auto load = [&](const DbdCaller& who, const std::string& cluster, std::vector<v1::AcctJob> jobs) {
    v1::AcctRecordRequest req;
    req.set_cluster(cluster);
    req.set_archive(true);
    req.set_cluster_tres("cpu=8,node=1,billing=8");
    for (v1::AcctJob& j : jobs) *req.add_jobs() = std::move(j);
    v1::AcctRecordReply reply;
    return service_->AcctRecord(who, req, &reply);
  };
  v1::AcctJob a = Job(1, 7, "u7", "COMPLETED", 3 * 3600, 3 * 3600, 5 * 3600 + 60);
  a.mutable_job()->set_tres_alloc("cpu=2,node=1,billing=2");
  EXPECT_EQ(load(kAlice, "sim", {a}).code(), absl::StatusCode::kPermissionDenied);
  ASSERT_TRUE(load(kRoot, "sim", {a}).ok());
  ASSERT_TRUE(
      load(kRoot, "c1", {Job(2, 7, "u7", "COMPLETED", 50 * 3600, 50 * 3600, 51 * 3600)}).ok());
  v1::AcctShowRequest ask;
  ask.set_kind("cluster");
  v1::AcctShowReply show;
  ASSERT_TRUE(service_->AcctShow(kRoot, ask, &show).ok());
  ASSERT_EQ(show.clusters_size(), 2);
  EXPECT_EQ(show.clusters(0).name(), "c1");
  EXPECT_EQ(show.clusters(0).control_port(), 6817);  // a load leaves the controller alone
  EXPECT_EQ(show.clusters(0).until(), 0);
  EXPECT_EQ(show.clusters(1).name(), "sim");
  EXPECT_EQ(show.clusters(1).control_host(), "");
  EXPECT_EQ(show.clusters(1).since(), 3 * 3600);
  EXPECT_EQ(show.clusters(1).until(), 5 * 3600 + 60);
  // The loaded cluster existed from 03:00 to 06:00: three hours of capacity, not a hundred.
  v1::AcctReportRequest req;
  req.set_cluster("sim");
  req.set_start(0);
  req.set_end(100 * 3600);
  v1::AcctReportReply reply;
  ASSERT_TRUE(service_->AcctReport(kRoot, req, &reply).ok());
  ASSERT_EQ(reply.hours_size(), 1);
  EXPECT_DOUBLE_EQ(reply.hours(0).capacity().at("cpu"), 3 * 3600 * 8.0);
  EXPECT_DOUBLE_EQ(reply.hours(0).alloc().at("cpu"), 2 * (2 * 3600.0 + 60));
  // Users the system does not know are found by name.
  v1::AcctQueryJobsRequest q;
  q.add_user_names("u7");
  EXPECT_THAT(Query(kRoot, q), ElementsAre(1, 2));
}

TEST_F(DbdServiceTest, PurgeJobAfterDeletesOldRecordsAndKeepsTheirUsage) {
  core::SimulatedClock clock(10 * 3600);
  conf::DbdConfig config;
  config.purge_job_after_s = 24 * 3600;
  Start(config, &clock);
  ASSERT_TRUE(Record({}).ok());
  v1::AcctJob old = Job(1, 0, "root", "COMPLETED", 10 * 3600, 10 * 3600, 11 * 3600);
  old.mutable_job()->set_tres_alloc("cpu=4,node=1,billing=4");
  ASSERT_TRUE(Record({old}).ok());
  clock.Advance(std::chrono::seconds(30 * 3600));  // 40:00: job 1 ended 29 hours ago
  ASSERT_TRUE(Record({Job(2, 0, "root", "COMPLETED", 39 * 3600, 39 * 3600, 39 * 3600 + 60)}).ok());
  ASSERT_TRUE(service_->RollUpAll().ok());
  auto purged = service_->PurgeJobs();
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(*purged, 1);
  v1::AcctQueryJobsRequest all;
  EXPECT_THAT(Query(kRoot, all), ElementsAre(2));
  // Its usage stays in the rollups.
  v1::AcctReportRequest req;
  req.set_start(10 * 3600);
  req.set_end(12 * 3600);
  v1::AcctReportReply reply;
  ASSERT_TRUE(service_->AcctReport(kRoot, req, &reply).ok());
  EXPECT_DOUBLE_EQ(reply.hours(0).alloc().at("cpu"), 4 * 3600.0);
}

TEST_F(DbdServiceTest, ADryRunChangesNothing) {
  v1::AcctChangeRequest req;
  req.set_verb("add");
  req.set_entity("qos");
  req.add_words("gold");
  req.set_dry_run(true);
  v1::AcctChangeReply reply;
  ASSERT_TRUE(service_->AcctChange(kRoot, req, &reply).ok());
  EXPECT_TRUE(reply.changed());
  v1::AcctShowRequest qos;
  qos.set_kind("qos");
  v1::AcctShowReply show;
  ASSERT_TRUE(service_->AcctShow(kRoot, qos, &show).ok());
  EXPECT_EQ(show.qos_size(), 1);
}

}  // namespace
}  // namespace loom::dbd
