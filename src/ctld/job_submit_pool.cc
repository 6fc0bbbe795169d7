#include "ctld/job_submit_pool.h"

#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/log.h"
#include "core/strings.h"
#include "policy/helper_wire.h"
#include "policy/lua_script.h"

extern char** environ;

namespace loom::ctld {
namespace {

using core::StrCat;
using nlohmann::json;

// Loading a script may take longer than one call.
constexpr int64_t kMinLoadMs = 5000;

std::string Seconds(int64_t ms) { return StrCat(ms / 1000, ".", ms % 1000 / 100, " s"); }

}  // namespace

StatusOr<std::unique_ptr<JobSubmitPool>> JobSubmitPool::Start(JobSubmitPoolOptions options) {
  options.helpers = std::max(1, options.helpers);
  std::unique_ptr<JobSubmitPool> pool(new JobSubmitPool(std::move(options)));
  core::MutexLock lock(&pool->mu_);
  for (int32_t i = 0; i < pool->options_.helpers; ++i) {
    pool->helpers_.push_back(std::make_unique<Helper>());
  }
  Helper* first = pool->helpers_.front().get();
  const int64_t deadline =
      pool->clock_.MonotonicMs() + std::max(kMinLoadMs, pool->options_.timeout_ms);
  RETURN_IF_ERROR(pool->Spawn(first, deadline));
  return pool;
}

std::vector<pid_t> JobSubmitPool::helper_pids() {
  core::MutexLock lock(&mu_);
  std::vector<pid_t> pids;
  for (const auto& h : helpers_) pids.push_back(std::max<pid_t>(0, h->pid));
  return pids;
}

JobSubmitPool::~JobSubmitPool() {
  core::MutexLock lock(&mu_);
  for (auto& h : helpers_) Stop(h.get());
}

Status JobSubmitPool::Spawn(Helper* h, int64_t deadline_ms) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::InternalError(StrCat("socketpair: ", strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 0);
  std::string arg0 = options_.helper;
  char* argv[] = {arg0.data(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, options_.helper.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return absl::InternalError(StrCat("cannot start ", options_.helper, ", which runs ",
                                      options_.script_path, ": ", strerror(rc),
                                      "; install loom-lua-helper beside loomctld"));
  }
  h->pid = pid;
  h->fd = fds[0];
  json init = {{"script", options_.script},
               {"name", options_.script_path},
               {"part_list", options_.part_list}};
  StatusOr<json> answer = Exchange(h, init, deadline_ms);
  if (!answer.ok()) return answer.status();
  if (answer->contains("error")) {
    Stop(h);
    return absl::InvalidArgumentError(answer->value("error", std::string("does not load")));
  }
  return absl::OkStatus();
}

std::string JobSubmitPool::Stop(Helper* h) {
  std::string how;
  if (h->pid > 0) {
    int status = 0;
    pid_t done = ::waitpid(h->pid, &status, WNOHANG);
    if (done == 0) {
      ::kill(h->pid, SIGKILL);
      done = ::waitpid(h->pid, &status, 0);
    }
    if (done == h->pid && WIFSIGNALED(status)) {
      how = StrCat("signal ", WTERMSIG(status));
    } else if (done == h->pid && WIFEXITED(status)) {
      how = StrCat("exit code ", WEXITSTATUS(status));
    }
  }
  if (h->fd >= 0) ::close(h->fd);
  h->pid = -1;
  h->fd = -1;
  return how;
}

StatusOr<json> JobSubmitPool::Exchange(Helper* h, const json& call, int64_t deadline_ms) {
  if (Status sent = policy::WriteHelperFrame(h->fd, call); !sent.ok()) {
    Stop(h);
    return absl::UnavailableError(
        StrCat("the helper running ", options_.script_path, " had ended before the call"));
  }
  StatusOr<json> answer = policy::ReadHelperFrame(h->fd, &clock_, deadline_ms);
  if (answer.ok()) return answer;
  if (absl::IsDeadlineExceeded(answer.status())) {
    Stop(h);
    return absl::DeadlineExceededError(StrCat(options_.script_path, " did not answer within ",
                                              Seconds(options_.timeout_ms),
                                              " (LoomJobSubmitTimeout); its helper was stopped"));
  }
  const std::string how = Stop(h);
  return absl::InternalError(StrCat("the helper running ", options_.script_path, " ended",
                                    how.empty() ? "" : StrCat(" (", how, ")"),
                                    " in the middle of a call"));
}

StatusOr<json> JobSubmitPool::Call(const json& call, JobSubmitOutcome* outcome) {
  const int64_t deadline = clock_.MonotonicMs() + options_.timeout_ms;
  Helper* h = nullptr;
  {
    core::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (auto& x : helpers_) {
        if (!x->busy) return true;
      }
      return false;
    };
    if (!idle()) {
      if (queued_ >= options_.max_queued) {
        return absl::UnavailableError(StrCat(options_.script_path, " is busy with ",
                                             helpers_.size(),
                                             " submissions and more waiting; try again"));
      }
      ++queued_;
      const bool got = mu_.AwaitFor(idle, std::chrono::milliseconds(options_.timeout_ms));
      --queued_;
      if (!got) {
        return absl::DeadlineExceededError(StrCat(options_.script_path, " was busy for ",
                                                  Seconds(options_.timeout_ms),
                                                  " with other submissions; try again"));
      }
    }
    for (auto& x : helpers_) {
      if (!x->busy) {
        h = x.get();
        break;
      }
    }
    h->busy = true;
  }
  StatusOr<json> answer = absl::UnavailableError("no helper yet");
  // A helper that ended while idle (killed from outside) is replaced, and the call made
  // again, once.
  for (int attempt = 0; attempt < 2 && absl::IsUnavailable(answer.status()); ++attempt) {
    Status ready = h->pid > 0 ? absl::OkStatus()
                              : Spawn(h, std::max(deadline, clock_.MonotonicMs() + kMinLoadMs));
    answer = ready.ok() ? Exchange(h, call, deadline) : StatusOr<json>(ready);
  }
  {
    core::MutexLock lock(&mu_);
    h->busy = false;
  }
  if (!answer.ok()) return answer.status();
  for (const json& m : answer->value("user_msgs", json::array())) {
    if (m.is_string()) outcome->user_msgs.push_back(m.get<std::string>());
  }
  for (const json& line : answer->value("log", json::array())) {
    if (!line.is_array() || line.size() != 2) continue;
    const std::string level = line[0].is_string() ? line[0].get<std::string>() : "";
    const std::string text = line[1].is_string() ? line[1].get<std::string>() : "";
    if (level == "error") {
      core::LogError("job_submit.lua: {}", text);
    } else if (level == "info") {
      core::LogInfo("job_submit.lua: {}", text);
    } else {
      core::LogDebug2("job_submit.lua: {}", text);
    }
  }
  if (answer->contains("error")) {
    return absl::InvalidArgumentError(answer->value("error", std::string("failed")));
  }
  const int64_t rc = answer->value("rc", policy::kSuccess);
  if (rc != policy::kSuccess)
    outcome->status = absl::InvalidArgumentError(policy::ReturnCodeText(rc));
  return answer->value("job_desc", json::object());
}

Status JobSubmitPool::Submit(const policy::Submitter& who, model::JobRequest* request,
                             JobSubmitOutcome* outcome) {
  const json before = policy::JobDescOf(*request, who);
  ASSIGN_OR_RETURN(const json after,
                   Call({{"call", "job_submit"}, {"job_desc", before}, {"uid", who.uid}}, outcome));
  if (!outcome->status.ok()) return absl::OkStatus();
  std::vector<std::string> ignored;
  RETURN_IF_ERROR(policy::ApplyJobDesc(before, after, request, &ignored));
  for (const std::string& field : ignored) {
    core::LogInfo("job_submit.lua set job_desc.{}, which a script may not change; ignored", field);
  }
  return absl::OkStatus();
}

StatusOr<json> JobSubmitPool::Modify(const json& job_desc, const json& job_rec, uint32_t uid,
                                     JobSubmitOutcome* outcome) {
  return Call({{"call", "job_modify"}, {"job_desc", job_desc}, {"job_rec", job_rec}, {"uid", uid}},
              outcome);
}

}  // namespace loom::ctld
