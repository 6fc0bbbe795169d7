// Advance reservations in the planner and in every policy: jobs of a reservation run on its
// nodes while it is active; no other job holds any part of its nodes then.
#include <gtest/gtest.h>

#include <random>

#include "sched/backfill/policy.h"
#include "sched/plan/planner.h"

namespace loom::sched {
namespace {

using model::PendingReason;

Cluster TwoNodes() {
  Cluster c;
  model::Partition part;
  for (int i = 0; i < 2; ++i) {
    model::Node n;
    n.name = "n" + std::to_string(i);
    n.capacity = Resources{.cpus = 8, .gpus = 0, .mem_mb = 1000};
    c.nodes.push_back(n);
    part.nodes.push_back(i);
  }
  c.partitions.push_back(part);
  return c;
}

PendingJob Job(JobId id, int32_t cpus, int64_t estimate, int32_t reservation = -1) {
  PendingJob j;
  j.id = id;
  j.shape.ntasks = cpus;
  j.estimate = estimate;
  j.advance_reservation = reservation;
  return j;
}

TEST(ReservationPlanner, OtherJobsKeepOffTheWindow) {
  Cluster c = TwoNodes();
  c.reservations.push_back(AdvanceReservation{"maint", {0}, 200, 300, true});
  Planner p;
  // n1 is busy until 1000: only n0 could run a job, and only if it ends by 200.
  std::vector<RunningJob> running = {{1, {NodeAlloc{1, Resources{.cpus = 8}}}, 0, 1000}};
  p.Reset(c, 100, running);
  Allocation a;
  EXPECT_TRUE(p.FitsAt(Job(2, 4, 100), 100, &a));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].node, 0);
  EXPECT_FALSE(p.FitsAt(Job(3, 4, 101), 100, &a));
  EXPECT_EQ(p.EarliestStart(Job(3, 4, 101), 100, kNever, 1, &a), 300);
  EXPECT_EQ(p.ReservationReason(Job(3, 4, 101)), PendingReason::kReservedForMaintenance);
  EXPECT_EQ(p.ReservationReason(Job(2, 4, 100)), PendingReason::kNone);
}

TEST(ReservationPlanner, ItsJobsRunOnItsNodesWhileActive) {
  Cluster c = TwoNodes();
  c.reservations.push_back(AdvanceReservation{"team", {1}, 200, 400, false});
  Planner p;
  p.Reset(c, 100, {});
  Allocation a;
  // Not yet active: its job waits for it, on its node only.
  EXPECT_FALSE(p.FitsAt(Job(1, 4, 50, 0), 100, &a));
  EXPECT_EQ(p.ReservationReason(Job(1, 4, 50, 0)), PendingReason::kReservation);
  EXPECT_EQ(p.EarliestStart(Job(1, 4, 50, 0), 100, kNever, 1, &a), 200);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].node, 1);
  // Two of its jobs share the node; a third waits for one of them, within the window; one
  // that could only start after the window never does.
  p.Hold(a, 200, 50);
  EXPECT_EQ(p.EarliestStart(Job(2, 4, 100, 0), 100, kNever, 1, &a), 200);
  p.Hold(a, 200, 100);
  EXPECT_EQ(p.EarliestStart(Job(3, 8, 10, 0), 100, kNever, 1, &a), 300);
  p.Hold(a, 300, 10);
  EXPECT_EQ(p.EarliestStart(Job(4, 8, 10, 0), 390, kNever, 1, &a), 390);
  EXPECT_EQ(p.EarliestStart(Job(4, 8, 10, 0), 400, kNever, 1, &a), kNever);
  // Others see the node whole taken while it is active, its jobs' work notwithstanding.
  EXPECT_EQ(p.EarliestStart(Job(5, 1, 150, -1), 100, kNever, 1, &a), 100);
  EXPECT_EQ(a[0].node, 0);
  p.Hold(a, 100, 1000);
  EXPECT_EQ(p.EarliestStart(Job(6, 8, 150, -1), 100, kNever, 1, &a), 400);
}

TEST(ReservationPlanner, ActiveReservationLeavesItsJobsTheRunningWork) {
  Cluster c = TwoNodes();
  c.reservations.push_back(AdvanceReservation{"now", {0, 1}, 50, 500, false});
  // A job that ran before (IGNORE_JOBS) still holds half of n0.
  std::vector<RunningJob> running = {{1, {NodeAlloc{0, Resources{.cpus = 4}}}, 0, 150}};
  Planner p;
  p.Reset(c, 100, running);
  Allocation a;
  EXPECT_FALSE(p.FitsAt(Job(2, 12, 50, 0), 100, &a));
  EXPECT_TRUE(p.FitsAt(Job(2, 8, 50, 0), 100, &a));
  PendingJob both = Job(3, 16, 50, 0);
  both.shape.min_nodes = both.shape.max_nodes = 2;
  EXPECT_EQ(p.EarliestStart(both, 100, kNever, 1, &a), 150);
  EXPECT_FALSE(p.FitsAt(Job(4, 1, 10), 100, &a));
  EXPECT_EQ(p.EarliestStart(Job(4, 1, 10), 100, kNever, 1, &a), 500);
}

