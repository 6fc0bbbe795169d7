#include "conf/cgroup_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace loom::conf {
namespace {

using ::testing::HasSubstr;

TEST(CgroupConfTest, ReadsWhatSitesWrite) {
  std::vector<Diagnostic> warnings;
  auto c = ParseCgroupConf(
      "# Slurm's recommended settings\nCgroupPlugin=cgroup/v2\nConstrainCores=yes\n"
      "ConstrainRAMSpace=yes\nAllowedRAMSpace=98.5\nConstrainSwapSpace=yes\n"
      "AllowedSwapSpace=10%\nconstraindevices=YES\nCgroupAutomount=yes\n",
      "/etc/slurm/cgroup.conf", &warnings);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->plugin, CgroupPlugin::kV2);
  EXPECT_TRUE(c->constrain_cores);
  EXPECT_TRUE(c->constrain_ram_space);
  EXPECT_DOUBLE_EQ(c->allowed_ram_space_percent, 98.5);
  EXPECT_TRUE(c->constrain_swap_space);
  EXPECT_DOUBLE_EQ(c->allowed_swap_space_percent, 10);
  EXPECT_TRUE(c->constrain_devices);
  ASSERT_EQ(warnings.size(), 1u);  // CgroupAutomount: known, not acted on
  EXPECT_EQ(warnings[0].key, "CgroupAutomount");
}

TEST(CgroupConfTest, ErrorsNameFileLineAndExpectation) {
  auto c = ParseCgroupConf("ConstrainCores=maybe\nCgroupPlugin=cgroup/v3\nBogus=1\nnoequals\n",
                           "cgroup.conf", nullptr);
  ASSERT_FALSE(c.ok());
  const std::string m(c.status().message());
  EXPECT_THAT(m, HasSubstr("cgroup.conf:1: error: invalid value 'maybe' for ConstrainCores: "
                           "expected yes or no"));
  EXPECT_THAT(m, HasSubstr("cgroup.conf:2: error: invalid value 'cgroup/v3' for CgroupPlugin"));
  EXPECT_THAT(m, HasSubstr("cgroup.conf:3: error: unknown cgroup.conf key 'Bogus'"));
  EXPECT_THAT(m, HasSubstr("cgroup.conf:4: error: 'noequals' is not Key=Value"));
}

TEST(CgroupConfTest, MissingFileMeansNothingConstrained) {
  auto c = LoadCgroupConf("/nonexistent/dir/slurm.conf", nullptr);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->constrain_cores);
  EXPECT_EQ(c->plugin, CgroupPlugin::kAutodetect);
}

// The cgroup.conf of the seed article on GPU clusters, as users copy it.
TEST(CgroupConfTest, SeedArticleConfigLoads) {
  std::vector<Diagnostic> warnings;
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/examples/seeds/conf/000-cgroup.conf");
  std::stringstream text;
  text << in.rdbuf();
  auto seed = ParseCgroupConf(text.str(), "000-cgroup.conf", &warnings);
  ASSERT_TRUE(seed.ok()) << seed.status();
  EXPECT_EQ(seed->plugin, CgroupPlugin::kV2);
  EXPECT_TRUE(seed->constrain_cores && seed->constrain_ram_space && seed->constrain_devices &&
              seed->constrain_swap_space);
  ASSERT_FALSE(warnings.empty());
  EXPECT_EQ(warnings.back().key, "AllowedDevices");
}

}  // namespace
}  // namespace loom::conf
