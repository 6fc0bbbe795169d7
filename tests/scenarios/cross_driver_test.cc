// One scheduler, two drivers: the same events through the controller's core (with a fake
// clock: every call takes its time) and through the simulator must give the same start
// decisions, job by job: when each job starts and where. The events are submissions, job
// ends (some failing), holds released later, begin times, dependencies (after with a delay,
// afterany, afterok, afternotok, singleton) and throttled arrays, on a cluster where jobs
// queue; under the `slurm` policy (event, sched_interval and bf_interval passes, with a
// default_queue_depth that bites) and `fcfs` (sched/builtin).
//
// The controller is driven as the simulator orders events (SIM-CONVENTIONS.md): at each
// second, releases first (what the simulator's hold ends), then each submission and each
// job end in start order, each followed by the event pass; then one more event pass (a
// release, a begin time or a delay that time alone ended) and the timed pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "conf/testing/site_text.h"
#include "ctld/controller_core.h"
#include "sched/config.h"
#include "sim/simulator.h"

namespace loom {
namespace {

using ctld::ControllerCore;
using ctld::Effects;
using model::JobState;
using sched::JobId;
using sched::Time;

// One job of the scenario, as a submission (the controller) and as a SimJob (the simulator).
struct Spec {
  Time submit = 0;
  int64_t run = 0;
  int32_t exit_status = 0;
  model::JobRequest request;
  Time release_at = 0;  // submitted held, released then
};

// Where and when a job started: its start time and its nodes with the CPUs it holds there.
using Start = std::pair<Time, std::vector<std::pair<int32_t, int32_t>>>;

Start StartOf(Time t, const sched::Allocation& alloc) {
  Start s{t, {}};
  for (const sched::NodeAlloc& a : alloc) s.second.emplace_back(a.node, a.amount.cpus);
  std::sort(s.second.begin(), s.second.end());
  return s;
}

conf::SiteConfig Site(const std::string& scheduler) {
  auto site = conf::testing::SiteFromText(
      "cross_driver_test",
      "ClusterName=x\nSlurmctldHost=localhost\n" + scheduler +
          "NodeName=n[1-4] CPUs=8 RealMemory=16000\n"
          "PartitionName=batch Nodes=n[1-4] Default=YES MaxTime=1-00:00:00\n");
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

// A queue that keeps the cluster busy, with every kind of wait. Ids: the controller gives
// 1, 2, ... in submission order (an array takes one per task), so specs can name earlier
// jobs by the id they will get.
std::vector<Spec> Scenario(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<Spec> specs;
  JobId next_id = 1;
  Time t = 0;
  std::vector<JobId> earlier, succeeding;
  for (int i = 0; i < 60; ++i) {
    t += pick(0, 40);
    Spec s;
    s.submit = t;
    model::JobRequest& r = s.request;
    r.name = pick(0, 5) == 0 ? "ckpt" : "job" + std::to_string(i);
    r.shape.cpus_per_task = 1;
    r.shape.ntasks = pick(1, 8);
    if (pick(0, 3) == 0) {  // some span nodes
      r.shape.ntasks = pick(9, 24);
      r.shape.min_nodes = 2;
      r.shape.max_nodes = 4;
    }
    r.time_limit_s = pick(2, 20) * 60;
    s.run = std::max<int64_t>(1, *r.time_limit_s - pick(1, 900));
    s.exit_status = pick(0, 4) == 0 ? 1 << 8 : 0;
    const int kind = pick(0, 9);
    if (kind == 0 && !succeeding.empty()) {
      // On a job that succeeds: a dependency never satisfied leaves a job waiting forever,
      // in both drivers.
      r.dependency = *model::ParseDependency(
          "afterok:" + std::to_string(succeeding[pick(0, succeeding.size() - 1)]));
    } else if (kind == 1 && !earlier.empty()) {
      r.dependency = *model::ParseDependency(
          "afterany:" + std::to_string(earlier[pick(0, earlier.size() - 1)]) + "?afternotok:" +
          std::to_string(earlier[pick(0, earlier.size() - 1)]));
    } else if (kind == 2 && !earlier.empty()) {
      r.dependency = *model::ParseDependency("after:" + std::to_string(earlier.back()) + "+1");
    } else if (kind == 3) {
      s.release_at = s.submit + pick(30, 400);
      r.hold = true;
    } else if (kind == 4) {
      r.begin_time = s.submit + pick(10, 300);
    } else if (kind == 5) {
      r.array = *model::ParseArraySpec("0-4%2");
      r.shape.ntasks = pick(1, 4);
    } else if (r.name == "ckpt") {
      r.dependency = *model::ParseDependency("singleton");
    }
    const int64_t count = r.array ? r.array->Count() : 1;
    earlier.push_back(next_id);
    if (s.exit_status == 0) succeeding.push_back(next_id);
    next_id += static_cast<JobId>(count);
    specs.push_back(std::move(s));
  }
  return specs;
}

// What the controller admitted of each job (its request with the cluster's defaults filled
// in, its time limit): the simulator's jobs are those.
struct Admitted {
  model::JobShape shape;
  int64_t time_limit_s = 0;
};

// The controller's core, driven by the scenario's events.
std::map<JobId, Start> RunController(const conf::SiteConfig& site, const std::vector<Spec>& specs,
                                     std::map<JobId, Admitted>* admitted) {
  ControllerCore core(site, ctld::CoreOptions{}, 1);
  const ctld::Caller alice{1001, 1001, "alice"};
  std::map<JobId, Start> starts;
  std::map<JobId, std::pair<int64_t, int32_t>> runs;  // id -> run, exit status
  std::vector<std::tuple<Time, uint64_t, JobId>> ends;  // end, start order, id
  uint64_t start_seq = 0;
  std::vector<std::pair<Time, JobId>> releases;
  auto record = [&](const Effects& fx, Time now) {
    for (const ctld::Launch& l : fx.launches) {
      const ctld::JobEntry* e = core.Find(l.job_id);
      starts[l.job_id] = StartOf(now, e->alloc());
      ends.emplace_back(now + runs.at(l.job_id).first, start_seq++, l.job_id);
    }
  };
  Effects up;
  for (int n = 1; n <= 4; ++n) core.NodeAlive("n" + std::to_string(n), 0, &up);
  size_t next = 0;
  for (Time t = 0; next < specs.size() || !ends.empty() || starts.size() < runs.size(); ++t) {
    if (t > 1'000'000) {
      ADD_FAILURE() << "the controller never started every job";
      break;
    }
    for (auto it = releases.begin(); it != releases.end();) {
      if (it->first != t) {
        ++it;
        continue;
      }
      Effects fx;
      EXPECT_TRUE(core.Release(it->second, alice, &fx).ok());
      it = releases.erase(it);
    }
    for (; next < specs.size() && specs[next].submit == t; ++next) {
      Effects fx;
      auto id = core.Submit(specs[next].request, alice, t, &fx);
      if (!id.ok()) {
        ADD_FAILURE() << id.status();
        return starts;
      }
      const int64_t count = specs[next].request.array ? specs[next].request.array->Count() : 1;
      for (int64_t k = 0; k < count; ++k) {
        runs[*id + k] = {specs[next].run, specs[next].exit_status};
        const ctld::JobEntry* e = core.Find(*id + k);
        (*admitted)[*id + k] = Admitted{e->request->shape, e->job.time_limit_s};
        if (specs[next].release_at) releases.emplace_back(specs[next].release_at, *id + k);
      }
      core.ScheduleEvents(t, &fx);
      record(fx, t);
    }
    std::sort(ends.begin(), ends.end());
    while (!ends.empty() && std::get<0>(ends.front()) == t) {
      const JobId id = std::get<2>(ends.front());
      ends.erase(ends.begin());
      Effects fx;
      core.JobEnded(id, runs.at(id).second, false, t, &fx);
      core.ScheduleEvents(t, &fx);
      record(fx, t);
      std::sort(ends.begin(), ends.end());
    }
    Effects fx;
    core.ScheduleEvents(t, &fx);
    core.ScheduleTimed(t, &fx);
    record(fx, t);
  }
  EXPECT_EQ(core.refused_transitions(), 0);
  return starts;
}

// The same scenario through the simulator.
std::map<JobId, Start> RunSimulator(const conf::SiteConfig& site, std::string_view policy_name,
                                    const std::vector<Spec>& specs,
                                    const std::map<JobId, Admitted>& admitted) {
  std::vector<sim::SimJob> jobs;
  JobId id = 1;
  for (const Spec& s : specs) {
    const model::JobRequest& r = s.request;
    const JobId array_id = id;
    std::vector<int64_t> tasks = r.array ? r.array->Indices() : std::vector<int64_t>{0};
    for (int64_t task : tasks) {
      sim::SimJob j;
      j.id = id;
      j.submit = s.submit;
      j.run = s.run;
      j.estimate = admitted.at(id).time_limit_s;
      j.shape = admitted.at(id).shape;
      j.priority = ctld::DefaultPriority(r, id);
      j.uid = 1001;
      j.name = r.name;
      j.dependency = r.dependency;
      j.begin = r.begin_time;
      j.release_at = s.release_at;
      j.exit_status = s.exit_status;
      if (r.array) {
        j.array_id = array_id;
        j.array_task = task;
        j.array_max_running = r.array->max_running;
      }
      jobs.push_back(std::move(j));
      ++id;
    }
  }
  auto policy = sched::MakePolicy(policy_name, sched::PolicyOptionsFromConfig(site.cluster));
  EXPECT_TRUE(policy.ok());
  std::map<JobId, Start> starts;
  sim::SimOptions opts;
  opts.on_start = [&](const sim::JobRecord& r, const sched::Allocation& alloc) {
    starts[r.id] = StartOf(r.start, alloc);
  };
  const sched::Cluster cluster = sched::ClusterFromSite(site);
  auto result = sim::Simulate(cluster, jobs, **policy, opts);
  EXPECT_TRUE(result.ok()) << result.status();
  return starts;
}

void ExpectSameStarts(const std::string& scheduler, std::string_view policy, uint32_t seed) {
  const conf::SiteConfig site = Site(scheduler);
  ASSERT_EQ(sched::PolicyNameFromConfig(site.cluster), policy);
  const std::vector<Spec> specs = Scenario(seed);
  std::map<JobId, Admitted> admitted;
  const std::map<JobId, Start> ctld = RunController(site, specs, &admitted);
  const std::map<JobId, Start> sim = RunSimulator(site, policy, specs, admitted);
  ASSERT_EQ(ctld.size(), sim.size());
  int64_t later_than_submit = 0;
  for (const auto& [id, start] : sim) {
    ASSERT_TRUE(ctld.count(id)) << "job " << id;
    EXPECT_EQ(ctld.at(id), start) << "job " << id << " (seed " << seed << ")";
    later_than_submit += start.first > specs.front().submit;
  }
  EXPECT_GT(later_than_submit, 0);
}

TEST(CrossDriverTest, SlurmPolicyMakesTheSameDecisionsInBothDrivers) {
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    ExpectSameStarts(
        "SchedulerType=sched/backfill\n"
        "SchedulerParameters=bf_interval=30,sched_interval=45,default_queue_depth=3\n",
        "slurm", seed);
  }
}

TEST(CrossDriverTest, FcfsMakesTheSameDecisionsInBothDrivers) {
  for (uint32_t seed : {5u, 6u}) {
    ExpectSameStarts("SchedulerType=sched/builtin\n", "fcfs", seed);
  }
}

}  // namespace
}  // namespace loom
