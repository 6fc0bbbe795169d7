// The generated wire API builds, round-trips a submission, and serves a call over a unix
// socket, the transport local clients use.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "loom/v1/loom.grpc.pb.h"

namespace loom::rpc {
namespace {

TEST(WireTest, JobSpecRoundTrips) {
  v1::JobSpec spec;
  spec.set_name("train");
  spec.set_min_nodes(2);
  spec.set_gpus_per_node(8);
  spec.set_array_spec("0-99%5");
  (*spec.mutable_environment())["SLURM_CONF"] = "/etc/slurm/slurm.conf";
  auto* dep = spec.add_dependencies();
  dep->set_kind(v1::Dependency::AFTER_OK);
  dep->add_job_ids(41);
  std::string bytes;
  ASSERT_TRUE(spec.SerializeToString(&bytes));
  v1::JobSpec back;
  ASSERT_TRUE(back.ParseFromString(bytes));
  EXPECT_EQ(back.name(), "train");
  EXPECT_EQ(back.gpus_per_node(), 8);
  EXPECT_EQ(back.dependencies(0).job_ids(0), 41u);
  EXPECT_EQ(back.environment().at("SLURM_CONF"), "/etc/slurm/slurm.conf");
  // Bytes that are not a JobSpec are refused, not half read.
  v1::JobSpec bad;
  EXPECT_FALSE(bad.ParseFromString(std::string("\xff\xff\xff\xff", 4)));
}

class PingOnly final : public v1::Controller::Service {
  grpc::Status Ping(grpc::ServerContext*, const v1::PingRequest*, v1::PingReply* reply) override {
    reply->set_controller("test");
    reply->set_server_time(42);
    return grpc::Status::OK;
  }
};

TEST(WireTest, ServesOverAUnixSocket) {
  const std::string path = testing::TempDir() + "/wire_test." + std::to_string(::getpid()) + ".sock";
  ::unlink(path.c_str());
  PingOnly service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto channel = grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials());
  auto stub = v1::Controller::NewStub(channel);
  grpc::ClientContext ctx;
  v1::PingReply reply;
  grpc::Status s = stub->Ping(&ctx, v1::PingRequest(), &reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(reply.controller(), "test");
  EXPECT_EQ(reply.server_time(), 42);
  server->Shutdown();
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace loom::rpc
