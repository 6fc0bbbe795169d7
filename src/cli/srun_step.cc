#include "cli/srun_step.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "core/clock.h"
#include "core/run_program.h"
#include "core/strings.h"
#include "loom/v1/loom.pb.h"

namespace loom::cli {
namespace {

using core::StrCat;

// Compares without stopping at the first difference: the key is a secret.
bool SameKey(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

// An address of this host the nodes can reach: the first address its name resolves to that
// is not a loopback one; loopback when there is no other (a cluster on one host).
std::string HostAddress() {
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string fallback = "127.0.0.1";
  if (::getaddrinfo(name, nullptr, &hints, &found) != 0) return fallback;
  std::string chosen;
  for (addrinfo* a = found; a != nullptr && chosen.empty(); a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {0};
    bool loopback;
    if (a->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
      loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else if (a->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
      loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr);
    } else {
      continue;
    }
    if (!loopback) chosen = text;
  }
  ::freeaddrinfo(found);
  return chosen.empty() ? fallback : chosen;
}

// 128 random bits as hex: the key the job's nodes present to this srun.
StatusOr<std::string> RandomKey() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError("cannot read random bytes for the job's key");
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key;
  for (unsigned char b : bytes) {
    key += kHex[b >> 4];
    key += kHex[b & 15];
  }
  return key;
}

std::string UmaskText() {
  const mode_t mask = ::umask(022);
  ::umask(mask);
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mask));
  return text;
}

Labeler::Labeler(bool label, int32_t ntasks) : label_(label), width_(1) {
  for (int32_t n = std::max(1, ntasks) - 1; n >= 10; n /= 10) ++width_;
}

std::string Labeler::Apply(int32_t task, bool is_stderr, std::string_view data) {
  if (!label_ || data.empty()) return std::string(data);
  const std::string number = std::to_string(task);
  const std::string prefix = StrCat(
      std::string(number.size() < static_cast<size_t>(width_) ? width_ - number.size() : 0, ' '),
      number, ": ");
  const auto stream = std::make_pair(task, is_stderr);
  bool at_start = !mid_line_.contains(stream);
  std::string out;
  for (size_t at = 0; at < data.size();) {
    const size_t nl = data.find('\n', at);
    const size_t end = nl == std::string_view::npos ? data.size() : nl + 1;
    if (at_start) out += prefix;
    out.append(data.substr(at, end - at));
    at_start = nl != std::string_view::npos;
    at = end;
  }
  if (at_start) {
    mid_line_.erase(stream);
  } else {
    mid_line_.insert(stream);
  }
  return out;
}

std::string FormatTaskIds(std::vector<int32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += StrCat("-", ids[j]);
    i = j + 1;
  }
  return out;
}

StatusOr<StepOutputs> OpenStepOutputs(const submit::IoTarget& out, const submit::IoTarget& err,
                                      const model::JobRequest& request, model::JobId job,
                                      uint32_t step_id, std::vector<int>* files) {
  model::OutputPatternContext context;
  context.job_id = job;
  context.job_name = request.name;
  if (const char* user = std::getenv("USER")) context.user = user;
  context.step_id = step_id;
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC |
                    (request.open_mode == model::OpenMode::kAppend ? O_APPEND : O_TRUNC);
  StepOutputs outputs;
  std::map<std::string, int> opened;
  for (bool is_stderr : {false, true}) {
    const submit::IoTarget& t = is_stderr ? err : out;
    int& fd = is_stderr ? outputs.stderr_fd : outputs.stdout_fd;
    if (t.kind == submit::IoTarget::Kind::kPerTask) fd = -1;
    if (t.kind == submit::IoTarget::Kind::kOneTask) {
      (is_stderr ? outputs.stderr_task : outputs.stdout_task) = t.task;
    }
    if (t.kind != submit::IoTarget::Kind::kFile) continue;
    const std::string path = model::ExpandOutputPattern(t.pattern, context);
    if (auto it = opened.find(path); it != opened.end()) {
      fd = it->second;  // stdout and stderr share one file
      continue;
    }
    fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) {
      return absl::FailedPreconditionError(core::StrCat("Could not open ",
                                                        is_stderr ? "stderr" : "stdout", " file ",
                                                        path, ": ", std::strerror(errno)));
    }
    opened[path] = fd;
    files->push_back(fd);
  }
  return outputs;
}

void StepMonitor::PollOnce(int signal_fd, int64_t wait_ms,
                           const std::function<void(int)>& on_signal) {
  std::vector<pollfd> fds = PollFds();
  fds.push_back({signal_fd, POLLIN, 0});
  if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(1, wait_ms))) <= 0) {
    return;
  }
  for (const pollfd& p : fds) {
    if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (p.fd != signal_fd) {
      OnReadable(p.fd);
      continue;
    }
    signalfd_siginfo info;
    while (::read(signal_fd, &info, sizeof info) == sizeof info) {
      on_signal(static_cast<int>(info.ssi_signo));
    }
  }
}

