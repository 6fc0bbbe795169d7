#include "cli/client.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

#include "auth/identity.h"
#include "cli/wire_views.h"
#include "conf/site_config.h"
#include "conf/slurm_conf.h"
#include "core/strings.h"
#include "rpc/frame_call.h"

extern char** environ;

namespace loom::cli {
namespace {

constexpr int kTimeoutMs = 10000;

Status ConnectFailure() {
  return absl::UnavailableError("Unable to contact slurm controller (connect failure)");
}

// A job's view, its group named here when the controller sent only the gid; `groups` keeps
// the names looked up (gid -> name).
format::JobView ViewOf(const v1::JobInfo& job, std::map<uint32_t, std::string>& groups) {
  format::JobView v = ToJobView(job);
  if (job.group_name().empty()) {
    auto [it, fresh] = groups.try_emplace(job.gid());
    if (fresh) {
      StatusOr<std::string> name = auth::GroupName(job.gid());
      it->second = name.ok() ? *name : v.group_name;
    }
    v.group_name = it->second;
  }
  return v;
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

std::string SlurmConfPath() {
  const char* env = std::getenv("SLURM_CONF");
  return env && *env ? env : "/etc/slurm/slurm.conf";
}

StatusOr<Client> Client::Connect(const std::string& command) {
  (void)command;
  const std::string path = SlurmConfPath();
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
  ASSIGN_OR_RETURN(const std::string request, rpc::SealFrame(*munge_, method, std::move(body)));
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

StatusOr<std::string> Client::ExchangeDbd(std::string_view method, std::string body) {
  const conf::ClusterConfig& cfg = *config_;
  if (!cfg.AccountingEnabled()) {
    return absl::FailedPreconditionError("Slurm accounting storage is disabled");
  }
  ASSIGN_OR_RETURN(const std::string request, rpc::SealFrame(*munge_, method, std::move(body)));
  std::string host = cfg.accounting_storage_host;
  if (host.empty()) {
    host = cfg.controllers.empty()           ? "127.0.0.1"
           : cfg.controllers[0].addr.empty() ? cfg.controllers[0].name
                                             : cfg.controllers[0].addr;
  }
  auto conn = rpc::FrameConnection::Connect(host, cfg.accounting_storage_port, kTimeoutMs);
  if (!conn.ok()) {
    return absl::UnavailableError(
        core::StrCat("Problem talking to the database: ", std::string(conn.status().message())));
  }
  // Queries over a large store take longer than the controller's answers.
  auto reply = conn->Call(request, 6 * kTimeoutMs);
  if (!reply.ok()) {
    return absl::UnavailableError(
        core::StrCat("Problem talking to the database: ", std::string(reply.status().message())));
  }
  return reply;
}

StatusOr<JobViewStream> JobViewStream::Open(std::string reply) {
  using google::protobuf::internal::WireFormatLite;
  JobViewStream out;
  out.bytes_ = std::move(reply);
  const auto* data = reinterpret_cast<const uint8_t*>(out.bytes_.data());
  google::protobuf::io::CodedInputStream in(data, static_cast<int>(out.bytes_.size()));
  v1::Error error;
  const Status unreadable = absl::DataLossError("the controller's answer cannot be read");
  while (uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const bool delimited =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (field == v1::QueryJobsReply::kJobsFieldNumber && delimited) {
      uint32_t size = 0;
      if (!in.ReadVarint32(&size)) return unreadable;
      out.jobs_.emplace_back(static_cast<size_t>(in.CurrentPosition()), size);
      if (!in.Skip(static_cast<int>(size))) return unreadable;
    } else if (field == v1::QueryJobsReply::kErrorFieldNumber && delimited) {
      uint32_t size = 0;
      std::string bytes;
      if (!in.ReadVarint32(&size) || !in.ReadString(&bytes, static_cast<int>(size))) {
        return unreadable;
      }
      if (!error.MergeFromString(bytes)) return unreadable;
    } else if (field == v1::QueryJobsReply::kSnapshotTimeFieldNumber &&
               WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT) {
      uint64_t t = 0;
      if (!in.ReadVarint64(&t)) return unreadable;
      out.snapshot_time_ = static_cast<int64_t>(t);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return unreadable;
    }
  }
  if (!in.ConsumedEntireMessage()) return unreadable;
  RETURN_IF_ERROR(rpc::FromWire(error));
  return out;
}

const format::JobView* JobViewStream::Next() {
  if (next_ >= jobs_.size() || !status_.ok()) return nullptr;
  const auto [offset, size] = jobs_[next_++];
  job_.Clear();
  if (!job_.ParseFromArray(bytes_.data() + offset, static_cast<int>(size))) {
    status_ = absl::DataLossError("the controller's answer cannot be read");
    return nullptr;
  }
  view_ = ViewOf(job_, groups_);
  return &view_;
}

std::vector<format::JobView> JobViews(JobViewStream& stream) {
  std::vector<format::JobView> views;
  views.reserve(stream.size());
  while (const format::JobView* v = stream.Next()) views.push_back(*v);
  return views;
}

std::vector<format::JobView> JobViews(const v1::QueryJobsReply& reply) {
  std::vector<format::JobView> views;
  views.reserve(static_cast<size_t>(reply.jobs_size()));
  std::map<uint32_t, std::string> groups;
  for (const v1::JobInfo& j : reply.jobs()) views.push_back(ViewOf(j, groups));
  return views;
}

void SayUserMsg(std::string_view command, const std::string& message, bool accepted) {
  if (message.empty()) return;
  for (std::string_view line : core::Split(message, '\n')) {
    std::fprintf(stderr, "%.*s: %s%.*s\n", static_cast<int>(command.size()), command.data(),
                 accepted ? "" : "error: ", static_cast<int>(line.size()), line.data());
  }
}

}  // namespace loom::cli
