#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/format/text.h"
#include "cli/scontrol.h"
#include "cli/step_views.h"
#include "cli/submit/begin_time.h"
#include "conf/show_config.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/strings.h"

namespace loom::cli::scontrol {

using core::StrCat;

void Print(FILE* out, std::string_view text) { std::fwrite(text.data(), 1, text.size(), out); }

void PrintError(const Options& opts, std::string_view message) {
  Print(stderr, StrCat(opts.program, ": error: ", message, "\n"));
}

std::optional<Client> ConnectOrSay(const Options& opts) {
  auto client = Client::Connect(opts.program);
  if (!client.ok()) {
    PrintError(opts, std::string(client.status().message()));
    return std::nullopt;
  }
  return std::move(*client);
}

namespace {

// update NodeName=LIST State=DRAIN|DOWN|RESUME|UNDRAIN [Reason=TEXT]
int UpdateNodes(const Options& opts, Client& client, const std::vector<std::string>& words) {
  v1::UpdateNodeRequest req;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    const size_t eq = w.find('=');
    const std::string key = w.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (core::EqualsIgnoreCase(key, "NodeName")) {
      req.add_names(value);
    } else if (core::EqualsIgnoreCase(key, "State")) {
      req.set_state(value);
    } else if (core::EqualsIgnoreCase(key, "Reason")) {
      req.set_reason(value);
    } else {
      PrintError(opts, StrCat("Update of node ", key, " is not supported by Loom yet; use State= and Reason="));
      return 1;
    }
  }
  if (req.state().empty()) {
    PrintError(opts, "No changes specified");
    return 1;
  }
  v1::UpdateNodeReply reply;
  Status s = client.Call("UpdateNode", req, &reply);
  if (!s.ok()) {
    Print(stderr, StrCat("slurm_update error: ", std::string(s.message()), "\n"));
    return 1;
  }
  return 0;
}

}  // namespace

int JobAction(const Options& opts, std::string_view keyword, const std::vector<std::string>& words) {
  auto client = ConnectOrSay(opts);
  if (!client) return 1;
  if (keyword == "ping") {
    v1::PingRequest req;
    v1::PingReply reply;
    Status s = client->Call("Ping", req, &reply);
    Print(stdout, StrCat("Slurmctld(primary) at ", reply.controller(), " is ", s.ok() ? "UP" : "DOWN",
                         "\n"));
    return s.ok() ? 0 : 1;
  }
  if (keyword == "update") {
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string key = words[i].substr(0, words[i].find('='));
      if (core::EqualsIgnoreCase(key, "NodeName")) return UpdateNodes(opts, *client, words);
    }
  }
  v1::UpdateJobRequest req;
  std::vector<std::string> ids;
  if (keyword == "update") {
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& w = words[i];
      size_t eq = w.find('=');
      if (eq == std::string::npos) {
        PrintError(opts, StrCat("Invalid input: ", w, "; use Key=Value"));
        return 1;
      }
      std::string key = w.substr(0, eq);
      if (core::EqualsIgnoreCase(key, "JobId")) {
        ids.push_back(w.substr(eq + 1));
      } else if (core::EqualsIgnoreCase(key, "StartTime") ||
                 core::EqualsIgnoreCase(key, "BeginTime")) {
        // Slurm's time forms (now+1hour, 16:00, 2026-12-01T08:00, ...) are read here, in the
        // user's time zone; the controller gets Unix seconds.
        StatusOr<int64_t> t = submit::ParseSlurmDateTime(w.substr(eq + 1), core::RealClock().UnixSeconds(),
                                                         absl::LocalTimeZone());
        if (!t.ok()) {
          PrintError(opts, std::string(t.status().message()));
          return 1;
        }
        (*req.mutable_fields())["StartTime"] = std::to_string(*t);
      } else {
        (*req.mutable_fields())[key] = w.substr(eq + 1);
      }
    }
    req.set_action(v1::UpdateJobRequest::UPDATE);
  } else {
    // A job list: ids separated by commas, in one word or several.
    for (size_t i = 1; i < words.size(); ++i) {
      for (std::string_view id : core::Split(words[i], ',')) {
        if (!id.empty()) ids.emplace_back(id);
      }
    }
    req.set_action(keyword == "hold"      ? v1::UpdateJobRequest::HOLD
                   : keyword == "release" ? v1::UpdateJobRequest::RELEASE
                   : keyword == "requeue_hold"
                       ? v1::UpdateJobRequest::REQUEUE_HOLD
                       : v1::UpdateJobRequest::REQUEUE);
  }
  if (ids.empty()) {
    PrintError(opts, "No job identification provided");
    return 1;
  }
  int rc = 0;
  for (const std::string& id_text : ids) {
    auto id = core::ParseInt(id_text);
    if (!id || *id <= 0) {
      Print(stderr, StrCat("Invalid job id specified for job ", id_text, "\n"));
      rc = 1;
      continue;
    }
    req.set_job_id(static_cast<uint64_t>(*id));
    v1::UpdateJobReply reply;
    Status s = client->Call("UpdateJob", req, &reply);
    if (!s.ok()) {
      Print(stderr, StrCat(std::string(s.message()), " for job ", id_text, "\n"));
      rc = 1;
    }
  }
  return rc;
}


