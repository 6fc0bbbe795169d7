#include "conf/show_config.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/strings.h"
#include "core/time_format.h"

namespace loom::conf {
namespace {

using core::StrCat;

std::string Seconds(int64_t s) { return StrCat(s, " sec"); }
std::string OrNull(const std::string& v) { return v.empty() ? "(null)" : v; }
std::string MemOrUnlimited(int64_t mb) { return mb > 0 ? StrCat(mb) : "UNLIMITED"; }

// SchedulerParameters as options that differ from Slurm's defaults, then the ones Loom
// keeps without acting on.
std::string SchedulerParameters(const SchedulerParams& p) {
  const SchedulerParams d;
  std::vector<std::string> out;
  auto num = [&](const char* name, int64_t v, int64_t def) {
    if (v != def) out.push_back(StrCat(name, "=", v));
  };
  num("bf_interval", p.bf_interval_s, d.bf_interval_s);
  num("bf_window", p.bf_window_min, d.bf_window_min);
  num("bf_resolution", p.bf_resolution_s, d.bf_resolution_s);
  num("bf_max_job_test", p.bf_max_job_test, d.bf_max_job_test);
  num("bf_max_job_start", p.bf_max_job_start, d.bf_max_job_start);
  num("bf_max_job_part", p.bf_max_job_part, d.bf_max_job_part);
  num("bf_max_job_user", p.bf_max_job_user, d.bf_max_job_user);
  num("bf_max_time", p.bf_max_time_s, d.bf_max_time_s);
  if (p.bf_continue) out.push_back("bf_continue");
  if (p.nohold_on_prolog_fail) out.push_back("nohold_on_prolog_fail");
  num("bf_min_age_reserve", p.bf_min_age_reserve_s, d.bf_min_age_reserve_s);
  num("default_queue_depth", p.default_queue_depth, d.default_queue_depth);
  num("partition_job_depth", p.partition_job_depth, d.partition_job_depth);
  num("sched_interval", p.sched_interval_s, d.sched_interval_s);
  num("sched_min_interval", p.sched_min_interval_us, d.sched_min_interval_us);
  num("sched_max_job_start", p.sched_max_job_start, d.sched_max_job_start);
  for (const auto& [k, v] : p.other_options) out.push_back(v.empty() ? k : StrCat(k, "=", v));
  return OrNull(core::Join(out, ","));
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

ConfigEntries ShowConfigEntries(const ClusterConfig& c, uint32_t slurm_user_uid) {
  std::map<std::string, std::string> kv;
  kv["AccountingStorageTRES"] = OrNull(core::Join(c.accounting_storage_tres, ","));
  kv["AccountingStorageType"] = c.accounting_storage_type;
  kv["AccountingStorageEnforce"] =
      c.accounting_storage_enforce.empty() ? "none" : core::Join(c.accounting_storage_enforce, ",");
  if (c.AccountingEnabled()) {
    kv["AccountingStorageHost"] = c.accounting_storage_host.empty() && !c.controllers.empty()
                                      ? c.controllers[0].name
                                      : OrNull(c.accounting_storage_host);
    kv["AccountingStoragePort"] = StrCat(c.accounting_storage_port);
  }
  kv["PrivateData"] = c.private_data.empty() ? "none" : core::Join(c.private_data, ",");
  kv["ClusterName"] = c.cluster_name;
  kv["DefMemPerCPU"] = MemOrUnlimited(c.def_mem_per_cpu_mb);
  if (c.def_mem_per_cpu_mb == 0) {
    kv.erase("DefMemPerCPU");
    kv["DefMemPerNode"] = MemOrUnlimited(c.def_mem_per_node_mb);
  }
  kv["GresTypes"] = OrNull(core::Join(c.gres_types, ","));
  kv["KillWait"] = Seconds(c.kill_wait_s);
  kv["MaxArraySize"] = StrCat(c.max_array_size);
  kv["MaxJobCount"] = StrCat(c.max_job_count);
  kv["MaxMemPerNode"] = MemOrUnlimited(c.max_mem_per_node_mb);
  if (c.max_mem_per_cpu_mb > 0) {
    kv.erase("MaxMemPerNode");
    kv["MaxMemPerCPU"] = StrCat(c.max_mem_per_cpu_mb);
  }
  kv["MinJobAge"] = Seconds(c.min_job_age_s);
  kv["TreeWidth"] = StrCat(c.tree_width);
  kv["MpiDefault"] = c.mpi_default;
  kv["MpiParams"] =
      c.mpi_ports_low > 0 ? StrCat("ports=", c.mpi_ports_low, "-", c.mpi_ports_high) : "(null)";
  kv["Prolog"] = OrNull(c.prolog);
  kv["Epilog"] = OrNull(c.epilog);
  kv["PrologSlurmctld"] = OrNull(c.prolog_slurmctld);
  kv["EpilogSlurmctld"] = OrNull(c.epilog_slurmctld);
  kv["TaskProlog"] = OrNull(c.task_prolog);
  kv["TaskEpilog"] = OrNull(c.task_epilog);
  kv["SrunProlog"] = OrNull(c.srun_prolog);
  kv["SrunEpilog"] = OrNull(c.srun_epilog);
  kv["PrologFlags"] = OrNull(c.prolog_flags.ToString());
  kv["PrologEpilogTimeout"] = StrCat(c.prolog_epilog_timeout_s);
  kv["JobSubmitPlugins"] = c.job_submit_lua ? "lua" : "(null)";
  kv["CliFilterPlugins"] = c.cli_filter_lua ? "lua" : "(null)";
  kv["TaskPlugin"] = OrNull(core::Join(c.task_plugins, ","));
  kv["TaskPluginParam"] = OrNull(c.task_plugin_param);
  kv["PreemptMode"] = c.preempt_mode.ToString();
  kv["PreemptType"] = std::string(PreemptTypeName(c.preempt_type));
  kv["PriorityType"] = std::string(PriorityTypeName(c.priority.type));
  if (c.priority.type == PriorityType::kMultifactor) {
    kv["PriorityDecayHalfLife"] = core::FormatDuration(c.priority.decay_half_life_s);
    kv["PriorityMaxAge"] = core::FormatDuration(c.priority.max_age_s);
    kv["PriorityFavorSmall"] = c.priority.favor_small ? "Yes" : "No";
    kv["PriorityCalcPeriod"] = core::FormatDuration(c.priority.calc_period_s);
    kv["PriorityFlags"] = c.priority.FlagsString();  // empty, not (null), as Slurm prints it
    kv["PriorityUsageResetPeriod"] = std::string(UsageResetName(c.priority.usage_reset));
    kv["PriorityWeightAge"] = StrCat(c.priority.weight_age);
    kv["PriorityWeightAssoc"] = StrCat(c.priority.weight_assoc);
    kv["PriorityWeightFairShare"] = StrCat(c.priority.weight_fairshare);
    kv["PriorityWeightJobSize"] = StrCat(c.priority.weight_job_size);
    kv["PriorityWeightPartition"] = StrCat(c.priority.weight_partition);
    kv["PriorityWeightQOS"] = StrCat(c.priority.weight_qos);
    kv["PriorityWeightTRES"] = OrNull(c.priority.weight_tres_text);
  }
  kv["DebugFlags"] = OrNull(core::DebugFlagsString(c.debug_flags));
  kv["ReturnToService"] = StrCat(c.return_to_service);
  kv["ResvOverRun"] = c.resv_over_run_s >= core::kUnlimitedSeconds
                          ? std::string("UNLIMITED")
                          : StrCat(c.resv_over_run_s / 60, " min");
  kv["SlurmctldDebug"] = std::string(core::LogLevelName(c.slurmctld_debug));
  kv["SlurmctldLogFile"] = OrNull(c.slurmctld_log_file);
  kv["SlurmdDebug"] = std::string(core::LogLevelName(c.slurmd_debug));
  kv["SlurmdLogFile"] = OrNull(c.slurmd_log_file);
  if (!c.slurmctld_pid_file.empty()) kv["SlurmctldPidFile"] = c.slurmctld_pid_file;
  if (!c.slurmd_pid_file.empty()) kv["SlurmdPidFile"] = c.slurmd_pid_file;
  if (c.slurmctld_syslog_debug) {
    kv["SlurmctldSyslogDebug"] = std::string(core::LogLevelName(*c.slurmctld_syslog_debug));
  }
  if (c.slurmd_syslog_debug) {
    kv["SlurmdSyslogDebug"] = std::string(core::LogLevelName(*c.slurmd_syslog_debug));
  }
  kv["SchedulerParameters"] = SchedulerParameters(c.scheduler);
  kv["SchedulerType"] = std::string(SchedulerTypeName(c.scheduler_type));
  kv["SelectType"] = std::string(SelectTypeName(c.select_type));
  kv["SelectTypeParameters"] = Upper(c.select.ToString());
  kv["SlurmUser"] = StrCat(c.slurm_user, "(", slurm_user_uid, ")");
  for (size_t i = 0; i < c.controllers.size(); ++i) {
    const ControllerHost& h = c.controllers[i];
    kv[StrCat("SlurmctldHost[", i, "]")] =
        h.addr.empty() || h.addr == h.name ? h.name : StrCat(h.name, "(", h.addr, ")");
  }
  kv["SlurmctldPort"] = c.slurmctld_port_count > 1
                            ? StrCat(c.slurmctld_port, "-", c.slurmctld_port + c.slurmctld_port_count - 1)
                            : StrCat(c.slurmctld_port);
  kv["SlurmdPort"] = StrCat(c.slurmd_port);
  kv["SlurmdTimeout"] = Seconds(c.slurmd_timeout_s);
  kv["StateSaveLocation"] = c.state_save_location;
  kv["TopologyPlugin"] = c.topology_plugin;
  // What the file says about keys Loom does not act on, unless a value above covers it.
  for (const auto& [k, v] : c.other_keys) kv.try_emplace(k, v);

  ConfigEntries out(kv.begin(), kv.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return core::ToLower(a.first) < core::ToLower(b.first);
  });
  return out;
}

std::string RenderConfigEntries(const ConfigEntries& entries) {
  std::string out;
  for (const auto& [k, v] : entries) {
    out += k;
    if (k.size() < 23) out.append(23 - k.size(), ' ');
    out += " = " + v + "\n";
  }
  return out;
}

}  // namespace loom::conf
