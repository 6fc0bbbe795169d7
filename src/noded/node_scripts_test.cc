#include "noded/node_scripts.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/convert.h"

namespace loom::noded {
namespace {

using ::testing::HasSubstr;

class NodeScriptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("loom-node-scripts-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    job_.set_job_id(42);
    job_.set_name("train");
    job_.set_user("alice");
    job_.set_uid(1000);
    job_.set_gid(1000);
    job_.set_node_list("gpu[01-02]");
    job_.set_partition("gpu");
    job_.mutable_spec()->set_account("physics");
    v1::NodeAllocation* a = job_.add_allocation();
    a->set_node("gpu02");
    a->set_gpu_ids("1-2");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A script that appends a line to `log` with SLURM_SCRIPT_CONTEXT and SLURM_JOB_ID.
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "#!/bin/sh\n" << body;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }
  std::string Log() const {
    std::ifstream in(dir_ / "log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  NodeScriptsOptions Options() const {
    NodeScriptsOptions o;
    o.node = "gpu02";
    o.slurm_conf = "/etc/slurm/slurm.conf";
    o.cluster_name = "c1";
    return o;
  }

  std::filesystem::path dir_;
  v1::JobInfo job_;
};

TEST_F(NodeScriptsTest, TheEnvironmentIsTheJobsOnThisNode) {
  NodeScripts scripts(Options());
  std::vector<std::string> env = scripts.Environment(job_, "prolog_slurmd");
  for (const char* want :
       {"SLURM_SCRIPT_CONTEXT=prolog_slurmd", "SLURM_JOB_ID=42", "SLURM_JOB_USER=alice",
        "SLURM_JOB_UID=1000", "SLURM_JOB_GID=1000", "SLURM_JOB_NODELIST=gpu[01-02]",
        "SLURM_JOB_PARTITION=gpu", "SLURM_JOB_ACCOUNT=physics", "SLURM_JOB_NAME=train",
        "SLURM_CLUSTER_NAME=c1", "SLURMD_NODENAME=gpu02", "SLURM_CONF=/etc/slurm/slurm.conf",
        "SLURM_JOB_GPUS=1,2", "CUDA_VISIBLE_DEVICES=1,2"}) {
    EXPECT_THAT(env, ::testing::Contains(std::string(want)));
  }
}

TEST_F(NodeScriptsTest, ThePrologRunsOncePerRunAndTheEpilogForgetsIt) {
  NodeScriptsOptions o = Options();
  const std::string log = (dir_ / "log").string();
  o.prolog =
      Script("prolog", "sleep 0.2; echo \"$SLURM_SCRIPT_CONTEXT $SLURM_JOB_ID\" >> " + log + "\n");
  o.epilog = Script("epilog", "echo \"$SLURM_SCRIPT_CONTEXT $SLURM_JOB_ID\" >> " + log + "\n");
  NodeScripts scripts(o);
  // Three launches at once (a batch script and two steps): one run, all wait for it.
  std::vector<std::thread> launches;
  std::vector<Status> results(3);
  for (int i = 0; i < 3; ++i) {
    launches.emplace_back([&, i] { results[i] = scripts.Prolog(job_); });
  }
  for (std::thread& t : launches) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(scripts.Prolog(job_).ok());
  EXPECT_EQ(Log(), "prolog_slurmd 42\n");
  EXPECT_EQ(scripts.Epilog(job_), std::nullopt);
  EXPECT_EQ(scripts.Epilog(job_), std::nullopt);  // the controller asks again: not run again
  EXPECT_EQ(Log(), "prolog_slurmd 42\nepilog_slurmd 42\n");
  // Requeued, it runs here again: a new prolog, a new epilog.
  job_.set_restarts(1);
  EXPECT_TRUE(scripts.Prolog(job_).ok());
  EXPECT_EQ(scripts.Epilog(job_), std::nullopt);
  EXPECT_EQ(Log(), "prolog_slurmd 42\nepilog_slurmd 42\nprolog_slurmd 42\nepilog_slurmd 42\n");
}

TEST_F(NodeScriptsTest, AFailedPrologFailsEveryLaunchOfTheRun) {
  NodeScriptsOptions o = Options();
  o.prolog = Script("prolog", "exit 3\n");
  NodeScripts scripts(o);
  Status s = scripts.Prolog(job_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(rpc::ErrorCodeFor(s), v1::PROLOG_FAILED);
  EXPECT_THAT(s.message(),
              HasSubstr("prolog of job 42 failed on node gpu02: " + o.prolog + ": exit status 3"));
  EXPECT_EQ(rpc::ErrorCodeFor(scripts.Prolog(job_)), v1::PROLOG_FAILED);
}

TEST_F(NodeScriptsTest, EveryProgramOfAPatternRunsAndATimeoutIsAFailure) {
  NodeScriptsOptions o = Options();
  const std::string log = (dir_ / "log").string();
  std::filesystem::create_directories(dir_ / "epilog.d");
  Script("epilog.d/10-first", "echo first >> " + log + "\n");
  Script("epilog.d/20-second", "echo second >> " + log + "\nsleep 30\n");
  o.epilog = (dir_ / "epilog.d" / "*").string();
  o.timeout_s = 1;
  NodeScripts scripts(o);
  std::optional<std::string> failed = scripts.Epilog(job_);
  ASSERT_TRUE(failed.has_value());
  EXPECT_THAT(*failed, HasSubstr("20-second: timed out after 1 s"));
  EXPECT_EQ(Log(), "first\nsecond\n");
}

TEST_F(NodeScriptsTest, AMissingProgramFailsTheProlog) {
  NodeScriptsOptions o = Options();
  o.prolog = (dir_ / "missing").string();
  NodeScripts scripts(o);
  Status s = scripts.Prolog(job_);
  EXPECT_EQ(rpc::ErrorCodeFor(s), v1::PROLOG_FAILED);
  EXPECT_THAT(s.message(), HasSubstr("cannot run " + o.prolog));
}

}  // namespace
}  // namespace loom::noded
