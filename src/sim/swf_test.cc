#include "sim/swf.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "sim/workload.h"

namespace loom::sim {
namespace {

// An SWF line from the fields that matter: 2 submit, 4 run, 5 alloc, 8 req procs, 9 req time.
std::string Line(int id, double submit, double run, int alloc, int req, double req_time) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%d %g -1 %g %d -1 -1 %d %g -1 1 3 1 -1 1 -1 -1 -1\n", id,
                submit, run, alloc, req, req_time);
  return buf;
}

TEST(Swf, FilterRulesInOrder) {
  std::string text = "; MaxProcs: 64\n; MaxNodes: 32\n";
  text += Line(1, 0, 100, 8, 8, 200);      // kept
  text += Line(2, 1, 100, 65, 8, 200);     // f5 > m: dropped
  text += Line(3, 2, 100, 8, 65, 200);     // f8 > m: dropped
  text += Line(4, 3, 100, 16, -1, 200);    // f8 missing: procs = f5
  text += Line(5, 4, 100, -1, -1, 200);    // no procs at all: dropped
  text += Line(6, 5, 0, 8, 8, 200);        // no run time: dropped
  text += Line(7, 6, 100, 8, 8, -1);       // no requested time: dropped
  text += Line(8, 7, 300, 8, 8, 200);      // run > requested: run = requested
  text += Line(9, -1, 100, 8, 8, 200);     // negative submit: dropped
  text += Line(10, 8, 0.4, 8, 8, 200);     // f4 > 0 but floors to 0: run is at least 1
  auto t = ParseSwf(text, "t.swf", {});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->machine_procs, 64);
  EXPECT_EQ(t->max_nodes, 32);
  EXPECT_EQ(t->job_lines, 10);
  EXPECT_EQ(t->dropped, 6);
  ASSERT_EQ(t->jobs.size(), 4u);
  EXPECT_EQ(t->jobs[0].id, 1);
  EXPECT_EQ(t->jobs[1].id, 4);
  EXPECT_EQ(t->jobs[1].procs, 16);
  EXPECT_EQ(t->jobs[2].id, 8);
  EXPECT_EQ(t->jobs[2].run, 200);
  EXPECT_EQ(t->jobs[3].run, 1);
  EXPECT_EQ(t->jobs[0].estimate, 200);
}

// Field 17, the preceding job: the job must wait until that one has ended (afterany),
// in the simulator as a dependency would in the controller.
TEST(Swf, PrecedingJobBecomesADependencyTheSimulatorHonours) {
  std::string text = "; MaxProcs: 8\n";
  text += Line(10, 0, 100, 8, 8, 200);  // fills the machine for 100 s
  text += Line(11, 1, 50, 1, 1, -1);    // dropped: no requested time
  std::string follower = Line(12, 5, 10, 1, 1, 60);
  follower.replace(follower.rfind("-1 -1"), 5, "10 0");  // field 17: job 10
  text += follower;
  text += Line(13, 6, 10, 1, 1, 60);  // no dependency
  auto t = ParseSwf(text, "deps.swf", {});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->jobs[1].preceding, 10);
  EXPECT_EQ(t->jobs[2].preceding, -1);
  const std::vector<SimJob> jobs = SwfJobs(*t, EstimateKind::kRequested);
  ASSERT_EQ(jobs[1].dependency.ToString(), "afterany:1");  // renumbered: job 10 is 1
  EXPECT_TRUE(jobs[2].dependency.empty());

  // On a machine with room for all three, job 12 still waits for job 10's end.
  sched::Cluster cluster = SwfCluster(*t);
  cluster.nodes[0].capacity.cpus = 16;
  auto policy = sched::MakePolicy("easy", {});
  ASSERT_TRUE(policy.ok());
  auto r = Simulate(cluster, jobs, **policy, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].start, 0);
  EXPECT_EQ(r->jobs[1].start, 100);
  EXPECT_EQ(r->jobs[2].start, 6);
}

TEST(Swf, MalformedLineIsAnErrorNamingTheLineOrIsSkipped) {
  std::string text = "; MaxProcs: 64\n" + Line(1, 0, 10, 1, 1, 20) + "1 2 3\n" +
                     Line(2, 0, 10, 1, 1, 20) + "1 2 x 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n";
  auto t = ParseSwf(text, "bad.swf", {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.status().message()).find("bad.swf:3:"), std::string::npos)
      << t.status();
  EXPECT_NE(std::string(t.status().message()).find("--skip-bad-lines"), std::string::npos);
  auto s = ParseSwf(text, "bad.swf", {.skip_bad_lines = true});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->bad_lines, 2);
  EXPECT_EQ(s->jobs.size(), 2u);
}

TEST(Swf, MachineSizeFromHeaderOrOption) {
  std::string body = Line(1, 0, 10, 1, 1, 20);
  EXPECT_FALSE(ParseSwf(body, "x", {}).ok());
  EXPECT_EQ(ParseSwf(body, "x", {.machine_procs = 8})->machine_procs, 8);
  EXPECT_EQ(ParseSwf("; MaxNodes: 12\n" + body, "x", {})->machine_procs, 12);
}

TEST(Swf, EstimateFromRuntimeIsOptIn) {
  std::string text = "; MaxProcs: 8\n" + Line(1, 0, 10, 1, 1, -1);
  EXPECT_TRUE(ParseSwf(text, "x", {})->jobs.empty());
  auto t = ParseSwf(text, "x", {.estimate_from_runtime = true});
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].estimate, 10);
  EXPECT_TRUE(t->estimates_from_runtime);
}

TEST(Swf, ReadsPlainAndGzipFiles) {
  std::string text = "; MaxProcs: 8\n" + Line(1, 0, 10, 1, 1, 20) + Line(2, 5, 10, 2, 2, 20);
  auto dir = std::filesystem::temp_directory_path() / "loom_swf_test";
  std::filesystem::create_directories(dir);
  std::string plain = (dir / "t.swf").string(), gz = (dir / "t.swf.gz").string();
  FILE* f = std::fopen(plain.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  gzFile g = gzopen(gz.c_str(), "wb");
  gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
  gzclose(g);
  for (const std::string& p : {plain, gz}) {
    auto t = ReadSwfFile(p, {});
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->jobs.size(), 2u);
  }
  auto missing = ReadSwfFile((dir / "nope.swf").string(), {});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("nope.swf"), std::string::npos);
  // A truncated gzip file is reported, not read as garbage.
  std::string trunc = (dir / "trunc.swf.gz").string();
  std::filesystem::copy_file(gz, trunc, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(trunc, std::filesystem::file_size(gz) - 10);
  EXPECT_FALSE(ReadSwfFile(trunc, {}).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace loom::sim
