// The accounting at scale, through loomdbd's own service on a real store: N job records
// (default 1,000,000) over a 30-day month, 1,000 users in 50 accounts, sent as the
// controller sends them (batches of 500); then sacct's question for one user's month and
// sreport's for the month (the first report rolls the 720 hours up, the second reads the
// rollups), and job sizes by account. Prints figures; no Google Benchmark.
//
//   build/bin/acct_bench [JOBS] [sqlite|pgsql-conninfo...]   (SQLite in a temp dir)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/clock.h"
#include "dbd/service.h"
#include "store/acct_sqlite.h"

namespace {

using namespace loom;
using Steady = std::chrono::steady_clock;

double Since(Steady::time_point t0) {
  return std::chrono::duration<double>(Steady::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t jobs = argc > 1 ? std::atoll(argv[1]) : 1000000;
  constexpr int64_t kMonthStart = 1788220800;  // 2026-09-01T00:00:00Z
  constexpr int64_t kMonth = 30 * 86400;
  constexpr int kUsers = 1000;
  constexpr int kAccounts = 50;
  std::string tmpl = (std::filesystem::temp_directory_path() / "acct_bench.XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return 1;
  auto store = store::OpenSqliteAcctStore({.path = tmpl + "/loom_acct.db"});
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  // The clock stands at the month's start while records come in, then after its end.
  core::SimulatedClock clock(kMonthStart);
  dbd::DbdService service({}, *std::move(store), nullptr, &clock);
  if (!service.Bootstrap().ok()) return 1;
  const dbd::DbdCaller root{0, "root"};

  auto t0 = Steady::now();
  v1::AcctRecordRequest req;
  req.set_cluster("bench");
  req.set_cluster_tres("cpu=64000,mem=512000000M,node=1000,billing=64000,gres/gpu=8000");
  uint64_t seed = 42;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  for (int64_t i = 1; i <= jobs; ++i) {
    v1::AcctJob& a = *req.add_jobs();
    v1::JobInfo& j = *a.mutable_job();
    const int user = static_cast<int>(next() % kUsers);
    const int64_t submit = kMonthStart + static_cast<int64_t>(next() % kMonth);
    const int64_t run = 60 + static_cast<int64_t>(next() % 7200);
    const int cpus = 1 << (next() % 7);
    j.set_job_id(static_cast<uint64_t>(i));
    j.set_array_task_id(-1);
    j.set_name("train");
    j.set_uid(static_cast<uint32_t>(10000 + user));
    j.set_user("user" + std::to_string(user));
    j.set_state("COMPLETED");
    j.set_partition("gpu");
    j.set_submit_time(submit);
    j.set_eligible_time(submit);
    j.set_start_time(submit + 10);
    j.set_end_time(submit + 10 + run);
    j.set_num_cpus(cpus);
    j.set_num_nodes(1);
    j.set_node_list("gpu0001");
    j.set_tres_alloc("cpu=" + std::to_string(cpus) + ",mem=" + std::to_string(cpus * 8000) +
                     "M,node=1,billing=" + std::to_string(cpus) + ",gres/gpu=" +
                     std::to_string(cpus / 8));
    j.mutable_spec()->set_account("acct" + std::to_string(user % kAccounts));
    a.set_qos("normal");
    if (req.jobs_size() == 500 || i == jobs) {
      v1::AcctRecordReply reply;
      if (Status s = service.AcctRecord(root, req, &reply); !s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        return 1;
      }
      req.clear_jobs();
    }
  }
  const double ingest = Since(t0);
  std::printf("ingest: %lld job records in %.1f s = %.0f records/s\n",
              static_cast<long long>(jobs), ingest, static_cast<double>(jobs) / ingest);

  clock.Advance(std::chrono::seconds(kMonth + 86400));
  v1::AcctQueryJobsRequest q;
  q.add_uids(10042);
  q.set_start(kMonthStart);
  q.set_end(kMonthStart + kMonth);
  t0 = Steady::now();
  v1::AcctQueryJobsReply jobs_reply;
  if (!service.AcctQueryJobs(root, q, &jobs_reply).ok()) return 1;
  std::printf("sacct, one user's month: %d jobs in %.3f s\n", jobs_reply.jobs_size(), Since(t0));

  v1::AcctReportRequest r;
  r.set_cluster("bench");
  r.set_start(kMonthStart);
  r.set_end(kMonthStart + kMonth);
  for (const char* pass : {"first (rolls 720 hours up)", "second (reads the rollups)"}) {
    t0 = Steady::now();
    v1::AcctReportReply rep;
    if (Status s = service.AcctReport(root, r, &rep); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
    const double cpu = rep.hours(0).alloc().at("cpu");
    std::printf("sreport cluster utilization, the month, %s: %.3f s (allocated %.0f CPU hours)\n",
                pass, Since(t0), cpu / 3600);
  }
  r.set_kind("sizes");
  t0 = Steady::now();
  v1::AcctReportReply sizes;
  if (!service.AcctReport(root, r, &sizes).ok()) return 1;
  std::printf("sreport job sizesbyaccount, the month: %.3f s (%d accounts)\n", Since(t0),
              sizes.sizes_size());
  std::printf("store: %.0f MB\n",
              static_cast<double>(std::filesystem::file_size(tmpl + "/loom_acct.db")) / 1e6);
  std::filesystem::remove_all(tmpl);
  return 0;
}