int Reconfigure(const Options& opts) {
  auto client = ConnectOrSay(opts);
  if (!client) return 1;
  v1::ReconfigureRequest req;
  v1::ReconfigureReply reply;
  Status s = client->Call("Reconfigure", req, &reply);
  for (const std::string& w : reply.warnings()) Print(stderr, StrCat(opts.program, ": warning: ", w, "\n"));
  if (!s.ok()) {
    Print(stderr, StrCat("slurm_reconfigure error: ", std::string(s.message()), "\n"));
    return 1;
  }
  return 0;
}

int SetDebug(const Options& opts, std::string_view keyword, const std::vector<std::string>& words) {
  if (words.size() < 2) {
    Print(stderr, StrCat("too few arguments for keyword:", keyword, "\n"));
    return 1;
  }
  if (words.size() > 2) {
    Print(stderr, StrCat("too many arguments for keyword:", keyword, "\n"));
    return 1;
  }
  // Checked here first, as scontrol does, so a typo never reaches the controller.
  v1::SetDebugRequest req;
  if (keyword == "setdebug") {
    if (!core::ParseLogLevel(words[1])) {
      Print(stderr, StrCat("invalid debug level: ", words[1], "\n"));
      return 1;
    }
    req.set_level(words[1]);
  } else {
    if (StatusOr<uint32_t> f = core::ApplyDebugFlagChanges(0, words[1]); !f.ok()) {
      Print(stderr, StrCat("invalid debug flag: ", words[1], " (", std::string(f.status().message()), ")\n"));
      return 1;
    }
    req.set_flag_changes(words[1]);
  }
  auto client = ConnectOrSay(opts);
  if (!client) return 1;
  v1::SetDebugReply reply;
  if (Status s = client->Call("SetDebug", req, &reply); !s.ok()) {
    const char* what = keyword == "setdebug" ? "slurm_set_debug_level" : "slurm_set_debugflags";
    Print(stderr, StrCat(what, " error: ", std::string(s.message()), "\n"));
    return 1;
  }
  return 0;
}

