// The charts `loom sim --plot DIR` draws, with gnuplot (scripts/install-deps installs it).
#include "sim/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

}  // namespace
}  // namespace loom::sim
