// Advance reservations in the controller's core: made and checked as Slurm does, kept by the
// scheduler (others stay off their nodes while they are active, their own jobs run there),
// ended, deleted and rolled forward.
#include "ctld/controller_core_test_util.h"

namespace loom::ctld {
namespace {

using Words = ControllerCore::Words;

class ResvTest : public CoreTest {
 protected:
  ResvTest() { Up(0); }
  StatusOr<std::string> Create(Words words, Time now = 1000, const Caller& who = kRoot) {
    Effects fx;
    StatusOr<std::string> name = core_.CreateReservation(words, who, now, &fx);
    if (name.ok()) {
      EXPECT_EQ(fx.reservations_changed, std::vector<std::string>{*name});
    }
    return name;
  }
  std::string Message(const Status& s) { return std::string(s.message()); }
  // Time passes; the nodes keep reporting.
  void Tick(Time now) {
    Up(now);
    Effects fx;
    core_.Tick(now, &fx);
  }
};

TEST_F(ResvTest, MaintenanceWindowKeepsJobsThatWouldRunIntoItOffItsNodes) {
  // The seed article's command, without Users= (Loom reserves it for root and SlurmUser).
  StatusOr<std::string> name = Create(
      {{"StartTime", "2000"}, {"Duration", "60"}, {"Nodes", "n1"}, {"Flags", "maint,ignore_jobs"}});
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "root_1");
  const ReservationRecord& r = core_.reservations().at("root_1");
  EXPECT_EQ(r.start, 2000);
  EXPECT_EQ(r.end, 2000 + 3600);
  EXPECT_EQ(r.flags, kResvMaint | kResvIgnoreJobs | kResvSpecNodes);
  EXPECT_EQ(ReservationFlagsString(r.flags, r.purge_after_s), "MAINT,IGNORE_JOBS,SPEC_NODES");

