#include "noded/forwarder.h"

#include <grpcpp/grpcpp.h>

#include <thread>

#include "core/mutex.h"
#include "core/strings.h"
#include "rpc/call_auth.h"
#include "rpc/convert.h"
#include "rpc/launch_tree.h"

namespace loom::noded {
namespace {

v1::NodeLaunchError ErrorFor(const std::string& node, const Status& why) {
  v1::NodeLaunchError e;
  e.set_node(node);
  *e.mutable_error() = rpc::ToWire(why);
  return e;
}

}  // namespace

v1::NodeDaemon::Stub* LaunchForwarder::StubFor(const std::string& address) {
  core::MutexLock lock(&mu_);
  std::unique_ptr<v1::NodeDaemon::Stub>& stub = stubs_[address];
  if (!stub) {
    stub = v1::NodeDaemon::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  return stub.get();
}

std::vector<v1::NodeLaunchError> LaunchForwarder::Forward(
    const google::protobuf::RepeatedPtrField<v1::ForwardedLaunch>& launches,
    std::chrono::system_clock::time_point deadline) {
  std::vector<std::vector<v1::NodeLaunchError>> results(static_cast<size_t>(launches.size()));
  std::vector<std::thread> calls;
  for (int i = 0; i < launches.size(); ++i) {
    calls.emplace_back([this, &launches, &results, deadline, i] {
      const v1::ForwardedLaunch& launch = launches[i];
      std::vector<v1::NodeLaunchError>& out = results[static_cast<size_t>(i)];
      auto lost = [&](const std::string& why) {
        // It did not get the launch, nor did anyone below it.
        for (const std::string& node : rpc::NodesUnder(launch)) {
          out.push_back(ErrorFor(node, absl::UnavailableError(core::StrCat(
                                           "launch not delivered to ", launch.node(), " (",
                                           launch.address(), "): ", why))));
        }
      };
      grpc::ClientContext ctx;
      ctx.set_deadline(deadline);
      Status attached = rpc::AttachCredential(&ctx, *munge_, "LaunchTasks", launch.request());
      if (!attached.ok()) return lost(std::string(attached.message()));
      v1::LaunchTasksReply reply;
      grpc::Status g = StubFor(launch.address())->LaunchTasks(&ctx, launch.request(), &reply);
      if (!g.ok()) return lost(g.error_message());
      if (reply.error().code() != v1::OK) {
        out.push_back(ErrorFor(launch.node(), rpc::FromWire(reply.error())));
      }
      for (const v1::NodeLaunchError& e : reply.forwarded()) out.push_back(e);
    });
  }
  for (std::thread& t : calls) t.join();
  std::vector<v1::NodeLaunchError> failed;
  for (auto& r : results) {
    for (auto& e : r) failed.push_back(std::move(e));
  }
  return failed;
}

Status LaunchForwarder::Relay(const std::string& address, const v1::StepRelay& message,
                              std::chrono::system_clock::time_point deadline) {
  grpc::ClientContext ctx;
  ctx.set_deadline(deadline);
  RETURN_IF_ERROR(rpc::AttachCredential(&ctx, *munge_, "RelayStep", message));
  v1::RelayStepReply reply;
  grpc::Status g = StubFor(address)->RelayStep(&ctx, message, &reply);
  if (!g.ok()) return absl::UnavailableError(g.error_message());
  return rpc::FromWire(reply.error());
}

}  // namespace loom::noded
