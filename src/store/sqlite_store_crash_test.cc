// Kills a committing process with SIGKILL at random moments and checks that every batch it
// was told had committed is there after a restart, and that no batch is there in part.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/sqlite_store.h"

namespace loom::store {
namespace {

namespace fs = std::filesystem;

// The child: recovers, then commits batches of 1 to 5 new jobs (plus the next job id and a
// named value) until killed, writing the last job id of each acknowledged batch to `fd`.
[[noreturn]] void CommitUntilKilled(const std::string& dir, int fd, uint32_t seed) {
  SqliteStoreOptions options;
  options.state_save_location = dir;
  auto store = OpenSqliteStore(options);
  if (!store.ok()) {
    std::fprintf(stderr, "child: %s\n", std::string(store.status().message()).c_str());
    _exit(2);
  }
  auto snap = (*store)->Recover();
  if (!snap.ok()) _exit(3);
  model::JobId next = snap->next_job_id == 0 ? 1 : snap->next_job_id;
  std::mt19937 rng(seed);
  for (;;) {
    const int jobs = 1 + static_cast<int>(rng() % 5);
    Batch batch;
    for (int i = 0; i < jobs; ++i) {
      JobRecord j;
      j.id = next + i;
      j.request_id = j.id;
      j.name = "crash";
      batch.Add(PutRequest{j.id, std::string(100 + rng() % 4000, 'r')}).Add(PutJob{j});
      // A later change to an earlier job writes only its progress.
      if (j.id > 1) {
        JobProgress earlier;
        earlier.id = j.id - 1;
        earlier.priority = 1;
        batch.Add(UpdateJob{earlier});
      }
    }
    next += jobs;
    batch.Add(SetNextJobId{next}).Add(PutValue{"last", std::to_string(next - 1)});
    if (!(*store)->Commit(batch).ok()) _exit(4);
    const uint64_t acked = next - 1;
    if (write(fd, &acked, sizeof(acked)) != sizeof(acked)) _exit(5);
  }
}

TEST(SqliteStoreCrashTest, EveryAcknowledgedBatchSurvivesSigkill) {
  const fs::path dir =
      fs::path(testing::TempDir()) / ("loom_store_crash_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);

  uint64_t max_acked_overall = 0;
  constexpr int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      CommitUntilKilled(dir.string(), fds[1], rng());
    }
    close(fds[1]);

    // Collect acknowledgements until a random moment, then kill the child mid-stride.
    std::vector<uint64_t> acked;
    const auto read_some = [&](int timeout_ms) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, timeout_ms) <= 0) return false;
      uint64_t buf[512];
      const ssize_t n = read(fds[0], buf, sizeof(buf));
      if (n <= 0) return false;
      EXPECT_EQ(n % sizeof(uint64_t), 0u);
      acked.insert(acked.end(), buf, buf + n / sizeof(uint64_t));
      return true;
    };
    const auto kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(rng() % 400);
    while (std::chrono::steady_clock::now() < kill_at) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          kill_at - std::chrono::steady_clock::now());
      read_some(static_cast<int>(std::max<int64_t>(1, left.count())));
    }
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
        << "the child ended on its own, status " << wstatus << " (round " << round << ")";
    while (read_some(0)) {
    }
    close(fds[0]);

    SqliteStoreOptions options;
    options.state_save_location = dir.string();
    auto store = OpenSqliteStore(options);
    ASSERT_TRUE(store.ok()) << store.status();
    auto snap = (*store)->Recover();
    ASSERT_TRUE(snap.ok()) << snap.status();

    for (uint64_t a : acked) max_acked_overall = std::max(max_acked_overall, a);
    // Every acknowledged batch is there (a child killed before its first acknowledgement
    // may have left nothing) ...
    if (max_acked_overall > 0) {
      ASSERT_GE(snap->next_job_id, max_acked_overall + 1) << "round " << round;
    }
    // ... and batches are whole: the jobs are exactly 1 .. next_job_id - 1.
    ASSERT_EQ(snap->jobs.size(), snap->next_job_id == 0 ? 0 : snap->next_job_id - 1);
    for (size_t i = 0; i < snap->jobs.size(); ++i) ASSERT_EQ(snap->jobs[i].id, i + 1);
    ASSERT_EQ(snap->requests.size(), snap->jobs.size());
    if (snap->next_job_id > 0) {
      EXPECT_EQ(snap->values.at("last"), std::to_string(snap->next_job_id - 1));
    }
    // What the store holds past the last acknowledgement (committed, killed before the
    // child could report it) counts as acknowledged for the next round.
    max_acked_overall = snap->next_job_id == 0 ? 0 : snap->next_job_id - 1;
    RecordProperty("round_" + std::to_string(round) + "_acked", std::to_string(acked.size()));
  }
  EXPECT_GT(max_acked_overall, 0u) << "no batch was ever acknowledged";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace loom::store
