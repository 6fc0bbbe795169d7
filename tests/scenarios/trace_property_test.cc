// Property tests on real workload traces: whatever the policy, no resource is ever
// over-allocated and no job starts before it is submitted; with exact runtimes a
// backfilled job never delays a job holding a reservation; EASY matches an independent,
// line-by-line implementation of the published conventions (SIM-CONVENTIONS.md) on every
// job; work (run time x processors) is the same under every policy.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <queue>

#include "sched/backfill/policy.h"
#include "sched/plan/timeline.h"
#include "sim/maintenance.h"
#include "sim/simulator.h"
#include "sim/swf.h"
#include "sim/workload.h"
#include "tests/support/sanitized.h"

namespace loom {
namespace {

std::string BundledTrace() {
  return std::string(LOOM_SOURCE_DIR) + "/data/swf/KTH-SP2-1996-2.1-cln.swf.gz";
}

// Traces of the shared data directory that are small enough for a unit test run.
std::vector<std::string> Traces() {
  std::vector<std::string> out = {BundledTrace()};
  std::string shared = std::string(LOOM_SHARED_DIR) + "/data/swf/";
  for (const char* f : {"LLNL-Atlas-2006-2.1-cln.swf.gz"}) {
    if (std::filesystem::exists(shared + f)) out.push_back(shared + f);
  }
  return out;
}

sim::SwfTrace Load(const std::string& path) {
  auto t = sim::ReadSwfFile(path, {});
  EXPECT_TRUE(t.ok()) << t.status();
  // Under a sanitizer, KTH's first 4,000 jobs (all of it takes 100 s there): every property
  // holds on any prefix. Atlas stays whole: its prefixes have no contention to check.
  if (test_support::kSanitized && path == BundledTrace() && t->jobs.size() > 4000) {
    t->jobs.resize(4000);
  }
  return *t;
}

// No over-allocation, checked from the records alone: sweep starts and ends.
void ExpectNeverOverAllocated(const sim::SimResult& r, int64_t cpus) {
  std::vector<std::pair<sched::Time, int64_t>> ev;
  for (const auto& j : r.jobs) {
    ev.emplace_back(j.start, j.cpus);
    ev.emplace_back(j.start + j.run, -j.cpus);
  }
  std::sort(ev.begin(), ev.end());  // ends (negative) before starts at one time
  int64_t used = 0;
  for (const auto& [t, d] : ev) {
    used += d;
    ASSERT_LE(used, cpus) << r.policy << " over-allocates at t=" << t;
  }
}

// Wraps a policy and checks every pass: the running jobs, the jobs it starts and the
// reservations it makes (kept or for the pass only) fit on the cluster together at every
// moment, so nothing started in the pass takes what a reservation was promised.
class CheckingPolicy : public sched::Policy {
 public:
  explicit CheckingPolicy(std::unique_ptr<sched::Policy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  int64_t periodic_interval() const override { return inner_->periodic_interval(); }
  int64_t conflicts() const { return conflicts_; }
  const std::string& first_conflict() const { return first_; }

  void Pass(const sched::PassInput& in, sched::PassOutput* out) override {
    inner_->Pass(in, out);
    std::vector<sched::Resources> caps;
    for (const auto& n : in.cluster->nodes) caps.push_back(n.capacity);
    sched::Timeline t;
    t.Reset(caps, in.now);
    auto add = [&](const sched::Allocation& a, sched::Time from, int64_t est) {
      t.Add(a, from, sched::SaturatingAdd(from, est));
    };
    for (const auto& r : in.running) {
      if (r.end > in.now) t.Add(r.alloc, in.now, r.end);
    }
    for (const auto& s : out->starts) {
      // Conservative starts jobs from reservations it already listed as kept; count once.
      add(s.alloc, in.now, in.pending[s.pending_index].estimate);
    }
    for (const auto& [i, res] : out->reservations) add(res.alloc, res.start, in.pending[i].estimate);
    for (const auto& [i, res] : out->transient_reservations) {
      add(res.alloc, res.start, in.pending[i].estimate);
    }
    for (int32_t n = 0; n < t.num_nodes(); ++n) {
      // More than the node has must never be in use, now or later.
      if (t.Overbooked(n)) {
        if (conflicts_++ == 0) {
          first_ = "pass at " + std::to_string(in.now) + " over-commits node " +
                   std::to_string(n);
        }
      }
    }
  }

 private:
  std::unique_ptr<sched::Policy> inner_;
  int64_t conflicts_ = 0;
  std::string first_;
};

class TraceTest : public testing::TestWithParam<std::string> {};

TEST_P(TraceTest, BackfillNeverDelaysAReservationWithExactRuntimes) {
  sim::SwfTrace trace = Load(GetParam());
  sched::Cluster cluster = sim::SwfCluster(trace);
  std::vector<sim::SimJob> jobs = sim::SwfJobs(trace, sim::EstimateKind::kExact);
  double work = -1;
  for (std::string_view name : sched::PolicyNames()) {
    SCOPED_TRACE(name);
    sched::PolicyOptions opts;
    // Rounding reservations up to bf_resolution makes promises that exact-time starts
    // can overtake; the invariant is about the scheduling logic, so use 1 s.
    opts.bf_resolution_s = 1;
    auto policy = sched::MakePolicy(name, opts);
    ASSERT_TRUE(policy.ok());
    CheckingPolicy checked(std::move(*policy));
    auto r = sim::Simulate(cluster, jobs, checked, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(checked.conflicts(), 0) << checked.first_conflict();
    ExpectNeverOverAllocated(*r, trace.machine_procs);
    int64_t reserved = 0, late = 0;
    double w = 0;
    for (const auto& j : r->jobs) {
      ASSERT_GE(j.start, j.submit);
      ASSERT_EQ(j.end, j.start + j.run);
      w += static_cast<double>(j.run) * static_cast<double>(j.cpus);
      if (j.promised_start >= sched::kNever) continue;
      ++reserved;
      // Slurm's main scheduler blocks a partition behind its first blocked job, so a
      // lower-priority job reserved in a hole may wait for the next backfill cycle; the
      // job at the head of the partition must start on time.
      // Slurm's reservations last one backfill cycle and its main scheduler starts nothing
      // behind a partition's first blocked job, so a job reserved in a hole may start a
      // cycle late and push later holes back. The promise that must hold is the one made
      // to that first blocked job; every other one is checked within its pass below.
      if (name == "slurm" && !j.promised_as_head) continue;
      if (j.start > j.promised_start && late++ < 5) {
        ADD_FAILURE() << "job " << j.id << " submit " << j.submit << " start " << j.start
                      << " promised " << j.promised_start << " head " << j.promised_as_head
                      << " run " << j.run << " cpus " << j.cpus;
      }
    }
    EXPECT_EQ(late, 0) << late << " of " << reserved << " reserved jobs started late";
    if (name != "fcfs") EXPECT_GT(reserved, 0);
    if (work < 0) work = w;
    EXPECT_DOUBLE_EQ(w, work) << "work differs between policies";
  }
}

INSTANTIATE_TEST_SUITE_P(Traces, TraceTest, testing::ValuesIn(Traces()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string s = std::filesystem::path(info.param).stem().stem();
                           std::replace_if(s.begin(), s.end(),
                                           [](char c) { return !std::isalnum(c); }, '_');
                           return s;
                         });

// An independent EASY implementation written straight from SIM-CONVENTIONS.md rules 6-17:
// processor counts, shadow time and extra processors, no timeline.
std::vector<sched::Time> ReferenceEasy(const std::vector<sim::SimJob>& jobs, int64_t m,
                                       bool sjf) {
  struct Run {
    int32_t job;
    sched::Time start;
  };
  std::vector<sched::Time> start(jobs.size(), -1);
  std::deque<int32_t> queue;
  std::vector<Run> running;
  uint64_t counter = 0;
  using Term = std::tuple<sched::Time, uint64_t, int32_t>;
  std::priority_queue<Term, std::vector<Term>, std::greater<>> terms;
  auto est_end = [&](const Run& r) { return r.start + jobs[r.job].estimate; };
  auto free_at = [&](sched::Time t) {
    int64_t f = m;
    for (const Run& r : running) {
      if (est_end(r) > t) f -= jobs[r.job].shape.ntasks;
    }
    return f;
  };
  auto begin = [&](int32_t j, sched::Time now) {
    start[j] = now;
    running.push_back({j, now});
    terms.emplace(now + jobs[j].run, counter++, j);
  };
  auto pass = [&](sched::Time now) {
    while (!queue.empty() && jobs[queue.front()].shape.ntasks <= free_at(now)) {
      begin(queue.front(), now);
      queue.pop_front();
    }
    if (queue.size() < 2) return;
    const int64_t head_procs = jobs[queue.front()].shape.ntasks;
    int64_t free_now = free_at(now);
    std::vector<sched::Time> ends;
    for (const Run& r : running) {
      if (est_end(r) > now) ends.push_back(est_end(r));
    }
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    sched::Time shadow = -1;
    int64_t extra = 0;
    for (sched::Time e : ends) {
      int64_t avail = free_now;
      for (const Run& r : running) {
        if (est_end(r) > now && est_end(r) <= e) avail += jobs[r.job].shape.ntasks;
      }
      if (avail >= head_procs) {
        shadow = e;
        extra = avail - head_procs;
        break;
      }
    }
    std::vector<int32_t> cands(queue.begin() + 1, queue.end());
    if (sjf) {
      std::stable_sort(cands.begin(), cands.end(),
                       [&](int32_t a, int32_t b) { return jobs[a].estimate < jobs[b].estimate; });
    }
    for (int32_t c : cands) {
      int64_t p = jobs[c].shape.ntasks;
      bool ends_before = now + jobs[c].estimate <= shadow;
      if (p <= free_now && (ends_before || p <= extra)) {
        begin(c, now);
        queue.erase(std::find(queue.begin(), queue.end(), c));
        free_now -= p;
        if (!ends_before) extra -= p;
      }
    }
  };
  size_t next = 0;
  while (next < jobs.size() || !terms.empty()) {
    sched::Time t = next < jobs.size() ? jobs[next].submit : INT64_MAX;
    if (!terms.empty()) t = std::min(t, std::get<0>(terms.top()));
    while (next < jobs.size() && jobs[next].submit == t) {
      queue.push_back(static_cast<int32_t>(next++));
      pass(t);
    }
    while (!terms.empty() && std::get<0>(terms.top()) == t) {
      int32_t j = std::get<2>(terms.top());
      terms.pop();
      running.erase(std::find_if(running.begin(), running.end(),
                                 [&](const Run& r) { return r.job == j; }));
      pass(t);
    }
  }
  return start;
}

// Weekly twelve-hour maintenance windows over the whole machine: under every policy no job
// runs into one (over its time limit; the simulator checks every start, and the records are
// checked here again), the windows do hold jobs back (some start the moment one ends), and
// nothing is over-allocated.
TEST(MaintenanceWindows, NoJobRunsIntoOne) {
  sim::SwfTrace trace = Load(BundledTrace());
  sched::Cluster cluster = sim::SwfCluster(trace);
  std::vector<sim::SimJob> jobs = sim::SwfJobs(trace, sim::EstimateKind::kRequested);
  auto spec = sim::ParseMaintenance("7-0,12:00:00,1");
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto windows =
      sim::AddMaintenanceWindows(*spec, jobs.front().submit, jobs.back().submit, &cluster);
  ASSERT_TRUE(windows.ok()) << windows.status();
  ASSERT_GT(*windows, 0);
  for (std::string_view name : sched::PolicyNames()) {
    SCOPED_TRACE(name);
    auto policy = sched::MakePolicy(name, {});
    ASSERT_TRUE(policy.ok());
    CheckingPolicy checked(std::move(*policy));
    auto r = sim::Simulate(cluster, jobs, checked, {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(checked.conflicts(), 0) << checked.first_conflict();
    ExpectNeverOverAllocated(*r, trace.machine_procs);
    int64_t at_window_end = 0;
    for (const auto& j : r->jobs) {
      for (const sched::AdvanceReservation& w : cluster.reservations) {
        ASSERT_TRUE(j.start + j.estimate <= w.start || j.start >= w.end)
            << "job " << j.id << " [" << j.start << ", " << j.start + j.estimate << ") runs into "
            << w.name;
        at_window_end += j.start == w.end;
      }
    }
    EXPECT_GT(at_window_end, 0);
  }
}

TEST(EasyReference, MatchesTheConventionsOnEveryJob) {
  sim::SwfTrace trace = Load(BundledTrace());
  sched::Cluster cluster = sim::SwfCluster(trace);
  for (auto est : {sim::EstimateKind::kRequested, sim::EstimateKind::kExact}) {
    for (bool sjf : {false, true}) {
      SCOPED_TRACE(testing::Message() << "exact=" << (est == sim::EstimateKind::kExact)
                                      << " sjf=" << sjf);
      std::vector<sim::SimJob> jobs = sim::SwfJobs(trace, est);
      std::vector<sched::Time> want = ReferenceEasy(jobs, trace.machine_procs, sjf);
      sched::PolicyOptions opts;
      opts.order = sjf ? sched::BackfillOrder::kShortestFirst : sched::BackfillOrder::kQueue;
      auto policy = sched::MakePolicy("easy", opts);
      auto r = sim::Simulate(cluster, jobs, **policy, {});
      ASSERT_TRUE(r.ok()) << r.status();
      int64_t mismatches = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        if (r->jobs[i].start != want[i] && mismatches++ < 5) {
          ADD_FAILURE() << "job " << jobs[i].id << ": loom " << r->jobs[i].start
                        << ", reference " << want[i];
        }
      }
      EXPECT_EQ(mismatches, 0);
    }
  }
}

}  // namespace
}  // namespace loom
