#include "policy/job_desc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/time_format.h"
#include "policy/lua_script.h"

namespace loom::policy {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

model::JobRequest GpuJob() {
  model::JobRequest r;
  r.name = "train";
  r.partitions = {"normal"};
  r.time_limit_s = 90 * 60;
  r.min_nodes = 2;
  r.ntasks_per_node = 4;
  r.gpus_per_node = {model::TypedCount{"gpu", "a100", 4}};
  r.mem_per_cpu_mb = 2048;
  std::vector<std::string> warnings;
  model::DeriveShape(&r, "sbatch", &warnings);
  return r;
}

TEST(JobDesc, ReadsAsSlurmNamesIt) {
  model::JobRequest r = GpuJob();
  json d = JobDescOf(r, Submitter{1000, 100, "alice"});
  EXPECT_EQ(d["partition"], "normal");
  EXPECT_EQ(d["time_limit"], 90);
  EXPECT_EQ(d["min_nodes"], 2);
  EXPECT_EQ(d["max_nodes"], kNoVal);
  EXPECT_EQ(d["num_tasks"], kNoVal);
  EXPECT_EQ(d["cpus_per_task"], kNoVal16);
  EXPECT_EQ(d["ntasks_per_node"], 4);
  EXPECT_EQ(d["tres_per_node"], "gres:gpu:a100:4");
  EXPECT_EQ(d["pn_min_memory"], int64_t{2048} | std::numeric_limits<int64_t>::min());
  EXPECT_EQ(d["min_mem_per_cpu"], 2048);
  EXPECT_EQ(d["threads_per_core"], kNoVal16);
  EXPECT_TRUE(d["tres_bind"].is_null());
  EXPECT_TRUE(d["account"].is_null());
  EXPECT_EQ(d["user_id"], 1000);
  EXPECT_EQ(d["user_name"], "alice");
  r.time_limit_s = core::kUnlimitedSeconds;
  EXPECT_EQ(JobDescOf(r, {})["time_limit"], kInfinite);
}

TEST(JobDesc, AppliesWhatChangedAndDerivesTheShape) {
  model::JobRequest r = GpuJob();
  const json before = JobDescOf(r, {});
  json after = before;
  after["partition"] = "gpu,long";
  after["time_limit"] = 600;
  after["tres_bind"] = "gres/gpu:closest";
  after["threads_per_core"] = 1;
  after["tres_per_node"] = "gres:gpu:h100:8";
  after["cpus_per_task"] = 2;
  after["user_id"] = 5;        // not the script's to change
  after["no_such_field"] = 1;  // a typo in a script
  std::vector<std::string> ignored;
  ASSERT_TRUE(ApplyJobDesc(before, after, &r, &ignored).ok());
  EXPECT_THAT(r.partitions, ElementsAre("gpu", "long"));
  EXPECT_EQ(r.time_limit_s, 600 * 60);
  EXPECT_EQ(r.gpu_bind, "closest");
  EXPECT_EQ(r.threads_per_core, 1);
  EXPECT_EQ(r.shape.gpus_per_node, 8);
  EXPECT_EQ(r.shape.gpu_type, "h100");
  EXPECT_EQ(r.shape.cpus_per_task, 2);
  EXPECT_THAT(ignored, ElementsAre("no_such_field", "user_id"));
}

TEST(JobDesc, HintReadsAsThreadsPerCore) {
  model::JobRequest r;
  r.hint = "nomultithread";
  json before = JobDescOf(r, {});
  EXPECT_EQ(before["threads_per_core"], 1);
  json after = before;
  after["threads_per_core"] = kNoVal16;
  std::vector<std::string> ignored;
  ASSERT_TRUE(ApplyJobDesc(before, after, &r, &ignored).ok());
  EXPECT_EQ(r.hint, "");
  EXPECT_FALSE(r.threads_per_core.has_value());
}

TEST(JobDesc, BadValuesNameTheField) {
  model::JobRequest r = GpuJob();
  const json before = JobDescOf(r, {});
  std::vector<std::string> ignored;
  json a = before;
  a["cpus_per_task"] = "many";
  Status s = ApplyJobDesc(before, a, &r, &ignored);
  EXPECT_THAT(
      std::string(s.message()),
      HasSubstr("job_submit.lua set job_desc.cpus_per_task to \"many\"; it takes a whole number"));
  json b = before;
  b["tres_bind"] = "gres/gpu:nearest";
  EXPECT_THAT(std::string(ApplyJobDesc(before, b, &r, &ignored).message()),
              HasSubstr("job_desc.tres_bind"));
  json c = before;
  c["tres_per_task"] = "gres:nic:1";
  EXPECT_THAT(std::string(ApplyJobDesc(before, c, &r, &ignored).message()), HasSubstr("GPUs only"));
}

TEST(JobDesc, PartitionList) {
  conf::ClusterConfig cfg;
  conf::PartitionConfig p;
  p.name = "debug";
  p.nodes = {"n1", "n2"};
  p.max_time_s = 3600;
  p.is_default = true;
  cfg.partitions.push_back(p);
  json list = PartitionListOf(cfg);
  EXPECT_EQ(list["debug"]["max_time"], 60);
  EXPECT_EQ(list["debug"]["total_nodes"], 2);
  EXPECT_EQ(list["debug"]["flag_default"], 1);
  EXPECT_EQ(list["debug"]["default_time"], kNoVal);
}

// What a script sees and changes, end to end through Lua.
TEST(JobDesc, ThroughAScript) {
  auto s = LuaScript::Load(R"lua(
function slurm_job_submit(job_desc, part_list, submit_uid)
  if job_desc.tres_per_node ~= nil and string.find(job_desc.tres_per_node, "gpu") then
    job_desc.tres_bind = "gres/gpu:closest"
    job_desc.threads_per_core = 1
  end
  if job_desc.time_limit ~= slurm.NO_VAL and job_desc.time_limit <= 60 then
    job_desc.partition = "debug"
  end
  return slurm.SUCCESS
end)lua",
                           "job_submit.lua");
  ASSERT_TRUE(s.ok()) << s.status();
  model::JobRequest r = GpuJob();
  r.time_limit_s = 30 * 60;
  json before = JobDescOf(r, {});
  auto out = (*s)->Call("slurm_job_submit", {before, json::object(), 1000});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<std::string> ignored;
  ASSERT_TRUE(ApplyJobDesc(before, out->args[0], &r, &ignored).ok());
  EXPECT_EQ(r.gpu_bind, "closest");
  EXPECT_EQ(r.threads_per_core, 1);
  EXPECT_THAT(r.partitions, ElementsAre("debug"));
  EXPECT_TRUE(ignored.empty());
}

}  // namespace
}  // namespace loom::policy
