#include "sched/priority/priority.h"

#include <gtest/gtest.h>

namespace loom::sched {
namespace {

TEST(Multifactor, WeightedSumOfFactors) {
  MultifactorWeights w{.age = 1000, .job_size = 500, .partition = 2000, .qos = 100,
                       .max_age_s = 1000};
  ClusterTotals totals{.nodes = 10, .cpus = 100, .max_partition_job_factor = 4};
  PriorityInputs in{.eligible_since = 0, .nodes = 5, .cpus = 20, .partition_job_factor = 2,
                    .qos_factor = 0.5};
  // age 500/1000 -> 500; size mean(5/10, 20/100) -> 175; partition 2/4 -> 1000; qos -> 50.
  EXPECT_EQ(MultifactorPriority(w, in, totals, 500), 500 + 175 + 1000 + 50);
  // Age saturates at PriorityMaxAge.
  EXPECT_EQ(MultifactorPriority(w, in, totals, 5000), 1000 + 175 + 1000 + 50);
  w.favor_small = true;
  EXPECT_EQ(MultifactorPriority(w, in, totals, 500), 500 + 325 + 1000 + 50);
  in.nodes = 1;
  EXPECT_EQ(MultifactorPriority(w, in, totals, 500), 500 + 425 + 1000 + 50);
}

TEST(Multifactor, ReproducesSlurmsSprioFigures) {
  // Slurm 22.05's sprio on 16 nodes x 64 CPUs, weights age 1000, fair share 10000, job size
  // 100, partition 1000, QOS 2000, just after submission: the weighted sum truncated.
  MultifactorWeights w{.age = 1000, .fairshare = 10000, .job_size = 100, .partition = 1000,
                       .qos = 2000, .max_age_s = 7 * 86400};
  ClusterTotals totals{.nodes = 16, .cpus = 1024, .max_partition_job_factor = 1};
  // -n 1024 (one node asked for), fair share 0.4: 4000 + 53.125 + 1000.
  PriorityInputs wide{.eligible_since = 100, .nodes = 1, .cpus = 1024, .fairshare_factor = 0.4};
  EXPECT_EQ(MultifactorPriority(w, wide, totals, 100), 5053);
  // -N 15 (15 CPUs), fair share 0.8: 8000 + 47.607 + 1000.
  PriorityInputs spread{.eligible_since = 100, .nodes = 15, .cpus = 15, .fairshare_factor = 0.8};
  EXPECT_EQ(MultifactorPriority(w, spread, totals, 100), 9047);
}

TEST(Multifactor, AssociationAndTresFactors) {
  MultifactorWeights w;
  w.assoc = 1000;
  auto tres = core::TresBillingWeights::Parse("CPU=2000,GRES/gpu=8000");
  ASSERT_TRUE(tres.ok());
  w.tres = *tres;
  core::TresVector asked, total;
  asked.Set("cpu", 16);
  asked.Set("gres/gpu", 2);
  total.Set("cpu", 64);
  total.Set("gres/gpu", 0);  // a partition without GPUs: no factor
  PriorityInputs in;
  in.assoc_factor = 0.5;
  in.tres_factors = TresFactors(w.tres, asked, total);
  ASSERT_EQ(in.tres_factors.size(), 2u);
  EXPECT_EQ(in.tres_factors[0], (std::pair<std::string, double>("cpu", 0.25)));
  EXPECT_EQ(in.tres_factors[1], (std::pair<std::string, double>("gres/gpu", 0.0)));
  ClusterTotals totals;
  // 1000 x 0.5 + 2000 x 0.25; age, size and the rest weigh 0.
  EXPECT_EQ(MultifactorPriority(w, in, totals, 0), 1000);
}

TEST(QueueOrder, TierThenPriorityThenSubmitThenId) {
  Cluster c;
  c.partitions.resize(2);
  c.partitions[0].priority_tier = 1;
  c.partitions[1].priority_tier = 5;
  std::vector<PendingJob> jobs(5);
  jobs[0] = {.id = 1, .submit = 10, .priority = 100, .partition = 0};
  jobs[1] = {.id = 2, .submit = 5, .priority = 100, .partition = 0};
  jobs[2] = {.id = 3, .submit = 20, .priority = 1, .partition = 1};  // higher tier first
  jobs[3] = {.id = 4, .submit = 10, .priority = 500, .partition = 0};
  jobs[4] = {.id = 0, .submit = 10, .priority = 100, .partition = 0};
  std::vector<int32_t> want = {2, 3, 1, 4, 0};
  EXPECT_EQ(QueueOrder(c, jobs), want);
}

}  // namespace
}  // namespace loom::sched
