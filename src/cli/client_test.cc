// The job views read piece by piece from a QueryJobsReply's bytes.
#include "cli/client.h"

#include <gtest/gtest.h>

namespace loom::cli {
namespace {

v1::QueryJobsReply ThreeJobs() {
  v1::QueryJobsReply reply;
  reply.set_snapshot_time(1700000000);
  for (uint64_t id : {7, 8, 9}) {
    v1::JobInfo* j = reply.add_jobs();
    j->set_job_id(id);
    j->set_name("job" + std::to_string(id));
    j->set_group_name("staff");
  }
  return reply;
}

TEST(JobViewStreamTest, ReadsEachJobInOrderWithTheSnapshotTime) {
  auto stream = JobViewStream::Open(ThreeJobs().SerializeAsString());
  ASSERT_TRUE(stream.ok()) << stream.status();
  EXPECT_EQ(stream->snapshot_time(), 1700000000);
  EXPECT_EQ(stream->size(), 3u);
  std::vector<uint32_t> ids;
  while (const format::JobView* v = stream->Next()) {
    ids.push_back(v->job_id);
    EXPECT_EQ(v->name, "job" + std::to_string(v->job_id));
    EXPECT_EQ(v->group_name, "staff");
  }
  EXPECT_EQ(ids, (std::vector<uint32_t>{7, 8, 9}));
  EXPECT_TRUE(stream->status().ok());
  // The same as the views of the parsed reply.
  auto again = JobViewStream::Open(ThreeJobs().SerializeAsString());
  ASSERT_TRUE(again.ok());
  std::vector<format::JobView> streamed = JobViews(*again);
  std::vector<format::JobView> whole = JobViews(ThreeJobs());
  ASSERT_EQ(streamed.size(), whole.size());
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_EQ(streamed[i].job_id, whole[i].job_id);
}

TEST(JobViewStreamTest, TheReplysErrorAndUnreadableBytes) {
  v1::QueryJobsReply refused = ThreeJobs();
  refused.mutable_error()->set_code(v1::ACCESS_DENIED);
  refused.mutable_error()->set_message("Access/permission denied");
  auto stream = JobViewStream::Open(refused.SerializeAsString());
  EXPECT_EQ(stream.status().message(), "Access/permission denied");

  std::string cut = ThreeJobs().SerializeAsString();
  cut.resize(cut.size() - 3);  // the last job's bytes end early
  EXPECT_EQ(JobViewStream::Open(cut).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(JobViewStream::Open("\xff\xff\xff").status().code(), absl::StatusCode::kDataLoss);

  auto empty = JobViewStream::Open("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->Next(), nullptr);
}

}  // namespace
}  // namespace loom::cli
