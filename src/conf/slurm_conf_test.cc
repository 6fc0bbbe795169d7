// slurm.conf as a whole: file syntax (case, comments, continuations, quotes), Include files,
// how keys are treated (acted on / warned about / rejected), error and warning texts, the
// built-in config and the reference cluster's config.
#include "conf/slurm_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "conf/test_util.h"

namespace loom::conf {
namespace {

using ::testing::ElementsAre;
using testing::ErrorAt;
using testing::ErrorText;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::ParseBody;
using testing::ParseText;
using testing::WarningAt;
using testing::WarningText;

std::vector<std::string> NodeNames(const ClusterConfig& c) {
  std::vector<std::string> out;
  for (const NodeConfig& n : c.nodes) out.push_back(n.name);
  return out;
}

// ------------------------------------------------------------------ file syntax

TEST(SlurmConfSyntax, MinimalFileGetsSlurmDefaults) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("NodeName=n1\nPartitionName=p Nodes=n1\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(warnings, IsEmpty()) << WarningText(warnings);
  EXPECT_EQ(c->cluster_name, "test");
  ASSERT_EQ(c->controllers.size(), 1u);
  EXPECT_EQ(c->controllers[0].name, "ctl");
  EXPECT_EQ(c->controllers[0].addr, "ctl");
  EXPECT_EQ(c->slurmctld_port, 6817);
  EXPECT_EQ(c->slurmd_port, 6818);
  EXPECT_EQ(c->scheduler_type, SchedulerType::kBackfill);
  EXPECT_EQ(c->select_type, SelectType::kLinear);
  EXPECT_EQ(c->priority.type, PriorityType::kBasic);
  EXPECT_EQ(c->preempt_type, PreemptType::kNone);
  EXPECT_EQ(c->preempt_mode.ToString(), "OFF");
  EXPECT_EQ(c->topology_plugin, "topology/none");
  EXPECT_EQ(c->max_job_count, 10000);
  EXPECT_EQ(c->max_array_size, 1001);
  EXPECT_EQ(c->min_job_age_s, 300);
  EXPECT_EQ(c->slurmd_timeout_s, 300);
  EXPECT_EQ(c->kill_wait_s, 30);
  ASSERT_EQ(c->nodes.size(), 1u);
  const NodeConfig& n = c->nodes[0];
  EXPECT_EQ(n.cpus, 1);
  EXPECT_EQ(n.real_memory_mb, 1);
  EXPECT_EQ(n.weight, 1u);
  EXPECT_EQ(n.port, 6818);
  EXPECT_EQ(n.hostname, "n1");
  EXPECT_EQ(n.addr, "n1");
  EXPECT_EQ(n.state, NodeState::kUnknown);
  EXPECT_EQ(n.defined_at.ToString(), "/etc/slurm/slurm.conf:3");
  EXPECT_THAT(c->source_files, ElementsAre("/etc/slurm/slurm.conf"));
}

TEST(SlurmConfSyntax, KeysAreCaseInsensitiveNamesAreNot) {
  auto c = ParseText(
      "clustername=Lower\nSLURMCTLDHOST=ctl\nnodename=Node1 cpus=4\n"
      "PARTITIONNAME=Batch NODES=Node1 default=yes\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->cluster_name, "lower");  // Slurm lower-cases the cluster name
  EXPECT_EQ(c->nodes[0].name, "Node1");
  EXPECT_EQ(c->nodes[0].cpus, 4);
  EXPECT_EQ(c->partitions[0].name, "Batch");
  EXPECT_TRUE(c->partitions[0].is_default);
}

TEST(SlurmConfSyntax, CommentsAreStrippedExceptInsideQuotes) {
  auto c = ParseBody(
      "# a whole-line comment\n"
      "   # an indented one\n"
      "NodeName=n1 Reason=\"rack #4 fan\" CPUs=2  # trailing comment\n"
      "NodeName=n2 Reason=bay\\#7\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->nodes[0].reason, "rack #4 fan");
  EXPECT_EQ(c->nodes[0].cpus, 2);
  EXPECT_EQ(c->nodes[1].reason, "bay#7");
}

TEST(SlurmConfSyntax, BackslashContinuesALine) {
  auto c = ParseBody(
      "NodeName=n[1-2] \\\n"
      "    CPUs=8 \\\n"
      "    RealMemory=1000\n"
      "PartitionName=p Nodes=n[1-2] \\  # a comment after the backslash is removed first\n"
      "   MaxTime=60\n"
      "Bogus=1\n");
  EXPECT_THAT(ErrorText(c), HasSubstr(ErrorAt(8) + "unknown key 'Bogus'"));
  c = ParseBody("NodeName=n[1-2] \\\n    CPUs=8 \\\n    RealMemory=1000\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->nodes[1].cpus, 8);
  EXPECT_EQ(c->nodes[1].real_memory_mb, 1000);
  EXPECT_EQ(c->nodes[1].defined_at.line, 3);  // a logical line is named by its first line
}

TEST(SlurmConfSyntax, WindowsLineEndingsAndSpacesAroundEquals) {
  auto c = ParseText("ClusterName = crlf\r\nSlurmctldHost=ctl\r\nNodeName=n1 CPUs = 4\r\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->cluster_name, "crlf");
  EXPECT_EQ(c->nodes[0].cpus, 4);
}

TEST(SlurmConfSyntax, QuotedValuesKeepSpaces) {
  auto c = ParseBody(
      "NodeName=n1\n"
      "PartitionName=p Nodes=n1 TRESBillingWeights=\"CPU=1.0,Mem=0.25G,GRES/gpu=2.0\"\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  const core::TresBillingWeights& w = c->partitions[0].billing_weights;
  EXPECT_DOUBLE_EQ(w.WeightFor("cpu"), 1.0);
  EXPECT_DOUBLE_EQ(w.WeightFor("mem"), 0.25 / 1024);  // per MB
  EXPECT_DOUBLE_EQ(w.WeightFor("gres/gpu"), 2.0);
  EXPECT_EQ(c->partitions[0].billing_weights_text, "CPU=1.0,Mem=0.25G,GRES/gpu=2.0");
}

TEST(SlurmConfSyntax, SyntaxErrorsNameTheLine) {
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 Reason=\"unterminated\n")),
              HasSubstr(ErrorAt(3) + "unterminated quoted value for Reason"));
  EXPECT_THAT(ErrorText(ParseBody("\nNodeName=n1 CPUs\n")),
              HasSubstr(ErrorAt(4) + "expected Key=Value but found 'CPUs'"));
  EXPECT_THAT(ErrorText(ParseBody("=5\n")), HasSubstr(ErrorAt(3) + "expected Key=Value"));
}

TEST(SlurmConfSyntax, SeveralKeysOnOneGlobalLine) {
  auto c = ParseText("ClusterName=a SlurmctldHost=ctl SlurmdPort=7000\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->slurmd_port, 7000);
  EXPECT_THAT(ErrorText(ParseBody("SlurmdPort=7000 NodeName=n1\n")),
              HasSubstr(ErrorAt(3) + "NodeName must start its line"));
}

TEST(SlurmConfSyntax, AllErrorsAreReportedTogether) {
  auto c = ParseBody("Bogus=1\nNodeName=n1 CPUs=x\nPartitionName=p Nodes=n9\n");
  std::string e = ErrorText(c);
  EXPECT_THAT(e, HasSubstr(ErrorAt(3)));
  EXPECT_THAT(e, HasSubstr(ErrorAt(4)));
  EXPECT_THAT(e, HasSubstr(ErrorAt(5)));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------ keys

TEST(SlurmConfKeys, UnknownKeyIsAnErrorWithASuggestion) {
  auto c = ParseBody("\nSchedulerParamters=bf_continue\n");
  EXPECT_THAT(ErrorText(c), HasSubstr(ErrorAt(4) + "unknown key 'SchedulerParamters'; did you "
                                                   "mean 'SchedulerParameters'?"));
  EXPECT_THAT(ErrorText(ParseBody("SlurmctlPort=6817\n")),
              HasSubstr("did you mean 'SlurmctldPort'?"));
  EXPECT_THAT(ErrorText(ParseBody("Frobnicate=1\n")),
              HasSubstr(ErrorAt(3) + "unknown key 'Frobnicate' (not a slurm.conf key)"));
}

TEST(SlurmConfKeys, MisplacedKeysSayWhereTheyBelong) {
  EXPECT_THAT(ErrorText(ParseBody("MaxNodes=32\n")),
              HasSubstr("MaxNodes is an option of PartitionName lines"));
  EXPECT_THAT(ErrorText(ParseBody("CoresPerSocket=32\n")),
              HasSubstr("CoresPerSocket is an option of NodeName lines"));
  EXPECT_THAT(ErrorText(ParseBody("ConstrainDevices=yes\n")),
              HasSubstr("ConstrainDevices belongs in cgroup.conf, not slurm.conf"));
  EXPECT_THAT(ErrorText(ParseBody("CacheGroups=1\n")),
              HasSubstr("was removed from Slurm before 22.05"));
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 MaxTime=10\n")),
              HasSubstr("unknown NodeName option 'MaxTime': MaxTime is an option of "
                        "PartitionName lines"));
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1 Name=gpu File=/dev/nvidia0\n")),
              HasSubstr("Name belongs in gres.conf"));
  EXPECT_THAT(ErrorText(ParseBody("NodeName=n1\nPartitionName=p Nodes=n1 Nodez=n1\n")),
              HasSubstr(ErrorAt(4) + "unknown PartitionName option 'Nodez'; did you mean "
                                     "'Nodes'?"));
}

TEST(SlurmConfKeys, KnownButUnusedKeyIsAWarningAndKept) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("ProctrackType=proctrack/cgroup\nauthtype=auth/munge\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(WarningText(warnings),
              HasSubstr(WarningAt(3) + "ProctrackType is accepted but not acted on by Loom yet"));
  EXPECT_EQ(c->other_keys.at("ProctrackType"), "proctrack/cgroup");
  // AuthType is acted on (MUNGE is how Loom authenticates): kept, without a warning.
  EXPECT_EQ(c->other_keys.at("AuthType"), "auth/munge");  // canonical spelling
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].key, "ProctrackType");
  EXPECT_EQ(warnings[0].location.line, 3);
  EXPECT_EQ(warnings[0].severity, Diagnostic::Severity::kWarning);
}

TEST(SlurmConfKeys, EveryCommonSiteKeyIsAccepted) {
  // Keys that real sites' files carry (from the slurm.conf man page), all accepted.
  constexpr std::string_view kKeys[] = {
      "AccountingStorageEnforce=associations,limits,qos",
      "AccountingStorageHost=db",
      "AccountingStoragePort=6819",
      "AccountingStorageType=accounting_storage/slurmdbd",
      "AccountingStoreFlags=job_comment",
      "AcctGatherNodeFreq=30",
      "AuthAltTypes=auth/jwt",
      "AuthInfo=socket=/run/munge.sock",
      "BatchStartTimeout=10",
      "CompleteWait=0",
      "CredType=cred/munge",
      "DebugFlags=Backfill,Gres",
      "EnforcePartLimits=ALL",
      "Epilog=/etc/slurm/epilog",
      "FirstJobId=1000",
      "HealthCheckInterval=300",
      "HealthCheckProgram=/usr/sbin/nhc",
      "InactiveLimit=0",
      "JobAcctGatherFrequency=30",
      "JobAcctGatherType=jobacct_gather/cgroup",
      "JobCompType=jobcomp/none",
      "JobRequeue=1",
      "JobSubmitPlugins=lua",
      "LaunchParameters=use_interactive_step",
      "Licenses=matlab:10",
      "MailProg=/usr/bin/mail",
      "MessageTimeout=60",
      "MpiDefault=pmix",
      "MpiParams=ports=12000-12999",
      "OverTimeLimit=1",
      "PlugStackConfig=/etc/slurm/plugstack.conf",
      "PrologFlags=Alloc,Contain,X11",
      "PriorityFlags=FAIR_TREE",
      "PriorityUsageResetPeriod=NONE",
      "PrivateData=jobs,usage",
      "ProctrackType=proctrack/cgroup",
      "Prolog=/etc/slurm/prolog",
      "PropagateResourceLimitsExcept=MEMLOCK",
      "RebootProgram=/sbin/reboot",
      "ResumeTimeout=600",
      "SlurmctldDebug=info",
      "SlurmctldLogFile=/var/log/ctld.log",
      "SlurmctldParameters=enable_configless",
      "SlurmctldPidFile=/run/slurmctld.pid",
      "SlurmctldTimeout=120",
      "SlurmdDebug=info",
      "SlurmdLogFile=/var/log/slurmd.log",
      "SlurmdParameters=config_overrides",
      "SlurmdPidFile=/run/slurmd.pid",
      "SlurmdSpoolDir=/var/spool/slurmd",
      "SlurmdUser=root",
      "SrunPortRange=60001-63000",
      "SuspendTime=NONE",
      "SwitchType=switch/none",
      "TaskPlugin=task/affinity,task/cgroup",
      "TaskPluginParam=Cores",
      "TCPTimeout=2",
      "TmpFS=/tmp",
      "TrackWCKey=no",
      "TreeWidth=50",
      "UnkillableStepTimeout=120",
      "UsePAM=1",
      "VSizeFactor=0",
      "WaitTime=0",
      "X11Parameters=home_xauthority",
      "JobContainerType=job_container/tmpfs",
      "GpuFreqDef=high",
      "CliFilterPlugins=lua",
      "PreemptExemptTime=00:10:00",
      "SchedulerTimeSlice=30",
      "KeepAliveTime=60",
      "MaxStepCount=40000",
  };
  for (std::string_view kv : kKeys) {
    std::vector<Diagnostic> warnings;
    auto c = ParseBody(core::StrCat(kv, "\n"), &warnings);
    ASSERT_TRUE(c.ok()) << kv << ": " << ErrorText(c);
    // Loom acts on these itself (MUNGE credentials, munged's socket, trusting slurm.conf).
    // And these: the fan-out of step launches, task binding, usage sampling.
    if (kv.starts_with("AuthType=") || kv.starts_with("AuthInfo=") ||
        kv == "SlurmdParameters=config_overrides" || kv.starts_with("TreeWidth=") ||
        kv.starts_with("TaskPlugin=") || kv.starts_with("TaskPluginParam=") ||
        kv.starts_with("JobAcctGatherFrequency=") || kv.starts_with("DebugFlags=") ||
        kv.starts_with("SlurmctldDebug=") || kv.starts_with("SlurmctldLogFile=") ||
        kv.starts_with("SlurmdDebug=") || kv.starts_with("SlurmdLogFile=") ||
        kv.starts_with("SlurmctldPidFile=") || kv.starts_with("SlurmdPidFile=") ||
        // And the accounting's (docs/admin/accounting.md).
        kv.starts_with("AccountingStorageEnforce=") || kv.starts_with("AccountingStorageHost=") ||
        kv.starts_with("AccountingStoragePort=") || kv.starts_with("AccountingStorageType=") ||
        kv.starts_with("PrivateData=") ||
        // And fair share's.
        kv.starts_with("PriorityFlags=") || kv.starts_with("PriorityUsageResetPeriod=") ||
        // And submit-time policy (docs/admin/job-submit.md).
        kv == "JobSubmitPlugins=lua" || kv == "CliFilterPlugins=lua" ||
        // And MPI wire-up's default (docs/user/mpi.md), the prolog and epilog
        // (docs/admin/prolog-epilog.md).
        kv.starts_with("MpiDefault=") || kv.starts_with("MpiParams=") ||
        kv.starts_with("Prolog=") || kv.starts_with("Epilog=")) {
      continue;
    }
    EXPECT_THAT(WarningText(warnings), HasSubstr("not acted on by Loom yet")) << kv;
  }
}

TEST(SlurmConfKeys, AccountingKeysAreTypedAndChecked) {
  auto c = ParseBody(
      "AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=db1\n"
      "AccountingStoragePort=16819\nAccountingStorageEnforce=limits,QOS\nPrivateData=jobs,Usage\n",
      nullptr);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_TRUE(c->AccountingEnabled());
  EXPECT_EQ(c->accounting_storage_host, "db1");
  EXPECT_EQ(c->accounting_storage_port, 16819);
  EXPECT_TRUE(c->Enforces("associations"));  // limits holds it, as in Slurm
  EXPECT_TRUE(c->Enforces("qos"));
  EXPECT_FALSE(c->Enforces("wckeys"));
  EXPECT_TRUE(c->Private("usage"));
  EXPECT_FALSE(c->Private("users"));
  EXPECT_THAT(ErrorText(ParseBody("AccountingStorageEnforce=assocs\n")),
              HasSubstr("invalid value 'assocs' for AccountingStorageEnforce"));
  EXPECT_THAT(ErrorText(ParseBody("AccountingStorageType=accounting_storage/mysql\n")),
              HasSubstr("AccountingStorageType"));
}

TEST(SlurmConfKeys, LoggingKeysSetLevelsFilesAndFlags) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody(
      "SlurmctldDebug=debug2\nSlurmdDebug=3\nSlurmctldSyslogDebug=error\n"
      "SlurmctldLogFile=/var/log/slurmctld.log\nSlurmdLogFile=/var/log/slurmd.%n.log\n"
      "DebugFlags=backfill,Scheduling\n",
      &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(WarningText(warnings), "");
  EXPECT_EQ(c->slurmctld_debug, core::LogLevel::kDebug2);
  EXPECT_EQ(c->slurmd_debug, core::LogLevel::kInfo);
  EXPECT_EQ(c->slurmctld_syslog_debug, core::LogLevel::kError);
  EXPECT_EQ(c->slurmd_syslog_debug, std::nullopt);
  EXPECT_EQ(c->slurmctld_log_file, "/var/log/slurmctld.log");
  EXPECT_EQ(c->slurmd_log_file, "/var/log/slurmd.%n.log");
  EXPECT_EQ(core::DebugFlagsString(c->debug_flags), "Backfill,Scheduling");

  auto bad = ParseBody("SlurmctldDebug=loud\n", &warnings);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(ErrorText(bad), HasSubstr("debug2"));
  bad = ParseBody("DebugFlags=Backfill,Shoes\n", &warnings);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(ErrorText(bad), HasSubstr("Invalid DebugFlag: Shoes"));
}

TEST(SlurmConfKeys, PidFilesAreKeptAsWritten) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("SlurmctldPidFile=/run/loomctld.pid\nSlurmdPidFile=/run/loomd.%n.pid\n",
                     &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(WarningText(warnings), "");
  EXPECT_EQ(c->slurmctld_pid_file, "/run/loomctld.pid");
  EXPECT_EQ(c->slurmd_pid_file, "/run/loomd.%n.pid");
  c = ParseBody("ClusterName=x\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->slurmctld_pid_file, "");  // none written unless the file names one
}

TEST(SlurmConfKeys, SlurmctldParametersSetThePortsDefenses) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody(
      "SlurmctldParameters=enable_configless,max_unauthenticated_connections=2048,"
      "unauthenticated_deadline=3\n",
      &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->max_unauthenticated_connections, 2048);
  EXPECT_EQ(c->unauthenticated_deadline_s, 3);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0].message, HasSubstr("enable_configless is accepted but not acted on"));
  auto bad = ParseBody("SlurmctldParameters=unauthenticated_deadline=0\n", &warnings);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(ErrorText(bad), HasSubstr("unauthenticated_deadline= takes a whole number from 1"));
  EXPECT_EQ(ParseBody("\n", &warnings)->max_unauthenticated_connections, 4096);
}

