// The controller's API: one method per Controller rpc (proto/loom/v1/loom.proto), the same
// whichever transport carried the request. Each method gets the caller a MUNGE credential
// proved and fills the reply; the returned status becomes the reply's `error`. Two thin
// adapters put it on the wire: a gRPC service (loomd, API clients) and the answer to a
// Loom frame (the CLI).
#pragma once

#include <grpcpp/grpcpp.h>

#include <any>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "auth/munge_auth.h"
#include "core/mutex.h"
#include "core/status.h"
#include "ctld/controller_core.h"
#include "loom/v1/loom.grpc.pb.h"
#include "rpc/frame_server.h"

namespace loom::ctld {

class Controller;

// The rpcs every transport serves: X(Name) for v1::NameRequest -> v1::NameReply.
#define LOOM_CONTROLLER_METHODS(X) \
  X(Submit)                        \
  X(QueryJobs)                     \
  X(QueryNodes)                    \
  X(SignalJob)                     \
  X(UpdateJob)                     \
  X(UpdateNode)                    \
  X(Ping)                          \
  X(Reconfigure)                   \
  X(SetDebug)                      \
  X(QueryConfig)                   \
  X(Diag)                          \
  X(CreateStep)                    \
  X(QuerySteps)                    \
  X(ReleaseAllocation)             \
  X(StepUsage)                     \
  X(Shares)                        \
  X(Priorities)                    \
  X(AssocMgr)                      \
  X(RegisterNode)                  \
  X(Heartbeat)                     \
  X(JobComplete)                   \
  X(EpilogComplete)                \
  X(Reservation)                   \
  X(QueryReservations)

class ControllerApi {
 public:
  explicit ControllerApi(Controller* controller);

#define LOOM_DECLARE_METHOD(Name) \
  Status Name(const Caller& who, const v1::Name##Request& req, v1::Name##Reply* reply);
  LOOM_CONTROLLER_METHODS(LOOM_DECLARE_METHOD)
#undef LOOM_DECLARE_METHOD

  // QueryJobs for the frame protocol: the records appended to `records` in wire form
  // (JobListing::AppendWireTo), ahead of the reply's other fields.
  Status QueryJobsWire(const Caller& who, const v1::QueryJobsRequest& req,
                       v1::QueryJobsReply* reply, std::string* records);

  // The caller a credential proved, with its user name.
  Caller Identify(const auth::Identity& id) const;
  auth::MungeCredentials& munge();

 private:
  bool Daemon(const Caller& who) const;  // root or SlurmUser: what node daemons run as
  // job_submit.lua's slurm_job_modify on an update of job `id` (when the script is loaded):
  // its refusal, or `edit` as the script left it.
  Status ModifyByPolicy(JobId id, const Caller& who, JobEdit* edit);

  Controller* c_;
  uint32_t slurm_user_uid_ = 0;
  // The names of the users who called lately, each kept for a minute, so that a burst of
  // requests does not read the name service for each (Slurm's controller caches them too).
  struct KnownName {
    std::string name;
    std::chrono::steady_clock::time_point until;
  };
  mutable core::Mutex names_mu_;
  mutable std::unordered_map<uint32_t, KnownName> names_ ABSL_GUARDED_BY(names_mu_);
  // Taken from the configuration at the start (changing them needs a restart, as in Slurm),
  // except the heartbeat interval, which a reconfigure updates.
  std::string controller_name_;
  std::atomic<int64_t> heartbeat_interval_s_{1};
};

// gRPC: the credential travels in the call's metadata (rpc/call_auth.h).
std::unique_ptr<grpc::Service> MakeGrpcService(ControllerApi* api);

// Loom frames: a serialized v1::Frame in, the serialized reply out, with whether its
// credential held. A frame that does not parse, names no known rpc or carries a bad
// credential is answered with that error. `admitted` is what AdmitFrame returned for the
// frame, when it was large enough to need it.
rpc::FrameAnswer AnswerFrame(ControllerApi& api, std::string_view frame,
                             const std::any& admitted = {});
// Whether a large frame sent before its connection authenticated may be read, from its first
// bytes: they must hold its method and a valid credential (a serialized v1::Frame has both
// before the body). What it returns is AnswerFrame's `admitted`.
StatusOr<std::any> AdmitFrame(ControllerApi& api, std::string_view prefix);
// The answer to bytes that are not a frame at all.
std::string RefuseFrame(const Status& why);

}  // namespace loom::ctld
