// Runs the built Slurm-named links (squeue, sinfo, scancel, scontrol, sstat, sdiag) as a user
// would and compares what they say about their command lines with Slurm 22.05.8's: every
// malformed command line of tests/data/slurm-cli/slurm-22.05.8-option-errors.tsv (the message,
// byte for byte, and the exit status), and --help and --usage. None of it needs a controller.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/support/run_command.h"

namespace loom::cli {
namespace {

using ::loom::testing::CommandResult;
using ::loom::testing::ReadWholeFile;
using ::testing::StartsWith;

// A controller that does not exist: a command that got past its options would say so.
const std::map<std::string, std::string> kNoController = {
    {"SLURM_CONF", "/nonexistent/slurm.conf"}};

CommandResult RunSlurmCommand(const std::string& command, const std::vector<std::string>& args) {
  return ::loom::testing::RunCommand(core::StrCat(LOOM_BIN_DIR, "/", command), args, kNoController,
                                     {"POSIXLY_CORRECT"});
}

struct ErrorCase {
  std::vector<std::string> args;
  int exit_status;
  std::string err;
};

// The rows of the golden file for `command`.
std::vector<ErrorCase> ErrorCases(std::string_view command) {
  std::ifstream in(LOOM_SOURCE_DIR "/tests/data/slurm-cli/slurm-22.05.8-option-errors.tsv");
  EXPECT_TRUE(in);
  std::vector<ErrorCase> cases;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string_view> f = core::Split(line, '\t');
    if (f.size() != 4 || f[0] != command) continue;
    ErrorCase c;
    for (std::string_view a : core::Split(f[1], ' ')) c.args.emplace_back(a);
    c.exit_status = std::stoi(std::string(f[2]));
    for (std::string_view l : core::Split(f[3], '|')) c.err += core::StrCat(l, "\n");
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string Golden(std::string_view file) {
  return ReadWholeFile(core::StrCat(LOOM_SOURCE_DIR, "/tests/data/slurm-cli/", file));
}

// Every golden error of `command`, --help, --usage and --version.
void ExpectLikeSlurm(const std::string& command) {
  const std::vector<ErrorCase> cases = ErrorCases(command);
  EXPECT_GE(cases.size(), 5u);
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(core::StrCat(command, " ", core::Join(c.args, " ")));
    CommandResult r = RunSlurmCommand(command, c.args);
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.exit_status, c.exit_status);
    EXPECT_EQ(r.out, "");
  }
  for (std::string_view flag : {"help", "usage"}) {
    SCOPED_TRACE(core::StrCat(command, " --", flag));
    CommandResult r = RunSlurmCommand(command, {core::StrCat("--", flag)});
    EXPECT_EQ(r.out, Golden(core::StrCat(command, "-", flag, ".txt")));
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
  }
  for (std::string_view flag : {"-V", "--version", "--vers"}) {
    CommandResult r = RunSlurmCommand(command, {std::string(flag)});
    EXPECT_EQ(r.out, "slurm-wlm 22.05.8 (loom 0.1.0)\n") << command << " " << flag;
    EXPECT_EQ(r.exit_status, 0);
  }
}

TEST(CommandLineGoldenTest, Squeue) { ExpectLikeSlurm("squeue"); }
TEST(CommandLineGoldenTest, Sinfo) { ExpectLikeSlurm("sinfo"); }
TEST(CommandLineGoldenTest, Scancel) { ExpectLikeSlurm("scancel"); }
TEST(CommandLineGoldenTest, Scontrol) { ExpectLikeSlurm("scontrol"); }
TEST(CommandLineGoldenTest, Sstat) { ExpectLikeSlurm("sstat"); }
TEST(CommandLineGoldenTest, Sdiag) { ExpectLikeSlurm("sdiag"); }

// Checked against Slurm 22.05.8 by hand: the first help-like option ends the scan, so a
// malformed option after it is never reported, and one before it is.
TEST(CommandLineGoldenTest, HelpEndsTheScan) {
  CommandResult r = RunSlurmCommand("squeue", {"--usa", "--bogus"});
  EXPECT_EQ(r.out, Golden("squeue-usage.txt"));
  EXPECT_EQ(r.exit_status, 0);
  r = RunSlurmCommand("sinfo", {"--bogus", "--help"});
  EXPECT_EQ(r.err,
            "sinfo: unrecognized option '--bogus'\nTry \"sinfo --help\" for more information\n");
  EXPECT_EQ(r.exit_status, 1);
}

// squeue takes the list of a bare -j from the next operand (Slurm's rule); any other operand is
// refused with the usage text, as Slurm's squeue does.
TEST(CommandLineGoldenTest, SqueueOperands) {
  CommandResult r = RunSlurmCommand("squeue", {"-j", "x"});
  EXPECT_EQ(r.err, "squeue: error: Invalid job id: x\n");
  EXPECT_EQ(r.exit_status, 1);
  r = RunSlurmCommand("squeue", {"foo"});
  EXPECT_EQ(r.err, "squeue: error: Unrecognized option: foo\n");
  EXPECT_EQ(r.out, Golden("squeue-usage.txt"));
  EXPECT_EQ(r.exit_status, 1);
}

// Options Slurm has and Loom does not honour yet are recognised, abbreviated or not, and say so.
TEST(CommandLineGoldenTest, OptionsLoomLacksSaySo) {
  const std::vector<std::vector<std::string>> lines = {
      {"squeue", "--qos=normal"}, {"squeue", "-i", "5"},          {"sinfo", "--summ"},
      {"scancel", "-b", "12"},    {"sstat", "--pidf", "-j", "1"}, {"sdiag", "-r"},
  };
  for (const std::vector<std::string>& line : lines) {
    CommandResult r =
        RunSlurmCommand(line[0], std::vector<std::string>(line.begin() + 1, line.end()));
    EXPECT_THAT(r.err, StartsWith(core::StrCat(line[0], ": error: --")));
    EXPECT_THAT(r.err, ::testing::HasSubstr("is not supported by Loom yet")) << line[1];
    EXPECT_EQ(r.exit_status, 1) << line[1];
  }
}

// An abbreviation reaches the option it names; options after operands are still options
// (glibc's permutation) unless POSIXLY_CORRECT is set.
TEST(CommandLineGoldenTest, AbbreviationsAndPermutation) {
  // Past its options squeue looks for the controller's configuration.
  CommandResult r = RunSlurmCommand("squeue", {"--for=%i", "--noh", "--us=root"});
  EXPECT_THAT(r.err, StartsWith("squeue: option '--us=root' is ambiguous"));
  r = RunSlurmCommand("squeue", {"--for=%i", "--noh", "--use=root"});
  EXPECT_THAT(r.err, ::testing::HasSubstr("/nonexistent/slurm.conf"));
  r = RunSlurmCommand("scancel", {"12", "--sig"});
  EXPECT_EQ(r.err,
            "scancel: option '--signal' requires an argument\n"
            "Try \"scancel --help\" for more information\n");
  // With POSIXLY_CORRECT the first operand ends the options: "--bogus" is a job id.
  r = ::loom::testing::RunCommand(
      core::StrCat(LOOM_BIN_DIR, "/scancel"), {"12", "--bogus"},
      {{"POSIXLY_CORRECT", "1"}, {"SLURM_CONF", "/nonexistent/slurm.conf"}});
  EXPECT_THAT(r.err, ::testing::HasSubstr("/nonexistent/slurm.conf"));
  EXPECT_EQ(r.exit_status, 1);
}

}  // namespace
}  // namespace loom::cli