int ShowConfig(const Options& opts) {
  auto client = ConnectOrSay(opts);
  if (!client) return 1;
  v1::QueryConfigRequest req;
  v1::QueryConfigReply reply;
  if (Status s = client->Call("QueryConfig", req, &reply); !s.ok()) {
    Print(stderr, StrCat("slurm_load_ctl_conf error: ", std::string(s.message()), "\n"));
    return 1;
  }
  const time_t now = static_cast<time_t>(reply.server_time());
  std::tm tm{};
  localtime_r(&now, &tm);
  conf::ConfigEntries entries;
  for (const v1::ConfigEntry& e : reply.entries()) entries.emplace_back(e.key(), e.value());
  Print(stdout, StrCat("Configuration data as of ",
                       format::FormatIsoTime(reply.server_time(), static_cast<int32_t>(tm.tm_gmtoff)),
                       "\n", conf::RenderConfigEntries(entries)));
  // Slurm ends with the controllers' state, as `scontrol ping` prints it.
  v1::PingRequest ping;
  v1::PingReply pong;
  const bool up = client->Call("Ping", ping, &pong).ok();
  Print(stdout, StrCat("\nSlurmctld(primary) at ", pong.controller(), " is ", up ? "UP" : "DOWN", "\n"));
  return 0;
}

int ShowAssocMgr(const Options& opts, const std::vector<std::string>& args) {
  v1::AssocMgrRequest req;
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    const std::string key = core::ToLower(arg.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    google::protobuf::RepeatedPtrField<std::string>* list = nullptr;
    if (key == "users" || key == "user") {
      list = req.mutable_users();
    } else if (key == "accounts" || key == "account") {
      list = req.mutable_accounts();
    } else if (key == "qos") {
      list = req.mutable_qos();
    } else if (key == "flags") {
      list = req.mutable_flags();
    }
    if (list == nullptr || value.empty()) {
      PrintError(opts, StrCat("Invalid option for show assoc_mgr: ", arg,
                              " (use users=, accounts=, qos= or flags=users|assoc|qos)"));
      return 1;
    }
    for (std::string_view v : core::Split(value, ',')) {
      if (v.empty()) continue;
      if (key == "flags" && v != "users" && v != "assoc" && v != "qos") {
        PrintError(opts,
                   StrCat("Invalid flags for show assoc_mgr: ", v, " (use users, assoc or qos)"));
        return 1;
      }
      list->Add(std::string(v));
    }
  }
  auto client = ConnectOrSay(opts);
  if (!client) return 1;
  v1::AssocMgrReply reply;
  if (Status s = client->Call("AssocMgr", req, &reply); !s.ok()) {
    PrintError(opts, StrCat("slurm_load_assoc_mgr_info error: ", std::string(s.message())));
    return 1;
  }
  Print(stdout, reply.text());
  return 0;
}

int ShowSteps(const Options& opts, const char* value) {
  v1::QueryStepsRequest req;
  std::optional<uint32_t> step;
  if (value != nullptr && *value != '\0') {
    std::string_view text(value);
    std::string_view job = text.substr(0, text.find('.'));
    auto id = core::ParseInt(job);
    std::optional<int64_t> s;
    if (job.size() < text.size()) s = core::ParseInt(text.substr(job.size() + 1));
    if (!id || *id <= 0 || (job.size() < text.size() && (!s || *s < 0))) {
      Print(stderr, "slurm_get_job_steps error: Invalid job id specified\n");
      return 1;
    }
    req.add_job_ids(static_cast<uint64_t>(*id));
    if (s) step = static_cast<uint32_t>(*s);
  }
  auto client = ConnectOrSay(opts);
  if (!client) return 1;
  v1::QueryStepsReply reply;
  if (Status s = client->Call("QuerySteps", req, &reply); !s.ok()) {
    Print(stderr, core::StrCat("slurm_get_job_steps error: ", std::string(s.message()), "\n"));
    return 1;
  }
  std::vector<v1::StepInfo> steps;
  for (const v1::StepInfo& s : reply.steps()) {
    if (!step || s.step_id() == *step) steps.push_back(s);
  }
  if (steps.empty()) {
    if (value != nullptr && *value != '\0') {
      Print(stdout, core::StrCat("Job step ", value, " not found\n"));
    } else {
      Print(stdout, "No job steps in the system\n");
    }
    return 0;
  }
  Print(stdout, RenderStepsScontrol(steps, opts.oneliner));
  return 0;
}

}  // namespace loom::cli::scontrol
