// Global keys Loom acts on: SchedulerParameters, SelectType(Parameters), priority,
// preemption, topology, TRES accounting, memory defaults, limits and timers.
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

TEST(SchedulerParameters, SlurmDefaults) {
  auto c = ParseBody("");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const SchedulerParams& s = c->scheduler;
  EXPECT_EQ(s.bf_interval_s, 30);
  EXPECT_EQ(s.bf_window_min, 1440);
  EXPECT_EQ(s.bf_resolution_s, 60);
  EXPECT_EQ(s.bf_max_job_test, 500);
  EXPECT_EQ(s.bf_max_job_start, 0);
  EXPECT_EQ(s.bf_max_job_part, 0);
  EXPECT_FALSE(s.bf_continue);
  EXPECT_EQ(s.bf_min_age_reserve_s, 0);
  EXPECT_EQ(s.default_queue_depth, 100);
  EXPECT_EQ(s.sched_interval_s, 60);
  EXPECT_EQ(s.sched_max_job_start, 0);
  EXPECT_EQ(s.EffectiveBfMaxTime(), 30);
}

TEST(SchedulerParameters, TypedOptions) {
  auto c = ParseBody(
      "SchedulerParameters=bf_interval=60,bf_window=2880,bf_resolution=300,bf_max_job_test=100,"
      "bf_max_job_start=10,bf_max_job_part=50,bf_continue,bf_min_age_reserve=600,"
      "default_queue_depth=200,sched_interval=-1,sched_max_job_start=20,bf_max_time=90,"
      "sched_min_interval=1000000\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const SchedulerParams& s = c->scheduler;
  EXPECT_EQ(s.bf_interval_s, 60);
  EXPECT_EQ(s.bf_window_min, 2880);
  EXPECT_EQ(s.bf_resolution_s, 300);
  EXPECT_EQ(s.bf_max_job_test, 100);
  EXPECT_EQ(s.bf_max_job_start, 10);
  EXPECT_EQ(s.bf_max_job_part, 50);
  EXPECT_TRUE(s.bf_continue);
  EXPECT_EQ(s.bf_min_age_reserve_s, 600);
  EXPECT_EQ(s.default_queue_depth, 200);
  EXPECT_EQ(s.sched_interval_s, -1);
  EXPECT_EQ(s.sched_max_job_start, 20);
  EXPECT_EQ(s.sched_min_interval_us, 1000000);
  EXPECT_EQ(s.EffectiveBfMaxTime(), 90);
}

TEST(SchedulerParameters, KnownOptionWarnsUnknownOptionFails) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("SchedulerParameters=defer,max_rpc_cnt=150,bf_continue\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  using Opt = std::pair<std::string, std::string>;
  EXPECT_THAT(c->scheduler.other_options, ElementsAre(Opt{"defer", ""}, Opt{"max_rpc_cnt", "150"}));
  EXPECT_THAT(WarningText(warnings),
              HasSubstr(WarningAt(3) + "SchedulerParameters option defer is accepted but not "
                                       "acted on by Loom yet"));
  EXPECT_THAT(ErrorText(ParseBody("SchedulerParameters=bf_continue,bf_windw=10\n")),
              HasSubstr(ErrorAt(3) + "unknown SchedulerParameters option 'bf_windw'; did you mean "
                                     "'bf_window'?"));
  EXPECT_THAT(ErrorText(ParseBody("SchedulerParameters=max_job_bf=50\n")),
              HasSubstr("use bf_max_job_test"));
}

TEST(SchedulerParameters, ValuesAreRangeChecked) {
  EXPECT_THAT(ErrorText(ParseBody("SchedulerParameters=bf_window=0\n")),
              HasSubstr(ErrorAt(3) + "invalid SchedulerParameters option 'bf_window=0': bf_window "
                                     "expects a whole number from 1 to 43200"));
  EXPECT_THAT(ErrorText(ParseBody("SchedulerParameters=bf_interval\n")),
              HasSubstr("bf_interval expects a whole number from 1 to 10800 (or -1 to disable)"));
  EXPECT_THAT(ErrorText(ParseBody("SchedulerParameters=bf_continue=1\n")),
              HasSubstr("bf_continue expects no value"));
  std::vector<Diagnostic> warnings;
  EXPECT_TRUE(
      ParseBody("SchedulerParameters=bf_max_job_test=10,bf_max_job_part=20\n", &warnings).ok());
  EXPECT_THAT(WarningText(warnings), HasSubstr("set bf_max_job_test much higher"));
}

TEST(SelectType, TypesAndParameters) {
  auto c = ParseBody("SelectType=select/cons_tres\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->select_type, SelectType::kConsTres);
  EXPECT_EQ(c->select.ToString(), "CR_Core_Memory");  // Slurm's default for cons_tres
  struct Case {
    const char* text;
    SelectParams::Unit unit;
    bool memory;
  };
  for (const Case& k : {Case{"CR_CPU", SelectParams::Unit::kCpu, false},
                        Case{"CR_CPU_Memory", SelectParams::Unit::kCpu, true},
                        Case{"CR_Core", SelectParams::Unit::kCore, false},
                        Case{"cr_core_memory", SelectParams::Unit::kCore, true},
                        Case{"CR_Socket", SelectParams::Unit::kSocket, false},
                        Case{"CR_Socket_Memory", SelectParams::Unit::kSocket, true},
                        Case{"CR_Memory", SelectParams::Unit::kMemory, true}}) {
    auto r =
        ParseBody(core::StrCat("SelectType=select/cons_res\nSelectTypeParameters=", k.text, "\n"));
    ASSERT_TRUE(r.ok()) << k.text << ErrorText(r);
    EXPECT_EQ(r->select_type, SelectType::kConsRes);
    EXPECT_EQ(r->select.unit, k.unit) << k.text;
    EXPECT_EQ(r->select.memory, k.memory) << k.text;
  }
  auto m = ParseBody(
      "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core,CR_LLN,CR_Pack_Nodes,"
      "CR_ONE_TASK_PER_CORE,CR_CORE_DEFAULT_DIST_BLOCK\n");
  ASSERT_TRUE(m.ok()) << ErrorText(m);
  EXPECT_TRUE(m->select.lln);
  EXPECT_TRUE(m->select.pack_nodes);
  EXPECT_TRUE(m->select.one_task_per_core);
  EXPECT_TRUE(m->select.core_default_dist_block);
  EXPECT_EQ(m->select.ToString(),
            "CR_Core,CR_LLN,CR_Pack_Nodes,CR_ONE_TASK_PER_CORE,CR_CORE_DEFAULT_DIST_BLOCK");
  auto linear = ParseBody("SelectType=select/linear\n");
  ASSERT_TRUE(linear.ok());
  EXPECT_FALSE(linear->select.memory);
}

TEST(SelectType, Errors) {
  EXPECT_THAT(ErrorText(ParseBody("SelectType=select/cons\n")),
              HasSubstr("expected select/cons_tres, select/cons_res or select/linear"));
  EXPECT_THAT(ErrorText(ParseBody("SelectTypeParameters=CR_Cores_Memory\n")),
              HasSubstr(ErrorAt(3) + "unknown SelectTypeParameters item 'CR_Cores_Memory'; did "
                                     "you mean 'CR_Core_Memory'?"));
  EXPECT_THAT(ErrorText(ParseBody("SelectTypeParameters=CR_Core,CR_CPU\n")),
              HasSubstr("names more than one consumable resource type"));
}

TEST(Priority, MultifactorWeights) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody(
      "PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityWeightFairshare=100000\n"
      "PriorityWeightJobSize=10\nPriorityWeightPartition=20\nPriorityWeightQOS=30\n"
      "PriorityWeightAssoc=40\nPriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000\n"
      "PriorityMaxAge=14-0\nPriorityDecayHalfLife=7-12:00\nPriorityFavorSmall=YES\n",
      &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(warnings, IsEmpty()) << WarningText(warnings);
  const PriorityParams& p = c->priority;
  EXPECT_EQ(p.type, PriorityType::kMultifactor);
  EXPECT_EQ(p.weight_age, 1000);
  EXPECT_EQ(p.weight_fairshare, 100000);
  EXPECT_EQ(p.weight_job_size, 10);
  EXPECT_EQ(p.weight_partition, 20);
  EXPECT_EQ(p.weight_qos, 30);
  EXPECT_EQ(p.weight_assoc, 40);
  EXPECT_DOUBLE_EQ(p.weight_tres.WeightFor("cpu"), 1000);
  EXPECT_DOUBLE_EQ(p.weight_tres.WeightFor("mem"), 2000);
  EXPECT_DOUBLE_EQ(p.weight_tres.WeightFor("gres/gpu"), 3000);
  EXPECT_EQ(p.weight_tres_text, "CPU=1000,Mem=2000,GRES/gpu=3000");
  EXPECT_EQ(p.max_age_s, 14 * 86400);
  EXPECT_EQ(p.decay_half_life_s, 7 * 86400 + 12 * 3600);
  EXPECT_TRUE(p.favor_small);
  EXPECT_EQ(PriorityTypeName(p.type), "priority/multifactor");
}

TEST(Priority, FairShareKeys) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody(
      "PriorityType=priority/multifactor\nPriorityFlags=max_tres,NO_FAIR_TREE,ACCRUE_ALWAYS\n"
      "PriorityCalcPeriod=2\nPriorityUsageResetPeriod=monthly\n",
      &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(warnings, IsEmpty()) << WarningText(warnings);
  EXPECT_TRUE(c->priority.max_tres);
  EXPECT_TRUE(c->priority.no_fair_tree);
  EXPECT_EQ(c->priority.FlagsString(), "MAX_TRES,NO_FAIR_TREE,ACCRUE_ALWAYS");
  EXPECT_EQ(c->priority.calc_period_s, 120);
  EXPECT_EQ(c->priority.usage_reset, UsageReset::kMonthly);
  // Defaults: Fair Tree, five minutes, no reset.
  auto d = ParseBody("PriorityType=priority/multifactor\n", &warnings);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->priority.no_fair_tree);
  EXPECT_EQ(d->priority.calc_period_s, 300);
  EXPECT_EQ(d->priority.usage_reset, UsageReset::kNone);
  // Bad values name the key and what is expected.
  auto bad = ParseBody("PriorityFlags=FAIR_SHARE_PLEASE\n", &warnings);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(ErrorText(bad), HasSubstr("FAIR_SHARE_PLEASE is not one"));
  auto never = ParseBody("PriorityUsageResetPeriod=FORTNIGHTLY\n", &warnings);
  ASSERT_FALSE(never.ok());
  EXPECT_THAT(ErrorText(never), HasSubstr("NONE, NOW, DAILY"));
}

TEST(Priority, DefaultsAndBasicWarning) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("PriorityWeightAge=1000\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->priority.max_age_s, 7 * 86400);
  EXPECT_EQ(c->priority.decay_half_life_s, 7 * 86400);
  EXPECT_FALSE(c->priority.favor_small);
  EXPECT_THAT(WarningText(warnings),
              HasSubstr(WarningAt(3) + "PriorityWeightAge has no effect with "
                                       "PriorityType=priority/basic"));
  EXPECT_THAT(ErrorText(ParseBody("PriorityWeightAge=-1\n")),
              HasSubstr("expected a whole number from 0 to 4294967295"));
}

TEST(Preemption, TypeAndMode) {
  auto c = ParseBody("PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->preempt_type, PreemptType::kQos);
  EXPECT_EQ(c->preempt_mode.base, PreemptMode::Base::kSuspend);
  EXPECT_TRUE(c->preempt_mode.gang);
  EXPECT_EQ(PreemptTypeName(c->preempt_type), "preempt/qos");
  auto r = ParseBody("PreemptType=preempt/partition_prio\nPreemptMode=requeue\n");
  ASSERT_TRUE(r.ok()) << ErrorText(r);
  EXPECT_EQ(r->preempt_mode.ToString(), "REQUEUE");
  EXPECT_THAT(ErrorText(ParseBody("PreemptMode=KILL\n")),
              HasSubstr("invalid value 'KILL' for PreemptMode: expected OFF, CANCEL, REQUEUE or "
                        "SUSPEND"));
  EXPECT_THAT(ErrorText(ParseBody("PreemptMode=CANCEL,REQUEUE\n")), HasSubstr("PreemptMode"));
}

TEST(GlobalKeys, JobAcctGatherFrequency) {
  EXPECT_EQ(ParseBody("JobAcctGatherFrequency=10\n")->acct_gather_task_s, 10);
  EXPECT_EQ(ParseBody("JobAcctGatherFrequency=network=5,task=0\n")->acct_gather_task_s, 0);
  EXPECT_EQ(ParseBody("ClusterName=x\n")->acct_gather_task_s, 30);
  auto bad = ParseBody("JobAcctGatherFrequency=task=often\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(ErrorText(bad), HasSubstr("JobAcctGatherFrequency"));
  EXPECT_FALSE(ParseBody("JobAcctGatherFrequency=gpu=5\n").ok());
}

TEST(GlobalKeys, MpiDefaultIsOneOfTheWireUpTypes) {
  auto none = ParseBody("ClusterName=c\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->mpi_default, "none");
  auto pmix = ParseBody("MpiDefault=PMIx_v4\n");
  ASSERT_TRUE(pmix.ok()) << ErrorText(pmix);
  EXPECT_EQ(pmix->mpi_default, "pmix_v4");
  auto bad = ParseBody("MpiDefault=openmpi\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(
      ErrorText(bad),
      HasSubstr("invalid value 'openmpi' for MpiDefault: expected none, pmi2, pmix or pmix_v4"));
}

TEST(GlobalKeys, MpiParamsPortsIsARange) {
  auto c = ParseBody("MpiParams=ports=12000-12999\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->mpi_ports_low, 12000);
  EXPECT_EQ(c->mpi_ports_high, 12999);
  EXPECT_EQ(ParseBody("ClusterName=c\n")->mpi_ports_low, 0);
  EXPECT_THAT(ErrorText(ParseBody("MpiParams=ports=13000-12000\n")),
              HasSubstr("expected ports=LOW-HIGH, such as ports=12000-12999"));
  std::vector<Diagnostic> warnings;
  auto other = ParseBody("MpiParams=ports=1-2,other=1\n", &warnings);
  ASSERT_TRUE(other.ok());
  EXPECT_THAT(WarningText(warnings),
              HasSubstr("MpiParams option other=1 is accepted but not acted on"));
}

TEST(GlobalKeys, PrologAndEpilogPrograms) {
  auto c = ParseBody(
      "Prolog=/etc/slurm/prolog.d/*\nEpilog=/etc/slurm/epilog.sh\n"
      "PrologSlurmctld=/etc/slurm/pctld\nEpilogSlurmctld=/etc/slurm/ectld\n"
      "TaskProlog=/etc/slurm/tp\nTaskEpilog=/etc/slurm/te\nSrunProlog=/sp\nSrunEpilog=/se\n"
      "PrologFlags=contain,serial\nPrologEpilogTimeout=120\n"
      "SchedulerParameters=nohold_on_prolog_fail\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->prolog, "/etc/slurm/prolog.d/*");
  EXPECT_EQ(c->epilog, "/etc/slurm/epilog.sh");
  EXPECT_EQ(c->prolog_slurmctld, "/etc/slurm/pctld");
  EXPECT_EQ(c->epilog_slurmctld, "/etc/slurm/ectld");
  EXPECT_EQ(c->task_prolog, "/etc/slurm/tp");
  EXPECT_EQ(c->task_epilog, "/etc/slurm/te");
  EXPECT_EQ(c->srun_prolog, "/sp");
  EXPECT_EQ(c->srun_epilog, "/se");
  EXPECT_TRUE(c->prolog_flags.alloc);  // Contain implies Alloc
  EXPECT_TRUE(c->prolog_flags.serial);
  EXPECT_FALSE(c->prolog_flags.nohold);
  EXPECT_EQ(c->prolog_flags.ToString(), "Alloc,Contain,Serial");
  EXPECT_EQ(c->prolog_epilog_timeout_s, 120);
  EXPECT_TRUE(c->scheduler.nohold_on_prolog_fail);

  auto d = ParseBody("ClusterName=c\n");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->prolog_epilog_timeout_s, ClusterConfig::kNoPrologEpilogTimeout);
  EXPECT_TRUE(d->prolog.empty());
  EXPECT_EQ(d->prolog_flags.ToString(), "");

  EXPECT_THAT(ErrorText(ParseBody("Prolog=prolog.sh\n")),
              HasSubstr("invalid value 'prolog.sh' for Prolog: expected an absolute path"));
  EXPECT_THAT(ErrorText(ParseBody("PrologFlags=Alloc,Sometimes\n")),
              HasSubstr("Sometimes is not one"));
}

TEST(GlobalKeys, TopologyAccountingAndLimits) {
  auto c = ParseBody(
      "TopologyPlugin=topology/tree\nGresTypes=gpu,MPS\n"
      "AccountingStorageTRES=gres/gpu,GRES/gpu:a100,license/matlab\n"
      "MaxJobCount=50000\nMaxArraySize=10001\nDefMemPerCPU=4000\nMaxMemPerCPU=8000\n"
      "DefMemPerGPU=80000\nSlurmdTimeout=600\nKillWait=60\nMinJobAge=120\nReturnToService=1\n"
      "TreeWidth=16\nTaskPlugin=task/affinity,task/cgroup\nTaskPluginParam=Cores,Verbose\n"
      "JobAcctGatherFrequency=task=15,energy=0\n"
      "StateSaveLocation=/var/spool/slurm/ctld\nSlurmUser=slurm\nSchedulerType=sched/builtin\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->topology_plugin, "topology/tree");
  EXPECT_THAT(c->gres_types, ElementsAre("gpu", "mps"));
  EXPECT_THAT(c->accounting_storage_tres,
              ElementsAre("gres/gpu", "gres/gpu:a100", "license/matlab"));
  EXPECT_EQ(c->max_job_count, 50000);
  EXPECT_EQ(c->max_array_size, 10001);
  EXPECT_EQ(c->def_mem_per_cpu_mb, 4000);
  EXPECT_EQ(c->max_mem_per_cpu_mb, 8000);
  EXPECT_EQ(c->def_mem_per_gpu_mb, 80000);
  EXPECT_EQ(c->slurmd_timeout_s, 600);
  EXPECT_EQ(c->kill_wait_s, 60);
  EXPECT_EQ(c->tree_width, 16);
  EXPECT_THAT(c->task_plugins, ElementsAre("task/affinity", "task/cgroup"));
  EXPECT_EQ(c->task_plugin_param, "Cores,Verbose");
  EXPECT_EQ(c->acct_gather_task_s, 15);
  EXPECT_EQ(c->min_job_age_s, 120);
  EXPECT_EQ(c->return_to_service, 1);
  EXPECT_EQ(c->state_save_location, "/var/spool/slurm/ctld");
  EXPECT_EQ(c->slurm_user, "slurm");
  EXPECT_EQ(c->scheduler_type, SchedulerType::kBuiltin);
  EXPECT_EQ(SchedulerTypeName(c->scheduler_type), "sched/builtin");
}

TEST(GlobalKeys, CrossKeyChecks) {
  EXPECT_THAT(ErrorText(ParseBody("DefMemPerCPU=1000\nDefMemPerNode=64000\n")),
              HasSubstr(ErrorAt(4) + "DefMemPerCPU (/etc/slurm/slurm.conf:3) and DefMemPerNode "
                                     "(/etc/slurm/slurm.conf:4) are mutually exclusive"));
  std::vector<Diagnostic> warnings;
  EXPECT_TRUE(ParseBody("AccountingStorageTRES=gres/gpu\n", &warnings).ok());
  EXPECT_THAT(WarningText(warnings), HasSubstr("GresTypes does not list gpu"));
  EXPECT_THAT(ErrorText(ParseBody("AccountingStorageTRES=gpu\n")),
              HasSubstr("invalid value 'gpu' for AccountingStorageTRES: unknown TRES 'gpu'"));
  EXPECT_THAT(ErrorText(ParseBody("TopologyPlugin=topology/fat\n")),
              HasSubstr("for TopologyPlugin: expected topology/none, topology/tree"));
}

}  // namespace
}  // namespace loom::conf
