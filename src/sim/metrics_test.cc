#include "sim/metrics.h"

#include <gtest/gtest.h>

namespace loom::sim {
namespace {

TEST(Metrics, DefinitionsOfThePublishedStudies) {
  SimResult r;
  r.policy = "easy";
  r.total_cpus = 10;
  // submit, start, run, cpus
  r.jobs.push_back(JobRecord{.id = 1, .submit = 0, .start = 0, .run = 100, .cpus = 10});
  r.jobs.push_back(JobRecord{.id = 2, .submit = 10, .start = 100, .run = 5, .cpus = 5});
  r.jobs.push_back(JobRecord{.id = 3, .submit = 20, .start = 105, .run = 50, .cpus = 2});
  Summary s = Summarize(r);
  EXPECT_EQ(s.jobs, 3);
  EXPECT_EQ(s.makespan_s, 155);  // max(start + run) - min(submit)
  EXPECT_DOUBLE_EQ(s.utilization, (100.0 * 10 + 5 * 5 + 50 * 2) / (155.0 * 10));
  EXPECT_DOUBLE_EQ(s.mean_wait_s, (0 + 90 + 85) / 3.0);
  EXPECT_DOUBLE_EQ(s.median_wait_s, 85);
  EXPECT_DOUBLE_EQ(s.max_wait_s, 90);
  EXPECT_DOUBLE_EQ(s.mean_flow_time_s, (100 + 95 + 135) / 3.0);
  // bounded slowdown: max(1, flow / max(10, run)): 1, 95/10, 135/50
  EXPECT_DOUBLE_EQ(s.mean_bounded_slowdown, (1 + 9.5 + 2.7) / 3.0);
  EXPECT_DOUBLE_EQ(s.max_bounded_slowdown, 9.5);
}

TEST(Metrics, Percentiles) {
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(Percentile(v, 95), 10);
  EXPECT_EQ(Percentile(v, 50), 5);
  EXPECT_EQ(Median(v), 5.5);
  std::vector<double> one = {7};
  EXPECT_EQ(Percentile(one, 95), 7);
}

}  // namespace
}  // namespace loom::sim
