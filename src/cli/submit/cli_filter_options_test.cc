// cli_filter.lua's passes as sbatch's parser runs them, with a stand-in filter: defaults
// below every source, the script's last word above them, refusals and unknown options.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cli/submit/sbatch_options.h"

namespace loom::cli::submit {
namespace {

constexpr int64_t kNow = 1'800'000'000;
constexpr std::string_view kScript = "#!/bin/sh\ntrue\n";

StatusOr<SbatchInput> Parse(std::vector<std::string> args, std::string_view script,
                            const SbatchSettings& settings) {
  args.insert(args.begin(), "sbatch");
  return ParseSbatch(args, script, {}, kNow, settings);
}

// cli_filter.lua as the parser calls it: defaults below every source, the last word above.
class FakeFilter final : public CliFilter {
 public:
  std::map<std::string, std::string> defaults;
  std::map<std::string, std::string> add;  // what pre_submit sets
  bool refuse = false;
  std::map<std::string, std::string> seen;  // what pre_submit was given
  std::string seen_command;

  StatusOr<std::map<std::string, std::string>> SetupDefaults(std::string_view) override {
    return defaults;
  }
  StatusOr<std::map<std::string, std::string>> PreSubmit(
      std::string_view command, const std::map<std::string, std::string>& options) override {
    seen = options;
    seen_command = std::string(command);
    if (refuse) return absl::FailedPreconditionError("cli_filter plugin terminated with error");
    std::map<std::string, std::string> out = options;
    for (const auto& [k, v] : add) out[k] = v;
    return out;
  }
};

TEST(ParseSbatch, CliFilterDefaultsAndLastWord) {
  FakeFilter f;
  f.defaults = {{"partition", "debug"}, {"time", "10"}, {"comment", "site"}};
  f.add = {{"hint", "nomultithread"}, {"gpu-bind", "closest"}};
  SbatchSettings settings;
  settings.cli_filter = &f;
  // The script's directive and the command line override the defaults.
  StatusOr<SbatchInput> in =
      Parse({"--comment=mine", "--exclusive"}, "#!/bin/sh\n#SBATCH -p gpu\ntrue\n", settings);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->request.partitions, std::vector<std::string>{"gpu"});
  EXPECT_EQ(in->request.time_limit_s, 600);
  EXPECT_EQ(in->request.comment, "mine");
  EXPECT_EQ(in->request.hint, "nomultithread");
  EXPECT_EQ(in->request.gpu_bind, "closest");
  EXPECT_EQ(f.seen_command, "sbatch");
  EXPECT_EQ(f.seen.at("partition"), "gpu");
  EXPECT_EQ(f.seen.at("time"), "10");
  EXPECT_EQ(f.seen.at("exclusive"), "set");
}

TEST(ParseSbatch, CliFilterRefusalsAndUnknownOptions) {
  FakeFilter f;
  f.refuse = true;
  SbatchSettings settings;
  settings.cli_filter = &f;
  StatusOr<SbatchInput> refused = Parse({}, kScript, settings);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "sbatch: error: cli_filter plugin terminated with error");
  EXPECT_EQ(SbatchExitCode(refused.status()), 1);
  FakeFilter g;
  g.add = {{"colour", "blue"}};
  settings.cli_filter = &g;
  StatusOr<SbatchInput> unknown = Parse({}, kScript, settings);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "sbatch: error: cli_filter.lua set option 'colour', which sbatch does not have "
            "(options are named as on the command line, without the dashes)");
}

}  // namespace
}  // namespace loom::cli::submit
