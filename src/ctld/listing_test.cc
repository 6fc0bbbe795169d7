// The published listing is updated from what each batch changed or touched; it must always
// list exactly what converting the whole table lists (FromEntries), however the jobs
// got there: submissions, arrays with throttles, holds, dependencies, scheduling passes
// that change only reasons, ends, cancels, time limits, lost nodes, requeues and purges.
#include "ctld/listing.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/strings.h"
#include "conf/testing/site_text.h"

namespace loom::ctld {
namespace {

using google::protobuf::util::MessageDifferencer;

conf::SiteConfig Site() {
  auto site = conf::testing::SiteFromText(
      "ctld_listing_test",
      "ClusterName=t\nSlurmctldHost=localhost\nSchedulerType=sched/backfill\n"
         "GresTypes=gpu\n"
         "NodeName=n[1-3] CPUs=8 RealMemory=16000 Gres=gpu:a100:4\n"
         "PartitionName=batch Nodes=n[1-3] Default=YES MaxTime=1-00:00:00 DefaultTime=00:01:00\n"
         "PartitionName=small Nodes=n1 MaxTime=01:00:00\n");
  EXPECT_TRUE(site.ok()) << site.status();
  return *site;
}

JobInfoOptions Options() {
  JobInfoOptions o;
  o.cluster_name = "t";
  return o;
}

// The records the old query handler returned: the whole table converted, then filtered.
std::vector<v1::JobInfo> Reference(const ControllerCore& core, const JobFilter& f) {
  std::vector<v1::JobInfo> out;
  for (v1::JobInfo& j : JobsOf(core, Options())) {
    if (!f.ids.empty() && !f.ids.count(j.job_id()) && !f.ids.count(j.array_job_id())) continue;
    if (!f.users.empty() && !f.users.count(j.user())) continue;
    if (!f.partitions.empty() && !f.partitions.count(j.partition())) continue;
    if (!f.states.empty() && !f.states.count(j.state())) continue;
    if (!f.names.empty() && !f.names.count(j.name())) continue;
    out.push_back(std::move(j));
  }
  return out;
}

void ExpectSame(const JobListing& listing, const ControllerCore& core, const JobFilter& f,
                const std::string& where) {
  google::protobuf::RepeatedPtrField<v1::JobInfo> got;
  listing.AppendTo(f, &got);
  std::vector<v1::JobInfo> want = Reference(core, f);
  // The records a reply carries still serialized read back as the same records.
  v1::QueryJobsReply reply;
  reply.set_snapshot_time(7);
  listing.AppendSerializedTo(f, v1::QueryJobsReply::kJobsFieldNumber,
                             reply.GetReflection()->MutableUnknownFields(&reply));
  v1::QueryJobsReply read;
  ASSERT_TRUE(read.ParseFromString(reply.SerializeAsString())) << where;
  EXPECT_EQ(read.snapshot_time(), 7);
  ASSERT_EQ(read.jobs_size(), got.size()) << where;
  for (int i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(read.jobs(i), got[i])) << where << ", record " << i;
  }
  // And written in wire form ahead of the reply's other fields, as the frame protocol sends
  // them: the same records again.
  std::string wire = "";
  listing.AppendWireTo(f, v1::QueryJobsReply::kJobsFieldNumber, &wire);
  v1::QueryJobsReply head;
  head.set_snapshot_time(7);
  head.AppendToString(&wire);
  v1::QueryJobsReply direct;
  ASSERT_TRUE(direct.ParseFromString(wire)) << where;
  EXPECT_EQ(direct.snapshot_time(), 7);
  ASSERT_EQ(direct.jobs_size(), got.size()) << where;
  for (int i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(direct.jobs(i), got[i]))
        << where << ", wire record " << i;
  }
  ASSERT_EQ(got.size(), static_cast<int>(want.size())) << where;
  for (int i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(got[i], want[i]))
        << where << ", record " << i << ":\n got " << got[i].ShortDebugString() << "\nwant "
        << want[i].ShortDebugString();
  }
}

