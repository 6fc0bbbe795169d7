#include "stepd/mpi/pmi_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "core/log.h"
#include "core/mutex.h"
#include "core/strings.h"
#include "stepd/mpi/exchange.h"
#include "stepd/mpi/pmi_wire.h"
#include "stepd/mpi/relay_channel.h"

namespace loom::stepd {
namespace {

using core::StrCat;
using Args = std::vector<std::pair<std::string, std::string>>;

// What the server tells PMI-1 clients about its limits (PMI_KVS_Get_*_length_max).
constexpr int kKvsNameMax = 256;
constexpr int kKeyMax = 256;
constexpr int kValueMax = 4096;

class PmiServer final : public WireUp {
 public:
  PmiServer(WireUpStep step, AbortStep abort_step)
      : step_(std::move(step)),
        kvs_name_(StrCat("loom.pmi.", step_.JobStep())),
        link_(step_, kvs_name_, std::move(abort_step)) {}
  ~PmiServer() override;

  Status Start(const std::string& relay_socket);
  StatusOr<std::map<std::string, std::string>> TaskEnvironment(int32_t rank) override;
  int TaskDescriptor(int32_t rank) override;
  void TaskStarted(int32_t rank) override;

 private:
  struct Client {
    int32_t rank = 0;
    int fd = -1;       // the server's end
    int task_fd = -1;  // the task's end, until it has started
    PmiDecoder decoder;
    bool in_fence = false;
    bool closed = false;
  };
  void Run();
  void Handle(Client& c, const PmiCommand& command);
  void Reply(Client& c, std::string_view cmd, const Args& args);
  // Every local rank has entered the fence: the node's new pairs go to the other nodes.
  void StartFence();
  void FinishFence(const std::string& all);
  std::optional<std::string> Lookup(const std::string& key) const;

