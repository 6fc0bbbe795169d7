#include "cli/sacct_json.h"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "cli/format/text.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli {
namespace {

using core::StrCat;
using format::JsonWriter;

// Slurm's TRES ids: the fixed ones, then GRES from 1001 in the order they are met.
int TresId(std::string_view type, std::map<std::string, int>* gres_ids, const std::string& name) {
  static constexpr std::pair<std::string_view, int> kFixed[] = {
      {"cpu", 1},     {"mem", 2}, {"energy", 3}, {"node", 4},
      {"billing", 5}, {"fs", 6},  {"vmem", 7},   {"pages", 8}};
  for (const auto& [t, id] : kFixed) {
    if (t == type) return id;
  }
  auto [it, added] = gres_ids->try_emplace(name, 1001 + static_cast<int>(gres_ids->size()));
  return it->second;
}

// "cpu=8,mem=8000M,node=1,gres/gpu=2" as a list of {type, name, id, count} (memory in MB).
void WriteTres(JsonWriter& w, std::string_view key, const std::string& tres,
               std::map<std::string, int>* gres_ids) {
  w.BeginArray(key);
  for (std::string_view part : core::Split(tres, ',')) {
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string full(part.substr(0, eq));
    std::string value(part.substr(eq + 1));
    const size_t slash = full.find('/');
    const std::string type = slash == std::string::npos ? full : full.substr(0, slash);
    const std::string name = slash == std::string::npos ? "" : full.substr(slash + 1);
    double scale = 1;  // memory: to MB
    if (type == "mem" && !value.empty()) {
      switch (value.back()) {
        case 'K':
          scale = 1.0 / 1024;
          break;
        case 'G':
          scale = 1024;
          break;
        case 'T':
          scale = 1024.0 * 1024;
          break;
        default:
          break;
      }
      if (std::strchr("KMGT", value.back()) != nullptr) value.pop_back();
    }
    const std::optional<double> n = core::ParseDouble(value);
    if (!n) continue;
    w.BeginObject();
    w.String("type", type);
    if (name.empty()) {
      w.Null("name");
    } else {
      w.String("name", name);
    }
    w.Int("id", TresId(type, gres_ids, full));
    w.Int("count", static_cast<int64_t>(*n * scale));
    w.EndObject();
  }
  w.EndArray();
}

// An exit as the v0.0.38 document gives it: SUCCESS, FAILED with the code, or SIGNALED with
// the signal.
void WriteExit(JsonWriter& w, std::string_view key, int32_t code, int32_t signal) {
  w.BeginObject(key);
  w.String("status", signal != 0 ? "SIGNALED" : code != 0 ? "FAILED" : "SUCCESS");
  w.Int("return_code", code);
  if (signal != 0) {
    w.BeginObject("signal");
    w.Int("signal_id", signal);
    const char* abbrev = sigabbrev_np(signal);
    w.String("name", abbrev != nullptr ? StrCat("SIG", abbrev) : StrCat(signal));
    w.EndObject();
  }
  w.EndObject();
}

// The same for a wait(2) status word.
void WriteWaitStatus(JsonWriter& w, std::string_view key, int32_t status) {
  WriteExit(w, key, WIFSIGNALED(status) ? 0 : WEXITSTATUS(status),
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void WriteCpuTime(JsonWriter& w, std::string_view key, int64_t usec) {
  w.BeginObject(key);
  w.Int("seconds", usec / 1000000);
  w.Int("microseconds", usec % 1000000);
  w.EndObject();
}

int64_t Elapsed(int64_t start, int64_t end, int64_t now) {
  if (start <= 0) return 0;
  return std::max<int64_t>(0, (end > 0 ? end : now) - start);
}

void WriteStep(JsonWriter& w, const v1::AcctJob& a, const v1::AcctStep& s, int64_t now,
               std::map<std::string, int>* gres_ids) {
  w.BeginObject();
  w.BeginObject("time");
  w.Int("elapsed", Elapsed(s.start_time(), s.end_time(), now));
  w.Int("end", s.end_time());
  w.Int("start", s.start_time());
  w.Int("suspended", 0);
  WriteCpuTime(w, "system", s.system_cpu_usec());
  WriteCpuTime(w, "total", s.user_cpu_usec() + s.system_cpu_usec());
  WriteCpuTime(w, "user", s.user_cpu_usec());
  w.EndObject();
  WriteWaitStatus(w, "exit_code", s.exit_code());
  w.BeginObject("nodes");
  w.Int("count", s.num_nodes());
  w.String("range", s.node_list());
  w.EndObject();
  w.BeginObject("tasks");
  w.Int("count", s.num_tasks());
  w.EndObject();
  w.Null("pid");
  w.BeginObject("CPU");
  w.BeginObject("requested_frequency");
  w.Int("min", 0);
  w.Int("max", 0);
  w.EndObject();
  w.BeginArray("governor");
  w.EndArray();
  w.EndObject();
  w.Null("kill_request_user");
  w.String("state", s.state());
  w.BeginObject("statistics");
  w.BeginObject("CPU");
  w.Int("actual_frequency", 0);
  w.EndObject();
  w.BeginObject("energy");
  w.Int("consumed", 0);
  w.EndObject();
  w.EndObject();
  w.BeginObject("step");
  w.Int("job_id", static_cast<int64_t>(a.job().job_id()));
  w.BeginObject("het");
  w.Null("component");
  w.EndObject();
  w.String("id", StrCat(a.job().job_id(), ".", s.id()));
  w.String("name", s.name());
  w.EndObject();
  w.BeginObject("task");
  w.String("distribution", "Unknown");
  w.EndObject();
  w.BeginObject("tres");
  for (std::string_view k : {"requested", "consumed"}) {
    w.BeginObject(k);
    for (std::string_view stat : {"max", "min", "average", "total"}) {
      w.BeginArray(stat);
      w.EndArray();
    }
    w.EndObject();
  }
  WriteTres(w, "allocated", s.tres_alloc(), gres_ids);
  w.EndObject();
  w.EndObject();
}

void WriteJob(JsonWriter& w, const v1::AcctJob& a, int64_t now,
              const std::function<std::string(uint32_t)>& user_name,
              std::map<std::string, int>* gres_ids) {
  const v1::JobInfo& j = a.job();
  const bool task = j.array_task_id() >= 0;
  w.BeginObject();
  w.String("account", j.spec().account());
  w.BeginObject("comment");
  w.Null("administrator");
  w.Null("job");
  w.Null("system");
  w.EndObject();
  w.Int("allocation_nodes", j.start_time() > 0 ? j.num_nodes() : 0);
  w.BeginObject("array");
  w.Int("job_id", task ? static_cast<int64_t>(j.array_job_id()) : 0);
  w.BeginObject("limits");
  w.BeginObject("max");
  w.BeginObject("running");
  w.Int("tasks", j.array_max_tasks());
  w.EndObject();
  w.EndObject();
  w.EndObject();
  if (task) {
    w.String("task", StrCat(j.array_task_id()));
    w.Int("task_id", j.array_task_id());
  } else {
    w.Null("task");
    w.Null("task_id");
  }
  w.EndObject();
  w.BeginObject("association");
  w.String("account", j.spec().account());
  w.String("cluster", a.cluster());
  w.String("partition", j.partition());
  w.String("user", j.user());
  w.EndObject();
  w.String("cluster", a.cluster());
  w.String("constraints", j.spec().constraint());
  WriteWaitStatus(w, "derived_exit_code", a.derived_exit_code());
  int64_t user_usec = 0, system_usec = 0;
  for (const v1::AcctStep& s : a.steps()) {
    user_usec += s.user_cpu_usec();
    system_usec += s.system_cpu_usec();
  }
  w.BeginObject("time");
  w.Int("elapsed", Elapsed(j.start_time(), j.end_time(), now));
  w.Int("eligible", j.eligible_time());
  w.Int("end", j.end_time());
  w.Int("start", j.start_time());
  w.Int("submission", j.submit_time());
  w.Int("suspended", 0);
  WriteCpuTime(w, "system", system_usec);
  const bool unlimited = j.time_limit_s() <= 0 || j.time_limit_s() == core::kUnlimitedSeconds;
  w.Int("limit", unlimited ? 0 : j.time_limit_s() / 60);
  WriteCpuTime(w, "total", user_usec + system_usec);
  WriteCpuTime(w, "user", user_usec);
  w.EndObject();
  WriteExit(w, "exit_code", j.exit_code(), j.exit_signal());
  w.BeginArray("flags");
  w.EndArray();
  w.String("group", j.group_name());
  w.BeginObject("het");
  w.Int("job_id", 0);
  w.Null("job_offset");
  w.EndObject();
  w.Int("job_id", static_cast<int64_t>(j.job_id()));
  w.String("name", j.name());
  w.BeginObject("mcs");
  w.String("label", "");
  w.EndObject();
  w.String("nodes", j.node_list().empty() ? "None assigned" : j.node_list());
  w.String("partition", j.partition());
  w.Int("priority", j.priority());
  w.String("qos", a.qos());
  w.BeginObject("required");
  w.Int("CPUs", j.num_cpus());
  w.Int("memory", j.min_memory_mb());
  w.EndObject();
  if (a.has_cancelled_by()) {
    w.String("kill_request_user", user_name(a.cancelled_by()));
  } else {
    w.Null("kill_request_user");
  }
  w.BeginObject("reservation");
  w.Int("id", 0);
  w.Int("name", 0);
  w.EndObject();
  w.BeginObject("state");
  w.String("current", j.state());
  w.String("reason", j.reason().empty() ? "None" : j.reason());
  w.EndObject();
  w.BeginArray("steps");
  for (const v1::AcctStep& s : a.steps()) WriteStep(w, a, s, now, gres_ids);
  w.EndArray();
  w.BeginObject("tres");
  WriteTres(w, "allocated", j.tres_alloc(), gres_ids);
  WriteTres(w, "requested", j.tres_req(), gres_ids);
  w.EndObject();
  w.String("user", j.user());
  w.BeginObject("wckey");
  w.String("wckey", a.wckey());
  w.BeginArray("flags");
  w.EndArray();
  w.EndObject();
  w.String("working_directory", j.spec().work_dir());
  w.EndObject();
}

}  // namespace

std::string SacctJson(const v1::AcctQueryJobsReply& reply, const format::JsonMeta& meta,
                      int64_t now, const std::function<std::string(uint32_t)>& user_name) {
  std::string out;
  JsonWriter w(&out);
  format::BeginSlurmJson(w, meta);
  w.BeginArray("jobs");
  std::map<std::string, int> gres_ids;
  for (const v1::AcctJob& a : reply.jobs()) WriteJob(w, a, now, user_name, &gres_ids);
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace loom::cli
