#include "sched/plan/planner.h"

#include <gtest/gtest.h>

#include <random>

namespace loom::sched {
namespace {

// The planner's fast searches (free-now index, step-boundary sweep, lower bounds from
// earlier answers) must give exactly what trying every second gives.
Time BruteForceEarliest(const Timeline& t, const Cluster& c, const PendingJob& job,
                        const std::vector<int32_t>& order, Time now, Time from, Time horizon,
                        int64_t res, Allocation* out) {
  for (Time s = from; s < horizon; ++s) {
    if (s > now && s % res != 0) continue;
    std::vector<Candidate> cands;
    for (int32_t n : order) {
      const Resources& cap = c.nodes[n].capacity;
      if (!t.FitsOver(n, MinNodeNeed(job.shape, cap), s, s + job.estimate)) continue;
      cands.push_back(Candidate{n, t.FreeOver(n, s, s + job.estimate), cap});
    }
    if (SelectNodes(job.shape, cands, out)) return s;
  }
  return kNever;
}

class PlannerRandomTest : public testing::TestWithParam<int> {};

TEST_P(PlannerRandomTest, EarliestStartEqualsBruteForce) {
  std::mt19937 rng(GetParam());
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Cluster c;
  model::Partition part;
  const int nodes = uni(1, 8);
  for (int i = 0; i < nodes; ++i) {
    model::Node n;
    n.name = "n" + std::to_string(i);
    n.capacity = Resources{.cpus = uni(4, 16), .gpus = uni(0, 1) * 4, .mem_mb = 1000};
    n.weight = static_cast<uint32_t>(uni(1, 3));
    c.nodes.push_back(n);
    part.nodes.push_back(i);
  }
  c.partitions.push_back(part);
  std::vector<int32_t> order(nodes);
  for (int i = 0; i < nodes; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return c.nodes[a].weight < c.nodes[b].weight; });
  const Time now = 100;
  std::vector<RunningJob> running;
  for (int i = 0; i < nodes * 2; ++i) {
    int n = uni(0, nodes - 1);
    Resources a{.cpus = uni(1, c.nodes[n].capacity.cpus / 2), .gpus = 0, .mem_mb = uni(0, 300)};
    running.push_back(RunningJob{static_cast<JobId>(i), {NodeAlloc{n, a}}, 0, now + uni(1, 60)});
  }
  for (int64_t res : {1, 7}) {
    for (size_t small_set : {size_t{0}, size_t{32}}) {
      Planner planner;
      planner.set_small_set_for_testing(small_set);
      planner.Reset(c, now, running);
      for (int j = 0; j < 40; ++j) {
        PendingJob job;
        job.id = 1000 + j;
        job.estimate = uni(1, 40);
        int kind = uni(0, 9);
        if (kind < 6) {
          job.shape.ntasks = uni(1, 12);
          job.shape.mem_per_node_mb = uni(0, 1) * uni(1, 500);
          job.shape.gpus_per_node = uni(0, 5) == 0 ? uni(1, 4) : 0;
        } else if (kind < 8) {
          int k = uni(1, std::min(3, nodes));
          job.shape.min_nodes = k;
          job.shape.max_nodes = k + uni(0, 1);
          job.shape.ntasks = k * uni(1, 6);
        } else {
          job.shape.exclusive = true;
          job.shape.min_nodes = job.shape.max_nodes = uni(1, std::min(2, nodes));
          job.shape.ntasks = job.shape.min_nodes;
        }
        Allocation want_alloc, got_alloc;
        Time want = BruteForceEarliest(planner.timeline(), c, job, order, now, now, now + 2000, res,
                                       &want_alloc);
        Time got = planner.EarliestStart(job, now, now + 2000, res, &got_alloc);
        ASSERT_EQ(got, want) << "seed " << GetParam() << " job " << j << " res " << res;
        if (got >= kNever) continue;
        ASSERT_EQ(got_alloc, want_alloc) << "seed " << GetParam() << " job " << j;
        // A search that starts later than now (a different path) agrees as well.
        Time from = now + uni(1, 50);
        Allocation later_want, later_got;
        Time lw = BruteForceEarliest(planner.timeline(), c, job, order, now, from, now + 2000, res,
                                     &later_want);
        Time lg = planner.EarliestStart(job, from, now + 2000, res, &later_got);
        ASSERT_EQ(lg, lw) << "seed " << GetParam() << " job " << j << " from " << from;
        if (lg < kNever) {
          ASSERT_EQ(later_got, later_want);
        }
        planner.Hold(got_alloc, got, job.estimate);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, PlannerRandomTest, testing::Range(1, 201));

}  // namespace
}  // namespace loom::sched
