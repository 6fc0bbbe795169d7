#include "cli/submit/salloc_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace loom::cli::submit {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1700000000;

StatusOr<SallocInput> Parse(std::vector<std::string> args,
                            std::map<std::string, std::string> env = {{"PWD", "/home/alice"},
                                                                      {"SHELL", "/bin/zsh"}}) {
  args.insert(args.begin(), "salloc");
  return ParseSalloc(args, env, kNow);
}

TEST(SallocOptions, AnAllocationOnlyJobNamedAfterItsCommand) {
  auto in = Parse({"-N2", "-n8", "-t", "10", "-p", "batch", "mpirun", "-np", "8", "a.out"});
  ASSERT_TRUE(in.ok()) << in.status();
  const model::JobRequest& r = in->request;
  EXPECT_TRUE(r.allocation_only);
  EXPECT_FALSE(r.srun.has_value());
  EXPECT_EQ(r.requeue, false);
  EXPECT_EQ(r.min_nodes, 2);
  EXPECT_EQ(r.ntasks, 8);
  EXPECT_EQ(r.time_limit_s, 600);
  EXPECT_EQ(r.name, "mpirun");
  EXPECT_EQ(r.work_dir, "/home/alice");
  EXPECT_EQ(in->command, (std::vector<std::string>{"mpirun", "-np", "8", "a.out"}));
}

TEST(SallocOptions, NoCommandRunsTheUsersShell) {
  auto in = Parse({"-N1"});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_TRUE(in->command.empty());
  EXPECT_EQ(in->request.name, "zsh");
  auto named = Parse({"-J", "dev"});
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->request.name, "dev");
}

TEST(SallocOptions, ErrorsSpeakAsSalloc) {
  EXPECT_THAT(std::string(Parse({"--frobnicate"}).status().message()),
              HasSubstr("salloc: unrecognized option '--frobnicate'"));
  EXPECT_THAT(std::string(Parse({"-t", "soon"}).status().message()), HasSubstr("salloc: error:"));
  EXPECT_THAT(std::string(Parse({"--label", "true"}).status().message()),
              HasSubstr("salloc: error: --label is an option of srun's"));
  EXPECT_EQ(Parse({"--help"})->action, SallocInput::Action::kHelp);
}

TEST(SallocOptions, SallocVariablesAreDefaults) {
  auto in = Parse({}, {{"SALLOC_PARTITION", "debug"}, {"SALLOC_TIMELIMIT", "5"}});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->request.partitions, (std::vector<std::string>{"debug"}));
  EXPECT_EQ(in->request.time_limit_s, 300);
  auto over = Parse({"-p", "batch"}, {{"SALLOC_PARTITION", "debug"}});
  ASSERT_TRUE(over.ok());
  EXPECT_EQ(over->request.partitions, (std::vector<std::string>{"batch"}));
}

}  // namespace
}  // namespace loom::cli::submit
