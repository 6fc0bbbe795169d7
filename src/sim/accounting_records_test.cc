#include "sim/accounting_records.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "core/time_format.h"
#include "sim/workload.h"

namespace loom::sim {
namespace {

class AccountingRecords : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("TZ", "UTC", 1); }
};

TEST_F(AccountingRecords, ReadsWhatSacctParsablePrints) {
  // As `sacct -a -p -o ...` prints it on a Slurm cluster: a trailing '|', steps, an array
  // task, a folded pending array, a cancelled job, columns the records do not keep.
  const char* text =
      "JobID|JobIDRaw|JobName|User|Account|Partition|QOS|Submit|Start|End|Elapsed|State|"
      "ExitCode|NNodes|NCPUS|AllocTRES|NodeList|Timelimit|\n"
      "41|41|train|alice|physics|gpu|normal|2026-09-01T10:00:00|2026-09-01T10:05:00|"
      "2026-09-01T12:05:00|02:00:00|COMPLETED|0:0|2|16|cpu=16,node=2|gpu-[01-02]|04:00:00|\n"
      "41.batch|41.batch|batch||physics||||2026-09-01T10:05:00|2026-09-01T12:05:00|02:00:00|"
      "COMPLETED|0:0|1|8|cpu=8,node=1|gpu-01||\n"
      "42_3|45|arr|bob|chem|cpu|normal|2026-09-01T11:00:00|Unknown|Unknown|00:00:00|"
      "CANCELLED by 0|0:15|1|1||None assigned|UNLIMITED|\n"
      "42_[4-9%2]|42|arr|bob|chem|cpu|normal|2026-09-01T11:00:00|Unknown|Unknown|00:00:00|"
      "PENDING|0:0|1|1||None assigned|UNLIMITED|\n";
  auto f = ParseAccountingFile(text, "dump.txt", "site");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->records.size(), 2u);
  EXPECT_EQ(f->skipped_steps, 1);
  EXPECT_EQ(f->skipped_pending_arrays, 1);
  EXPECT_EQ(f->ignored_columns, std::vector<std::string>{"Elapsed"});
  const AccountingRecord& a = f->records[0];
  EXPECT_EQ(a.cluster, "site");
  EXPECT_EQ(a.job_id, 41u);
  EXPECT_EQ(a.array_job_id, 0u);
  EXPECT_EQ(a.user, "alice");
  EXPECT_FALSE(a.uid.has_value());
  EXPECT_EQ(a.submit, 1788256800);  // 2026-09-01T10:00:00Z
  EXPECT_EQ(a.eligible, a.submit);  // started, so it was eligible by its submission
  EXPECT_EQ(a.start, 1788256800 + 300);
  EXPECT_EQ(a.end, 1788256800 + 300 + 7200);
  EXPECT_EQ(a.state, "COMPLETED");
  EXPECT_EQ(a.nodes, 2);
  EXPECT_EQ(a.cpus, 16);
  EXPECT_EQ(a.node_list, "gpu-[01-02]");
  EXPECT_EQ(a.time_limit_s, 4 * 3600);
  const AccountingRecord& b = f->records[1];
  EXPECT_EQ(b.job_id, 45u);
  EXPECT_EQ(b.array_job_id, 42u);
  EXPECT_EQ(b.array_task_id, 3);
  EXPECT_EQ(b.state, "CANCELLED");
  ASSERT_TRUE(b.cancelled_by.has_value());
  EXPECT_EQ(*b.cancelled_by, 0u);
  EXPECT_EQ(b.exit_signal, 15);
  EXPECT_EQ(b.start, 0);
  EXPECT_EQ(b.node_list, "");
  EXPECT_EQ(b.time_limit_s, core::kUnlimitedSeconds);
}

TEST_F(AccountingRecords, WritesWhatItReads) {
  AccountingFile file;
  file.cluster_tres["easy"] = "cpu=100,node=1,billing=100";
  AccountingRecord r;
  r.cluster = "easy";
  r.job_id = 7;
  r.array_job_id = 5;
  r.array_task_id = 2;
  r.name = "a|b";  // a delimiter inside a value cannot split the line
  r.user = "u3";
  r.uid = 3;
  r.account = "g2";
  r.partition = "all";
  r.qos = "normal";
  r.submit = 1788220800;
  r.eligible = 1788220800;
  r.start = 1788220900;
  r.end = 1788224500;
  r.time_limit_s = 7200;
  r.state = "FAILED";
  r.exit_code = 2;
  r.derived_exit_code = 2;
  r.nodes = 1;
  r.cpus = 8;
  r.req_tres = "cpu=8,node=1,billing=8";
  r.alloc_tres = r.req_tres;
  r.node_list = "pool";
  file.records.push_back(r);
  std::ostringstream out;
  WriteAccountingFile(out, file);
  const std::string text = out.str();
  EXPECT_NE(text.find("# Cluster=easy TRES=cpu=100,node=1,billing=100\n"), std::string::npos);
  EXPECT_NE(text.find("|5_2|7|a b|u3|3|"), std::string::npos) << text;
  EXPECT_NE(text.find("|2026-09-01T00:00:00|2026-09-01T00:00:00|2026-09-01T00:01:40|"),
            std::string::npos)
      << text;
  auto back = ParseAccountingFile(text, "out.txt", "");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->records.size(), 1u);
  EXPECT_EQ(back->cluster_tres, file.cluster_tres);
  const AccountingRecord& b = back->records[0];
  EXPECT_EQ(b.cluster, "easy");
  EXPECT_EQ(b.job_id, 7u);
  EXPECT_EQ(b.array_job_id, 5u);
  EXPECT_EQ(b.array_task_id, 2);
  EXPECT_EQ(b.name, "a b");
  EXPECT_EQ(b.uid, std::optional<uint32_t>(3));
  EXPECT_EQ(b.submit, r.submit);
  EXPECT_EQ(b.start, r.start);
  EXPECT_EQ(b.end, r.end);
  EXPECT_EQ(b.time_limit_s, 7200);
  EXPECT_EQ(b.state, "FAILED");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_EQ(b.derived_exit_code, 2);
  EXPECT_EQ(b.alloc_tres, r.alloc_tres);
  EXPECT_EQ(b.node_list, "pool");
}

