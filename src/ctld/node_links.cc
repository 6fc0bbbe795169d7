#include "ctld/node_links.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <utility>

#include "core/mutex.h"
#include "core/strings.h"
#include "rpc/call_auth.h"
#include "rpc/convert.h"
#include "rpc/deadline.h"
#include "rpc/launch_tree.h"

namespace loom::ctld {

// One call between its start and its end; owned by the call's callback.
struct NodeLinks::InFlight {
  grpc::ClientContext ctx;
  Call call;
  v1::LaunchBatchReply launch_reply;
  v1::LaunchTasksReply tasks_reply;
  v1::SignalTasksReply signal_reply;
  v1::TerminateJobReply terminate_reply;
  v1::RunPrologReply prolog_reply;
};

namespace {

// Why a call that gRPC ended without the node's answer failed. A batch launch may have reached
// the node before its connection broke (the daemon died while answering): only one that never
// had a connection is known not to run there (Unavailable); any other is DeadlineExceeded,
// and the node's next report says whether the job runs. Task launches are Unavailable either
// way: srun learns their fate from the tasks themselves.
Status NoAnswer(const grpc::Status& g, const std::string& address, bool batch_launch) {
  std::string why = core::StrCat("node ", address, ": ", g.error_message());
  const bool never_connected = g.error_code() == grpc::StatusCode::UNAVAILABLE &&
                               g.error_message().find("failed to connect") != std::string::npos;
  if (batch_launch && !never_connected) return absl::DeadlineExceededError(std::move(why));
  return absl::UnavailableError(std::move(why));
}

}  // namespace

NodeLinks::NodeLinks(const auth::MungeCredentials* munge, NodeLinksOptions options)
    : munge_(munge), options_(std::move(options)) {
  sender_ = std::thread([this] { SenderLoop(); });
}

NodeLinks::~NodeLinks() { Drain(); }

void NodeLinks::Launch(const std::string& address, std::string node,
                       v1::LaunchBatchRequest request) {
  Call call;
  call.job = request.job_id();
  call.node = std::move(node);
  call.launch = std::make_unique<v1::LaunchBatchRequest>(std::move(request));
  Enqueue(address, std::move(call));
}

void NodeLinks::LaunchTasks(const std::string& address, std::string node,
                            v1::LaunchTasksRequest request) {
  Call call;
  call.job = request.job_id();
  call.node = std::move(node);
  call.tasks = std::make_unique<v1::LaunchTasksRequest>(std::move(request));
  Enqueue(address, std::move(call));
}

void NodeLinks::Signal(const std::string& address, v1::SignalTasksRequest request) {
  Call call;
  call.job = request.job_id();
  call.signal = std::make_unique<v1::SignalTasksRequest>(std::move(request));
  Enqueue(address, std::move(call));
}

void NodeLinks::Terminate(const std::string& address, v1::TerminateJobRequest request) {
  Call call;
  call.job = request.job_id();
  call.terminate = std::make_unique<v1::TerminateJobRequest>(std::move(request));
  Enqueue(address, std::move(call));
}

void NodeLinks::RunProlog(const std::string& address, std::string node,
                          v1::RunPrologRequest request) {
  Call call;
  call.job = request.job_id();
  call.node = std::move(node);
  call.prolog = std::make_unique<v1::RunPrologRequest>(std::move(request));
  Enqueue(address, std::move(call));
}

StatusOr<v1::StepUsageReply> NodeLinks::StepUsage(const std::string& address,
                                                   const v1::StepUsageRequest& request) {
  v1::NodeDaemon::Stub* stub = nullptr;
  {
    core::MutexLock lock(&mu_);
    stub = LinkFor(address)->stub.get();
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(rpc::DeadlineIn(options_.deadline));
  RETURN_IF_ERROR(rpc::AttachCredential(&ctx, *munge_, "StepUsage", request));
  v1::StepUsageReply reply;
  grpc::Status g = stub->StepUsage(&ctx, request, &reply);
  if (!g.ok()) return absl::UnavailableError(core::StrCat("node ", address, ": ", g.error_message()));
  RETURN_IF_ERROR(rpc::FromWire(reply.error()));
  return reply;
}

size_t NodeLinks::channels() const {
  core::MutexLock lock(&mu_);
  return links_.size();
}

NodeLinks::Link* NodeLinks::LinkFor(const std::string& address) {
  std::unique_ptr<Link>& link = links_[address];
  if (link == nullptr) {
    link = std::make_unique<Link>();
    link->address = address;
    link->stub =
        v1::NodeDaemon::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  return link.get();
}

void NodeLinks::Enqueue(const std::string& address, Call call) {
  core::MutexLock lock(&mu_);
  if (draining_) return;
  Link* link = LinkFor(address);
  link->queue.push_back(std::move(call));
  if (!link->scheduled) {
    link->scheduled = true;
    ready_.push_back(link);
  }
}

void NodeLinks::SenderLoop() {
  while (true) {
    Link* link = nullptr;
    Call call;
    {
      core::MutexLock lock(&mu_);
      mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return SenderHasWork(); });
      if (ready_.empty()) return;  // draining, and nothing is queued or in flight
      link = ready_.front();
      ready_.pop_front();
      call = std::move(link->queue.front());
      link->queue.pop_front();
      ++in_flight_;
    }
    Start(link, std::move(call));
  }
}

void NodeLinks::Start(Link* link, Call call) {
  auto* f = new InFlight;
  f->call = std::move(call);
  // A task launch answers once the nodes below it have answered (TreeWidth), and every
  // node of the step starts a supervisor at the same time: its deadline grows with them.
  int nodes = 0;
  if (f->call.tasks != nullptr) {
    nodes =
        std::max(f->call.tasks->job().allocation_size(), f->call.tasks->step_info().nodes_size());
  }
  f->ctx.set_deadline(rpc::DeadlineIn(f->call.prolog != nullptr
                                          ? options_.prolog_deadline
                                          : options_.deadline + options_.per_step_node * nodes));
  const bool launch = f->call.launch != nullptr;
  const bool tasks = f->call.tasks != nullptr;
  const bool terminate = f->call.terminate != nullptr;
  const bool prolog = f->call.prolog != nullptr;
  const google::protobuf::Message& request =
      launch      ? static_cast<const google::protobuf::Message&>(*f->call.launch)
      : tasks     ? static_cast<const google::protobuf::Message&>(*f->call.tasks)
      : terminate ? static_cast<const google::protobuf::Message&>(*f->call.terminate)
      : prolog    ? static_cast<const google::protobuf::Message&>(*f->call.prolog)
                  : static_cast<const google::protobuf::Message&>(*f->call.signal);
  // A launch that did not reach its node, or that the node refused.
  // A task launch that did not arrive did not reach the nodes it was to be passed on to
  // either.
  auto failed = [this](const Call& call, const Status& why) {
    if ((call.launch || call.prolog) && options_.launch_failed) {
      options_.launch_failed(call.job, call.node, why);
    }
    if (call.tasks && options_.tasks_failed) {
      std::optional<uint32_t> step;
      if (call.tasks->has_step_id()) step = call.tasks->step_id();
      options_.tasks_failed(call.job, step, call.node, why);
      for (const v1::ForwardedLaunch& below : call.tasks->forward()) {
        for (const std::string& node : rpc::NodesUnder(below)) {
          options_.tasks_failed(call.job, step, node,
                                absl::UnavailableError(core::StrCat(
                                    "launch not passed on to node ", node, ": ",
                                    std::string(why.message()))));
        }
      }
    }
  };
  Status attached = rpc::AttachCredential(&f->ctx, *munge_,
                                          launch      ? "LaunchBatch"
                                          : tasks     ? "LaunchTasks"
                                          : terminate ? "TerminateJob"
                                          : prolog    ? "RunProlog"
                                                      : "SignalTasks",
                                          request);
  if (!attached.ok()) {
    failed(f->call, attached);
    delete f;
    Finished(link);
    return;
  }
  if (terminate) {
    link->stub->async()->TerminateJob(&f->ctx, f->call.terminate.get(), &f->terminate_reply,
                                      [this, link, f](grpc::Status) {
                                        delete f;
                                        Finished(link);
                                      });
    return;
  }
  if (prolog) {
    // A prolog that does not answer in time may still end well: the node's launches of the
    // job find its result. Only its refusal (PROLOG_FAILED) or no connection count.
    link->stub->async()->RunProlog(
        &f->ctx, f->call.prolog.get(), &f->prolog_reply, [this, link, f, failed](grpc::Status g) {
          Status s = g.ok() ? rpc::FromWire(f->prolog_reply.error())
                            : NoAnswer(g, link->address, /*batch_launch=*/true);
          if (!s.ok()) failed(f->call, s);
          delete f;
          Finished(link);
        });
    return;
  }
  if (!launch && !tasks) {
    // A signal that does not arrive is not retried: the node's own timeout or the next
    // signal deals with the job.
    link->stub->async()->SignalTasks(&f->ctx, f->call.signal.get(), &f->signal_reply,
                                     [this, link, f](grpc::Status) {
                                       delete f;
                                       Finished(link);
                                     });
    return;
  }
  auto done = [this, link, f, failed, launch](grpc::Status g, const v1::Error& error) {
    Status s = g.ok() ? rpc::FromWire(error) : NoAnswer(g, link->address, launch);
    if (!s.ok()) failed(f->call, s);
    delete f;
    Finished(link);
  };
  if (tasks) {
    link->stub->async()->LaunchTasks(
        &f->ctx, f->call.tasks.get(), &f->tasks_reply, [this, f, done](grpc::Status g) {
          // Nodes below this one whose launch failed, as it passed the launch on.
          if (g.ok() && options_.tasks_failed) {
            std::optional<uint32_t> step;
            if (f->call.tasks->has_step_id()) step = f->call.tasks->step_id();
            for (const v1::NodeLaunchError& e : f->tasks_reply.forwarded()) {
              options_.tasks_failed(f->call.job, step, e.node(), rpc::FromWire(e.error()));
            }
          }
          done(g, f->tasks_reply.error());
        });
    return;
  }
  link->stub->async()->LaunchBatch(&f->ctx, f->call.launch.get(), &f->launch_reply,
                                   [f, done](grpc::Status g) { done(g, f->launch_reply.error()); });
}

void NodeLinks::Finished(Link* link) {
  // Under the lock to the end: once Drain() sees nothing in flight this object may go away.
  core::MutexLock lock(&mu_);
  --in_flight_;
  if (!link->queue.empty()) {
    ready_.push_back(link);
  } else {
    link->scheduled = false;
  }
}

void NodeLinks::Drain() {
  {
    core::MutexLock lock(&mu_);
    draining_ = true;
  }
  if (sender_.joinable()) sender_.join();
}

}  // namespace loom::ctld
