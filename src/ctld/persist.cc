#include "ctld/persist.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/hostlist.h"
#include "core/strings.h"

namespace loom::ctld {

std::string EncodeAllocation(const sched::Allocation& alloc, const sched::Cluster& cluster) {
  nlohmann::json arr = nlohmann::json::array();
  for (const sched::NodeAlloc& a : alloc) {
    arr.push_back({{"node", cluster.nodes[a.node].name},
                   {"cpus", a.amount.cpus},
                   {"gpus", a.amount.gpus},
                   {"mem_mb", a.amount.mem_mb},
                   {"gpu_ids", a.gpu_ids},
                   {"cpu_ids", a.cpu_ids.ToVector()}});
  }
  return arr.dump();
}

StatusOr<sched::Allocation> DecodeAllocation(std::string_view bytes,
                                             const sched::Cluster& cluster) {
  sched::Allocation out;
  if (bytes.empty()) return out;
  nlohmann::json arr = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!arr.is_array()) {
    return absl::DataLossError("stored allocation is not a JSON array");
  }
  for (const nlohmann::json& o : arr) {
    if (!o.is_object() || !o.contains("node") || !o["node"].is_string()) {
      return absl::DataLossError("stored allocation entry has no node name");
    }
    const std::string name = o["node"].get<std::string>();
    int32_t index = -1;
    for (size_t n = 0; n < cluster.nodes.size(); ++n) {
      if (cluster.nodes[n].name == name) index = static_cast<int32_t>(n);
    }
    if (index < 0) {
      return absl::NotFoundError(core::StrCat("stored allocation names node ", name,
                                              ", which the configuration no longer has"));
    }
    sched::NodeAlloc a(index, sched::Resources{.cpus = o.value("cpus", 0),
                                               .gpus = o.value("gpus", 0),
                                               .mem_mb = o.value("mem_mb", int64_t{0})});
    a.gpu_ids = o.value("gpu_ids", model::GpuMask{0});
    if (o.contains("cpu_ids") && o["cpu_ids"].is_array()) {
      for (const nlohmann::json& c : o["cpu_ids"]) {
        if (c.is_number_integer() && c.get<int64_t>() >= 0 && c.get<int64_t>() < (1 << 20)) {
          a.cpu_ids.set(c.get<int32_t>());
        }
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

store::JobProgress ToProgress(const JobEntry& e, const sched::Cluster& cluster) {
  store::JobProgress p;
  const model::Job& j = e.job;
  p.id = j.id;
  p.state = j.state;
  p.reason = j.reason;
  p.priority = j.priority;
  p.time_limit_s = e.job.time_limit_s;
  p.exit_code = j.exit_code;
  p.eligible_time = j.eligible_time;
  p.start_time = j.start_time;
  p.end_time = j.end_time;
  std::vector<std::string> names;
  for (const sched::NodeAlloc& a : e.alloc()) names.push_back(cluster.nodes[a.node].name);
  p.nodes = names.empty() ? "" : core::CompressHostlist(names);
  p.allocation = e.alloc().empty() ? "" : EncodeAllocation(e.alloc(), cluster);
  const JobHistory& history = e.history();
  p.ran_allocation = history.ran.empty() ? "" : EncodeAllocation(history.ran, cluster);
  p.restarts = history.restarts;
  p.last_sched_eval = e.last_sched_eval;
  return p;
}

store::JobRecord ToRecord(const JobEntry& e, const sched::Cluster& cluster) {
  store::JobRecord r;
  r.progress() = ToProgress(e, cluster);
  const model::Job& j = e.job;
  r.array_job_id = e.array_job_id();
  if (e.array_place != 0) r.array_task_id = static_cast<uint32_t>(e.array_task);
  r.request_id = e.submission_id();
  r.name = e.request->name;
  r.user = j.user;
  r.uid = j.uid;
  r.gid = j.gid;
  r.account = e.request->account;
  r.partition = j.partition;
  r.submit_time = j.submit_time;
  return r;
}

StatusOr<JobEntry> FromRecord(const store::JobRecord& r, const sched::Cluster& cluster,
                              std::shared_ptr<const model::JobRequest> request) {
  JobEntry e;
  e.request = std::move(request);
  model::Job& j = e.job;
  j.id = r.id;
  j.user = r.user;
  j.uid = r.uid;
  j.gid = r.gid;
  j.partition = r.partition;
  j.state = r.state;
  j.reason = r.reason;
  j.priority = r.priority;
  j.time_limit_s = r.time_limit_s;
  j.exit_code = r.exit_code;
  j.submit_time = r.submit_time;
  j.eligible_time = r.eligible_time;
  j.start_time = r.start_time;
  j.end_time = r.end_time;
  if (r.array_job_id != 0) {
    // Its id is its array's plus its place there, which is below MaxArraySize.
    if (r.array_job_id > r.id || r.id - r.array_job_id >= std::numeric_limits<uint32_t>::max() ||
        !r.array_task_id || *r.array_task_id > std::numeric_limits<int32_t>::max()) {
      return absl::DataLossError(
          core::StrCat("stored job ", r.id, " says it is task ",
                       r.array_task_id ? core::StrCat(*r.array_task_id) : std::string("(none)"),
                       " of array ", r.array_job_id,
                       ", which cannot be: an array's tasks have the ids from the array's own "
                       "onwards; the store is damaged: restore StateSaveLocation from a backup"));
    }
    e.SetArrayTask(r.array_job_id, static_cast<int32_t>(*r.array_task_id));
  }
  for (size_t p = 0; p < cluster.partitions.size(); ++p) {
    if (cluster.partitions[p].name == r.partition) e.partition = static_cast<int32_t>(p);
  }
  if (r.restarts != 0) e.mutable_history().restarts = r.restarts;
  e.last_sched_eval = r.last_sched_eval;
  ASSIGN_OR_RETURN(sched::Allocation alloc, DecodeAllocation(r.allocation, cluster));
  if (!alloc.empty()) e.mutable_alloc() = std::move(alloc);
  // Where an ended job ran only serves queries: a node since removed from the configuration
  // loses it rather than the job.
  auto ran = DecodeAllocation(r.ran_allocation, cluster);
  if (ran.ok() && !ran->empty()) e.mutable_history().ran = *std::move(ran);
  return e;
}

namespace {
constexpr std::string_view kStepsPrefix = "steps/";
}  // namespace

std::string StepsKey(JobId job) { return core::StrCat(kStepsPrefix, job); }

std::optional<JobId> JobOfStepsKey(std::string_view key) {
  if (!key.starts_with(kStepsPrefix)) return std::nullopt;
  auto id = core::ParseInt(key.substr(kStepsPrefix.size()));
  if (!id || *id <= 0) return std::nullopt;
  return static_cast<JobId>(*id);
}

std::optional<std::string> EncodeSteps(const JobSteps* table, const StepProgress* srun) {
  if (table == nullptr && srun == nullptr) return std::nullopt;
  const JobSteps none;
  if (table == nullptr) table = &none;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& [id, s] : table->steps) {
    nlohmann::json o = {{"id", s.id},
                        {"name", s.name},
                        {"command", s.command},
                        {"state", static_cast<int32_t>(s.state)},
                        {"nodes", s.nodes},
                        {"tasks_per_node", s.tasks_per_node},
                        {"cpus_held", s.cpus_held},
                        {"cpus_per_task", s.cpus_per_task},
                        {"distribution", model::DistributionName(s.distribution)},
                        {"start_time", s.start_time},
                        {"end_time", s.end_time},
                        {"nodes_done", std::vector<std::string>(s.nodes_done.begin(),
                                                                s.nodes_done.end())},
                        {"cancelled", s.cancelled},
                        {"launch_failed", s.launch_failed},
                        {"out_of_memory", s.out_of_memory},
                        {"launch_failed_node", s.launch_failed_node},
                        {"launch_error", s.launch_error},
                        {"cpu_bind", s.cpu_bind},
                        {"gpu_bind", s.gpu_bind},
                        {"gpus_per_task", s.gpus_per_task}};
    if (!s.status.empty()) o["wait_status"] = s.status.wait_status();
    if (!s.resv_ports.empty()) o["resv_ports"] = s.resv_ports;
    steps.push_back(std::move(o));
  }
  nlohmann::json out = {{"next_id", table->next_id}, {"steps", std::move(steps)}};
  if (srun != nullptr) {
    nlohmann::json o = {{"nodes_done", std::vector<std::string>(srun->nodes_done.begin(),
                                                                srun->nodes_done.end())},
                        {"out_of_memory", srun->out_of_memory}};
    if (!srun->status.empty()) o["wait_status"] = srun->status.wait_status();
    out["srun"] = std::move(o);
  }
  return out.dump();
}

StatusOr<StoredSteps> DecodeSteps(std::string_view bytes, std::string_view what) {
  const nlohmann::json in = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  const auto ints = [](const nlohmann::json& o, const char* key) {
    std::vector<int32_t> out;
    if (o.contains(key) && o[key].is_array()) {
      for (const nlohmann::json& v : o[key]) out.push_back(v.is_number_integer() ? v.get<int32_t>() : -1);
    }
    return out;
  };
  // What the nodes reported of a step so far: which have, and their statuses added up.
  const auto reports = [](const nlohmann::json& o, std::set<std::string, std::less<>>* done,
                          model::StepStatus* status) {
    if (o.contains("nodes_done") && o["nodes_done"].is_array()) {
      for (const nlohmann::json& n : o["nodes_done"]) {
        if (n.is_string()) done->insert(n.get<std::string>());
      }
    }
    if (o.contains("wait_status") && o["wait_status"].is_number_integer()) {
      status->Add(o["wait_status"].get<int32_t>());
    }
  };
  if (!in.is_object() || !in.contains("steps") || !in["steps"].is_array() ||
      !in.value("next_id", nlohmann::json()).is_number_unsigned()) {
    return absl::DataLossError(core::StrCat(what, ": not a stored step table"));
  }
  StoredSteps stored;
  JobSteps& table = stored.steps;
  table.next_id = in["next_id"].get<uint32_t>();
  if (in.contains("srun") && in["srun"].is_object()) {
    const nlohmann::json& o = in["srun"];
    StepProgress& p = stored.srun.emplace();
    reports(o, &p.nodes_done, &p.status);
    p.out_of_memory = o.value("out_of_memory", false);
  }
  for (const nlohmann::json& o : in["steps"]) {
    if (!o.is_object() || !o.value("id", nlohmann::json()).is_number_unsigned()) {
      return absl::DataLossError(core::StrCat(what, ": a step without an id"));
    }
    StepRecord s;
    s.id = o["id"].get<uint32_t>();
    s.name = o.value("name", "");
    s.command = o.value("command", "");
    const int32_t state = o.value("state", -1);
    s.nodes = ints(o, "nodes");
    s.tasks_per_node = ints(o, "tasks_per_node");
    s.cpus_held = ints(o, "cpus_held");
    const bool nodes_ok = std::all_of(s.nodes.begin(), s.nodes.end(), [](int32_t n) { return n >= 0; });
    if (state < 0 || state > static_cast<int32_t>(model::JobState::kOutOfMemory) || !nodes_ok ||
        s.tasks_per_node.size() != s.nodes.size() || s.cpus_held.size() != s.nodes.size() ||
        s.id >= table.next_id) {
      return absl::DataLossError(
          core::StrCat(what, ": step ", s.id, " is not consistent (state, nodes, tasks, CPUs, id)"));
    }
    s.state = static_cast<model::JobState>(state);
    s.cpus_per_task = o.value("cpus_per_task", 1);
    s.distribution = model::ParseDistribution(o.value("distribution", "block")).value_or(s.distribution);
    s.start_time = o.value("start_time", Time{0});
    s.end_time = o.value("end_time", Time{0});
    reports(o, &s.nodes_done, &s.status);
    s.cancelled = o.value("cancelled", false);
    s.launch_failed = o.value("launch_failed", false);
    s.out_of_memory = o.value("out_of_memory", false);
    s.launch_failed_node = o.value("launch_failed_node", "");
    s.launch_error = o.value("launch_error", "");
    s.cpu_bind = o.value("cpu_bind", "");
    s.gpu_bind = o.value("gpu_bind", "");
    s.gpus_per_task = o.value("gpus_per_task", "");
    s.resv_ports = ints(o, "resv_ports");
    table.steps.emplace(s.id, std::move(s));
  }
  return stored;
}

}  // namespace loom::ctld