TEST(SlurmConfKeys, SlurmdParametersConfigOverridesIsActedOn) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("SlurmdParameters=config_overrides,l3cache_as_socket\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_TRUE(c->ConfigOverrides());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0].message, HasSubstr("l3cache_as_socket is accepted but not acted on"));
}

TEST(SlurmConfKeys, AuthTypeOtherThanMungeIsAnError) {
  EXPECT_THAT(ErrorText(ParseBody("AuthType=auth/jwt\n")),
              HasSubstr("expected auth/munge (Loom authenticates with MUNGE)"));
}

TEST(SlurmConfKeys, MalformedValueErrorNamesKeyValueAndExpectation) {
  EXPECT_THAT(ErrorText(ParseBody("\n\nMaxJobCount=lots\n")),
              HasSubstr(ErrorAt(5) + "invalid value 'lots' for MaxJobCount: expected a whole "
                                     "number from 1 to 2147483647"));
  EXPECT_THAT(ErrorText(ParseBody("SchedulerType=sched/fifo\n")),
              HasSubstr(ErrorAt(3) + "invalid value 'sched/fifo' for SchedulerType: expected "
                                     "sched/backfill or sched/builtin"));
  EXPECT_THAT(ErrorText(ParseBody("PriorityFavorSmall=maybe\n")),
              HasSubstr("invalid value 'maybe' for PriorityFavorSmall: expected YES or NO"));
  EXPECT_THAT(ErrorText(ParseBody("PriorityMaxAge=soon\n")),
              HasSubstr("invalid value 'soon' for PriorityMaxAge: expected a time limit"));
  EXPECT_THAT(ErrorText(ParseBody("ReturnToService=3\n")),
              HasSubstr("expected a whole number from 0 to 2"));
}

