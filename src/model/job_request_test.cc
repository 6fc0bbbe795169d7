#include "model/job_request.h"

#include <gtest/gtest.h>

namespace loom::model {
namespace {

std::string ErrorOf(const Status& s) { return std::string(s.message()); }

TEST(ArraySpec, RangesStepsAndThrottle) {
  StatusOr<ArraySpec> a = ParseArraySpec("1,3,5-9:2%4");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->Indices(), (std::vector<int64_t>{1, 3, 5, 7, 9}));
  EXPECT_EQ(a->max_running, 4);
  EXPECT_EQ(a->Count(), 5);
  EXPECT_EQ(a->MaxIndex(), 9);
  EXPECT_EQ(a->ToString(), "1,3,5,7,9%4");

  StatusOr<ArraySpec> b = ParseArraySpec("0-99%5");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->Count(), 100);
  EXPECT_EQ(b->ToString(), "0-99%5");
  EXPECT_EQ(ParseArraySpec("0-15:4")->Indices(), (std::vector<int64_t>{0, 4, 8, 12}));
  EXPECT_EQ(ParseArraySpec("3,1,2,2")->ToString(), "1-3");
  EXPECT_EQ(ParseArraySpec("7")->Indices(), (std::vector<int64_t>{7}));
}

// Ranges in ascending order are counted and printed without listing every index; any other
// spec index by index. Both give the same answers.
TEST(ArraySpec, OrderedAndUnorderedSpecsAgree) {
  struct Case {
    std::string spec;
    std::string canonical;
    int64_t count;
    int64_t max;
  };
  for (const Case& c : std::vector<Case>{{"0-8:4,10-12", "0,4,8,10-12", 6, 12},
                                         {"0-3,4-6", "0-6", 7, 6},
                                         {"0-9:4", "0,4,8", 3, 8},
                                         {"0-5,3-8", "0-8", 9, 8},
                                         {"1,3,5", "1,3,5", 3, 5},
                                         {"5,0-2", "0-2,5", 4, 5},
                                         {"0-999", "0-999", 1000, 999}}) {
    StatusOr<ArraySpec> a = ParseArraySpec(c.spec);
    ASSERT_TRUE(a.ok()) << c.spec << ": " << a.status();
    EXPECT_EQ(a->ToString(), c.canonical) << c.spec;
    EXPECT_EQ(a->Count(), c.count) << c.spec;
    EXPECT_EQ(static_cast<int64_t>(a->Indices().size()), c.count) << c.spec;
    EXPECT_EQ(a->MaxIndex(), c.max) << c.spec;
  }
}

TEST(ArraySpec, MaxArraySizeBoundsTheIndices) {
  EXPECT_TRUE(ParseArraySpec("0-1000").ok());
  Status too_big = ParseArraySpec("0-1001").status();
  EXPECT_NE(ErrorOf(too_big).find("MaxArraySize (1001)"), std::string::npos) << too_big;
  EXPECT_TRUE(ParseArraySpec("0-4999", 5000).ok());
  EXPECT_FALSE(ParseArraySpec("5000", 5000).ok());
}

TEST(ArraySpec, Errors) {
  for (std::string_view bad : {"", "%2", "1-3%", "1-3%0", "1-3%x", "5-1", "1-10:0", "1,,2", "-1",
                               "abc", "0x10", "1:2", "1-", "1-3:", " 1", "1-3%2%3"}) {
    EXPECT_FALSE(ParseArraySpec(bad).ok()) << bad;
  }
  EXPECT_NE(ErrorOf(ParseArraySpec("5-1").status()).find("ends before it starts"),
            std::string::npos);
}

