// Measures SqliteStore::Commit(): batches per second and job records per second for
// batches of N new jobs, each a submission blob of a given size and its job record, the way
// the controller's group commit writes submissions. The figures are in docs/design/store.md.
//
//   store_commit_bench --dir DIR [--batch-size N] [--seconds S] [--request-bytes B]
//                      [--sync full|normal]
//
// DIR must be on the filesystem to be measured; the database in it is replaced.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "store/sqlite_store.h"

namespace {

using loom::store::Batch;
using loom::store::JobRecord;
using loom::store::PutJob;
using loom::store::SetNextJobId;

int Usage() {
  std::fprintf(stderr,
               "usage: store_commit_bench --dir DIR [--batch-size N] [--seconds S] "
               "[--request-bytes B] [--sync full|normal]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  long batch_size = 1;
  double seconds = 5;
  long request_bytes = 1024;
  std::string sync = "full";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i + 1 >= argc) return Usage();
    const char* value = argv[++i];
    if (arg == "--dir") {
      dir = value;
    } else if (arg == "--batch-size") {
      batch_size = std::strtol(value, nullptr, 10);
    } else if (arg == "--seconds") {
      seconds = std::strtod(value, nullptr);
    } else if (arg == "--request-bytes") {
      request_bytes = std::strtol(value, nullptr, 10);
    } else if (arg == "--sync") {
      sync = value;
    } else {
      return Usage();
    }
  }
  if (dir.empty() || batch_size < 1 || seconds <= 0 || request_bytes < 0 ||
      (sync != "full" && sync != "normal")) {
    return Usage();
  }

  std::filesystem::remove(std::filesystem::path(dir) / "loom.db");
  std::filesystem::remove(std::filesystem::path(dir) / "loom.db-wal");
  loom::store::SqliteStoreOptions options;
  options.state_save_location = dir;
  options.unsafe_skip_fsync_on_commit_for_benchmark = sync == "normal";
  auto store = loom::store::OpenSqliteStore(options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 1;
  }

  JobRecord job;
  job.name = "bench";
  job.user = "alice";
  job.uid = 1001;
  job.gid = 1001;
  job.account = "physics";
  job.partition = "batch";
  const std::string request(static_cast<size_t>(request_bytes), 'r');
  job.submit_time = 1700000000;
  job.eligible_time = 1700000000;
  job.time_limit_s = 3600;

  loom::model::JobId next = 1;
  long batches = 0;
  std::vector<double> latencies_us;
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  auto now = start;
  while (now < until) {
    Batch batch;
    batch.mutations.reserve(2 * static_cast<size_t>(batch_size) + 1);
    for (long i = 0; i < batch_size; ++i) {
      job.id = next++;
      job.request_id = job.id;
      batch.Add(loom::store::PutRequest{job.id, request}).Add(PutJob{job});
    }
    batch.Add(SetNextJobId{next});
    const auto t0 = std::chrono::steady_clock::now();
    const loom::Status status = (*store)->Commit(batch);
    now = std::chrono::steady_clock::now();
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
      return 1;
    }
    latencies_us.push_back(std::chrono::duration<double, std::micro>(now - t0).count());
    ++batches;
  }
  const double elapsed = std::chrono::duration<double>(now - start).count();
  std::sort(latencies_us.begin(), latencies_us.end());
  const auto pct = [&](double p) {
    return latencies_us[static_cast<size_t>(p * static_cast<double>(latencies_us.size() - 1))];
  };
  std::printf(
      "sync=%s batch_size=%ld request_bytes=%ld batches=%ld seconds=%.2f "
      "commits_per_s=%.0f jobs_per_s=%.0f commit_us_p50=%.0f commit_us_p99=%.0f\n",
      sync.c_str(), batch_size, request_bytes, batches, elapsed, batches / elapsed,
      batches * batch_size / elapsed, pct(0.5), pct(0.99));
  return 0;
}
