// Runs the built `scontrol` (a link to the loom binary) as a user would and compares its
// standard output, standard error and exit status with Slurm 22.05.8's for every row of
// tests/data/slurm-22.05.8-scontrol-hostlist-golden.tsv, plus the offline scontrol outputs of the
// reference cluster.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/support/run_command.h"

namespace loom::cli {
namespace {

using ::testing::HasSubstr;

using Result = ::loom::testing::CommandResult;
using ::loom::testing::ReadWholeFile;

// Runs scontrol with `args`, without SLURM_NODELIST unless `env` sets it.
Result Scontrol(const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env = {}) {
  return ::loom::testing::RunCommand(LOOM_BIN_DIR "/scontrol", args, env, {"SLURM_NODELIST"});
}

// "a b c" joined by `sep` in the TSV -> "a\nb\nc\n" as printed.
std::string Lines(std::string_view joined, char sep) {
  if (joined.empty()) return "";
  std::string out;
  for (std::string_view line : core::Split(joined, sep)) out += core::StrCat(line, "\n");
  return out;
}

TEST(ScontrolGoldenTest, EveryRowByteForByte) {
  std::ifstream in(LOOM_SOURCE_DIR "/tests/data/slurm-22.05.8-scontrol-hostlist-golden.tsv");
  ASSERT_TRUE(in);
  std::string line;
  std::getline(in, line);  // header
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++rows;
    std::vector<std::string_view> f = core::Split(line, '\t');
    ASSERT_EQ(f.size(), 6u) << line;
    std::string input(f[0]);
    SCOPED_TRACE(core::StrCat("input `", input, "'"));

    Result hostnames = Scontrol({"show", "hostnames", input});
    EXPECT_EQ(hostnames.exit_status, std::atoi(std::string(f[1]).c_str()));
    EXPECT_EQ(hostnames.out, Lines(f[2], ' '));
    EXPECT_EQ(hostnames.err, Lines(f[3], '|'));

    if (!f[4].empty()) {
      std::string hosts;
      for (std::string_view h : core::Split(f[2], ' '))
        hosts += core::StrCat(hosts.empty() ? "" : ",", h);
      Result hostlist = Scontrol({"show", "hostlist", hosts});
      EXPECT_EQ(hostlist.exit_status, std::atoi(std::string(f[4]).c_str()));
      EXPECT_EQ(hostlist.out, core::StrCat(f[5], "\n"));
      EXPECT_EQ(hostlist.err, "");
    }
  }
  EXPECT_GE(rows, 55);
}

// bench/slurm-ref/reference-outputs-noacct/{01,02,03,76}-*.txt
TEST(ScontrolGoldenTest, ReferenceClusterOutputs) {
  Result r = Scontrol({"show", "hostnames", "gpu-[01-04,07]"});
  EXPECT_EQ(r.out, "gpu-01\ngpu-02\ngpu-03\ngpu-04\ngpu-07\n");
  EXPECT_EQ(r.exit_status, 0);
  r = Scontrol({"show", "hostlist", "gpu-01,gpu-02,gpu-03"});
  EXPECT_EQ(r.out, "gpu-[01-03]\n");
  EXPECT_EQ(r.exit_status, 0);
  r = Scontrol({"show", "hostlistsorted", "gpu-03,gpu-01,gpu-02,n[001-003],gpu-10"});
  EXPECT_EQ(r.out, "gpu-[01-03,10],n[001-003]\n");
  EXPECT_EQ(r.exit_status, 0);
  r = Scontrol({"show", "hostnames", "gpu-[01-"});
  EXPECT_EQ(r.out, "gpu-]\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.exit_status, 0);
}

// Behaviours checked against Slurm 22.05.8's scontrol by hand.
TEST(ScontrolTest, CommandLineLikeSlurm) {
  EXPECT_EQ(Scontrol({"show", "hostnames"}).err, "scontrol: error: host list is empty\n");
  EXPECT_EQ(Scontrol({"show", "hostnames"}, {{"SLURM_NODELIST", "a[1-2]"}}).out, "a1\na2\n");
  EXPECT_EQ(Scontrol({"show", "hostn", "n[1-2]"}).out, "n1\nn2\n");
  EXPECT_EQ(Scontrol({"SHOW", "HOSTNAMES=n[1-2]"}).out, "n1\nn2\n");
  EXPECT_EQ(Scontrol({"show", "hostnames", "n1", "-o"}).out, "n1\n");  // options anywhere
  EXPECT_EQ(Scontrol({"show", "hostnames", "--", "-5"}).out, "-5\n");
  EXPECT_EQ(Scontrol({"show", "hostlists", "n2,n1"}).out, "n[1-2]\n");

  Result r = Scontrol({"show", "hostlist", "n[3-1]"});
  EXPECT_EQ(r.exit_status, 1);  // unlike show hostnames
  EXPECT_EQ(
      r.err,
      "scontrol: error: _parse_single_range: Invalid range: `3-1'\nInvalid hostlist: n[3-1]\n");
  r = Scontrol({"show", "hostnames", "n1", "n2"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.err, "too many arguments for keyword:show\n");
  r = Scontrol({"show", "host", "n1"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.err, "invalid entity:host for keyword:show \n");
  EXPECT_EQ(Scontrol({"-Q", "show", "host", "n1"}).err, "");
  r = Scontrol({"sh", "hostnames", "n1"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.err, "invalid keyword: sh\n");
  r = Scontrol({"-q"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.err,
            "scontrol: invalid option -- 'q'\nTry \"scontrol --help\" for more information\n");
  r = Scontrol({"show", "hostlist"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.err, "invalid encode argument\n");
  r = Scontrol({"show", "hostlist", "/nonexistent/hosts"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.err, "Can not open /nonexistent/hosts\n");
}

TEST(ScontrolTest, HostFile) {
  char path[] = "/tmp/scontrol_hosts_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string content = "n1\nn2\n n3,n5\n";
  ASSERT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  close(fd);
  EXPECT_EQ(Scontrol({"show", "hostlist", path}).out, "n[1-3,5]\n");
  EXPECT_EQ(Scontrol({"show", "hostlistsorted", path}).out, "n[1-3,5]\n");
  // show hostnames does not read files.
  EXPECT_EQ(Scontrol({"show", "hostnames", path}).out, std::string(path) + "\n");
  unlink(path);
}

TEST(ScontrolTest, ControllerCommandsNameTheConfigurationTheyCannotRead) {
  // These go to loomctld, found through slurm.conf; without one they say which file.
  setenv("SLURM_CONF", "/nonexistent/slurm.conf", 1);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"show", "job", "1"},
                                             {"show", "nodes"},
                                             {"update", "JobId=1", "TimeLimit=5"},
                                             {"ping"}}) {
    Result r = Scontrol(args);
    EXPECT_EQ(r.exit_status, 1) << args[0];
    EXPECT_THAT(r.err, HasSubstr("/nonexistent/slurm.conf")) << args[0];
  }
  unsetenv("SLURM_CONF");
}

TEST(ScontrolTest, CommandsLoomLacksSaySo) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"show", "licenses"}, {"suspend", "1"}}) {
    Result r = Scontrol(args);
    EXPECT_EQ(r.exit_status, 1) << args[0];
    EXPECT_THAT(r.err, HasSubstr("not supported by Loom yet")) << args[0];
  }
}

}  // namespace
}  // namespace loom::cli
