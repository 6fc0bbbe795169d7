// PartitionName lines: node lists, DEFAULT merging, limits, priority, state, OverSubscribe,
// access lists, billing weights, and the errors for inconsistent partitions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conf/slurm_conf.h"
#include "conf/test_util.h"

namespace loom::conf {
namespace {

using ::testing::ElementsAre;
using testing::ErrorAt;
using testing::ErrorText;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ParseBody;
using testing::WarningAt;
using testing::WarningText;

constexpr std::string_view kNodes = "NodeName=a[1-4]\nNodeName=b[1-2]\n";  // lines 3-4

StatusOr<ClusterConfig> WithNodes(std::string_view partitions,
                                  std::vector<Diagnostic>* warnings = nullptr) {
  return ParseBody(core::StrCat(kNodes, partitions), warnings);
}

TEST(PartitionConfig, NodesInDefinitionOrderWithoutDuplicates) {
  auto c = WithNodes(
      "PartitionName=p Nodes=b2,a[3-4],a3,b1\n"
      "PartitionName=all Nodes=ALL\n"
      "PartitionName=empty\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(c->partitions[0].nodes, ElementsAre("a3", "a4", "b1", "b2"));
  EXPECT_EQ(c->partitions[1].nodes.size(), 6u);
  EXPECT_THAT(c->partitions[2].nodes, IsEmpty());
  EXPECT_TRUE(c->partitions[0].HasNode("b1"));
  EXPECT_FALSE(c->partitions[0].HasNode("a1"));
}

TEST(PartitionConfig, UndefinedNodeIsAnError) {
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p Nodes=a[4-5],c1\n")),
              HasSubstr(ErrorAt(5) + "Nodes=a[4-5],c1 names nodes a5, c1 that no NodeName line "
                                     "defines"));
}

TEST(PartitionConfig, DefaultsAndDefaultLine) {
  auto c = WithNodes(
      "PartitionName=plain Nodes=a1\n"
      "PartitionName=DEFAULT MaxTime=2-00:00:00 State=DOWN QOS=normal\n"
      "PartitionName=p1 Nodes=a1\n"
      "PartitionName=p2 Nodes=a2 State=UP MaxTime=30\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const PartitionConfig* plain = c->FindPartition("plain");
  EXPECT_EQ(plain->max_time_s, core::kUnlimitedSeconds);
  EXPECT_EQ(plain->default_time_s, kTimeNotSet);
  EXPECT_EQ(plain->state, PartitionState::kUp);
  EXPECT_EQ(plain->priority_tier, 1);
  EXPECT_EQ(plain->priority_job_factor, 1);
  EXPECT_EQ(plain->min_nodes, 0);
  EXPECT_EQ(plain->max_nodes, kUnlimitedNodes);
  EXPECT_EQ(plain->oversubscribe, OverSubscribe::kNo);
  EXPECT_FALSE(plain->is_default);
  const PartitionConfig* p1 = c->FindPartition("p1");
  EXPECT_EQ(p1->max_time_s, 2 * 86400);
  EXPECT_EQ(p1->state, PartitionState::kDown);
  EXPECT_EQ(p1->qos, "normal");
  const PartitionConfig* p2 = c->FindPartition("p2");
  EXPECT_EQ(p2->max_time_s, 30 * 60);
  EXPECT_EQ(p2->state, PartitionState::kUp);
  EXPECT_EQ(p2->qos, "normal");
  EXPECT_EQ(c->DefaultPartition(), nullptr);
}

TEST(PartitionConfig, TimeLimits) {
  auto c = WithNodes(
      "PartitionName=a MaxTime=UNLIMITED DefaultTime=1:00:00\n"
      "PartitionName=b MaxTime=INFINITE\n"
      "PartitionName=c MaxTime=7-00:00:00 DefaultTime=1-00:00:00\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->partitions[0].max_time_s, core::kUnlimitedSeconds);
  EXPECT_EQ(c->partitions[0].default_time_s, 3600);
  EXPECT_EQ(c->partitions[1].max_time_s, core::kUnlimitedSeconds);
  EXPECT_EQ(c->partitions[2].max_time_s, 7 * 86400);
  EXPECT_EQ(c->partitions[2].default_time_s, 86400);
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p MaxTime=1:00:00 DefaultTime=2:00:00\n")),
              HasSubstr(ErrorAt(5) + "partition p: DefaultTime 02:00:00 exceeds MaxTime "
                                     "01:00:00"));
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p MaxTime=forever\n")),
              HasSubstr(ErrorAt(5) + "invalid value 'forever' for MaxTime: expected a time "
                                     "limit"));
}

TEST(PartitionConfig, NodeCountLimits) {
  auto c = WithNodes("PartitionName=p MinNodes=2 MaxNodes=4\nPartitionName=q MaxNodes=UNLIMITED\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->partitions[0].min_nodes, 2);
  EXPECT_EQ(c->partitions[0].max_nodes, 4);
  EXPECT_EQ(c->partitions[1].max_nodes, kUnlimitedNodes);
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p MinNodes=5 MaxNodes=4\n")),
              HasSubstr("partition p: MinNodes=5 exceeds MaxNodes=4"));
}

TEST(PartitionConfig, OnlyOneDefaultPartition) {
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p Default=YES\nPartitionName=q Default=yes\n")),
              HasSubstr(ErrorAt(6) + "partitions p (/etc/slurm/slurm.conf:5) and q are both "
                                     "Default=YES"));
  auto c = WithNodes("PartitionName=p Default=NO\nPartitionName=q Default=YES\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->DefaultPartition()->name, "q");
}

TEST(PartitionConfig, DuplicatePartitionIsAnError) {
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p\nPartitionName=p\n")),
              HasSubstr(ErrorAt(6) + "partition p is already defined at "
                                     "/etc/slurm/slurm.conf:5"));
}

TEST(PartitionConfig, PriorityAliasSetsBoth) {
  auto c = WithNodes(
      "PartitionName=old Priority=100\n"
      "PartitionName=new PriorityTier=5 PriorityJobFactor=7\n"
      "PartitionName=mix Priority=3 PriorityTier=9\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->partitions[0].priority_tier, 100);
  EXPECT_EQ(c->partitions[0].priority_job_factor, 100);
  EXPECT_EQ(c->partitions[1].priority_tier, 5);
  EXPECT_EQ(c->partitions[1].priority_job_factor, 7);
  EXPECT_EQ(c->partitions[2].priority_tier, 9);
  EXPECT_EQ(c->partitions[2].priority_job_factor, 3);
}

TEST(PartitionConfig, StatesAndOverSubscribe) {
  auto c = WithNodes(
      "PartitionName=a State=DRAIN OverSubscribe=EXCLUSIVE\n"
      "PartitionName=b State=INACTIVE OverSubscribe=FORCE:2\n"
      "PartitionName=c OverSubscribe=YES\n"
      "PartitionName=d Shared=FORCE\n"
      "PartitionName=e OverSubscribe=no\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->partitions[0].state, PartitionState::kDrain);
  EXPECT_EQ(c->partitions[0].oversubscribe, OverSubscribe::kExclusive);
  EXPECT_EQ(c->partitions[1].state, PartitionState::kInactive);
  EXPECT_EQ(c->partitions[1].oversubscribe, OverSubscribe::kForce);
  EXPECT_EQ(c->partitions[1].oversubscribe_count, 2);
  EXPECT_EQ(c->partitions[2].oversubscribe, OverSubscribe::kYes);
  EXPECT_EQ(c->partitions[2].oversubscribe_count, 4);
  EXPECT_EQ(c->partitions[3].oversubscribe, OverSubscribe::kForce);
  EXPECT_EQ(c->partitions[3].oversubscribe_count, 4);
  EXPECT_EQ(c->partitions[4].oversubscribe, OverSubscribe::kNo);
  EXPECT_EQ(OverSubscribeName(OverSubscribe::kForce), "FORCE");
  EXPECT_EQ(PartitionStateName(PartitionState::kInactive), "INACTIVE");
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p OverSubscribe=SOMETIMES\n")),
              HasSubstr("invalid value 'SOMETIMES' for OverSubscribe: expected NO, EXCLUSIVE, "
                        "YES[:N] or FORCE[:N]"));
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p OverSubscribe=EXCLUSIVE:2\n")),
              HasSubstr("for OverSubscribe"));
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p State=OPEN\n")),
              HasSubstr("expected UP, DOWN, DRAIN or INACTIVE"));
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=p Shared=NO OverSubscribe=NO\n")),
              HasSubstr("OverSubscribe is given twice on this PartitionName line"));
}

