#include "cli/client.h"

#include <cstdlib>

#include "conf/site_config.h"
#include "conf/slurm_conf.h"
#include "core/strings.h"

namespace loom::cli {

StatusOr<Client> Client::Connect(const std::string& command) {
  (void)command;
  const char* env = std::getenv("SLURM_CONF");
  const std::string path = env && *env ? env : "/etc/slurm/slurm.conf";
  std::vector<conf::Diagnostic> warnings;
  ASSIGN_OR_RETURN(conf::ClusterConfig cfg, conf::LoadSlurmConf(path, &warnings));
  Client c;
  c.config_ = std::make_shared<conf::ClusterConfig>(std::move(cfg));
  const auto& hosts = c.config_->controllers;
  const std::string address = core::StrCat(hosts.empty() ? "127.0.0.1" : hosts.front().addr, ":",
                                           c.config_->slurmctld_port);
  auth::MungeOptions mo;
  mo.socket_path = conf::MungeSocketOf(*c.config_);
  c.munge_ = std::make_shared<auth::MungeCredentials>(mo);
  c.stub_ = v1::Controller::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  return c;
}

}  // namespace loom::cli
