#include "cli/client.h"

#include <unistd.h>

#include <cstdlib>
#include <map>

#include "auth/identity.h"
#include "conf/site_config.h"
#include "conf/slurm_conf.h"
#include "core/strings.h"
#include "rpc/credential.h"

extern char** environ;

namespace loom::cli {
namespace {

constexpr int kTimeoutMs = 10000;

Status ConnectFailure() {
  return absl::UnavailableError("Unable to contact slurm controller (connect failure)");
}

}  // namespace

std::string ShortHostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  std::string out(name);
  return out.substr(0, out.find('.'));
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

StatusOr<Client> Client::Connect(const std::string& command) {
  (void)command;
  const char* env = std::getenv("SLURM_CONF");
  const std::string path = env && *env ? env : "/etc/slurm/slurm.conf";
  std::vector<conf::Diagnostic> warnings;
  ASSIGN_OR_RETURN(conf::ClusterConfig cfg, conf::LoadSlurmConf(path, &warnings));
  Client c;
  c.config_ = std::make_shared<conf::ClusterConfig>(std::move(cfg));
  auth::MungeOptions mo;
  mo.socket_path = conf::MungeSocketOf(*c.config_);
  c.munge_ = std::make_shared<auth::MungeCredentials>(mo);
  return c;
}

StatusOr<std::string> Client::Exchange(std::string_view method, std::string body) {
  ASSIGN_OR_RETURN(std::string credential, rpc::MakeCredential(*munge_, method, body));
  v1::Frame frame;
  frame.set_method(std::string(method));
  frame.set_credential(std::move(credential));
  frame.set_body(std::move(body));
  const std::string request = frame.SerializeAsString();
  // The first controller that answers (SlurmctldHost lines in order: primary, backups).
  const auto& hosts = config_->controllers;
  const std::vector<std::string> addrs =
      hosts.empty() ? std::vector<std::string>{"127.0.0.1"} : [&] {
        std::vector<std::string> a;
        for (const auto& h : hosts) a.push_back(h.addr.empty() ? h.name : h.addr);
        return a;
      }();
  if (connection_) {
    auto reply = connection_->Call(request, kTimeoutMs);
    if (reply.ok()) return reply;
    connection_.reset();
  }
  for (const std::string& addr : addrs) {
    auto conn = rpc::FrameConnection::Connect(addr, config_->slurmctld_port, kTimeoutMs);
    if (!conn.ok()) continue;
    auto reply = conn->Call(request, kTimeoutMs);
    if (!reply.ok()) continue;
    connection_ = std::make_shared<rpc::FrameConnection>(std::move(*conn));
    return reply;
  }
  return ConnectFailure();
}

std::vector<format::JobView> JobViews(const v1::QueryJobsReply& reply) {
  std::vector<format::JobView> views;
  std::map<uint32_t, std::string> groups;  // gid -> name, looked up once each
  for (const v1::JobInfo& j : reply.jobs()) {
    format::JobView v = rpc::ToJobView(j);
    if (j.group_name().empty()) {
      auto [it, fresh] = groups.try_emplace(j.gid());
      if (fresh) {
        StatusOr<std::string> name = auth::GroupName(j.gid());
        it->second = name.ok() ? *name : v.group_name;
      }
      v.group_name = it->second;
    }
    views.push_back(std::move(v));
  }
  return views;
}

}  // namespace loom::cli