StepMonitor::StepMonitor(std::string key, bool label, std::function<void(const std::string&)> say)
    : key_(std::move(key)),
      label_(label),
      say_(std::move(say)),
      labeler_(std::make_unique<Labeler>(label, 1)) {}

StepMonitor::~StepMonitor() {
  for (auto& [fd, c] : connections_) ::close(fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

Status StepMonitor::Listen(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), "0", &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(StrCat("'", host, "' is not an address: ", gai_strerror(rc)));
  }
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int bound = fd < 0 ? -1 : ::bind(fd, found->ai_addr, found->ai_addrlen);
  const int err = errno;
  ::freeaddrinfo(found);
  if (fd < 0 || bound != 0 || ::listen(fd, 128) != 0) {
    const int e = fd < 0 || bound != 0 ? err : errno;
    if (fd >= 0) ::close(fd);
    return absl::UnavailableError(
        StrCat("cannot listen on ", host, " for the tasks' output: ", std::strerror(e)));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  listen_fd_ = fd;
  return absl::OkStatus();
}

void StepMonitor::SetLayout(std::vector<std::string> nodes, std::vector<int32_t> tasks_per_node) {
  nodes_ = std::move(nodes);
  tasks_per_node_ = std::move(tasks_per_node);
  ntasks_ = model::TaskTotal(tasks_per_node_);
  labeler_ = std::make_unique<Labeler>(label_, ntasks_);
  for (const v1::StepIo::Output& o : held_) Output(o);
  held_.clear();
}

void StepMonitor::Output(const v1::StepIo::Output& o) {
  const int fd = o.is_stderr() ? outputs_.stderr_fd : outputs_.stdout_fd;
  const std::optional<int32_t>& only = o.is_stderr() ? outputs_.stderr_task : outputs_.stdout_task;
  if (fd >= 0 && (!only || *only == o.task())) {
    Write(fd, labeler_->Apply(o.task(), o.is_stderr(), o.data()));
  }
}

std::vector<pollfd> StepMonitor::PollFds() const {
  std::vector<pollfd> fds;
  if (listen_fd_ >= 0) fds.push_back({listen_fd_, POLLIN, 0});
  for (const auto& [fd, c] : connections_) fds.push_back({fd, POLLIN, 0});
  return fds;
}

bool StepMonitor::AnyNodeConnected() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const auto& entry) { return entry.second->greeted; });
}

void StepMonitor::Accept() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN: none left (errors: the next poll tries again)
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    connections_.emplace(fd, std::move(c));
  }
}

void StepMonitor::OnReadable(int fd) {
  if (fd == listen_fd_) {
    Accept();
    return;
  }
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  char buffer[64 << 10];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      Close(fd);
      return;
    }
    c.decoder.Append(std::string_view(buffer, static_cast<size_t>(n)));
    while (true) {
      StatusOr<std::optional<std::string>> frame = c.decoder.Next();
      if (!frame.ok() || (*frame && !Handle(c, **frame))) {
        Close(fd);
        return;
      }
      if (!*frame) break;
    }
  }
}

bool StepMonitor::Handle(Connection& c, const std::string& frame) {
  v1::StepIo m;
  if (!m.ParseFromString(frame)) return false;
  if (!c.greeted) {
    // Only the job's nodes know the key; anything else is dropped unheard.
    if (!m.has_hello() || m.hello().job_id() != job_ || !SameKey(m.hello().key(), key_)) {
      return false;
    }
    c.greeted = true;
    c.node = m.hello().node();
    c.tasks.assign(m.hello().tasks().begin(), m.hello().tasks().end());
    for (int32_t t : c.tasks) {
      if (!exits_.contains(t)) running_.insert(t);
    }
    return true;
  }
  if (m.has_output()) {
    if (has_layout()) {
      Output(m.output());
    } else {
      held_.push_back(m.output());  // labels need the step's task count
    }
  } else if (m.has_exit()) {
    const int32_t status = m.exit().status();
    std::vector<int32_t> tasks(m.exit().tasks().begin(), m.exit().tasks().end());
    for (int32_t t : tasks) {
      if (exits_.emplace(t, status).second) status_.Add(status);
      running_.erase(t);
    }
    const std::string how = model::DescribeTaskEnd(status);
    if (!how.empty() && !tasks.empty()) {
      std::string line = StrCat("srun: error: ", c.node, ": task", tasks.size() == 1 ? "" : "s",
                                " ", FormatTaskIds(tasks), ": ", how);
      if (WIFSIGNALED(status)) {
        pending_reports_.push_back(std::move(line));
      } else {
        say_(line);
      }
    }
  } else if (m.has_failure()) {
    launch_failed_ = true;
    c.launch_failed = true;
    say_(StrCat("srun: error: Task launch for StepId=", job_, ".", step_, " failed on node ",
                c.node, ": ", m.failure().message()));
  }
  return true;
}

