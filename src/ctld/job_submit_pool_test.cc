#include "ctld/job_submit_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "core/clock.h"
#include "policy/lua_script.h"

namespace loom::ctld {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

JobSubmitPoolOptions Options(std::string script, int64_t timeout_ms = 1000) {
  JobSubmitPoolOptions o;
  o.helper = LOOM_LUA_HELPER;
  o.script_path = "/etc/slurm/job_submit.lua";
  o.script = std::move(script);
  o.part_list = {{"debug", {{"name", "debug"}}}};
  o.helpers = 2;
  o.timeout_ms = timeout_ms;
  return o;
}

constexpr char kPolicy[] = R"lua(
function slurm_job_submit(job_desc, part_list, submit_uid)
  if job_desc.comment == "slow" then
    while true do end
  end
  if job_desc.comment == "crash" then
    os.exit(3)
  end
  if job_desc.comment == "refuse" then
    slurm.user_msg("no jobs named %s here", job_desc.name)
    return slurm.ESLURM_ACCESS_DENIED
  end
  if part_list["debug"] ~= nil and job_desc.time_limit ~= slurm.NO_VAL and job_desc.time_limit <= 60 then
    job_desc.partition = "debug"
  end
  slurm.log_info("uid %d", submit_uid)
  slurm.user_msg("routed to %s", job_desc.partition or "the default")
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  if job_desc.time_limit ~= slurm.NO_VAL and job_desc.time_limit > 120 then
    job_desc.time_limit = 120
  end
  if job_desc.partition == "long" and job_rec.job_state == "PENDING" then
    slurm.user_msg("job %d may not move to long", job_rec.job_id)
    return slurm.ESLURM_ACCESS_DENIED
  end
  return slurm.SUCCESS
end
)lua";

model::JobRequest Job(std::string comment, int64_t minutes = 30) {
  model::JobRequest r;
  r.name = "j";
  r.comment = std::move(comment);
  r.time_limit_s = minutes * 60;
  return r;
}

TEST(JobSubmitPool, RewritesAndTellsTheSubmitter) {
  auto pool = JobSubmitPool::Start(Options(kPolicy));
  ASSERT_TRUE(pool.ok()) << pool.status();
  model::JobRequest r = Job("");
  JobSubmitOutcome out;
  ASSERT_TRUE((*pool)->Submit({1000, 1000, "alice"}, &r, &out).ok());
  EXPECT_TRUE(out.status.ok());
  EXPECT_THAT(r.partitions, ElementsAre("debug"));
  EXPECT_THAT(out.user_msgs, ElementsAre("routed to debug"));
}

TEST(JobSubmitPool, RefusalCarriesTheCodeAndMessage) {
  auto pool = JobSubmitPool::Start(Options(kPolicy));
  ASSERT_TRUE(pool.ok());
  model::JobRequest r = Job("refuse");
  JobSubmitOutcome out;
  ASSERT_TRUE((*pool)->Submit({}, &r, &out).ok());
  EXPECT_EQ(out.status.message(), "Access/permission denied");
  EXPECT_THAT(out.user_msgs, ElementsAre("no jobs named j here"));
}

TEST(JobSubmitPool, ASlowScriptTimesOutAndTheNextCallWorks) {
  auto pool = JobSubmitPool::Start(Options(kPolicy, 300));
  ASSERT_TRUE(pool.ok());
  const core::Clock& clock = core::RealClock();
  const int64_t t0 = clock.MonotonicMs();
  model::JobRequest slow = Job("slow");
  JobSubmitOutcome out;
  Status s = (*pool)->Submit({}, &slow, &out);
  const int64_t took = clock.MonotonicMs() - t0;
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("did not answer within 0.3 s"));
  EXPECT_LT(took, 3000);
  for (int i = 0; i < 3; ++i) {  // the helper that looped was replaced
    model::JobRequest r = Job("");
    JobSubmitOutcome ok;
    ASSERT_TRUE((*pool)->Submit({}, &r, &ok).ok());
    EXPECT_THAT(r.partitions, ElementsAre("debug"));
  }
}

