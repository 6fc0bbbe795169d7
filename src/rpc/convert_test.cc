// The conversions between Loom's values and the wire: submissions survive the wire whole, and
// errors keep their code and Slurm's text.
#include "rpc/convert.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/submit/sbatch_options.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::rpc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What the other end gets: a message through serialization.
template <typename M>
M Wire(const M& m) {
  M back;
  EXPECT_TRUE(back.ParseFromString(m.SerializeAsString()));
  return back;
}

// ------------------------------------------------------------------------------ submissions

// Serializes and parses again, as the wire does.
v1::JobSpec OverTheWire(const v1::JobSpec& spec) {
  std::string bytes;
  EXPECT_TRUE(spec.SerializeToString(&bytes));
  v1::JobSpec back;
  EXPECT_TRUE(back.ParseFromString(bytes));
  return back;
}

model::JobRequest RoundTrip(const model::JobRequest& r) {
  StatusOr<model::JobRequest> back = FromWire(OverTheWire(ToWire(r)));
  EXPECT_TRUE(back.ok()) << back.status();
  return back.value_or(model::JobRequest{});
}

// A request with every field away from its default.
model::JobRequest EveryField() {
  model::JobRequest r;
  r.name = "train";
  r.partitions = {"gpu", "batch"};
  r.account = "ml";
  r.qos = "high";
  r.reservation = "maint";
  r.wckey = "wk";
  r.comment = "a comment";
  r.licenses = "matlab:2";
  r.uid = 1001;
  r.gid = 1002;
  r.time_limit_s = 3600;
  r.time_min_s = 600;
  r.begin_time = 1'800'000'100;
  r.deadline = 1'800'100'000;
  r.shape = model::JobShape{.min_nodes = 2,
                            .max_nodes = 4,
                            .ntasks = 16,
                            .cpus_per_task = 4,
                            .ntasks_per_node = 8,
                            .mem_per_node_mb = 64000,
                            .mem_per_cpu_mb = 2000,
                            .gpus_per_node = 8,
                            .gpus_per_task = 1,
                            .cpus_per_gpu = 6,
                            .mem_per_gpu_mb = 8000,
                            .gpu_type = "h100",
                            .exclusive = true,
                            .switches = 1,
                            .switches_wait_s = 120,
                            .segment = 2};
  r.min_nodes = 2;
  r.max_nodes = 4;
  r.ntasks = 16;
  r.ntasks_per_node = 8;
  r.cpus_per_task = 4;
  r.cpus_per_gpu = 6;
  r.mem_per_node_mb = 0;  // given as 0: all of each node's memory
  r.mem_per_cpu_mb = 2000;
  r.mem_per_gpu_mb = 8000;
  r.gres = {{"gpu", "h100", 8}, {"nic", "", 1}};
  r.gpus = {{"gpu", "", 16}};
  r.gpus_per_node = {{"gpu", "h100", 8}};
  r.gpus_per_task = {{"gpu", "", 1}};
  r.gpus_per_socket = {{"gpu", "h100", 4}};
  r.ntasks_per_core = 1;
  r.ntasks_per_socket = 4;
  r.ntasks_per_gpu = 2;
  r.mincpus = 32;
  r.tmp_mb = 1024;
  r.sharing = model::SharingMode::kExclusiveUser;
  r.switches = 1;
  r.switches_wait_s = 120;
  r.segment = 2;
  r.constraint = "nvlink&(rack1|rack2)";
  r.prefer = "fast";
  r.nodelist = "gpu-[01-02]";
  r.exclude = "gpu-03";
  r.contiguous = true;
  r.overcommit = true;
  r.spread_job = true;
  r.use_min_nodes = true;
  r.hold = true;
  r.dependency.combine = model::Dependency::Combine::kAny;
  auto target = [](model::JobId id, std::optional<int64_t> task = std::nullopt,
                   bool all_tasks = false, int64_t delay_s = 0) {
    return model::DependencyTarget{id, task, all_tasks, delay_s};
  };
  r.dependency.clauses = {
      {model::DependencyType::kAfterOk, {target(12, 3), target(14)}},
      {model::DependencyType::kAfterAny, {target(15, std::nullopt, true)}},
      {model::DependencyType::kAfter, {target(16, std::nullopt, false, 600)}},
      {model::DependencyType::kAfterBurstBuffer, {target(17)}},
      {model::DependencyType::kAfterCorr, {target(18)}},
      {model::DependencyType::kAfterNotOk, {target(19)}},
      {model::DependencyType::kSingleton, {}},
  };
  r.kill_on_invalid_dep = true;
  r.array = model::ArraySpec{{{0, 15, 4}, {20, 20, 1}}, 5};
  r.nice = -10;
  r.priority = model::kPriorityTop;
  r.requeue = false;
  r.no_kill = true;
  r.signal = "B:USR1@60";
  r.test_only = true;
  r.work_dir = "/home/alice/run";
  r.stdout_pattern = "out-%j.txt";
  r.stderr_pattern = "err-%j.txt";
  r.stdin_pattern = "in.txt";
  r.open_mode = model::OpenMode::kAppend;
  r.export_policy = model::ExportPolicy{
      model::ExportPolicy::Mode::kList, true, {{"EDITOR", "vi"}, {"HOME", std::nullopt}}};
  r.get_user_env = true;
  r.export_file = "/tmp/env";
  r.environment = {{"PATH", "/usr/bin"}, {"SLURM_CONF", "/etc/slurm/slurm.conf"}, {"EMPTY", ""}};
  r.script = "#!/bin/sh\nsrun hostname\n";
  r.script_args = {"a", "", "c d"};
  r.wrap = "hostname";
  r.ignored_options = {{"mail-type", "END"}, {"mail-user", "a@b"}, {"network", "ib"}};
  r.srun =
      model::SrunStep{{"srun", "x"},   "10.0.0.7",    41234,   "k3y",    true, "o%t", "e%t", "i",
                      "verbose,cores", "map_gpu:1,0", "gpu:1", "cyclic", 1};
  return r;
}