void StepMonitor::FlushReports() {
  if (!expect_signals_) {
    for (const std::string& line : pending_reports_) say_(line);
  }
  pending_reports_.clear();
}

void StepMonitor::Close(int fd) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  // A node that goes without reporting its tasks' ends leaves them unknown, not running: lost
  // with it (its supervisor died), unless it said they could not start.
  bool lost = false;
  for (int32_t t : it->second->tasks) {
    running_.erase(t);
    if (!it->second->launch_failed && !exits_.contains(t) && lost_.insert(t).second) lost = true;
  }
  if (lost) say_(StrCat("srun: error: Node failure on ", it->second->node));
  ::close(fd);
  connections_.erase(it);
}

void StepMonitor::Write(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed stdout: the output has nowhere to go
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::vector<std::string> StepMonitor::TaskStates() const {
  std::vector<int32_t> running(running_.begin(), running_.end()), exited, abnormal, unknown;
  for (const auto& [task, status] : exits_) {
    (WIFEXITED(status) && WEXITSTATUS(status) == 0 ? exited : abnormal).push_back(task);
  }
  for (int32_t t = 0; t < ntasks_; ++t) {
    if (!running_.contains(t) && !exits_.contains(t)) unknown.push_back(t);
  }
  std::vector<std::string> lines;
  auto line = [&](const std::vector<int32_t>& ids, const char* what) {
    if (ids.empty()) return;
    lines.push_back(StrCat("srun: step:", job_, ".", step_, " task", ids.size() == 1 ? "" : "s",
                           " ", FormatTaskIds(ids), ": ", what));
  };
  line(running, "running");
  line(abnormal, "exited abnormally");
  line(exited, "exited");
  line(unknown, "unknown");
  return lines;
}

int TakeSrunSignals() {
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT}) {
    ::signal(sig, SIG_DFL);
    sigaddset(&handled, sig);
  }
  sigaddset(&handled, SIGHUP);
  sigprocmask(SIG_BLOCK, &handled, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return ::signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
}

InterruptHandler::Action InterruptHandler::OnSignal(
    int sig, bool quit_on_interrupt, bool abort_sent, const StepMonitor& monitor,
    const std::function<void(const std::string&)>& say) {
  if (sig == SIGINT && !quit_on_interrupt) {
    const auto now = clock_.Monotonic();
    if (!last_interrupt_ || now - *last_interrupt_ > std::chrono::seconds(1)) {
      last_interrupt_ = now;
      say(abort_sent ? "srun: interrupt (abort already in progress)"
                     : "srun: interrupt (one more within 1 sec to abort)");
      for (const std::string& line : monitor.TaskStates()) say(line);
      return Action::kNone;
    }
    return Action::kAbortByInterrupt;
  }
  if (sig == SIGINT) return Action::kAbort;  // -q: the first Ctrl-C aborts, said by no word
  if (abort_sent) {
    say("srun: job abort in progress; leaving without waiting for the tasks");
    return Action::kLeave;
  }
  say("srun: forcing job termination");
  return Action::kAbort;
}

bool RunSrunScript(std::string_view what, const std::string& given, const std::string& configured,
                   const std::vector<std::string>& argv, uint64_t job) {
  const std::string setting = given.empty() ? configured : given == "none" ? "" : given;
  if (setting.empty()) return true;
  core::ProgramRun run;
  run.args = argv;
  run.capture_stdout = true;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (job == 0 || !std::string_view(*e).starts_with("SLURM_JOB_ID=")) run.env.emplace_back(*e);
  }
  if (job != 0) run.env.push_back(core::StrCat("SLURM_JOB_ID=", job));
  for (const std::string& program : core::ExpandProgramPattern(setting)) {
    run.path = program;
    StatusOr<core::ProgramResult> r = core::RunProgram(run);
    if (r.ok()) std::fwrite(r->out.data(), 1, r->out.size(), stdout);
    std::fflush(stdout);
    if (!r.ok() || !r->ok()) {
      std::fprintf(stderr, "srun: error: %s %s failed: %s\n", std::string(what).c_str(),
                   program.c_str(),
                   r.ok() ? r->Describe(0).c_str() : std::string(r.status().message()).c_str());
      return false;
    }
  }
  return true;
}

void AwaitRecordedEnd(const std::function<void()>& query, const bool& done, const bool& give_up) {
  auto pause = std::chrono::milliseconds(5);
  const core::Clock& clock = core::RealClock();
  const auto deadline = clock.Monotonic() + std::chrono::seconds(5);
  while (!done && !give_up) {
    query();
    if (done || clock.Monotonic() >= deadline) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

}  // namespace loom::cli
