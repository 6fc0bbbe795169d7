// What the tests of the controller's core share: a two-node site (n1, n2: 8 CPUs and 4 A100s
// each; partitions batch and small), requests, callers, and a fixture around a ControllerCore.
// Test-only; included by one test file each, so the anonymous namespace is its own there.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "conf/testing/site_text.h"
#include "ctld/controller_core.h"

namespace loom::ctld {
namespace {

using model::JobState;
using model::PendingReason;

conf::SiteConfig Site() {
  auto site = conf::testing::SiteFromText(
      "ctld_core_test",
      "ClusterName=t\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\n"
         "GresTypes=gpu\n"
         "NodeName=n[1-2] CPUs=8 RealMemory=16000 Gres=gpu:a100:4\n"
         "PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=1-00:00:00 DefaultTime=01:00:00\n"
         "PartitionName=small Nodes=n1 MaxTime=01:00:00\n");
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

model::JobRequest Req(int cpus = 1, const std::string& name = "job") {
  model::JobRequest r;
  r.name = name;
  r.shape.ntasks = 1;
  r.shape.cpus_per_task = cpus;
  r.time_limit_s = 600;
  return r;
}

const Caller kAlice{1001, 1001, "alice"};
const Caller kBob{1002, 1002, "bob"};
const Caller kRoot{0, 0, "root"};

class CoreTest : public testing::Test {
 protected:
  CoreTest() : CoreTest(CoreOptions{.kill_wait_s = 30, .slurmd_timeout_s = 300}) {}
  explicit CoreTest(CoreOptions options) : core_(Site(), options, 100) {}
  // Whatever a test did, no rule of the core tried a step the state machine forbids.
  void TearDown() override { EXPECT_EQ(core_.refused_transitions(), 0); }
  void Up(Time now) {
    Effects fx;
    core_.NodeAlive("n1", now, &fx);
    core_.NodeAlive("n2", now, &fx);
  }
  JobId Submit(const model::JobRequest& r, const Caller& who = kAlice, Time now = 0) {
    Effects fx;
    auto id = core_.Submit(r, who, now, &fx);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : 0;
  }
  Effects Schedule(Time now) {
    Effects fx;
    core_.Schedule(now, &fx);
    return fx;
  }
  JobState State(JobId id) { return core_.Find(id)->job.state; }
  // Both nodes taken by one whole-node job each, started at `now`.
  std::pair<JobId, JobId> FillBothNodes(Time now) {
    JobId a = Submit(Req(8));
    JobId b = Submit(Req(8));
    Schedule(now);
    EXPECT_EQ(State(a), JobState::kRunning);
    EXPECT_EQ(State(b), JobState::kRunning);
    return {a, b};
  }
  PendingReason Reason(JobId id) { return core_.Find(id)->job.reason; }
  ControllerCore core_;
};

// Used by the update tests only; each including file has its own copy (anonymous namespace).
[[maybe_unused]] JobEdit PriorityEdit(int64_t priority) {
  JobEdit edit;
  edit.priority = priority;
  return edit;
}

[[maybe_unused]] JobEdit Edit(std::vector<std::pair<std::string, std::string>> fields) {
  auto edit = ParseJobEdit(fields);
  EXPECT_TRUE(edit.ok()) << edit.status();
  return edit.ok() ? *edit : JobEdit{};
}


}  // namespace
}  // namespace loom::ctld
