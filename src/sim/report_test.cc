// The charts `loom sim --plot DIR` draws, with gnuplot (scripts/install-deps installs it).
#include "sim/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace loom::sim {
namespace {

TEST(WritePlots, AnyCharacterInTheDirectorysNameIsJustThatCharacter) {
  // gnuplot runs without a shell: a quote, a space or a `$(...)` in the name draws the charts
  // where asked and runs nothing else.
  const std::filesystem::path base =
      std::filesystem::temp_directory_path() / ("report_test." + std::to_string(::getpid()));
  std::filesystem::create_directories(base);
  const std::filesystem::path dir = base / "it's a $(touch pwned) dir";
  ReportHeader h;
  h.trace = "tiny's trace";
  SimResult r;
  r.policy = "easy";
  r.total_cpus = 8;
  r.jobs.push_back(JobRecord{.id = 1, .submit = 0, .start = 0, .run = 100, .cpus = 4});
  r.jobs.push_back(JobRecord{.id = 2, .submit = 10, .start = 100, .run = 50, .cpus = 8});
  r.samples = {Sample{.time = 0, .busy_cpus = 4}, Sample{.time = 10, .busy_cpus = 4, .queued = 1},
               Sample{.time = 100, .busy_cpus = 8}, Sample{.time = 150, .busy_cpus = 0}};
  Status s = WritePlots(dir.string(), h, {r});
  ASSERT_TRUE(s.ok()) << s;
  for (const char* chart : {"utilization.png", "queue.svg", "wait-cdf.png"}) {
    EXPECT_GT(std::filesystem::file_size(dir / chart), 0u) << chart;
  }
  EXPECT_FALSE(std::filesystem::exists("pwned"));
  EXPECT_FALSE(std::filesystem::exists(base / "pwned"));
  std::filesystem::remove_all(base);
}

// A run with fair share: its chart of usage shares, named after the run (a GPU run's name
// has a slash), and the fairness table.
TEST(WritePlots, FairShareChartsAndTable) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("report_test_fs." + std::to_string(::getpid()));
  SimResult r;
  r.policy = "topo/easy+fairshare";
  r.total_cpus = 8;
  r.jobs.push_back(
      JobRecord{.id = 1, .submit = 0, .start = 0, .run = 100, .cpus = 4, .account = 0});
  r.jobs.push_back(
      JobRecord{.id = 2, .submit = 0, .start = 30, .run = 50, .cpus = 4, .account = 1});
  r.jobs.push_back(
      JobRecord{.id = 3, .submit = 0, .start = 10, .run = 50, .cpus = 4, .account = 1});
  r.samples = {Sample{.time = 0, .busy_cpus = 8}, Sample{.time = 150, .busy_cpus = 0}};
  r.shares.accounts = {"physics", "chem"};
  r.shares.shares = {0.75, 0.25};
  r.shares.samples = {ShareSample{.time = 0, .usage = {0, 0}, .waiting = {1, 1}},
                      ShareSample{.time = 60, .usage = {3, 1}, .waiting = {1, 1}},
                      ShareSample{.time = 120, .usage = {1, 1}, .waiting = {0, 1}}};
  ReportHeader h;
  h.trace = "t";
  Status s = WritePlots(dir.string(), h, {r});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_GT(std::filesystem::file_size(dir / "shares-topo-easy+fairshare.png"), 0u);
  std::filesystem::remove_all(dir);

  const Fairness f = SummarizeFairness(r);
  EXPECT_DOUBLE_EQ(f.jain_index, 1.0);  // 3:1 against 0.75/0.25; the last sample has one waiting
  EXPECT_DOUBLE_EQ(f.accounts[0].usage_share, (0.75 + 0.5) / 2);  // the all-zero sample counts not
  EXPECT_EQ(f.accounts[1].jobs, 2);
  EXPECT_DOUBLE_EQ(f.accounts[1].mean_wait_s, 20);
  std::ostringstream os;
  WriteFairnessTable(os, {f});
  EXPECT_NE(os.str().find("\nJain's index                              1.0000\n"),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("\nchem [0.2500] wait (s)                      20.0\n"),
            std::string::npos)
      << os.str();
}

}  // namespace
}  // namespace loom::sim
