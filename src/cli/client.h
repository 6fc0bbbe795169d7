// How the CLI commands reach loomctld, as Slurm's do: slurm.conf from $SLURM_CONF (else
// /etc/slurm/slurm.conf) names SlurmctldHost and SlurmctldPort; every call carries a MUNGE
// credential of the calling user. Calls travel as Loom frames (rpc/frame.h), so the
// commands link no gRPC and start quickly.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/munge_auth.h"
#include "cli/format/views.h"
#include "conf/cluster_config.h"
#include "core/status.h"
#include "loom/v1/loom.pb.h"
#include "rpc/convert.h"
#include "rpc/frame.h"

namespace loom::cli {

// This host's name up to its first dot, as Slurm records where a job was submitted from
// (AllocNode).
std::string ShortHostName();
// The command's environment (environ) as a map.
std::map<std::string, std::string> ProcessEnvironment();

class Client {
 public:
  // Reads slurm.conf; connects on the first call. `command` prefixes error messages
  // ("squeue").
  static StatusOr<Client> Connect(const std::string& command);

  // One call to the Controller rpc `method` (its request and reply types), with a fresh
  // credential and a 10 s deadline. A transport failure becomes Unavailable with Slurm's
  // "Unable to contact slurm controller (connect failure)" text; otherwise the reply's
  // own error is returned.
  template <typename Req, typename Reply>
  Status Call(std::string_view method, const Req& req, Reply* reply) {
    ASSIGN_OR_RETURN(std::string bytes, CallForBytes(method, req));
    if (!reply->ParseFromString(bytes)) {
      return absl::DataLossError("the controller's answer cannot be read");
    }
    return rpc::FromWire(reply->error());
  }

  // The same call, its reply left as the bytes that came, for answers read piece by piece
  // (JobViewStream); the reply's error is not checked.
  template <typename Req>
  StatusOr<std::string> CallForBytes(std::string_view method, const Req& req) {
    return Exchange(method, req.SerializeAsString());
  }

  // One call to loomdbd (AccountingStorageHost, else the controller's host, at
  // AccountingStoragePort), as Call. FailedPrecondition with Slurm's "Slurm accounting
  // storage is disabled" when slurm.conf sets no accounting; Unavailable with "Problem
  // talking to the database" when loomdbd does not answer.
  template <typename Req, typename Reply>
  Status CallDbd(std::string_view method, const Req& req, Reply* reply) {
    ASSIGN_OR_RETURN(std::string bytes, ExchangeDbd(method, req.SerializeAsString()));
    if (!reply->ParseFromString(bytes)) {
      return absl::DataLossError("loomdbd's answer cannot be read");
    }
    return rpc::FromWire(reply->error());
  }

  const conf::ClusterConfig& config() const { return *config_; }

 private:
  StatusOr<std::string> ExchangeDbd(std::string_view method, std::string body);
  // Sends one request frame, returns the reply's bytes.
  StatusOr<std::string> Exchange(std::string_view method, std::string body);

  std::shared_ptr<conf::ClusterConfig> config_;
  std::shared_ptr<auth::MungeCredentials> munge_;
  std::shared_ptr<rpc::FrameConnection> connection_;
};

// The views of a query's jobs. Slurm's commands name a job's group on the client's side,
// from its own name service; so do these, where the controller sent only the gid.
std::vector<format::JobView> JobViews(const v1::QueryJobsReply& reply);

// The views of a QueryJobsReply's jobs one at a time, read from the reply's bytes as they are
// needed, so that a listing of many thousands of jobs is never held whole, neither as
// messages nor as views. For commands that print jobs in the order they came.
class JobViewStream {
 public:
  // Finds the jobs in `reply` (a serialized QueryJobsReply) and returns the reply's error,
  // or DataLoss when the bytes are not such a reply.
  static StatusOr<JobViewStream> Open(std::string reply);

  int64_t snapshot_time() const { return snapshot_time_; }
  size_t size() const { return jobs_.size(); }
  // The next job's view, valid until the next call; nullptr after the last. A job whose bytes
  // cannot be read ends the stream early, with status() saying so.
  const format::JobView* Next();
  const Status& status() const { return status_; }

 private:
  std::string bytes_;
  std::vector<std::pair<size_t, size_t>> jobs_;  // offset and size of each JobInfo
  size_t next_ = 0;
  int64_t snapshot_time_ = 0;
  Status status_;
  v1::JobInfo job_;
  format::JobView view_;
  std::map<uint32_t, std::string> groups_;  // gid -> name, looked up once each
};

// Every view `stream` still has, in order.
std::vector<format::JobView> JobViews(JobViewStream& stream);

// The slurm.conf the commands read: $SLURM_CONF, else /etc/slurm/slurm.conf.
std::string SlurmConfPath();

// What job_submit.lua told the submitter (SubmitReply.user_msg), on standard error as
// Slurm's commands print it: "sbatch: MESSAGE" for an accepted submission, "sbatch: error:
// MESSAGE" before the error of a refused one; each line of it so prefixed.
void SayUserMsg(std::string_view command, const std::string& message, bool accepted);

}  // namespace loom::cli