TEST(JobSpecTest, EveryFieldSurvivesTheWire) {
  const model::JobRequest r = EveryField();
  EXPECT_EQ(RoundTrip(r), r);
  // And the other way: the spec of a converted request converts back to the same spec.
  const v1::JobSpec spec = ToWire(r);
  StatusOr<model::JobRequest> back = FromWire(spec);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(ToWire(*back), spec));
}

TEST(JobSpecTest, EachFieldSurvivesAlone) {
  // One field at a time away from the default: a field the conversion drops shows up here
  // even where EveryField's other fields would hide it.
  const model::JobRequest all = EveryField();
  std::vector<std::function<void(model::JobRequest&)>> set = {
      [&](auto& r) { r.name = all.name; },
      [&](auto& r) { r.partitions = all.partitions; },
      [&](auto& r) { r.partitions = {""}; },
      [&](auto& r) { r.uid = 0; },
      [&](auto& r) { r.gid = 0; },
      [&](auto& r) { r.time_limit_s = 0; },
      [&](auto& r) { r.time_limit_s = core::kUnlimitedSeconds; },
      [&](auto& r) { r.time_min_s = 0; },
      [&](auto& r) { r.min_nodes = 0; },
      [&](auto& r) { r.mem_per_node_mb = 0; },
      [&](auto& r) { r.mincpus = 0; },
      [&](auto& r) { r.tmp_mb = 0; },
      [&](auto& r) { r.segment = 0; },
      [&](auto& r) { r.switches_wait_s = 0; },
      [&](auto& r) { r.kill_on_invalid_dep = false; },
      [&](auto& r) { r.priority = 0; },
      [&](auto& r) { r.requeue = true; },
      [&](auto& r) { r.array = model::ArraySpec{}; },
      [&](auto& r) {
        r.array = model::ArraySpec{{{7, 7, 1}}, 0};
      },
      [&](auto& r) { r.dependency = all.dependency; },
      [&](auto& r) {
        r.dependency.clauses = {{model::DependencyType::kSingleton, {}}};
      },
      [&](auto& r) { r.export_policy.mode = model::ExportPolicy::Mode::kNone; },
      [&](auto& r) { r.export_policy = all.export_policy; },
      [&](auto& r) { r.shape = all.shape; },
      [&](auto& r) {
        r.gres = {{"", "", 0}};
      },
      [&](auto& r) { r.sharing = model::SharingMode::kOversubscribe; },
      [&](auto& r) { r.sharing = model::SharingMode::kExclusiveMcs; },
      [&](auto& r) { r.open_mode = model::OpenMode::kTruncate; },
      [&](auto& r) {
        r.environment = {{"A", ""}};
      },
      [&](auto& r) {
        r.ignored_options = {{"x", ""}};
      },
      [&](auto& r) { r.srun = model::SrunStep{}; },
      [&](auto& r) { r.srun = all.srun; },
  };
  for (size_t i = 0; i < set.size(); ++i) {
    model::JobRequest r;
    set[i](r);
    EXPECT_EQ(RoundTrip(r), r) << "setter " << i;
  }
  EXPECT_EQ(RoundTrip(model::JobRequest{}), model::JobRequest{});
}