  const WireUpStep step_;
  const std::string kvs_name_;
  StepLink link_;
  std::vector<Client> clients_;             // this node's ranks; the server thread's once it runs
  std::map<std::string, std::string> kvs_;  // every node's, as of the last fence
  std::map<std::string, std::string> unfenced_;  // this node's since the last fence
  std::map<std::string, std::string> node_attrs_;
  std::vector<std::pair<Client*, std::string>> attr_waiters_;
  bool fencing_ = false;
  int wake_[2] = {-1, -1};
  core::Mutex done_mu_;
  std::vector<std::string> fences_done_ ABSL_GUARDED_BY(done_mu_);  // the fences' data
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Status PmiServer::Start(const std::string& relay_socket) {
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
  }
  for (int32_t rank : step_.ranks[static_cast<size_t>(step_.me)]) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      return absl::InternalError(StrCat("socketpair: ", std::strerror(errno)));
    }
    // The task's end above the descriptors its standard streams and the spawner use.
    const int task_fd = ::fcntl(pair[1], F_DUPFD_CLOEXEC, 10);
    ::close(pair[1]);
    Client& c = clients_.emplace_back();
    c.rank = rank;
    c.fd = pair[0];
    c.task_fd = task_fd;
    ::fcntl(c.fd, F_SETFL, O_NONBLOCK);
  }
  RETURN_IF_ERROR(link_.Connect(relay_socket));
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

PmiServer::~PmiServer() {
  link_.Close();
  stop_ = true;
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  for (Client& c : clients_) {
    if (c.fd >= 0) ::close(c.fd);
    if (c.task_fd >= 0) ::close(c.task_fd);
  }
  for (int fd : wake_) {
    if (fd >= 0) ::close(fd);
  }
}

StatusOr<std::map<std::string, std::string>> PmiServer::TaskEnvironment(int32_t rank) {
  const int fd = TaskDescriptor(rank);
  if (fd < 0) return absl::InternalError(StrCat("rank ", rank, " does not run on this node"));
  return std::map<std::string, std::string>{{"PMI_FD", std::to_string(fd)},
                                            {"PMI_RANK", std::to_string(rank)},
                                            {"PMI_SIZE", std::to_string(step_.size())},
                                            {"PMI_JOBID", kvs_name_},
                                            {"PMI_SPAWNED", "0"}};
}

int PmiServer::TaskDescriptor(int32_t rank) {
  for (const Client& c : clients_) {
    if (c.rank == rank) return c.task_fd;
  }
  return -1;
}

void PmiServer::TaskStarted(int32_t rank) {
  for (Client& c : clients_) {
    if (c.rank == rank && c.task_fd >= 0) {
      ::close(c.task_fd);  // the task holds its end now
      c.task_fd = -1;
    }
  }
}

std::optional<std::string> PmiServer::Lookup(const std::string& key) const {
  if (key == "PMI_process_mapping") return ProcessMapping(step_.ranks);
  if (auto it = kvs_.find(key); it != kvs_.end()) return it->second;
  if (auto it = unfenced_.find(key); it != unfenced_.end()) return it->second;
  return std::nullopt;
}

void PmiServer::Reply(Client& c, std::string_view cmd, const Args& args) {
  const std::string text = c.decoder.v2() ? FormatPmi2(cmd, args) : FormatPmi1(cmd, args);
  std::string_view left = text;
  // Answers are small and the client waits for each: a short blocking wait suffices.
  for (int tries = 0; !left.empty() && tries < 1000; ++tries) {
    const ssize_t n = ::send(c.fd, left.data(), left.size(), MSG_NOSIGNAL);
    if (n > 0) {
      left.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) break;
    pollfd p{c.fd, POLLOUT, 0};
    ::poll(&p, 1, 10);
  }
}

void PmiServer::Handle(Client& c, const PmiCommand& m) {
  const bool v2 = c.decoder.v2();
  const std::string size = std::to_string(step_.size());
  if (m.cmd == "init") {
    const std::string version = m.Arg("pmi_version") == "2" ? "2" : "1";
    Reply(c, "response_to_init",
          {{"pmi_version", version}, {"pmi_subversion", version == "2" ? "0" : "1"}, {"rc", "0"}});
    if (version == "2") c.decoder.SwitchToV2();
  } else if (m.cmd == "fullinit") {
    Reply(c, "fullinit-response",
          {{"rc", "0"},
           {"pmi-version", "2"},
           {"pmi-subversion", "0"},
           {"rank", std::to_string(c.rank)},
           {"size", size},
           {"appnum", "0"},
           {"debugged", "FALSE"},
           {"pmiverbose", "FALSE"}});
  } else if (m.cmd == "get_maxes") {
    Reply(c, "maxes",
          {{"rc", "0"},
           {"kvsname_max", std::to_string(kKvsNameMax)},
           {"keylen_max", std::to_string(kKeyMax)},
           {"vallen_max", std::to_string(kValueMax)}});
  } else if (m.cmd == "get_appnum") {
    Reply(c, "appnum", {{"rc", "0"}, {"appnum", "0"}});
  } else if (m.cmd == "get_universe_size") {
    Reply(c, "universe_size", {{"rc", "0"}, {"size", size}});
  } else if (m.cmd == "get_my_kvsname") {
    Reply(c, "my_kvsname", {{"rc", "0"}, {"kvsname", kvs_name_}});
  } else if (m.cmd == "job-getid") {
    Reply(c, "job-getid-response", {{"rc", "0"}, {"jobid", kvs_name_}});
  } else if (m.cmd == "put" || m.cmd == "kvs-put") {
    unfenced_[m.Arg("key")] = m.Arg("value");
    Reply(c, v2 ? "kvs-put-response" : "put_result", {{"rc", "0"}});
  } else if (m.cmd == "get" || m.cmd == "kvs-get") {
    const std::optional<std::string> value = Lookup(m.Arg("key"));
    if (v2) {
      Reply(c, "kvs-get-response",
            value ? Args{{"rc", "0"}, {"found", "TRUE"}, {"value", *value}}
                  : Args{{"rc", "0"}, {"found", "FALSE"}});
    } else {
      Reply(c, "get_result",
            value ? Args{{"rc", "0"}, {"value", *value}}
                  : Args{{"rc", "-1"}, {"msg", StrCat("key_", m.Arg("key"), "_not_found")}});
    }
  } else if (m.cmd == "info-getjobattr") {
    const std::string key = m.Arg("key");
    std::optional<std::string> value;
    if (key == "PMI_process_mapping") value = ProcessMapping(step_.ranks);
    if (key == "universeSize") value = size;
    Reply(c, "info-getjobattr-response",
          value ? Args{{"rc", "0"}, {"found", "TRUE"}, {"value", *value}}
                : Args{{"rc", "0"}, {"found", "FALSE"}});
  } else if (m.cmd == "info-putnodeattr") {
    node_attrs_[m.Arg("key")] = m.Arg("value");
    Reply(c, "info-putnodeattr-response", {{"rc", "0"}});
    for (auto it = attr_waiters_.begin(); it != attr_waiters_.end();) {
      if (it->second != m.Arg("key")) {
        ++it;
        continue;
      }
      Reply(*it->first, "info-getnodeattr-response",
            {{"rc", "0"}, {"found", "TRUE"}, {"value", m.Arg("value")}});
      it = attr_waiters_.erase(it);
    }
  } else if (m.cmd == "info-getnodeattr") {
    auto it = node_attrs_.find(m.Arg("key"));
    if (it != node_attrs_.end()) {
      Reply(c, "info-getnodeattr-response",
            {{"rc", "0"}, {"found", "TRUE"}, {"value", it->second}});
    } else if (m.Arg("wait") == "TRUE") {
      attr_waiters_.emplace_back(&c, m.Arg("key"));
    } else {
      Reply(c, "info-getnodeattr-response", {{"rc", "0"}, {"found", "FALSE"}});
    }
  } else if (m.cmd == "barrier_in" || m.cmd == "kvs-fence") {
    c.in_fence = true;
    bool all = true;
    for (const Client& other : clients_) all = all && other.in_fence;
    if (all && !fencing_) StartFence();
  } else if (m.cmd == "finalize") {
    Reply(c, v2 ? "finalize-response" : "finalize_ack", {{"rc", "0"}});
  } else if (m.cmd == "abort") {
    const std::string code = m.Arg("exitcode");
    v1::StepMessage::Abort a;
    a.set_rank(static_cast<uint32_t>(c.rank));
    a.set_status(code.empty() ? 1 : std::atoi(code.c_str()));
    a.set_message(m.Arg("msg"));
    link_.Abort(a);
  } else {
    // Spawning, name publishing: not offered.
    core::LogInfo("{}: rank {} asked for '{}', which this PMI server does not offer", kvs_name_,
                  c.rank, m.cmd);
    Reply(c, v2 ? m.cmd + "-response" : m.cmd, {{"rc", "-1"}, {"msg", "not_supported"}});
  }
}

void PmiServer::StartFence() {
  fencing_ = true;
  std::string mine;
  AppendPairs(unfenced_, &mine);
  link_.exchange().Fence(std::move(mine), [this](std::string all) {
    {
      core::MutexLock lock(&done_mu_);
      fences_done_.push_back(std::move(all));
    }
    (void)!::write(wake_[1], "x", 1);
  });
}

void PmiServer::FinishFence(const std::string& all) {
  if (Status s = ReadPairs(all, &kvs_); !s.ok()) core::LogError("{}: {}", kvs_name_, s.message());
  unfenced_.clear();
  fencing_ = false;
  for (Client& c : clients_) {
    if (!c.in_fence) continue;
    c.in_fence = false;
    if (c.decoder.v2()) {
      Reply(c, "kvs-fence-response", {{"rc", "0"}});
    } else {
      Reply(c, "barrier_out", {{"rc", "0"}});
    }
  }
}

void PmiServer::Run() {
  std::vector<pollfd> fds;
  while (!stop_) {
    fds.clear();
    fds.push_back({wake_[0], POLLIN, 0});
    for (const Client& c : clients_) fds.push_back({c.closed ? -1 : c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) {
      char buf[64];
      while (::read(wake_[0], buf, sizeof buf) > 0) {
      }
      std::vector<std::string> done;
      {
        core::MutexLock lock(&done_mu_);
        done.swap(fences_done_);
      }
      for (const std::string& all : done) FinishFence(all);
    }
    for (size_t i = 0; i < clients_.size(); ++i) {
      Client& c = clients_[i];
      if (c.closed || fds[i + 1].revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        c.closed = true;  // the task ended (or closed its PMI descriptor)
        continue;
      }
      if (n < 0) continue;
      c.decoder.Append(std::string_view(buf, static_cast<size_t>(n)));
      for (;;) {
        StatusOr<std::optional<PmiCommand>> next = c.decoder.Next();
        if (!next.ok()) {
          core::LogError("{}: rank {}: {}", kvs_name_, c.rank, next.status().message());
          c.closed = true;
          break;
        }
        if (!*next) break;
        Handle(c, **next);
      }
    }
  }
}

}  // namespace

StatusOr<std::unique_ptr<WireUp>> StartPmiServer(const WireUpStep& step,
                                                 const std::string& relay_socket,
                                                 AbortStep abort_step) {
  auto server = std::make_unique<PmiServer>(step, std::move(abort_step));
  RETURN_IF_ERROR(server->Start(relay_socket));
  core::LogInfo("PMI server for {} ranks here of {}",
                step.ranks[static_cast<size_t>(step.me)].size(), step.size());
  return std::unique_ptr<WireUp>(std::move(server));
}

}  // namespace loom::stepd