TEST_F(AccountingRecords, BadInputNamesTheLineAndTheColumn) {
  auto no_state = ParseAccountingFile("JobID|Submit\n1|5\n", "f", "c");
  ASSERT_FALSE(no_state.ok());
  EXPECT_NE(no_state.status().message().find("f:1: the header line has no State column"),
            std::string::npos)
      << no_state.status();
  auto bad_time = ParseAccountingFile(
      "JobID|User|Submit|State\n1|a|100|COMPLETED\n2|a|yesterday|COMPLETED\n", "f", "c");
  ASSERT_FALSE(bad_time.ok());
  EXPECT_NE(bad_time.status().message().find("f:3: Submit 'yesterday': "), std::string::npos)
      << bad_time.status();
  auto bad_state = ParseAccountingFile("JobID|User|Submit|State\n1|a|100|DONE\n", "f", "c");
  ASSERT_FALSE(bad_state.ok());
  EXPECT_NE(bad_state.status().message().find("f:2: State 'DONE': not a job state"),
            std::string::npos)
      << bad_state.status();
  auto short_line = ParseAccountingFile("JobID|User|Submit|State\n1|a|100\n", "f", "c");
  ASSERT_FALSE(short_line.ok());
  EXPECT_NE(short_line.status().message().find("f:2: 3 fields where the header has 4"),
            std::string::npos)
      << short_line.status();
  auto array_without_raw =
      ParseAccountingFile("JobID|User|Submit|State\n4_1|a|100|COMPLETED\n", "f", "c");
  ASSERT_FALSE(array_without_raw.ok());
  EXPECT_NE(array_without_raw.status().message().find("needs its JobIDRaw"), std::string::npos);
  auto empty = ParseAccountingFile("# only a comment\n", "f", "c");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("f: no header line"), std::string::npos);
}

TEST_F(AccountingRecords, RecordsOfASimulatedRun) {
  SwfTrace trace;
  trace.machine_procs = 64;
  const sched::Cluster cluster = SwfCluster(trace);
  std::vector<SimJob> jobs(2);
  jobs[0].id = 1;
  jobs[0].submit = 0;
  jobs[0].run = 100;
  jobs[0].estimate = 200;
  jobs[0].shape.ntasks = 8;
  jobs[0].uid = 3;
  jobs[0].user = "u3";
  jobs[0].account = "g1";
  jobs[1] = jobs[0];
  jobs[1].id = 2;
  jobs[1].submit = 10;
  jobs[1].exit_status = 1 << 8;
  auto policy = sched::MakePolicy("easy", {});
  ASSERT_TRUE(policy.ok());
  SimOptions so;
  so.record_nodes = true;
  auto result = Simulate(cluster, jobs, **policy, so);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::vector<AccountingRecord> records =
      SimAccountingRecords("easy", cluster, jobs, *result, 1788220800);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].cluster, "easy");
  EXPECT_EQ(records[0].user, "u3");
  EXPECT_EQ(records[0].account, "g1");
  EXPECT_EQ(records[0].partition, "all");
  EXPECT_EQ(records[0].submit, 1788220800);
  EXPECT_EQ(records[0].start, 1788220800);
  EXPECT_EQ(records[0].end, 1788220900);
  EXPECT_EQ(records[0].state, "COMPLETED");
  EXPECT_EQ(records[0].alloc_tres, "cpu=8,node=1,billing=8");
  EXPECT_EQ(records[0].node_list, "pool");
  EXPECT_EQ(records[0].time_limit_s, 200);
  EXPECT_EQ(records[1].state, "FAILED");
  EXPECT_EQ(records[1].exit_code, 1);
  EXPECT_EQ(records[1].submit, 1788220810);
  EXPECT_EQ(ClusterTres(cluster), "cpu=64,node=1,billing=64");
  EXPECT_EQ(SimClusterName("topo/Easy+fairshare"), "topo-easy-fairshare");
}

}  // namespace
}  // namespace loom::sim