TEST(PartitionConfig, AccessListsAndExclusiveUser) {
  auto c = WithNodes(
      "PartitionName=a AllowAccounts=ml,vision AllowGroups=ALL ExclusiveUser=YES\n"
      "PartitionName=b AllowGroups=hpc\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(c->partitions[0].allow_accounts, ElementsAre("ml", "vision"));
  EXPECT_THAT(c->partitions[0].allow_groups, IsEmpty());
  EXPECT_TRUE(c->partitions[0].exclusive_user);
  EXPECT_THAT(c->partitions[1].allow_groups, ElementsAre("hpc"));
  EXPECT_FALSE(c->partitions[1].exclusive_user);
}

TEST(PartitionConfig, BillingWeightsAndMemoryLimits) {
  auto c = WithNodes(
      "PartitionName=a TRESBillingWeights=\"CPU=1.0,Mem=1024M,GRES/gpu:A100=64\" "
      "DefMemPerCPU=2000 MaxMemPerNode=UNLIMITED PreemptMode=SUSPEND,GANG GraceTime=30\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const PartitionConfig& p = c->partitions[0];
  EXPECT_DOUBLE_EQ(p.billing_weights.WeightFor("mem"), 1024);
  EXPECT_DOUBLE_EQ(p.billing_weights.WeightFor("gres/gpu:a100"), 64);
  EXPECT_EQ(p.def_mem_per_cpu_mb, 2000);
  EXPECT_EQ(p.max_mem_per_node_mb, 0);
  ASSERT_TRUE(p.preempt_mode.has_value());
  EXPECT_EQ(p.preempt_mode->ToString(), "SUSPEND,GANG");
  EXPECT_EQ(p.grace_time_s, 30);
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=a TRESBillingWeights=CPU=x\n")),
              HasSubstr("invalid value 'CPU=x' for TRESBillingWeights: weight 'x' for cpu is "
                        "not a number; expected a comma list of TRES=weight"));
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=a TRESBillingWeights=GPU=1\n")),
              HasSubstr("invalid value 'GPU=1' for TRESBillingWeights: unknown TRES 'GPU'"));
  EXPECT_THAT(ErrorText(WithNodes("PartitionName=a DefMemPerCPU=1 DefMemPerNode=2\n")),
              HasSubstr("DefMemPerCPU and DefMemPerNode are mutually exclusive"));
}