TEST(JobListingTest, IncrementalUpdatesListWhatAFullConversionLists) {
  const conf::SiteConfig site = Site();
  ControllerCore core(site,
                      CoreOptions{.kill_wait_s = 5, .slurmd_timeout_s = 40, .min_job_age_s = 30},
                      1);
  const Caller users[] = {{1001, 1001, "alice"}, {1002, 1002, "bob"}, {0, 0, "root"}};
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(core::StrCat("seed ", seed));
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };

  std::shared_ptr<const JobListing> listing = JobListing::Build(core, Options());
  std::vector<JobId> ids;  // everything submitted
  Time now = 100;
  std::vector<bool> silent(3, false);  // nodes whose daemon stopped reporting
  for (int step = 0; step < 1500; ++step) {
    Effects fx;
    const Caller& who = users[pick(3)];
    switch (pick(12)) {
      case 0:
      case 1: {
        model::JobRequest r;
        r.name = pick(2) ? "a" : "b";
        r.shape.ntasks = 1;
        r.shape.cpus_per_task = 1 + pick(8);
        if (pick(4) == 0) r.shape.gpus_per_node = 1 + pick(4);
        r.time_limit_s = 30 + pick(120);
        r.hold = pick(6) == 0;
        if (pick(8) == 0) r.partitions = {"small"};
        if (pick(6) == 0) r.begin_time = now + pick(60);
        if (pick(5) == 0 && !ids.empty()) {
          model::DependencyClause c;
          c.type = pick(2) ? model::DependencyType::kAfterOk : model::DependencyType::kAfterAny;
          model::DependencyTarget t;
          t.job_id = ids[pick(static_cast<int>(ids.size()))];
          c.jobs.push_back(t);
          r.dependency.clauses.push_back(c);
        }
        if (pick(4) == 0) {
          r.array = model::ParseArraySpec(core::StrCat("0-", pick(6), pick(2) ? "%2" : "")).value();
        }
        r.script = "#!/bin/sh\ntrue\n";
        auto id = core.Submit(r, who, now, &fx);
        if (id.ok()) ids.push_back(*id);
        break;
      }
      case 2:
        if (!ids.empty()) (void)core.Hold(ids[pick(static_cast<int>(ids.size()))], who, &fx);
        break;
      case 3:
        if (!ids.empty()) (void)core.Release(ids[pick(static_cast<int>(ids.size()))], who, &fx);
        break;
      case 4:
        if (!ids.empty()) {
          const JobId id = ids[pick(static_cast<int>(ids.size()))];
          std::optional<int64_t> task;
          if (pick(2)) task = pick(4);
          (void)core.Signal(id, task, pick(4) ? 0 : SIGUSR1, who, now, &fx);
        }
        break;
      case 5:
      case 6: {
        std::vector<JobId> running;
        for (const auto& [key, e] : core.jobs()) {
          if (e.job.state == model::JobState::kRunning || e.completing) running.push_back(e.job.id);
        }
        if (!running.empty()) {
          const JobId id = running[pick(static_cast<int>(running.size()))];
          if (pick(8) == 0) {
            core.LaunchFailed(id, "no such directory", now, &fx, pick(2) == 0);
          } else {
            core.JobEnded(id, pick(3) ? 0 : 1 << 8, false, now, &fx);
          }
        }
        break;
      }
      case 7:
        if (!ids.empty()) {
          JobEdit edit;
          edit.time_limit_s = 10 + pick(300);
          (void)core.UpdateJob(ids[pick(static_cast<int>(ids.size()))], edit, users[2], 0, &fx);
        }
        break;
      case 8: {
        const int n = pick(3);
        silent[n] = pick(3) == 0;
        break;
      }
      case 9:
        (void)core.UpdateNodes({core::StrCat("n", 1 + pick(3))}, pick(2) ? "DOWN" : "RESUME",
                               "maintenance", users[2], now, &fx);
        break;
      default:
        now += 1 + pick(10);
        break;
    }
    for (int n = 0; n < 3; ++n) {
      if (!silent[n]) core.NodeAlive(core::StrCat("n", n + 1), now, &fx);
    }
    core.Tick(now, &fx);
    core.Schedule(now, &fx);

    std::vector<JobId> ids(fx.changed);
    ids.insert(ids.end(), fx.touched.begin(), fx.touched.end());
    std::shared_ptr<const JobListing> before = listing;
    listing = listing->Update(core, ids, Options());
    ASSERT_EQ(listing->size(), core.jobs().size()) << "step " << step;
    ExpectSame(*listing, core, JobFilter{}, core::StrCat("step ", step));
    if (HasFatalFailure() || HasFailure()) return;
    if (step % 50 == 0 && !ids.empty()) {
      const JobId id = ids[pick(static_cast<int>(ids.size()))];
      JobFilter by_id, alice, small_a, busy;
      by_id.ids = {id};
      alice.users = {"alice"};
      alice.states = {"PENDING"};
      small_a.partitions = {"small"};
      small_a.names = {"a"};
      busy.states = {"RUNNING", "COMPLETING"};
      ExpectSame(*listing, core, by_id, "by id");
      ExpectSame(*listing, core, alice, "alice");
      ExpectSame(*listing, core, small_a, "small a");
      ExpectSame(*listing, core, busy, "running");
      int64_t pending = 0, running = 0;
      for (const v1::JobInfo& j : JobsOf(core, Options())) {
        pending += j.state() == "PENDING";
        running += j.state() == "RUNNING";
      }
      EXPECT_EQ(listing->CountStates().pending, pending);
      EXPECT_EQ(listing->CountStates().running, running);
      // An update leaves the listing it came from as it was.
      EXPECT_LE(before->size(), core.jobs().size() + ids.size());
    }
  }
}

// A held job's request named `name`: jobs submitted with equal ones share one interned request.
model::JobRequest HeldRequest(const std::string& name) {
  model::JobRequest r;
  r.name = name;
  r.shape.ntasks = 1;
  r.hold = true;
  return r;
}