  model::JobRequest whole = Req(8);
  whole.time_limit_s = 900;  // ends by 2000 if it starts at 1000: n1 is fine
  JobId fits = Submit(whole, kAlice, 1000);
  model::JobRequest longer = Req(8);
  longer.time_limit_s = 7200;  // would run into the window on n1; n2 is free
  JobId other_node = Submit(longer, kAlice, 1000);
  JobId blocked = Submit(longer, kAlice, 1000);
  Schedule(1000);
  EXPECT_EQ(State(fits), JobState::kRunning);
  EXPECT_EQ(core_.Find(fits)->alloc()[0].node, 0);
  EXPECT_EQ(State(other_node), JobState::kRunning);
  EXPECT_EQ(core_.Find(other_node)->alloc()[0].node, 1);
  EXPECT_EQ(State(blocked), JobState::kPending);
  EXPECT_EQ(Reason(blocked), PendingReason::kReservedForMaintenance);
  EXPECT_EQ(model::PendingReasonName(Reason(blocked)), "ReqNodeNotAvail, Reserved for maintenance");
}

TEST_F(ResvTest, BadRequestsGetSlurmsErrors) {
  EXPECT_EQ(
      Message(Create({{"StartTime", "2000"}, {"Duration", "60"}, {"Nodes", "zz1"}}, 1000).status()),
      "Invalid node name specified: zz1");
  EXPECT_EQ(Message(Create({{"StartTime", "10"}, {"Duration", "60"}, {"Nodes", "n1"}}).status()),
            "Invalid time specified");
  EXPECT_EQ(Message(Create({{"Duration", "60"}, {"Nodes", "n1"}}).status()),
            "A start time must be given.  No reservation created.");
  EXPECT_EQ(
      Message(
          Create({{"StartTime", "2000"}, {"Duration", "60"}, {"Nodes", "n1"}, {"Flags", "bogus"}})
              .status()),
      "Error parsing flags bogus.  Loom knows MAINT, IGNORE_JOBS, OVERLAP, DAILY, WEEKLY, "
      "WEEKDAY, WEEKEND and PURGE_COMP[=time]");
  EXPECT_EQ(
      Message(
          Create({{"StartTime", "2000"}, {"Duration", "60"}, {"Nodes", "n1"}, {"Flags", "flex"}})
              .status()),
      "Reservation flag flex is not supported by Loom yet");
  EXPECT_EQ(Create({{"StartTime", "2000"}, {"Duration", "60"}, {"Nodes", "n1"}}, 1000, kAlice)
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);

  ASSERT_TRUE(Create({{"ReservationName", "a"},
                      {"StartTime", "2000"},
                      {"Duration", "60"},
                      {"Nodes", "n1"},
                      {"Users", "alice"}})
                  .ok());
  EXPECT_EQ(Message(Create({{"ReservationName", "a"},
                            {"StartTime", "9000"},
                            {"Duration", "60"},
                            {"Nodes", "n2"},
                            {"Users", "alice"}})
                        .status()),
            "Duplicate reservation name");
  // The same node at an overlapping time, unless the new one may overlap.
  EXPECT_EQ(
      Message(Create({{"StartTime", "2500"}, {"Duration", "60"}, {"Nodes", "n1"}, {"Users", "bob"}})
                  .status()),
      "Requested reservation overlaps with another reservation");
  EXPECT_TRUE(Create({{"StartTime", "2500"},
                      {"Duration", "60"},
                      {"Nodes", "n1"},
                      {"Users", "bob"},
                      {"Flags", "OVERLAP"}})
                  .ok());
  // A job that runs on into the window makes its node busy, unless IGNORE_JOBS.
  model::JobRequest unlimited = Req(1);
  unlimited.time_limit_s = 86400;
  JobId running = Submit(unlimited, kAlice, 1000);
  Schedule(1000);
  ASSERT_EQ(State(running), JobState::kRunning);
  const std::string node = core_.cluster().nodes[core_.Find(running)->alloc()[0].node].name;
  EXPECT_EQ(
      Message(
          Create({{"StartTime", "50000"}, {"Duration", "60"}, {"Nodes", node}, {"Users", "bob"}})
              .status()),
      "Requested nodes are busy");
  EXPECT_TRUE(Create({{"StartTime", "50000"},
                      {"Duration", "60"},
                      {"Nodes", node},
                      {"Users", "bob"},
                      {"Flags", "IGNORE_JOBS"}})
                  .ok());
}

TEST_F(ResvTest, ItsJobsWaitForItAndRunOnItsNodesOnly) {
  ASSERT_TRUE(Create({{"ReservationName", "team"},
                      {"StartTime", "2000"},
                      {"Duration", "60"},
                      {"NodeCnt", "1"},
                      {"Users", "alice"}})
                  .ok());
  const ReservationRecord& r = core_.reservations().at("team");
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.flags & kResvSpecNodes, 0u);  // chosen, not named
  model::JobRequest mine = Req(1);
  mine.reservation = "team";
  mine.time_limit_s = 600;
  {
    Effects fx;
    model::JobRequest nosuch = mine;
    nosuch.reservation = "nosuch";
    EXPECT_EQ(Message(core_.Submit(nosuch, kAlice, 1000, &fx).status()),
              "Requested reservation is invalid");
    EXPECT_EQ(Message(core_.Submit(mine, kBob, 1000, &fx).status()),
              "Access denied to requested reservation");
  }
  JobId id = Submit(mine, kAlice, 1000);
  Schedule(1000);
  EXPECT_EQ(State(id), JobState::kPending);
  EXPECT_EQ(Reason(id), PendingReason::kReservation);
  Tick(2000);
  Schedule(2000);
  ASSERT_EQ(State(id), JobState::kRunning);
  EXPECT_EQ(core_.cluster().nodes[core_.Find(id)->alloc()[0].node].name, r.nodes[0]);
  // In use: not deleted.
  Effects fx;
  EXPECT_EQ(Message(core_.DeleteReservation("team", kRoot, &fx)),
            "Requested reservation is in use");
}

