// How the CLI commands reach loomctld, as Slurm's do: slurm.conf from $SLURM_CONF (else
// /etc/slurm/slurm.conf) names SlurmctldHost and SlurmctldPort; every call carries a MUNGE
// credential of the calling user.
#pragma once

#include <memory>
#include <string>

#include "auth/munge_auth.h"
#include "conf/cluster_config.h"
#include "core/status.h"
#include "loom/v1/loom.grpc.pb.h"

namespace loom::cli {

class Client {
 public:
  // Reads slurm.conf and connects (lazily). `command` prefixes error messages ("squeue").
  static StatusOr<Client> Connect(const std::string& command);

  // One call: credential, 10 s deadline; a transport failure becomes Unavailable with
  // Slurm's "Unable to contact slurm controller (connect failure)" text.
  template <typename Req, typename Reply>
  Status Call(std::string_view method, const Req& req, Reply* reply,
              grpc::Status (v1::Controller::Stub::*fn)(grpc::ClientContext*, const Req&, Reply*));

  const conf::ClusterConfig& config() const { return *config_; }

 private:
  std::shared_ptr<conf::ClusterConfig> config_;
  std::shared_ptr<auth::MungeCredentials> munge_;
  std::shared_ptr<v1::Controller::Stub> stub_;
};

}  // namespace loom::cli

#include "cli/client_inl.h"
