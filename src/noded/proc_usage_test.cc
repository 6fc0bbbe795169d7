#include "noded/proc_usage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace loom::noded {
namespace {

void Stat(const std::string& proc, int pid, const std::string& comm, int session, long majflt,
          long utime, long stime, long cutime, long vsize, long rss) {
  std::filesystem::create_directories(proc + "/" + std::to_string(pid));
  // Fields 3..24 after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt
  // majflt cmajflt utime stime cutime cstime prio nice threads itreal start vsize rss.
  std::ofstream(proc + "/" + std::to_string(pid) + "/stat")
      << pid << " (" << comm << ") S 1 " << session << " " << session << " 0 -1 0 0 0 "
      << majflt << " 1 " << utime << " " << stime << " " << cutime << " 0 20 0 1 0 100 "
      << vsize << " " << rss << " 0 0 0\n";
}

TEST(SessionUsageTest, SumsTheSessionsProcessesOnly) {
  const std::string proc = testing::TempDir() + "/fake_proc";
  std::filesystem::remove_all(proc);
  const long hz = ::sysconf(_SC_CLK_TCK);
  const long page = ::sysconf(_SC_PAGESIZE);
  Stat(proc, 100, "sh", 100, 2, hz, 0, 0, 1000, 10);          // the task
  Stat(proc, 101, "a (weird) name", 100, 1, hz, hz, hz, 3000, 5);  // its child
  Stat(proc, 200, "other", 200, 9, 9 * hz, 0, 0, 9000, 90);  // someone else's
  std::filesystem::create_directories(proc + "/self");       // not a pid
  ProcessUsage u = SessionsUsage({100}, proc)[100];
  EXPECT_EQ(u.processes, 2);
  EXPECT_EQ(u.cpu_usec, 4 * 1000000);  // 1 s + (1 + 1 + 1) s
  EXPECT_EQ(u.rss_bytes, 15 * page);
  EXPECT_EQ(u.vsize_bytes, 4000);
  EXPECT_EQ(u.major_faults, 2 + 1 + 1 + 1);  // majflt and cmajflt of each
  EXPECT_FALSE(SessionsUsage({300}, proc).contains(300));
  auto both = SessionsUsage({100, 200, 300}, proc);
  EXPECT_EQ(both.size(), 2u);  // 300 has no process
  EXPECT_EQ(both[100].processes, 2);
  EXPECT_EQ(both[200].rss_bytes, 90 * page);
}

TEST(SessionUsageTest, ThisProcessOnTheRealProcTree) {
  ProcessUsage u = SessionsUsage({::getsid(0)})[::getsid(0)];
  EXPECT_GE(u.processes, 1);
  EXPECT_GT(u.rss_bytes, 0);
}

}  // namespace
}  // namespace loom::noded