TEST(JobSubmitPool, ACrashingScriptCostsOnlyItsHelper) {
  auto pool = JobSubmitPool::Start(Options(kPolicy));
  ASSERT_TRUE(pool.ok());
  model::JobRequest crash = Job("crash");
  JobSubmitOutcome out;
  Status s = (*pool)->Submit({}, &crash, &out);
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("exit code 3"));
  model::JobRequest r = Job("", 600);
  JobSubmitOutcome ok;
  ASSERT_TRUE((*pool)->Submit({}, &r, &ok).ok());
  EXPECT_TRUE(r.partitions.empty());
}

TEST(JobSubmitPool, ModifySeesTheUpdateAndTheJob) {
  auto pool = JobSubmitPool::Start(Options(kPolicy));
  ASSERT_TRUE(pool.ok());
  const nlohmann::json rec = {{"job_id", 7}, {"job_state", "PENDING"}};
  JobSubmitOutcome capped;
  auto out = (*pool)->Modify({{"time_limit", 600}, {"partition", nullptr}}, rec, 0, &capped);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(capped.status.ok());
  EXPECT_EQ((*out)["time_limit"], 120);
  JobSubmitOutcome refused;
  auto moved =
      (*pool)->Modify({{"time_limit", policy::kNoVal}, {"partition", "long"}}, rec, 0, &refused);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(refused.status.message(), "Access/permission denied");
  EXPECT_THAT(refused.user_msgs, ElementsAre("job 7 may not move to long"));
}

TEST(JobSubmitPool, AHelperKilledWhileIdleIsReplaced) {
  auto pool = JobSubmitPool::Start(Options(kPolicy));
  ASSERT_TRUE(pool.ok());
  const pid_t first = (*pool)->helper_pids().front();
  ASSERT_GT(first, 0);
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  model::JobRequest r = Job("");
  JobSubmitOutcome out;
  Status s = (*pool)->Submit({}, &r, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(r.partitions, ElementsAre("debug"));
  EXPECT_NE((*pool)->helper_pids().front(), first);
}

TEST(JobSubmitPool, ScriptThatDoesNotLoad) {
  auto syntax = JobSubmitPool::Start(Options("function slurm_job_submit(\n"));
  ASSERT_FALSE(syntax.ok());
  EXPECT_THAT(std::string(syntax.status().message()), HasSubstr("/etc/slurm/job_submit.lua:2:"));
  auto missing = JobSubmitPool::Start(Options("x = 1\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("defines no function slurm_job_submit"));
  JobSubmitPoolOptions o = Options(kPolicy);
  o.helper = "/nonexistent/loom-lua-helper";
  auto no_helper = JobSubmitPool::Start(o);
  ASSERT_FALSE(no_helper.ok());
  EXPECT_THAT(std::string(no_helper.status().message()), HasSubstr("cannot start"));
}

TEST(JobSubmitPool, BusyHelpersRefuseRatherThanHold) {
  JobSubmitPoolOptions o = Options(kPolicy, 400);
  o.helpers = 1;
  o.max_queued = 1;
  auto pool = JobSubmitPool::Start(o);
  ASSERT_TRUE(pool.ok());
  // One slow call holds the only helper; one more may wait; a third is refused at once.
  std::vector<std::thread> threads;
  std::vector<Status> results(2);
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i]() {
      model::JobRequest slow = Job("slow");
      JobSubmitOutcome out;
      results[i] = (*pool)->Submit({}, &slow, &out);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  model::JobRequest r = Job("");
  JobSubmitOutcome out;
  Status third = (*pool)->Submit({}, &r, &out);
  EXPECT_TRUE(absl::IsUnavailable(third)) << third;
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace loom::ctld