TEST(Dependency, ParsesEveryForm) {
  StatusOr<Dependency> d = ParseDependency("afterok:1:2,afterany:3");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->combine, Dependency::Combine::kAll);
  ASSERT_EQ(d->clauses.size(), 2u);
  EXPECT_EQ(d->clauses[0].type, DependencyType::kAfterOk);
  EXPECT_EQ(d->clauses[0].jobs.size(), 2u);
  EXPECT_EQ(d->clauses[1].jobs[0].job_id, 3u);
  EXPECT_EQ(d->ToString(), "afterok:1:2,afterany:3");

  StatusOr<Dependency> any = ParseDependency("afterok:1?afterok:2");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->combine, Dependency::Combine::kAny);
  EXPECT_EQ(any->ToString(), "afterok:1?afterok:2");

  StatusOr<Dependency> after = ParseDependency("after:1+10:2");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->clauses[0].jobs[0].delay_s, 600);
  EXPECT_EQ(after->clauses[0].jobs[1].delay_s, 0);
  EXPECT_EQ(after->ToString(), "after:1+10:2");

  StatusOr<Dependency> single = ParseDependency("singleton");
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->clauses[0].type, DependencyType::kSingleton);
  EXPECT_TRUE(single->clauses[0].jobs.empty());

  StatusOr<Dependency> tasks = ParseDependency("aftercorr:7_3:8_*,AfterNotOK:9");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  EXPECT_EQ(tasks->clauses[0].jobs[0].array_task, 3);
  EXPECT_TRUE(tasks->clauses[0].jobs[1].all_tasks);
  EXPECT_EQ(tasks->clauses[1].type, DependencyType::kAfterNotOk);
  EXPECT_EQ(tasks->ToString(), "aftercorr:7_3:8_*,afternotok:9");

  StatusOr<Dependency> old = ParseDependency("12:13");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->clauses[0].type, DependencyType::kAfterAny);
  EXPECT_EQ(old->ToString(), "afterany:12:13");
  EXPECT_EQ(ParseDependency("afterburstbuffer:4")->clauses[0].type,
            DependencyType::kAfterBurstBuffer);
}

TEST(Dependency, Errors) {
  for (std::string_view bad :
       {"", "x", "afterok", "afterok:", "afterok:abc", "afterok:1,afterany:2?afterok:3",
        "afterok:1+10", "after:1+x", "singleton:3", "afterok:0", "afterok:1,", "?afterok:1",
        "afterok:1_x", "expand:1", "afterok:-1"}) {
    EXPECT_FALSE(ParseDependency(bad).ok()) << bad;
  }
  EXPECT_NE(ErrorOf(ParseDependency("a:1,b:2?c:3").status()).find("not both"), std::string::npos);
}

TEST(OutputPattern, EverySymbol) {
  OutputPatternContext c;
  c.job_id = 128;
  c.job_name = "train";
  c.user = "alice";
  c.node_name = "gpu01";
  c.node_index = 2;
  c.task_id = 3;
  EXPECT_EQ(ExpandOutputPattern("slurm-%j.out", c), "slurm-128.out");
  EXPECT_EQ(ExpandOutputPattern("job%4j.out", c), "job0128.out");
  EXPECT_EQ(ExpandOutputPattern("%x-%u-%N-%n-%t-%%", c), "train-alice-gpu01-2-3-%");
  EXPECT_EQ(ExpandOutputPattern("%J", c), "128.batch");
  EXPECT_EQ(ExpandOutputPattern("%s", c), "batch");
  // Outside arrays %A is the job id and %a Slurm's "no value".
  EXPECT_EQ(ExpandOutputPattern("%A_%a", c), "128_4294967294");
  c.step_id = 0;
  EXPECT_EQ(ExpandOutputPattern("job%J.out", c), "job128.0.out");
  EXPECT_EQ(ExpandOutputPattern("%2t", c), "03");
  c.array_job_id = 120;
  c.array_task_id = 7;
  EXPECT_EQ(ExpandOutputPattern("slurm-%A_%a.out", c), "slurm-120_7.out");
  EXPECT_EQ(ExpandOutputPattern("%4a|%3A", c), "0007|120");
  EXPECT_EQ(ExpandOutputPattern("%20j", c), "0000000128");  // at most 10 wide
  EXPECT_EQ(ExpandOutputPattern("%12N", c), "gpu01");       // no padding for names
}