TEST(JobSpecTest, ShapeAndListsAreReadableWithoutTheConverter) {
  const v1::JobSpec spec = ToWire(EveryField());
  EXPECT_EQ(spec.partition(), "gpu,batch");
  EXPECT_EQ(spec.min_nodes(), 2);
  EXPECT_EQ(spec.gpus_per_node(), 8);
  EXPECT_EQ(spec.gpus_total(), 16);
  EXPECT_EQ(spec.array_spec(), "0,4,8,12,20%5");
  EXPECT_EQ(spec.array_throttle(), 5);
  EXPECT_EQ(spec.time_limit_s(), 3600);
  ASSERT_EQ(spec.dependencies_size(), 7);
  EXPECT_EQ(spec.dependencies(0).kind(), v1::Dependency::AFTER_OK);
  EXPECT_THAT(spec.dependencies(0).job_ids(), ::testing::ElementsAre(12u, 14u));
  EXPECT_EQ(spec.dependencies(2).delay_s(), 600);
  EXPECT_TRUE(spec.dependency_any());
}

TEST(JobSpecTest, ReadsWhatSimplerWritersSend) {
  // A client that fills only the plain fields: job ids without targets, the array as text,
  // -1 for "the partition's default".
  v1::JobSpec spec;
  spec.set_name("plain");
  spec.set_partition("a,b");
  spec.set_time_limit_s(-1);
  spec.set_array_spec("1-3%2");
  v1::Dependency* dep = spec.add_dependencies();
  dep->set_kind(v1::Dependency::AFTER);
  dep->add_job_ids(41);
  dep->add_job_ids(42);
  dep->set_delay_s(300);
  StatusOr<model::JobRequest> r = FromWire(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->partitions, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(r->time_limit_s.has_value());
  ASSERT_TRUE(r->array.has_value());
  EXPECT_EQ(r->array->Indices(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(r->array->max_running, 2);
  EXPECT_EQ(r->dependency.ToString(), "after:41+5:42+5");

  spec.set_array_spec("1-x");
  EXPECT_THAT(std::string(FromWire(spec).status().message()), HasSubstr("JobSpec.array_spec"));
}

TEST(JobSpecTest, RefusesValuesNoRequestHolds) {
  v1::JobSpec spec;
  spec.set_sharing(static_cast<v1::JobSpec::Sharing>(42));
  EXPECT_EQ(FromWire(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec = v1::JobSpec();
  spec.add_dependencies()->set_kind(static_cast<v1::Dependency::Kind>(99));
  EXPECT_THAT(std::string(FromWire(spec).status().message()), HasSubstr("dependencies"));
  spec = v1::JobSpec();
  spec.set_open_mode(static_cast<v1::JobSpec::OpenMode>(7));
  EXPECT_FALSE(FromWire(spec).ok());
}

// What sbatch makes of real command lines survives the wire too.
TEST(JobSpecTest, SbatchRequestsSurviveTheWire) {
  constexpr int64_t kNow = 1'800'000'000;
  const std::map<std::string, std::string> env = {
      {"PWD", "/home/alice"}, {"HOME", "/home/alice"}, {"PATH", "/usr/bin:/bin"}};
  const std::vector<std::vector<std::string>> lines = {
      {"job.sh"},
      {"--wrap=hostname", "-J", "w", "-t", "10", "--parsable"},
      {"-N", "2-4", "-n", "8", "--ntasks-per-node=4", "-c", "2", "--mem=4G", "job.sh", "x", "y"},
      {"--gres=gpu:a100:2", "-n", "2", "--gpus-per-task=1", "--cpus-per-gpu=4", "--mem-per-gpu=8G",
       "job.sh"},
      {"--gpus=4", "-p", "gpu,batch", "--exclusive=user", "job.sh"},
      {"--array=0-15:4,20%5", "-o", "out-%A_%a.txt", "-e", "err-%A_%a.txt", "--open-mode=append",
       "job.sh"},
      {"--dependency=afterok:12_3:14?afterany:15_*", "--kill-on-invalid-dep=yes", "job.sh"},
      {"--dependency=after:16+10,singleton", "--hold", "--nice=5", "--requeue", "job.sh"},
      {"--export=ALL,EDITOR=vi,HOME", "-D", "/tmp", "--begin=now+1hour", "job.sh"},
      {"--export=NONE", "--mail-type=END", "--mail-user=a@b", "-C", "a100&nvlink", "-w", "n[1-2]",
       "-x", "n3", "--time-min=5", "--switches=1@10", "--comment=c", "job.sh"},
  };
  for (const auto& args : lines) {
    std::vector<std::string> argv = {"sbatch"};
    argv.insert(argv.end(), args.begin(), args.end());
    StatusOr<cli::submit::SbatchInput> in =
        cli::submit::ParseSbatch(argv, "#!/bin/sh\n#SBATCH -J fromscript\nsrun true\n", env, kNow);
    ASSERT_TRUE(in.ok()) << core::StrCat(args[0], ": ", std::string(in.status().message()));
    EXPECT_EQ(RoundTrip(in->request), in->request) << args[0];
  }
}

// ------------------------------------------------------------------------------------ errors

TEST(ErrorTest, EveryCodeRoundTrips) {
  for (int c = v1::ErrorCode_MIN; c <= v1::ErrorCode_MAX; ++c) {
    if (!v1::ErrorCode_IsValid(c)) continue;
    v1::Error e;
    e.set_code(static_cast<v1::ErrorCode>(c));
    if (c != v1::OK) e.set_message(core::StrCat("detail ", c));
    Status s = FromWire(e);
    EXPECT_EQ(s.code(), StatusCodeFor(e.code())) << c;
    v1::Error back = ToWire(s);
    EXPECT_EQ(back.code(), e.code()) << c;
    EXPECT_EQ(back.message(), e.message()) << c;
    EXPECT_FALSE(SlurmErrorText(e.code()).empty()) << c;
  }
}

TEST(ErrorTest, EveryStatusCodeKeepsItsCodeAcrossTheWire) {
  for (int c = 0; c <= 16; ++c) {
    Status s(static_cast<absl::StatusCode>(c), c == 0 ? "" : "what went wrong");
    Status back = FromWire(Wire(ToWire(s)));
    EXPECT_EQ(back.code(), s.code()) << c;
    EXPECT_EQ(back.message(), s.message()) << c;
  }
}

TEST(ErrorTest, SlurmTexts) {
  EXPECT_EQ(SlurmErrorText(v1::INVALID_JOB_ID), "Invalid job id specified");
  EXPECT_EQ(SlurmErrorText(v1::ACCESS_DENIED), "Access/permission denied");
  EXPECT_EQ(SlurmErrorText(v1::INVALID_PARTITION), "Invalid partition name specified");
  EXPECT_EQ(SlurmErrorText(v1::REQUESTED_CONFIG_UNAVAILABLE),
            "Requested node configuration is not available");
  EXPECT_EQ(SlurmErrorText(v1::INVALID_DEPENDENCY), "Job dependency problem");
  EXPECT_EQ(SlurmErrorText(v1::JOB_ALREADY_COMPLETE), "Job/step already completing or completed");
  // A wire error without a message reads as Slurm's text.
  v1::Error e;
  e.set_code(v1::INVALID_NODE_NAME);
  EXPECT_EQ(FromWire(e).message(), "Invalid node name specified");
  EXPECT_EQ(FromWire(e).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(FromWire(v1::Error()).ok());
}

TEST(ErrorTest, CredentialProblemsAreTold) {
  EXPECT_EQ(ErrorCodeFor(absl::UnauthenticatedError("request carries no MUNGE credential; ...")),
            v1::AUTH_MISSING);
  EXPECT_EQ(ErrorCodeFor(absl::UnauthenticatedError("MUNGE credential expired (encoded ...")),
            v1::AUTH_EXPIRED);
  EXPECT_EQ(ErrorCodeFor(absl::UnauthenticatedError("MUNGE credential was already used "
                                                    "(replayed); ...")),
            v1::AUTH_REPLAYED);
  EXPECT_EQ(ErrorCodeFor(absl::UnauthenticatedError("MUNGE credential is invalid (...)")),
            v1::AUTH_INVALID);
  // A Slurm text under a different StatusCode does not change the code's meaning.
  EXPECT_EQ(ErrorCodeFor(absl::InternalError("Invalid job id specified")), v1::INTERNAL);
}

}  // namespace
}  // namespace loom::rpc