TEST(SlurmConfKeys, RepeatedKeyWarnsAndLastWins) {
  std::vector<Diagnostic> warnings;
  auto c = ParseBody("MaxJobCount=5000\nMaxJobCount=6000\n", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_EQ(c->max_job_count, 6000);
  EXPECT_THAT(WarningText(warnings),
              HasSubstr(WarningAt(4) + "MaxJobCount is set more than once (also at "
                                       "/etc/slurm/slurm.conf:3); the last value wins"));
}

TEST(SlurmConfKeys, ClusterNameIsRequired) {
  EXPECT_THAT(ErrorText(ParseText("SlurmctldHost=ctl\n")),
              HasSubstr("/etc/slurm/slurm.conf: error: ClusterName is not set"));
  std::vector<Diagnostic> warnings;
  EXPECT_TRUE(ParseText("ClusterName=x\n", &warnings).ok());
  EXPECT_THAT(WarningText(warnings), HasSubstr("no SlurmctldHost is set"));
}

TEST(SlurmConfKeys, ControllersPrimaryThenBackups) {
  auto c = ParseText(
      "ClusterName=x\nSlurmctldHost=ctl1(10.0.0.1)\nSlurmctldHost=ctl2\n"
      "SlurmctldPort=6817-6818\n");
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(c->controllers,
              ElementsAre(ControllerHost{"ctl1", "10.0.0.1"}, ControllerHost{"ctl2", "ctl2"}));
  EXPECT_EQ(c->slurmctld_port, 6817);
  EXPECT_EQ(c->slurmctld_port_count, 2);
  EXPECT_THAT(ErrorText(ParseText("ClusterName=x\nSlurmctldHost=ctl1(10.0.0.1\n")),
              HasSubstr("expected host or host(address)"));
}

TEST(SlurmConfKeys, LegacyControllerKeysStillWork) {
  std::vector<Diagnostic> warnings;
  auto c = ParseText(
      "ClusterName=x\nControlMachine=head\nControlAddr=10.0.0.1\n"
      "BackupController=head2\n",
      &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(c->controllers,
              ElementsAre(ControllerHost{"head", "10.0.0.1"}, ControllerHost{"head2", "head2"}));
  EXPECT_THAT(WarningText(warnings), HasSubstr("deprecated; use SlurmctldHost"));
  EXPECT_THAT(ErrorText(ParseText("ClusterName=x\nSlurmctldHost=a\nControlMachine=b\n")),
              HasSubstr("cannot be combined with SlurmctldHost"));
}

// ------------------------------------------------------------------ includes

TEST(SlurmConfInclude, RelativeToIncludingFileWithMainDirFallback) {
  InMemoryIncludeResolver files({
      {"/etc/slurm/nodes.conf", "NodeName=n[1-2] CPUs=4\nInclude sub/more.conf\n"},
      {"/etc/slurm/sub/more.conf", "NodeName=n3\nInclude parts.conf\n"},
      // Not next to sub/more.conf: found in the main file's directory, as Slurm looks there.
      {"/etc/slurm/parts.conf", "PartitionName=p Nodes=ALL\n"},
  });
  std::vector<Diagnostic> warnings;
  auto c = ParseText("ClusterName=x\nSlurmctldHost=c\nInclude nodes.conf\n", &warnings, &files);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(NodeNames(*c), ElementsAre("n1", "n2", "n3"));
  EXPECT_EQ(c->nodes[2].defined_at.ToString(), "/etc/slurm/sub/more.conf:1");
  EXPECT_THAT(c->partitions[0].nodes, ElementsAre("n1", "n2", "n3"));
  EXPECT_THAT(c->source_files, ElementsAre("/etc/slurm/slurm.conf", "/etc/slurm/nodes.conf",
                                           "/etc/slurm/sub/more.conf", "/etc/slurm/parts.conf"));
}

TEST(SlurmConfInclude, GlobPatternsIncludeInNameOrder) {
  InMemoryIncludeResolver files({
      {"/etc/slurm/conf.d/20-b.conf", "PartitionName=b Nodes=n1\n"},
      {"/etc/slurm/conf.d/10-a.conf", "NodeName=n1\nPartitionName=a Nodes=n1\n"},
      {"/etc/slurm/conf.d/readme.txt", "not a config\n"},
  });
  std::vector<Diagnostic> warnings;
  auto c = ParseText(
      "ClusterName=x\nSlurmctldHost=c\ninclude conf.d/*.conf\n"
      "Include \"empty.d/*.conf\"\n",
      &warnings, &files);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  ASSERT_EQ(c->partitions.size(), 2u);
  EXPECT_EQ(c->partitions[0].name, "a");
  EXPECT_EQ(c->partitions[1].name, "b");
  EXPECT_THAT(WarningText(warnings),
              HasSubstr(WarningAt(4) + "Include pattern 'empty.d/*.conf' matches no files"));
}

TEST(SlurmConfInclude, MissingFileIsAnErrorAtTheIncludeLine) {
  InMemoryIncludeResolver files;
  auto c = ParseText("ClusterName=x\nSlurmctldHost=c\n\nInclude nodes.conf\n", nullptr, &files);
  EXPECT_THAT(ErrorText(c), HasSubstr(ErrorAt(4) + "Include file 'nodes.conf' not found "
                                                   "(looked for /etc/slurm/nodes.conf)"));
  EXPECT_THAT(ErrorText(ParseBody("Include\n")), HasSubstr("Include needs a file name"));
}

TEST(SlurmConfInclude, CyclesAreDetected) {
  InMemoryIncludeResolver files({
      {"/etc/slurm/a.conf", "Include b.conf\n"},
      {"/etc/slurm/b.conf", "NodeName=n1\nInclude a.conf\n"},
  });
  auto c = ParseText("ClusterName=x\nSlurmctldHost=c\nInclude a.conf\n", nullptr, &files);
  EXPECT_THAT(ErrorText(c),
              HasSubstr("/etc/slurm/b.conf:2: error: include cycle: /etc/slurm/slurm.conf -> "
                        "/etc/slurm/a.conf -> /etc/slurm/b.conf -> /etc/slurm/a.conf"));
  InMemoryIncludeResolver self;
  self.Add("/etc/slurm/slurm.conf", "Include slurm.conf\n");
  EXPECT_THAT(ErrorText(ParseText("ClusterName=x\nInclude slurm.conf\n", nullptr, &self)),
              HasSubstr(ErrorAt(2) + "include cycle"));
}

TEST(SlurmConfInclude, ClusterNameModifier) {
  InMemoryIncludeResolver files;
  files.Add("/etc/slurm/nodes.prod.conf", "NodeName=p1\n");
  auto c = ParseText("ClusterName=prod\nSlurmctldHost=c\nInclude nodes.%c.conf\n", nullptr, &files);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(NodeNames(*c), ElementsAre("p1"));
  EXPECT_THAT(ErrorText(ParseText("Include nodes.%c.conf\nClusterName=prod\n", nullptr, &files)),
              HasSubstr("uses %c but no ClusterName is set before this line"));
}

TEST(SlurmConfInclude, LoadsFromTheFilesystem) {
  std::vector<Diagnostic> warnings;
  auto c = LoadSlurmConf("tests/data/conf/include/slurm.conf", &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(warnings, IsEmpty()) << WarningText(warnings);
  EXPECT_THAT(NodeNames(*c), ElementsAre("gpu1", "gpu2", "cpu1", "cpu2", "cpu3", "cpu4"));
  EXPECT_EQ(c->nodes[0].cpus, 32);
  EXPECT_EQ(c->nodes[0].GpuCount(), 4);
  ASSERT_EQ(c->partitions.size(), 2u);
  EXPECT_EQ(c->partitions[0].name, "cpu");
  EXPECT_EQ(c->partitions[1].max_time_s, 2 * 86400);
  ASSERT_EQ(c->source_files.size(), 4u);
  EXPECT_THAT(c->source_files[3], HasSubstr("partitions.d/20-gpu.conf"));
}

TEST(SlurmConfInclude, FilesystemCycleAndMissingFile) {
  auto c = LoadSlurmConf("tests/data/conf/cycle/slurm.conf", nullptr);
  EXPECT_THAT(ErrorText(c), HasSubstr("include cycle"));
  EXPECT_THAT(ErrorText(c), HasSubstr("loop.conf:1: error:"));
  auto missing = LoadSlurmConf("tests/data/conf/does-not-exist.conf", nullptr);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ErrorText(missing), HasSubstr("cannot read slurm.conf"));
}

// ------------------------------------------------------------------ shipped configs

TEST(SlurmConfFixtures, BuiltInConfigParsesWithoutWarnings) {
  std::vector<Diagnostic> warnings;
  auto c =
      ParseSlurmConf(DefaultSlurmConf(), kDefaultSlurmConfName, NoIncludeResolver(), &warnings);
  ASSERT_TRUE(c.ok()) << ErrorText(c);
  EXPECT_THAT(warnings, IsEmpty()) << WarningText(warnings);
  EXPECT_THAT(NodeNames(*c), ElementsAre("gpu-01", "gpu-02", "cpu-01", "cpu-02"));
  int64_t gpus = 0;
  for (const NodeConfig& n : c->nodes) gpus += n.GpuCount();
  EXPECT_EQ(gpus, 16);
  EXPECT_EQ(c->nodes[0].GresCount("gpu", "a100"), 8);
  EXPECT_EQ(c->DefaultPartition()->name, "cpu");
  EXPECT_EQ(c->FindPartition("gpu")->nodes.size(), 2u);
}

// The slurm.conf that the reference real-Slurm harness (bench/slurm-ref/setup.sh) writes with
// its defaults, and with SLURM_REF_ACCT=1.
TEST(SlurmConfFixtures, ReferenceClusterConfigLoads) {
  for (const char* path :
       {"tests/data/conf/slurm-ref.conf", "tests/data/conf/slurm-ref-acct.conf"}) {
    std::vector<Diagnostic> warnings;
    auto c = LoadSlurmConf(path, &warnings);
    ASSERT_TRUE(c.ok()) << path << ": " << ErrorText(c);
    for (const Diagnostic& w : warnings) {
      EXPECT_THAT(w.message, HasSubstr("not acted on by Loom yet")) << w.ToString();
    }
    EXPECT_EQ(c->cluster_name, "slurmref");
    EXPECT_THAT(c->controllers, ElementsAre(ControllerHost{"localhost", "127.0.0.1"}));
    EXPECT_EQ(c->slurmctld_port, 16817);
    EXPECT_EQ(c->slurmd_port, 17000);
    ASSERT_EQ(c->nodes.size(), 16u);
    for (size_t i = 0; i < 16; ++i) {
      const NodeConfig& n = c->nodes[i];
      EXPECT_EQ(n.name, core::StrCat("n0", i < 9 ? "0" : "", i + 1));
      EXPECT_EQ(n.port, static_cast<int>(17001 + i));
      EXPECT_EQ(n.hostname, "localhost");
      EXPECT_EQ(n.addr, "127.0.0.1");
      EXPECT_EQ(n.cpus, 64);
      EXPECT_EQ(n.sockets, 2);
      EXPECT_EQ(n.cores_per_socket, 32);
      EXPECT_EQ(n.real_memory_mb, 512000);
      EXPECT_EQ(n.GpuCount(), 8);
    }
    EXPECT_EQ(c->select_type, SelectType::kConsTres);
    EXPECT_EQ(c->select.ToString(), "CR_Core_Memory");
    EXPECT_EQ(c->def_mem_per_cpu_mb, 1000);
    EXPECT_EQ(c->max_job_count, 100000);
    EXPECT_EQ(c->min_job_age_s, 60);
    EXPECT_EQ(c->return_to_service, 2);
    EXPECT_EQ(c->other_keys.at("SlurmdParameters"), "config_overrides");
    ASSERT_EQ(c->partitions.size(), 1u);
    EXPECT_EQ(c->partitions[0].nodes.size(), 16u);
    EXPECT_EQ(c->partitions[0].max_time_s, core::kUnlimitedSeconds);
    EXPECT_TRUE(c->partitions[0].is_default);
  }
  auto acct = LoadSlurmConf("tests/data/conf/slurm-ref-acct.conf", nullptr);
  ASSERT_TRUE(acct.ok());
  EXPECT_THAT(acct->accounting_storage_tres, ElementsAre("gres/gpu"));
}

}  // namespace
}  // namespace loom::conf
