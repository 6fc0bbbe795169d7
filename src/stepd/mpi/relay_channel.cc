#include "stepd/mpi/relay_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "core/strings.h"
#include "rpc/frame.h"
#include "stepd/control.h"

namespace loom::stepd {
StatusOr<std::unique_ptr<RelayChannel>> RelayChannel::Open(
    const std::string& socket_path, uint64_t job_id, std::optional<uint32_t> step_id, int32_t me,
    std::vector<std::string> addresses, OnMessage on_message) {
  StatusOr<int> fd = ConnectUnix(socket_path);
  if (!fd.ok()) {
    return Status(fd.status().code(), core::StrCat("MPI wire-up cannot reach loomd: ",
                                                   std::string(fd.status().message())));
  }
  v1::StepRelay hello;
  hello.set_job_id(job_id);
  if (step_id) hello.set_step_id(*step_id);
  hello.set_from_node(me);
  hello.set_hello(true);
  if (Status s = rpc::WriteFrame(*fd, hello.SerializeAsString(), kRelayFrameTimeoutMs); !s.ok()) {
    ::close(*fd);
    return Status(s.code(), core::StrCat("MPI wire-up: loomd at ", socket_path,
                                         " does not listen: ", std::string(s.message())));
  }
  return std::unique_ptr<RelayChannel>(
      new RelayChannel(*fd, job_id, step_id, me, std::move(addresses), std::move(on_message)));
}

RelayChannel::RelayChannel(int fd, uint64_t job_id, std::optional<uint32_t> step_id, int32_t me,
                           std::vector<std::string> addresses, OnMessage on_message)
    : fd_(fd),
      job_id_(job_id),
      step_id_(step_id),
      me_(me),
      addresses_(std::move(addresses)),
      on_message_(std::move(on_message)) {
  reader_ = std::thread([this] { Read(); });
}

RelayChannel::~RelayChannel() {
  ::shutdown(fd_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
  ::close(fd_);
}

void RelayChannel::Read() {
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) return;
    StatusOr<std::string> frame = rpc::ReadFrame(fd_, kRelayFrameTimeoutMs, kMaxRelayFrame);
    if (!frame.ok()) return;  // loomd went away, or the step ends
    v1::StepRelay relay;
    if (!relay.ParseFromString(*frame)) {
      core::LogError("MPI wire-up: loomd sent a frame that is not a StepRelay");
      return;
    }
    on_message_(relay.from_node(), relay.message());
  }
}

void RelayChannel::Send(const std::vector<int32_t>& nodes, const v1::StepMessage& message) {
  v1::StepRelay relay;
  relay.set_job_id(job_id_);
  if (step_id_) relay.set_step_id(*step_id_);
  relay.set_from_node(me_);
  for (int32_t n : nodes) {
    if (n < 0 || static_cast<size_t>(n) >= addresses_.size()) continue;
    v1::RelayTarget* t = relay.add_to();
    t->set_node(n);
    t->set_address(addresses_[static_cast<size_t>(n)]);
  }
  *relay.mutable_message() = message;
  core::MutexLock lock(&write_mu_);
  if (Status s = rpc::WriteFrame(fd_, relay.SerializeAsString(), kRelayFrameTimeoutMs); !s.ok()) {
    core::LogError("MPI wire-up: cannot hand a message to loomd: {}", s.message());
  }
}

}  // namespace loom::stepd
