#include "policy/lua_script.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace loom::policy {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LuaScript, SyntaxErrorNamesFileAndLine) {
  auto s = LuaScript::Load("function slurm_job_submit(j, p, u)\n  return slurm.SUCCESS\nedn\n",
                           "/etc/slurm/job_submit.lua");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("/etc/slurm/job_submit.lua:3:"));
}

TEST(LuaScript, RuntimeErrorAtLoadNamesLine) {
  auto s = LuaScript::Load("local x = nil\nlocal y = x.field\n", "/p/job_submit.lua");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("/p/job_submit.lua:2:"));
}

TEST(LuaScript, TablesComeBackChanged) {
  auto s = LuaScript::Load(R"lua(
function f(job, parts, uid)
  job.partition = "debug"
  job.time_limit = 30
  job.comment = nil
  job.list = {"a", "b"}
  return slurm.SUCCESS
end)lua",
                           "t.lua");
  ASSERT_TRUE(s.ok()) << s.status();
  json job = {{"partition", "normal"}, {"time_limit", kNoVal}, {"comment", "x"}};
  auto r = (*s)->Call("f", {job, json::object(), 1000});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rc, kSuccess);
  const json& out = r->args[0];
  EXPECT_EQ(out["partition"], "debug");
  EXPECT_EQ(out["time_limit"], 30);
  EXPECT_FALSE(out.contains("comment"));
  EXPECT_EQ(out["list"], json::array({"a", "b"}));
  EXPECT_EQ(r->args[2], 1000);  // not a table: as given
}

TEST(LuaScript, ConstantsAndHelpers) {
  auto s = LuaScript::Load(R"lua(
function f(job)
  slurm.log_info("uid %d asks %s", 5, "gpu")
  slurm.log_debug("quiet")
  slurm.user_msg("use --time, %s", "please")
  slurm.log_user("second")
  if job.time_limit == slurm.NO_VAL and job.cpus == slurm.NO_VAL16 then
    return slurm.ESLURM_INVALID_TIME_LIMIT
  end
  return slurm.ERROR
end)lua",
                           "t.lua");
  ASSERT_TRUE(s.ok()) << s.status();
  auto r = (*s)->Call("f", {json{{"time_limit", kNoVal}, {"cpus", kNoVal16}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ReturnCodeText(r->rc),
            "Requested time limit is invalid (missing or exceeds some limit)");
  EXPECT_THAT(r->user_msgs, ElementsAre("use --time, please", "second"));
  ASSERT_EQ(r->log.size(), 2u);
  EXPECT_EQ(r->log[0].level, "info");
  EXPECT_EQ(r->log[0].text, "uid 5 asks gpu");
  EXPECT_EQ(r->log[1].level, "debug");
  auto e = (*s)->Call("f", {json{{"time_limit", 10}}});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->rc, kError);
  EXPECT_EQ(ReturnCodeText(e->rc), "Unspecified error");
}

TEST(LuaScript, ErrorsInACallAreReported) {
  auto s = LuaScript::Load(
      "function f(job)\n  return job.missing.field\nend\n"
      "function g() return 'yes' end\n",
      "/x/job_submit.lua");
  ASSERT_TRUE(s.ok());
  auto r = (*s)->Call("f", {json::object()});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("/x/job_submit.lua:2:"));
  auto g = (*s)->Call("g", {});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("returned a string"));
  auto h = (*s)->Call("h", {});
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(std::string(h.status().message()), HasSubstr("defines no function h"));
  EXPECT_TRUE((*s)->Defines("f"));
  EXPECT_FALSE((*s)->Defines("h"));
}

TEST(LuaScript, StateLastsBetweenCalls) {
  auto s = LuaScript::Load("count = 0\nfunction f() count = count + 1 return count end\n", "t.lua");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->Call("f", {})->rc, 1);
  EXPECT_EQ((*s)->Call("f", {})->rc, 2);
}

}  // namespace
}  // namespace loom::policy
