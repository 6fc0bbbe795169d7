#include "cli/format/squeue_format.h"

#include "cli/format/internal/squeue_fields.h"
#include "cli/format/text.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli::format {
namespace {

using core::StrCat;
using internal::PassesExplicitFilters;

void WriteJob(JsonWriter& w, const JobView& j) {
  auto str_or_null_int = [&](std::string_view key, int32_t v) {
    if (v < 0) {
      w.Null(key);
    } else {
      w.Int(key, v);
    }
  };
  w.BeginObject();
  w.String("account", j.account);
  w.Int("accrue_time", j.accrue_time);
  w.String("admin_comment", j.admin_comment);
  w.Int("array_job_id", j.array_job_id);
  if (j.array_task_id.has_value()) {
    w.Int("array_task_id", *j.array_task_id);
  } else {
    w.Null("array_task_id");
  }
  w.Int("array_max_tasks", j.array_max_tasks);
  w.String("array_task_string", j.array_task_string);
  w.Int("association_id", j.association_id);
  w.String("batch_features", "");
  w.Bool("batch_flag", j.batch);
  w.String("batch_host", j.batch_host);
  w.BeginArray("flags");
  for (const std::string& f : j.json_flags) w.String(f);
  w.EndArray();
  w.String("burst_buffer", "");
  w.String("burst_buffer_state", "");
  w.String("cluster", j.cluster);
  w.String("cluster_features", "");
  w.String("command", j.command);
  w.String("comment", j.comment);
  w.String("container", "");
  w.Bool("contiguous", j.contiguous);
  str_or_null_int("core_spec", j.core_spec);
  w.Null("thread_spec");
  str_or_null_int("cores_per_socket", j.req_cores);
  if (j.billable_tres.has_value()) {
    w.Double("billable_tres", *j.billable_tres);
  } else {
    w.Null("billable_tres");
  }
  // Slurm 22.05 (OpenAPI v0.0.38) prints null here whatever -c asked for.
  w.Null("cpus_per_task");
  w.Null("cpu_frequency_minimum");
  w.Null("cpu_frequency_maximum");
  w.Null("cpu_frequency_governor");
  w.String("cpus_per_tres", j.cpus_per_tres);
  w.Int("deadline", j.deadline);
  w.Int("delay_boot", j.delay_boot_s);
  w.String("dependency", j.dependency);
  w.Int("derived_exit_code", (j.derived_exit_status << 8) | j.derived_exit_signal);
  w.Int("eligible_time", j.eligible_time);
  w.Int("end_time", j.end_time);
  w.String("excluded_nodes", j.exc_nodes);
  w.Int("exit_code", (j.exit_status << 8) | j.exit_signal);
  w.String("features", j.features);
  w.String("federation_origin", "");
  w.String("federation_siblings_active", "");
  w.String("federation_siblings_viable", "");
  w.BeginArray("gres_detail");
  for (const JobNodeDetail& d : j.node_details) {
    if (!d.gres.empty()) w.String(d.gres);
  }
  w.EndArray();
  w.Int("group_id", j.group_id);
  w.String("group_name", j.group_name);
  w.Int("job_id", j.job_id);
  if (!j.nodes.empty()) {
    w.BeginObject("job_resources");
    w.String("nodes", j.nodes);
    int64_t cores = 0;
    for (const JobNodeAllocation& n : j.allocation) {
      for (const auto& socket : n.sockets) cores += static_cast<int64_t>(socket.second.size());
    }
    w.Int("allocated_cores", cores);
    w.Int("allocated_hosts", static_cast<int64_t>(j.allocation.size()));
    w.BeginArray("allocated_nodes");
    std::string key;
    for (const JobNodeAllocation& n : j.allocation) {
      w.BeginObject();
      w.BeginObject("sockets");
      for (const auto& [socket, socket_cores] : n.sockets) {
        key = StrCat(socket);
        w.BeginObject(key);
        w.BeginObject("cores");
        for (int32_t core : socket_cores) {
          key = StrCat(core);
          w.String(key, "allocated");
        }
        w.EndObject();
        w.EndObject();
      }
      w.EndObject();
      w.String("nodename", n.node_name);
      w.Int("cpus_used", n.cpus_used);
      w.Int("memory_used", n.memory_used_mb);
      w.Int("memory_allocated", n.memory_allocated_mb);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.String("job_state", model::JobStateName(j.state));
  w.Int("last_sched_evaluation", j.last_sched_eval);
  w.String("licenses", j.licenses);
  w.Int("max_cpus", j.max_cpus);
  w.Int("max_nodes", j.max_nodes);
  w.String("mcs_label", j.mcs_label);
  w.String("memory_per_tres", j.mem_per_tres);
  w.String("name", j.name);
  w.String("nodes", j.nodes);
  if (j.nice == 0) {
    w.Null("nice");
  } else {
    w.Int("nice", j.nice);
  }
  str_or_null_int("tasks_per_core", j.ntasks_per_core);
  w.Int("tasks_per_node", j.ntasks_per_node);
  str_or_null_int("tasks_per_socket", j.ntasks_per_socket);
  w.Int("tasks_per_board", j.ntasks_per_board);
  w.Int("cpus", j.num_cpus);
  w.Int("node_count", j.num_nodes);
  w.Int("tasks", j.num_tasks);
  w.Int("het_job_id", 0);
  w.String("het_job_id_set", "");
  w.Int("het_job_offset", 0);
  w.String("partition", j.partition);
  w.String("prefer", j.prefer);
  if (j.memory_per_cpu) {
    w.Null("memory_per_node");
    w.Int("memory_per_cpu", j.min_memory_mb);
  } else {
    w.Int("memory_per_node", j.min_memory_mb);
    w.Null("memory_per_cpu");
  }
  w.Int("minimum_cpus_per_node", j.min_cpus_node);
  w.Int("minimum_tmp_disk_per_node", j.min_tmp_disk_mb);
  w.Int("preempt_time", j.preempt_time);
  w.Int("pre_sus_time", j.secs_pre_suspend);
  w.Int("priority", j.priority);
  w.Null("profile");
  w.String("qos", j.qos);
  w.Bool("reboot", j.reboot);
  w.String("required_nodes", j.req_nodes);
  w.Bool("requeue", j.requeue);
  w.Int("resize_time", j.resize_time);
  w.Int("restart_cnt", j.restarts);
  w.String("resv_name", j.reservation);
  if (j.oversubscribe == "NO") {
    w.String("shared", "none");
  } else if (j.oversubscribe == "YES") {
    w.String("shared", "oversubscribe");
  } else if (j.oversubscribe == "USER") {
    w.String("shared", "user");
  } else if (j.oversubscribe == "MCS") {
    w.String("shared", "mcs");
  } else {
    w.Null("shared");
  }
  w.BeginArray("show_flags");
  w.String("SHOW_ALL");
  w.String("SHOW_DETAIL");
  w.String("SHOW_LOCAL");
  w.EndArray();
  w.Int("sockets_per_board", 0);
  str_or_null_int("sockets_per_node", j.sockets_per_node);
  w.Int("start_time", j.start_time);
  w.String("state_description", j.state_description);
  w.String("state_reason", j.reason);
  w.String("standard_error", j.std_err);
  w.String("standard_input", j.std_in);
  w.String("standard_output", j.std_out);
  w.Int("submit_time", j.submit_time);
  w.Int("suspend_time", j.suspend_time);
  w.String("system_comment", j.system_comment);
  if (j.time_limit_s == core::kUnlimitedSeconds) {
    w.Null("time_limit");
  } else {
    w.Int("time_limit", j.time_limit_s / 60);
  }
  w.Int("time_minimum", j.time_min_s / 60);
  str_or_null_int("threads_per_core", j.req_threads);
  w.String("tres_bind", j.tres_bind);
  w.String("tres_freq", j.tres_freq);
  w.String("tres_per_job", j.tres_per_job);
  w.String("tres_per_node", j.tres_per_node);
  w.String("tres_per_socket", j.tres_per_socket);
  w.String("tres_per_task", j.tres_per_task);
  w.String("tres_req_str", core::FormatTres(j.tres_req));
  w.String("tres_alloc_str", core::FormatTres(j.tres_alloc));
  w.Int("user_id", j.user_id);
  w.String("user_name", j.user_name);
  w.String("wckey", j.wckey);
  w.String("current_working_directory", j.work_dir);
  w.EndObject();
}

// Writes the document into `out`, handing it to `flush` whenever it holds more than
// `chunk` bytes and at the end; `flush` takes what it wants and clears `out`.
// `next` gives the jobs one by one, then nullptr.
template <typename Next, typename Flush>
void Render(Next next, const SqueueOptions& options, const JsonMeta& meta, size_t chunk,
            std::string& out, Flush flush) {
  JsonWriter w(&out);
  BeginSlurmJson(w, meta);
  w.BeginArray("jobs");
  while (const JobView* j = next()) {
    if (options.states.given && !options.states.Matches(j->state)) continue;
    if (!PassesExplicitFilters(*j, options)) continue;
    WriteJob(w, *j);
    if (out.size() > chunk) flush(out);
  }
  w.EndArray();
  w.EndObject();
  flush(out);
}

}  // namespace

std::string RenderSqueueJson(const std::vector<JobView>& jobs, const SqueueOptions& options,
                             const RenderContext& /*ctx*/, const JsonMeta& meta) {
  std::string out;
  out.reserve(512 + jobs.size() * 3200);
  size_t i = 0;
  auto next = [&]() -> const JobView* { return i < jobs.size() ? &jobs[i++] : nullptr; };
  Render(next, options, meta, std::string::npos, out, [](std::string&) {});
  return out;
}

bool WriteSqueueJson(const std::function<const JobView*()>& next, const SqueueOptions& options,
                     const RenderContext& /*ctx*/, std::FILE* file, const JsonMeta& meta) {
  // Small pieces keep the memory the document needs small: a listing of many thousands of
  // jobs runs to tens of megabytes.
  constexpr size_t kChunk = 256 << 10;
  std::string out;
  out.reserve(kChunk + (16 << 10));
  bool ok = true;
  Render(next, options, meta, kChunk, out, [&](std::string& piece) {
    ok = ok && std::fwrite(piece.data(), 1, piece.size(), file) == piece.size();
    piece.clear();
  });
  return ok;
}

}  // namespace loom::cli::format
