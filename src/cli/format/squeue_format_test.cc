// squeue rendering against Slurm 22.05's own output for the reference scenario
// (tests/data/slurm-ref/), byte for byte, plus the rules those files do not show.
#include "cli/format/squeue_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/format/reference_scenario.h"

namespace loom::cli::format {
namespace {

using testing::At;
using testing::BusyContext;
using testing::BusyJob;
using testing::BusyJobs;
using ::testing::HasSubstr;
using testing::ReadReferenceOutput;

std::string Expected(const std::string& file) {
  StatusOr<std::string> text = ReadReferenceOutput(file);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.value_or("");
}

std::string Render(const std::vector<JobView>& jobs, const SqueueOptions& o,
                   const RenderContext& ctx = BusyContext()) {
  StatusOr<std::string> out = RenderSqueue(jobs, o, ctx);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.value_or("");
}

TEST(SqueueGolden, DefaultLayout) {
  EXPECT_EQ(Render(BusyJobs(), {}), Expected("16-squeue_default.txt"));
}

TEST(SqueueGolden, FormatString) {
  SqueueOptions o;
  o.format = "%i %j %T %R";
  EXPECT_EQ(Render(BusyJobs(), o), Expected("17-squeue_fmt_i_j_T_R.txt"));
}

TEST(SqueueGolden, LongListing) {
  SqueueOptions o;
  o.long_listing = true;
  EXPECT_EQ(Render(BusyJobs(), o), Expected("18-squeue_l.txt"));
}

TEST(SqueueGolden, ExpandedArrays) {
  SqueueOptions o;
  o.expand_arrays = true;
  EXPECT_EQ(Render(BusyJobs(), o), Expected("19-squeue_r.txt"));
}

TEST(SqueueGolden, PendingOnly) {
  SqueueOptions o;
  o.states = ParseJobStateFilter("PD").value();
  EXPECT_EQ(Render(BusyJobs(), o), Expected("20-squeue_states_pd.txt"));
}

TEST(SqueueGolden, LongFieldNames) {
  SqueueOptions o;
  o.long_format = "JobID,Name,State,Reason,NumNodes,NumCPUs,TimeLimit,tres-per-node";
  EXPECT_EQ(Render(BusyJobs(), o), Expected("21-squeue_O_long.txt"));
}

TEST(SqueueGolden, NoHeaderIds) {
  SqueueOptions o;
  o.no_header = true;
  o.format = "%i";
  EXPECT_EQ(Render(BusyJobs(), o), Expected("22-squeue_h_o_ids.txt"));
}

TEST(SqueueGolden, StartLayout) {
  SqueueOptions o;
  o.start = true;
  EXPECT_EQ(Render(BusyJobs(), o), Expected("23-squeue_start.txt"));
}

TEST(SqueueGolden, Json) {
  // Slurm 22.05's `squeue --json -j 3` ignores -j and lists every job the controller holds;
  // the same document is what Loom prints for `squeue --json`.
  EXPECT_EQ(RenderSqueueJson(BusyJobs(), {}, BusyContext()), Expected("39-squeue_json_job2.txt"));
}

TEST(SqueueJson, WrittenInPiecesIsTheSameDocument) {
  // Enough jobs for several of the writer's pieces.
  std::vector<JobView> many;
  for (int copy = 0; copy < 400; ++copy) {
    for (JobView j : BusyJobs()) {
      j.job_id += static_cast<uint32_t>(copy) * 100;
      many.push_back(std::move(j));
    }
  }
  const std::string whole = RenderSqueueJson(many, {}, BusyContext());
  ASSERT_GT(whole.size(), 1u << 20);
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  size_t i = 0;
  auto next = [&]() -> const JobView* { return i < many.size() ? &many[i++] : nullptr; };
  ASSERT_TRUE(WriteSqueueJson(next, {}, BusyContext(), f));
  std::string written(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  ASSERT_EQ(std::fread(written.data(), 1, written.size(), f), written.size());
  std::fclose(f);
  EXPECT_TRUE(written == whole);
}

TEST(SqueueGolden, HeldPriority) {
  JobView big = BusyJob(8);
  big.priority = 0;
  big.reason = "JobHeldAdmin";
  SqueueOptions o;
  o.job_ids = {8};
  o.format = "%i %j %T %R %p";
  std::vector<JobView> jobs = BusyJobs();
  for (JobView& j : jobs) {
    if (j.job_id == 8) j = big;
  }
  EXPECT_EQ(Render(jobs, o), Expected("43-squeue_after_hold.txt"));
}

// The dependency jobs 13-18 of the scenario's second part.
std::vector<JobView> DependencyJobs() {
  auto job = [](uint32_t id, std::string name, model::JobState state, int64_t priority) {
    JobView j = BusyJob(6);
    j.job_id = id;
    j.name = std::move(name);
    j.state = state;
    j.priority = priority;
    j.dependency.clear();
    j.reason = "None";
    if (state != model::JobState::kPending) {
      j.nodes = j.batch_host = "n001";
    }
    return j;
  };
  using model::JobState;
  std::vector<JobView> jobs = {
      job(13, "failer", JobState::kFailed, 4294901749),
      job(14, "oker", JobState::kCompleted, 4294901748),
      job(15, "dep_on_fail", JobState::kPending, 4294901747),
      job(16, "dep_on_ok", JobState::kCompleted, 4294901746),
      job(17, "dep_any", JobState::kCompleted, 4294901745),
      job(18, "dep_notok", JobState::kCompleted, 4294901744),
  };
  jobs[0].reason = "NonZeroExitCode";
  jobs[0].exit_status = 3;
  jobs[2].reason = "DependencyNeverSatisfied";
  jobs[2].dependency = "afterok:13(failed)";
  return jobs;
}

TEST(SqueueGolden, DependencyNeverSatisfied) {
  SqueueOptions o;
  o.job_ids = {15};
  o.format = "%i %j %T %R";
  EXPECT_EQ(Render(DependencyJobs(), o), Expected("51-squeue_dep_never.txt"));
}

TEST(SqueueGolden, AllStatesSortedByStateName) {
  SqueueOptions o;
  o.states = ParseJobStateFilter("all").value();
  o.job_ids = {13, 14, 15, 16, 17, 18};
  o.format = "%i %j %T %R";
  EXPECT_EQ(Render(DependencyJobs(), o), Expected("55-squeue_t_all_deps.txt"));
}

TEST(SqueueGolden, FinishedJobHiddenByDefault) {
  JobView done = BusyJob(1);
  done.job_id = 22;
  SqueueOptions o;
  o.job_ids = {22};
  o.format = "%i %j %T %R %E";
  EXPECT_EQ(Render({done}, o), Expected("72-squeue_bad_dependency_job.txt"));
}

TEST(SqueueGolden, ArrayAfterOneTaskEnds) {
  std::vector<JobView> jobs;
  for (JobView j : BusyJobs()) {
    if (j.job_id == 9) j.state = model::JobState::kCompleting;
    jobs.push_back(std::move(j));
  }
  SqueueOptions o;
  o.expand_arrays = true;
  o.names = {"arr"};
  o.format = "%i %F %K %A %T %R";
  EXPECT_EQ(Render(jobs, o), Expected("78-squeue_array_after.txt"));
}

// ---------------------------------------------------------------------------------------------
// Rules the reference files do not show.

TEST(SqueueFormat, WidthsTruncateAndAlign) {
  JobView j = BusyJob(3);
  j.name = "a_rather_long_name";
  SqueueOptions o;
  o.no_header = true;
  o.format = "[%.8j][%8j][%j][%.3i]";
  EXPECT_EQ(Render({j}, o), "[a_rather][a_rather][a_rather_long_name][  3]\n");
  j.name = "ab";
  EXPECT_EQ(Render({j}, o), "[      ab][ab      ][ab][  3]\n");
}

TEST(SqueueFormat, LiteralTextAroundFields) {
  SqueueOptions o;
  o.format = "id=%i:%u;";
  o.job_ids = {3};
  EXPECT_EQ(Render(BusyJobs(), o), "id=JOBID:USER;\nid=3:root;\n");
}

TEST(SqueueFormat, AllFieldsSeparatedByBars) {
  SqueueOptions o;
  o.format = "%all";
  o.job_ids = {3};
  std::string out = Render(BusyJobs(), o);
  std::string header = out.substr(0, out.find('\n'));
  EXPECT_EQ(header,
            "ACCOUNT|TRES_PER_NODE|MIN_CPUS|MIN_TMP_DISK|END_TIME|FEATURES|GROUP|OVER_SUBSCRIBE|"
            "JOBID|NAME|COMMENT|TIME_LIMIT|MIN_MEMORY|REQ_NODES|COMMAND|PRIORITY|QOS|REASON||ST|"
            "USER|RESERVATION|WCKEY|EXC_NODES|NICE|S:C:T|JOBID|EXEC_HOST|CPUS|NODES|DEPENDENCY|"
            "ARRAY_JOB_ID|GROUP|SOCKETS_PER_NODE|CORES_PER_SOCKET|THREADS_PER_CORE|"
            "ARRAY_TASK_ID|TIME_LEFT|TIME|NODELIST|CONTIGUOUS|PARTITION|PRIORITY|"
            "NODELIST(REASON)|START_TIME|STATE|UID|SUBMIT_TIME|LICENSES|CORE_SPEC|SCHEDNODES|"
            "WORK_DIR");
  EXPECT_THAT(out, HasSubstr("|sleeper|(null)|10:00|2G||(null)|0.99998474074527|normal|None||R|"));
}

TEST(SqueueFormat, LongFormatWidthAlignmentAndSuffix) {
  SqueueOptions o;
  o.long_format = "JobID:.6,Name:10|,UserName:4";
  o.job_ids = {4};
  EXPECT_EQ(Render(BusyJobs(), o), " JOBIDNAME      |USER\n     4gpujob    |root\n");
}

TEST(SqueueFormat, TimeColumns) {
  JobView j = BusyJob(3);
  RenderContext ctx{At(18, 56, 29) + 2 * 3600 + 5, 0};  // ran 2:00:05
  SqueueOptions o;
  o.no_header = true;
  o.format = "%M|%l|%L|%S|%e|%V";
  EXPECT_EQ(Render({j}, o, ctx),
            "2:00:05|10:00|0:00|2026-11-29T18:56:29|2026-11-29T19:06:29|2026-11-29T18:56:28\n");
  ctx.now = At(18, 56, 29) + 3 * 86400 + 3600;
  j.time_limit_s = core::kUnlimitedSeconds;
  EXPECT_EQ(Render({j}, o, ctx),
            "3-01:00:00|UNLIMITED|UNLIMITED|2026-11-29T18:56:29|2026-11-29T19:06:29|"
            "2026-11-29T18:56:28\n");
  // The zone offset moves every timestamp, nothing else.
  ctx.utc_offset_s = 3600;
  EXPECT_THAT(Render({j}, o, ctx), HasSubstr("|2026-11-29T19:56:29|"));
}

TEST(SqueueFormat, ReasonOrNodes) {
  JobView timeout = BusyJob(3);
  timeout.state = model::JobState::kTimeout;
  timeout.reason = "TimeLimit";
  JobView cancelled = BusyJob(4);
  cancelled.state = model::JobState::kCancelled;
  JobView described = BusyJob(8);
  described.state_description = "waiting for maintenance";
  SqueueOptions o;
  o.states = ParseJobStateFilter("all").value();
  o.no_header = true;
  o.format = "%i %R";
  o.sort = "i";
  EXPECT_EQ(Render({timeout, cancelled, described}, o),
            "3 (TimeLimit)\n4 n001\n8 (waiting for maintenance)\n");
}

TEST(SqueueFormat, SortKeys) {
  SqueueOptions o;
  o.no_header = true;
  o.format = "%i";
  o.sort = "-i";
  EXPECT_EQ(Render(BusyJobs(), o), "8\n7_[3-10%2]\n7_2\n7_1\n6\n5\n4\n3\n");
  o.sort = "j,i";
  EXPECT_EQ(Render(BusyJobs(), o), "7_1\n7_2\n7_[3-10%2]\n6\n4\n5\n3\n8\n");
  o.sort = "Q,x,?";
  EXPECT_FALSE(RenderSqueue(BusyJobs(), o, BusyContext()).ok());
}

TEST(SqueueFormat, FiltersByUserPartitionName) {
  SqueueOptions o;
  o.no_header = true;
  o.format = "%i";
  o.users = {"0"};
  o.names = {"sleeper", "gpujob"};
  EXPECT_EQ(Render(BusyJobs(), o), "3\n4\n");
  o.partitions = {"gpu"};
  EXPECT_EQ(Render(BusyJobs(), o), "");
}

TEST(SqueueFormat, ArrayIdsSelectTheirTasks) {
  SqueueOptions o;
  o.no_header = true;
  o.format = "%i %A";
  o.job_ids = {7};
  EXPECT_EQ(Render(BusyJobs(), o), "7_[3-10%2] 7\n7_1 9\n7_2 10\n");
}

TEST(SqueueFormat, BadFormatsAreErrors) {
  SqueueOptions o;
  o.format = "%i %!";
  Status s = ValidateSqueueOptions(o);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("-o"));
  o.format = "%.12";
  EXPECT_FALSE(ValidateSqueueOptions(o).ok());
  o.format.clear();
  o.long_format = "JobID,NoSuchField";
  s = ValidateSqueueOptions(o);
  EXPECT_THAT(std::string(s.message()), HasSubstr("NoSuchField"));
  o.long_format = "jobid,NAME";  // names are case-insensitive
  EXPECT_TRUE(ValidateSqueueOptions(o).ok());
}

TEST(SqueueStateFilter, Names) {
  JobStateFilter f = ParseJobStateFilter("pd,RUNNING, cg").value();
  EXPECT_TRUE(f.Matches(model::JobState::kPending));
  EXPECT_TRUE(f.Matches(model::JobState::kRunning));
  EXPECT_TRUE(f.Matches(model::JobState::kCompleting));
  EXPECT_FALSE(f.Matches(model::JobState::kCompleted));
  JobStateFilter none = ParseJobStateFilter("CONFIGURING").value();
  EXPECT_FALSE(none.Matches(model::JobState::kPending));
  JobStateFilter def;
  EXPECT_TRUE(def.Matches(model::JobState::kSuspended));
  EXPECT_FALSE(def.Matches(model::JobState::kCancelled));
  StatusOr<JobStateFilter> bad = ParseJobStateFilter("R,sleeping");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("'sleeping'"));
}

TEST(SqueueJson, FiltersApplyAndKeysMatchSlurm) {
  SqueueOptions o;
  o.job_ids = {3};
  std::string text = RenderSqueueJson(BusyJobs(), o, BusyContext());
  nlohmann::json doc = nlohmann::json::parse(text);
  ASSERT_EQ(doc["jobs"].size(), 1u);
  EXPECT_EQ(doc["jobs"][0]["job_id"], 3);
  EXPECT_EQ(doc["jobs"][0]["standard_input"], "/dev/null");

  // Every job object has exactly the keys of Slurm's, in Slurm's order.
  std::string expected = Expected("39-squeue_json_job2.txt");
  nlohmann::ordered_json slurm = nlohmann::ordered_json::parse(expected);
  nlohmann::ordered_json ours = nlohmann::ordered_json::parse(text);
  std::vector<std::string> slurm_keys, our_keys;
  for (const auto& [k, v] : slurm["jobs"][1].items()) slurm_keys.push_back(k);
  for (const auto& [k, v] : ours["jobs"][0].items()) our_keys.push_back(k);
  EXPECT_EQ(our_keys, slurm_keys);
}

TEST(SqueueJson, EscapesAndNumbers) {
  JobView j = BusyJob(3);
  j.name = "a\"b\\c\td\x01";
  j.billable_tres = 2.5;
  j.nice = -5;
  std::string text = RenderSqueueJson({j}, {}, BusyContext());
  EXPECT_THAT(text, HasSubstr("\"name\": \"a\\\"b\\\\c\\td\\u0001\","));
  EXPECT_THAT(text, HasSubstr("\"billable_tres\": 2.5,"));
  EXPECT_THAT(text, HasSubstr("\"nice\": -5,"));
  EXPECT_EQ(nlohmann::json::parse(text)["jobs"][0]["name"], j.name);
}

}  // namespace
}  // namespace loom::cli::format