// `listing` with job `id` read again from `core`, then its records matching `filter`.
google::protobuf::RepeatedPtrField<v1::JobInfo> ListedAfterUpdate(
    std::shared_ptr<const JobListing> listing, const ControllerCore& core, JobId id,
    const JobInfoOptions& options, const JobFilter& filter = {}) {
  listing = listing->Update(core, std::span<const JobId>(&id, 1), options);
  google::protobuf::RepeatedPtrField<v1::JobInfo> got;
  listing->AppendTo(filter, &got);
  return got;
}

TEST(JobListingTest, SharedFieldsFollowTheOptionsTheyWereMadeWith) {
  // Two jobs share one interned request; the fields kept for them depend on the options too.
  const conf::SiteConfig site = Site();
  ControllerCore core(site, CoreOptions{}, 1);
  const Caller alice{1001, 1001, "alice"};
  const model::JobRequest r = HeldRequest("a");
  Effects fx;
  StatusOr<JobId> first = core.Submit(r, alice, 100, &fx);
  StatusOr<JobId> second = core.Submit(r, alice, 100, &fx);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(core.Find(*first)->request, core.Find(*second)->request);
  JobInfoOptions o = Options();
  o.requeue_by_default = true;
  std::shared_ptr<const JobListing> listing = JobListing::Build(core, o);
  o.requeue_by_default = false;
  const auto got = ListedAfterUpdate(listing, core, *second, o);
  ASSERT_EQ(got.size(), 2);
  EXPECT_TRUE(got[0].requeue());   // converted with the first options
  EXPECT_FALSE(got[1].requeue());  // converted again with the second
  EXPECT_EQ(got[1].spec().name(), "a");
}

TEST(JobListingTest, JobsOfOneRequestKeepTheirOwnersAndPartitions) {
  // Alice's and Bob's jobs submitted alike share one interned request, but not their owner;
  // one of them moved to another partition shares no partition with the others either.
  const conf::SiteConfig site = Site();
  ControllerCore core(site, CoreOptions{}, 1);
  const Caller alice{1001, 1001, "alice"};
  const Caller bob{1002, 1002, "bob"};
  const model::JobRequest r = HeldRequest("same");
  Effects fx;
  StatusOr<JobId> a = core.Submit(r, alice, 100, &fx);
  StatusOr<JobId> b = core.Submit(r, bob, 100, &fx);
  StatusOr<JobId> moved = core.Submit(r, alice, 100, &fx);
  ASSERT_TRUE(a.ok() && b.ok() && moved.ok());
  ASSERT_EQ(core.Find(*a)->request, core.Find(*b)->request);
  std::shared_ptr<const JobListing> listing = JobListing::Build(core, Options());
  JobEdit to_small;
  to_small.partition = "small";
  ASSERT_TRUE(core.UpdateJob(*moved, to_small, alice, 101, &fx).ok());
  const auto got = ListedAfterUpdate(listing, core, *moved, Options());
  ASSERT_EQ(got.size(), 3);
  EXPECT_EQ(got[0].user(), "alice");
  EXPECT_EQ(got[0].uid(), 1001u);
  EXPECT_EQ(got[1].user(), "bob");
  EXPECT_EQ(got[1].uid(), 1002u);
  EXPECT_EQ(got[2].partition(), "small");
  EXPECT_EQ(got[0].partition(), "batch");
  JobFilter bobs;
  bobs.users = {"bob"};
  const auto filtered = ListedAfterUpdate(listing, core, *moved, Options(), bobs);
  ASSERT_EQ(filtered.size(), 1);
  EXPECT_EQ(filtered[0].job_id(), *b);
}

TEST(JobListingTest, AnUpdateLeavesTheListingItCameFromAlone) {
  ControllerCore core(Site(), CoreOptions{}, 1);
  Effects fx;
  model::JobRequest r;
  r.shape.ntasks = 1;
  r.shape.cpus_per_task = 1;
  r.hold = true;
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(core.Submit(r, {1001, 1001, "alice"}, 1, &fx).ok());
  auto first = JobListing::Build(core, Options());
  Effects release;
  ASSERT_TRUE(core.Release(7, {1001, 1001, "alice"}, &release).ok());
  ASSERT_TRUE(core.Submit(r, {1001, 1001, "alice"}, 2, &release).ok());
  auto second = first->Update(core, release.changed, Options());
  google::protobuf::RepeatedPtrField<v1::JobInfo> a, b;
  JobFilter seven;
  seven.ids = {7};
  first->AppendTo(seven, &a);
  second->AppendTo(seven, &b);
  ASSERT_EQ(a.size(), 1);
  ASSERT_EQ(b.size(), 1);
  EXPECT_EQ(a[0].reason(), "JobHeldUser");
  EXPECT_NE(b[0].reason(), "JobHeldUser");
  EXPECT_EQ(first->size(), 200u);
  EXPECT_EQ(second->size(), 201u);
}

}  // namespace
}  // namespace loom::ctld
