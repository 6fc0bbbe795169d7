// loom-lua-helper: runs job_submit.lua for loomctld, one call at a time, so that a script
// that crashes, loops or blocks costs a helper process and never the controller
// (docs/admin/job-submit.md). Its standard input is a socket to the controller
// (policy/helper_wire.h); it ends when the controller closes it or dies.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <memory>

#include "policy/helper_wire.h"
#include "policy/lua_script.h"

namespace {

using loom::policy::LuaScript;
using nlohmann::json;

json LogOf(const loom::policy::CallResult& r) {
  json log = json::array();
  for (const loom::policy::LogLine& l : r.log) log.push_back(json::array({l.level, l.text}));
  return log;
}

int Serve(int fd) {
  auto init = loom::policy::ReadHelperFrame(fd);
  if (!init.ok()) return 1;
  const std::string name = init->value("name", "job_submit.lua");
  auto script = LuaScript::Load(init->value("script", ""), name);
  if (!script.ok()) {
    (void)loom::policy::WriteHelperFrame(fd, {{"error", std::string(script.status().message())}});
    return 0;
  }
  if (!(*script)->Defines("slurm_job_submit")) {
    (void)loom::policy::WriteHelperFrame(
        fd, {{"error", name + " defines no function slurm_job_submit(job_desc, part_list, "
                              "submit_uid)"}});
    return 0;
  }
  const json part_list = init->value("part_list", json::object());
  if (!loom::policy::WriteHelperFrame(fd, {{"ok", true}}).ok()) return 1;
  for (;;) {
    auto call = loom::policy::ReadHelperFrame(fd);
    if (!call.ok()) return absl::IsNotFound(call.status()) ? 0 : 1;
    const std::string what = call->value("call", "");
    const json uid = call->value("uid", json(0));
    std::vector<json> args;
    const char* function = nullptr;
    if (what == "job_submit") {
      function = "slurm_job_submit";
      args = {call->value("job_desc", json::object()), part_list, uid};
    } else if (what == "job_modify") {
      function = "slurm_job_modify";
      args = {call->value("job_desc", json::object()), call->value("job_rec", json::object()),
              part_list, uid};
    }
    json answer;
    if (function == nullptr) {
      answer = {{"error", "unknown call " + what}};
    } else if (what == "job_modify" && !(*script)->Defines(function)) {
      answer = {{"rc", 0}, {"job_desc", args[0]}};  // nothing to say about updates
    } else {
      auto r = (*script)->Call(function, std::move(args));
      if (!r.ok()) {
        answer = {{"error", std::string(r.status().message())}};
      } else {
        answer = {{"rc", r->rc},
                  {"job_desc", r->args[0]},
                  {"user_msgs", r->user_msgs},
                  {"log", LogOf(*r)}};
      }
    }
    if (!loom::policy::WriteHelperFrame(fd, answer).ok()) return 1;
  }
}

}  // namespace

int main() {
  // Ends with the controller, and holds none of its descriptors but the socket.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 1;
  ::close_range(3, ~0u, 0);
  std::signal(SIGPIPE, SIG_IGN);
  return Serve(0);
}
