#include "conf/show_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conf/include_resolver.h"
#include "conf/slurm_conf.h"

namespace loom::conf {
namespace {

using ::testing::HasSubstr;

TEST(ShowConfigTest, ListsSettingsAsSlurmDoes) {
  std::vector<Diagnostic> warnings;
  auto c = ParseSlurmConf(
      "ClusterName=c1\nSlurmctldHost=head(10.0.0.1)\nSlurmctldPort=7817\nKillWait=15\n"
      "SchedulerParameters=bf_interval=10,bf_continue\nProctrackType=proctrack/cgroup\n"
      "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n",
      "/etc/slurm/slurm.conf", NoIncludeResolver(), &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string out = RenderConfigEntries(ShowConfigEntries(*c, 0));
  EXPECT_THAT(out, HasSubstr("ClusterName             = c1\n"));
  EXPECT_THAT(out, HasSubstr("KillWait                = 15 sec\n"));
  EXPECT_THAT(out, HasSubstr("SlurmctldHost[0]        = head(10.0.0.1)\n"));
  EXPECT_THAT(out, HasSubstr("SlurmctldPort           = 7817\n"));
  EXPECT_THAT(out, HasSubstr("SchedulerParameters     = bf_interval=10,bf_continue\n"));
  EXPECT_THAT(out, HasSubstr("ProctrackType           = proctrack/cgroup\n"));  // kept as written
  EXPECT_THAT(out, HasSubstr("SlurmUser               = root(0)\n"));
  EXPECT_THAT(out, HasSubstr("SlurmctldDebug          = info\n"));  // Slurm's defaults
  EXPECT_THAT(out, HasSubstr("DebugFlags              = (null)\n"));
  EXPECT_THAT(out, HasSubstr("SlurmctldLogFile        = (null)\n"));
  // Sorted by key, ignoring case, as Slurm lists them.
  EXPECT_LT(out.find("KillWait"), out.find("MaxArraySize"));
  EXPECT_LT(out.find("SlurmctldHost"), out.find("SlurmUser"));
}

TEST(ShowConfigTest, LongKeysAreNotPadded) {
  EXPECT_EQ(RenderConfigEntries({{"PropagateResourceLimitsExcept", "(null)"}, {"A", "b"}}),
            "PropagateResourceLimitsExcept = (null)\nA                       = b\n");
}

}  // namespace
}  // namespace loom::conf