TEST_F(ResvTest, AnEndedReservationGoesAndItsWaitingJobsSaySo) {
  ASSERT_TRUE(Create({{"ReservationName", "short"},
                      {"StartTime", "1000"},
                      {"Duration", "1"},
                      {"Nodes", "n[1-2]"},
                      {"Users", "alice"}})
                  .ok());
  model::JobRequest big = Req(8);
  big.shape.min_nodes = big.shape.max_nodes = 2;
  big.shape.ntasks = 2;
  big.reservation = "short";
  big.time_limit_s = 600;
  JobId blocker = Submit(Req(8), kAlice, 1000);  // not of the reservation: waits
  Schedule(1000);
  EXPECT_EQ(State(blocker), JobState::kPending);
  JobId id = Submit(big, kAlice, 1000);
  Tick(1100);
  Schedule(1100);
  EXPECT_TRUE(core_.reservations().empty());
  EXPECT_EQ(State(id), JobState::kPending);
  EXPECT_EQ(Reason(id), PendingReason::kReservationDeleted);
  EXPECT_EQ(State(blocker), JobState::kRunning);
}

TEST_F(ResvTest, DailyRollsForwardAndUpdateMovesIt) {
  ASSERT_TRUE(Create({{"ReservationName", "d"},
                      {"StartTime", "2000"},
                      {"Duration", "60"},
                      {"Nodes", "n2"},
                      {"Users", "alice"},
                      {"Flags", "DAILY"}})
                  .ok());
  Tick(2000 + 3600);
  const ReservationRecord& r = core_.reservations().at("d");
  EXPECT_EQ(r.start, 2000 + 86400);
  EXPECT_EQ(r.end, 2000 + 86400 + 3600);
  Effects fx;
  ASSERT_TRUE(
      core_.UpdateReservation({{"ReservationName", "d"}, {"Duration", "120"}}, kRoot, 3000, &fx)
          .ok());
  EXPECT_EQ(core_.reservations().at("d").end - core_.reservations().at("d").start, 7200);
  EXPECT_EQ(Message(core_.UpdateReservation({{"ReservationName", "nosuch"}}, kRoot, 3000, &fx)),
            "Requested reservation is invalid");
  ASSERT_TRUE(core_.DeleteReservation("d", kRoot, &fx).ok());
  EXPECT_TRUE(core_.reservations().empty());
  EXPECT_TRUE(core_.cluster().reservations.empty());
}

TEST_F(ResvTest, ItsRunningJobsEndWithItAsSlurmsResvOverRunSays) {
  ASSERT_TRUE(Create({{"ReservationName", "r"},
                      {"StartTime", "1000"},
                      {"Duration", "10"},
                      {"Nodes", "n1"},
                      {"Users", "alice"}})
                  .ok());
  model::JobRequest mine = Req(1);
  mine.reservation = "r";
  mine.time_limit_s = 3600;  // longer than the reservation: it may start, and ends with it
  JobId id = Submit(mine, kAlice, 1000);
  Schedule(1000);
  ASSERT_EQ(State(id), JobState::kRunning);
  Tick(1599);
  EXPECT_EQ(State(id), JobState::kRunning);
  Tick(1600);
  EXPECT_EQ(State(id), JobState::kTimeout);
}

TEST(ResvRecurrence, WeekdaysSkipTheWeekend) {
  ReservationRecord r;
  r.flags = kResvWeekday;
  // Friday 2026-12-04 09:00 UTC, an hour long.
  r.start = 1796374800;
  r.end = r.start + 3600;
  RollForward(&r, r.end, absl::UTCTimeZone());
  EXPECT_EQ(r.start, 1796374800 + 3 * 86400);  // Monday
  r.flags = kResvWeekend;
  RollForward(&r, r.end, absl::UTCTimeZone());
  EXPECT_EQ(r.start, 1796374800 + 8 * 86400);  // Saturday
}

TEST(ResvAccess, UsersAccountsAndDenyLists) {
  ReservationRecord r;
  EXPECT_FALSE(MayUseReservation(r, "alice", "a", false));
  EXPECT_TRUE(MayUseReservation(r, "root", "", true));
  r.users = {"alice"};
  EXPECT_TRUE(MayUseReservation(r, "alice", "x", false));
  EXPECT_FALSE(MayUseReservation(r, "bob", "x", false));
  r.accounts = {"physics"};
  EXPECT_TRUE(MayUseReservation(r, "bob", "physics", false));
  r.users = {"carol"};
  r.users_deny = true;
  r.accounts.clear();
  EXPECT_TRUE(MayUseReservation(r, "bob", "x", false));
  EXPECT_FALSE(MayUseReservation(r, "carol", "x", false));
}

}  // namespace
}  // namespace loom::ctld
