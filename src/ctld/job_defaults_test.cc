// Memory a job did not ask for comes from DefMemPerCPU/DefMemPerNode, the partition's
// before the cluster's, as in Slurm.
#include "ctld/job_defaults.h"

#include <gtest/gtest.h>

namespace loom::ctld {
namespace {

model::JobRequest Cpus(int32_t n) {
  model::JobRequest r;
  r.shape.cpus_per_task = n;
  return r;
}

TEST(MemoryDefault, ClusterDefMemPerCpu) {
  conf::ClusterConfig c;
  c.def_mem_per_cpu_mb = 3900;
  conf::PartitionConfig p;
  model::JobRequest r = Cpus(8);
  ApplyMemoryDefault(c, p, &r);
  EXPECT_EQ(r.mem_per_cpu_mb, 3900);
  EXPECT_EQ(r.shape.mem_per_cpu_mb, 3900);
  EXPECT_FALSE(r.mem_per_node_mb.has_value());
  EXPECT_EQ(r.shape.mem_per_node_mb, 0);
}

TEST(MemoryDefault, PartitionSettingWinsEvenPerNode) {
  conf::ClusterConfig c;
  c.def_mem_per_cpu_mb = 3900;
  conf::PartitionConfig p;
  p.def_mem_per_node_mb = 64000;
  model::JobRequest r = Cpus(8);
  ApplyMemoryDefault(c, p, &r);
  EXPECT_EQ(r.mem_per_node_mb, 64000);
  EXPECT_EQ(r.shape.mem_per_node_mb, 64000);
  EXPECT_FALSE(r.mem_per_cpu_mb.has_value());
  EXPECT_EQ(r.shape.mem_per_cpu_mb, 0);
}

TEST(MemoryDefault, ClusterDefMemPerNode) {
  conf::ClusterConfig c;
  c.def_mem_per_node_mb = 2000;
  model::JobRequest r = Cpus(1);
  ApplyMemoryDefault(c, conf::PartitionConfig{}, &r);
  EXPECT_EQ(r.shape.mem_per_node_mb, 2000);
}

TEST(MemoryDefault, AnyMemoryOptionKeepsTheJobAsItIs) {
  conf::ClusterConfig c;
  c.def_mem_per_cpu_mb = 3900;
  for (int which = 0; which < 3; ++which) {
    model::JobRequest r = Cpus(4);
    if (which == 0) r.mem_per_node_mb = 0;  // --mem=0: all of each node's memory
    if (which == 1) r.mem_per_cpu_mb = 100;
    if (which == 2) r.mem_per_gpu_mb = 1000;
    const model::JobRequest before = r;
    ApplyMemoryDefault(c, conf::PartitionConfig{}, &r);
    EXPECT_EQ(r, before) << which;
  }
}

TEST(MemoryDefault, NothingSetNothingChanges) {
  model::JobRequest r = Cpus(4);
  const model::JobRequest before = r;
  ApplyMemoryDefault(conf::ClusterConfig{}, conf::PartitionConfig{}, &r);
  EXPECT_EQ(r, before);
}

}  // namespace
}  // namespace loom::ctld
