// What the sbatch parsing tests share: a fixed clock and script, and ParseSbatch called as
// the command line gives it, with its error checked as sbatch prints it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/submit/sbatch_options.h"
#include "core/strings.h"

namespace loom::cli::submit::sbatch_test {

using model::JobRequest;
using Env = std::map<std::string, std::string>;

inline constexpr int64_t kNow = 1'800'000'000;  // 2027-01-15T08:00:00Z
inline constexpr std::string_view kScript = "#!/bin/sh\ntrue\n";

inline std::vector<std::string> Argv(std::vector<std::string> args) {
  args.insert(args.begin(), "sbatch");
  return args;
}

inline StatusOr<SbatchInput> Parse(std::vector<std::string> args, std::string_view script = kScript,
                                   const Env& env = {}, const SbatchSettings& settings = {}) {
  return ParseSbatch(Argv(std::move(args)), script, env, kNow, settings);
}

inline JobRequest Request(std::vector<std::string> args, std::string_view script = kScript,
                          const Env& env = {}) {
  StatusOr<SbatchInput> in = Parse(std::move(args), script, env);
  EXPECT_TRUE(in.ok()) << in.status();
  return in.ok() ? in->request : JobRequest{};
}

// Expects Parse to fail with exactly `text` and exit status `exit`.
inline void ExpectError(std::vector<std::string> args, std::string_view text, int exit,
                        std::string_view script = kScript, const Env& env = {}) {
  StatusOr<SbatchInput> in = Parse(args, script, env);
  ASSERT_FALSE(in.ok()) << "accepted: " << core::StrCat(args.empty() ? "" : args[0]);
  EXPECT_EQ(std::string(in.status().message()), text);
  EXPECT_EQ(SbatchExitCode(in.status()), exit);
}

}  // namespace loom::cli::submit::sbatch_test