// Whatever each policy starts or plans keeps to the advance reservations, on random
// clusters and queues: no job holds a reserved node inside the window unless it names the
// reservation, a job of a reservation starts on its nodes while it is active, and no node
// carries more than it has.
class ReservationPolicyTest : public testing::TestWithParam<int> {};

TEST_P(ReservationPolicyTest, PlansKeepToReservations) {
  std::mt19937 rng(GetParam());
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Cluster c;
  model::Partition part;
  const int nodes = uni(2, 10);
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.name = "n" + std::to_string(i);
    n.capacity = Resources{.cpus = uni(2, 8), .gpus = 0, .mem_mb = 1000};
    c.nodes.push_back(n);
    part.nodes.push_back(i);
  }
  c.partitions.push_back(part);
  const Time now = 1000;
  for (int r = 0, count = uni(1, 3); r < count; ++r) {
    AdvanceReservation res;
    res.name = "r" + std::to_string(r);
    res.start = now + uni(-100, 300);
    res.end = res.start + uni(50, 400);
    res.maint = uni(0, 1) == 1;
    for (int i = 0; i < nodes; ++i) {
      bool taken = false;
      for (const AdvanceReservation& o : c.reservations) {
        taken = taken || std::find(o.nodes.begin(), o.nodes.end(), i) != o.nodes.end();
      }
      if (!taken && uni(0, 2) == 0) res.nodes.push_back(i);
    }
    if (!res.nodes.empty()) c.reservations.push_back(res);
  }
  auto reservation_of = [&](int32_t node) {
    for (size_t r = 0; r < c.reservations.size(); ++r) {
      const auto& ns = c.reservations[r].nodes;
      if (std::find(ns.begin(), ns.end(), node) != ns.end()) return static_cast<int32_t>(r);
    }
    return -1;
  };
  std::vector<RunningJob> running;
  for (int i = 0; i < nodes; ++i) {
    if (uni(0, 1) == 0) continue;
    running.push_back({static_cast<JobId>(1000 + i),
                       {NodeAlloc{i, Resources{.cpus = uni(1, c.nodes[i].capacity.cpus)}}},
                       now - 10,
                       now + uni(1, 500)});
  }
  std::vector<PendingJob> pending;
  for (int j = 0; j < 30; ++j) {
    const int resvs = static_cast<int>(c.reservations.size());
    PendingJob p = Job(static_cast<JobId>(j + 1), uni(1, 8), uni(10, 300),
                       resvs > 0 && uni(0, 2) == 0 ? uni(0, resvs - 1) : -1);
    p.shape.min_nodes = p.shape.max_nodes = uni(1, 2);
    p.shape.ntasks = std::max(p.shape.ntasks, p.shape.min_nodes);
    p.submit = j;
    p.priority = uni(0, 5);
    pending.push_back(p);
  }
  for (std::string_view name : PolicyNames()) {
    StatusOr<std::unique_ptr<Policy>> policy = MakePolicy(name, PolicyOptions{});
    ASSERT_TRUE(policy.ok());
    PassInput in;
    in.cluster = &c;
    in.running = running;
    in.pending = pending;
    in.now = now;
    in.trigger = PassTrigger::kSubmit;
    PassOutput out;
    (*policy)->Pass(in, &out);
    // Every plan: (job, start, allocation).
    struct Plan {
      const PendingJob* job;
      Time start;
      const Allocation* alloc;
    };
    std::vector<Plan> plans;
    for (const JobStart& s : out.starts)
      plans.push_back({&pending[s.pending_index], now, &s.alloc});
    for (const auto& [idx, r] : out.reservations)
      plans.push_back({&pending[idx], r.start, &r.alloc});
    for (const auto& [idx, r] : out.transient_reservations) {
      plans.push_back({&pending[idx], r.start, &r.alloc});
    }
    for (const Plan& plan : plans) {
      const Time end = plan.start + plan.job->estimate;
      for (const NodeAlloc& a : *plan.alloc) {
        const int32_t r = reservation_of(a.node);
        if (plan.job->advance_reservation >= 0) {
          const AdvanceReservation& mine = c.reservations[plan.job->advance_reservation];
          EXPECT_EQ(r, plan.job->advance_reservation) << name << ": job " << plan.job->id;
          EXPECT_GE(plan.start, mine.start) << name << ": job " << plan.job->id;
          EXPECT_LT(plan.start, mine.end) << name << ": job " << plan.job->id;
        } else if (r >= 0) {
          const AdvanceReservation& other = c.reservations[r];
          EXPECT_TRUE(end <= other.start || plan.start >= other.end)
              << name << ": job " << plan.job->id << " on " << a.node << " over [" << plan.start
              << ", " << end << ")";
        }
      }
    }
    // The starts and the running jobs fit the nodes now.
    std::vector<Resources> used(c.nodes.size());
    for (const RunningJob& r : running) {
      for (const NodeAlloc& a : r.alloc) used[a.node] += a.amount;
    }
    for (const JobStart& s : out.starts) {
      for (const NodeAlloc& a : s.alloc) used[a.node] += a.amount;
    }
    for (size_t n = 0; n < c.nodes.size(); ++n) {
      EXPECT_TRUE(c.nodes[n].capacity.Covers(used[n])) << name << ": node " << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ReservationPolicyTest, testing::Range(0, 60));

}  // namespace
}  // namespace loom::sched