TEST(OutputPattern, EscapesAndLeftovers) {
  OutputPatternContext c;
  c.job_id = 5;
  EXPECT_EQ(ExpandOutputPattern("out\\%j", c), "out%j");
  EXPECT_EQ(ExpandOutputPattern("a\\\\b%j", c), "a\\b%j");
  EXPECT_EQ(ExpandOutputPattern("%q-%j", c), "%q-5");
  EXPECT_EQ(ExpandOutputPattern("x%", c), "x%");
  EXPECT_EQ(ExpandOutputPattern("x%3", c), "x%3");
  EXPECT_EQ(ExpandOutputPattern("%%j", c), "%j");
}

TEST(OutputPattern, Defaults) {
  EXPECT_EQ(DefaultOutputPattern(false), "slurm-%j.out");
  EXPECT_EQ(DefaultOutputPattern(true), "slurm-%A_%a.out");
  JobRequest r;
  EXPECT_EQ(r.EffectiveStdout(), "slurm-%j.out");
  EXPECT_EQ(r.EffectiveStderr(), "slurm-%j.out");
  r.array = ArraySpec{{{0, 3, 1}}, 0};
  EXPECT_EQ(r.EffectiveStdout(), "slurm-%A_%a.out");
  r.stderr_pattern = "err";
  EXPECT_EQ(r.EffectiveStderr(), "err");
}

TEST(Export, Policies) {
  std::map<std::string, std::string> env = {
      {"HOME", "/home/a"}, {"EDITOR", "vi"}, {"SLURM_CONF", "/etc/slurm.conf"}};
  ExportPolicy all = *ParseExportPolicy("ALL");
  EXPECT_EQ(all.mode, ExportPolicy::Mode::kAll);
  EXPECT_EQ(ResolveExport(all, env), env);

  ExportPolicy none = *ParseExportPolicy("none");
  EXPECT_EQ(none.mode, ExportPolicy::Mode::kNone);
  EXPECT_EQ(ResolveExport(none, env),
            (std::map<std::string, std::string>{{"SLURM_CONF", "/etc/slurm.conf"}}));

  ExportPolicy list = *ParseExportPolicy("EDITOR,ARG1=test,MISSING");
  EXPECT_EQ(list.mode, ExportPolicy::Mode::kList);
  EXPECT_FALSE(list.with_all);
  EXPECT_EQ(ResolveExport(list, env),
            (std::map<std::string, std::string>{
                {"EDITOR", "vi"}, {"ARG1", "test"}, {"SLURM_CONF", "/etc/slurm.conf"}}));
  EXPECT_EQ(list.ToString(), "EDITOR,ARG1=test,MISSING");

  // With ALL the caller's own value wins over the one given.
  ExportPolicy with_all = *ParseExportPolicy("ALL,EDITOR=/bin/emacs,NEW=1");
  EXPECT_TRUE(with_all.with_all);
  std::map<std::string, std::string> got = ResolveExport(with_all, env);
  EXPECT_EQ(got["EDITOR"], "vi");
  EXPECT_EQ(got["NEW"], "1");
  EXPECT_EQ(got["HOME"], "/home/a");
  EXPECT_EQ(with_all.ToString(), "ALL,EDITOR=/bin/emacs,NEW=1");

  ExportPolicy commas = *ParseExportPolicy("PATHS=/a,/b,X=1");
  ASSERT_EQ(commas.vars.size(), 2u);
  EXPECT_EQ(commas.vars[0].second, "/a,/b");
  EXPECT_FALSE(ParseExportPolicy("1BAD").ok());
  EXPECT_FALSE(ParseExportPolicy("=x").ok());
}

}  // namespace
}  // namespace loom::model