TEST(PartitionConfig, GlobalBillingWeightsAreAFallback) {
  std::vector<Diagnostic> warnings;
  auto c = WithNodes(
      "TRESBillingWeights=CPU=2\nPartitionName=a\nPartitionName=b TRESBillingWeights=CPU=3\n",
      &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_DOUBLE_EQ(c->BillingWeightsFor(c->partitions[0]).WeightFor("cpu"), 2);
  EXPECT_DOUBLE_EQ(c->BillingWeightsFor(c->partitions[1]).WeightFor("cpu"), 3);
  EXPECT_THAT(WarningText(warnings), HasSubstr("Loom extension"));
}

TEST(PartitionConfig, UnusedOptionsWarnOnceAndAreKept) {
  std::vector<Diagnostic> warnings;
  auto c =
      WithNodes("PartitionName=DEFAULT Hidden=YES\nPartitionName=a\nPartitionName=b\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->partitions[0].other_keys.at("Hidden"), "YES");
  EXPECT_EQ(c->partitions[1].other_keys.at("Hidden"), "YES");
  ASSERT_EQ(warnings.size(), 1u) << WarningText(warnings);
  EXPECT_THAT(warnings[0].ToString(),
              HasSubstr(WarningAt(5) + "Hidden on PartitionName lines is accepted but not acted "
                                       "on by Loom yet"));
}

TEST(PartitionConfig, BadDefaultValueIsReportedOnce) {
  auto c = WithNodes("PartitionName=DEFAULT MaxNodes=lots\nPartitionName=a\nPartitionName=b\n");
  std::string e = ErrorText(c);
  EXPECT_THAT(e, HasSubstr(ErrorAt(5) + "invalid value 'lots' for MaxNodes"));
  EXPECT_EQ(e.find("MaxNodes"), e.rfind("MaxNodes: expected"));
}

}  // namespace
}  // namespace loom::conf
