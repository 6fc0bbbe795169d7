#include "cli/format/scontrol_format.h"

#include <algorithm>
#include <cstdio>

#include "cli/format/job_fields.h"
#include "cli/format/sinfo_format.h"
#include "cli/format/text.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli::format {
namespace {

using core::StrCat;
using model::JobState;

// Builds one record: fields on a line separated by spaces; NewLine() starts a continuation
// line ("\n   ", or a space in one-liner mode).
class Record {
 public:
  explicit Record(bool one_liner) : sep_(one_liner ? " " : "\n   "), one_liner_(one_liner) {}

  // Appends pieces to the current line.
  template <typename... Args>
  Record& Add(const Args&... pieces) {
    (core::internal::AppendPiece(&out_, pieces), ...);
    return *this;
  }
  Record& NewLine() {
    out_ += sep_;
    return *this;
  }
  // Ends the record: `trailing_sep` adds one more separator first (Slurm's job records end
  // with an empty continuation line).
  std::string Finish(bool trailing_sep) {
    if (trailing_sep) out_ += sep_;
    out_.push_back('\n');
    if (!one_liner_) out_.push_back('\n');
    return std::move(out_);
  }
  const char* sep() const { return sep_; }

 private:
  std::string out_;
  const char* sep_;
  bool one_liner_;
};

std::string_view OrNull(const std::string& s) {
  return s.empty() ? std::string_view("(null)") : std::string_view(s);
}

std::string_view OrNa(const std::string& s) {
  return s.empty() ? std::string_view("N/A") : std::string_view(s);
}

std::string TimeOr(int64_t t, std::string_view unset, const RenderContext& ctx) {
  return t == 0 ? std::string(unset) : FormatIsoTime(t, ctx.utc_offset_s);
}

std::string StarOr(int32_t v) { return v < 0 ? std::string("*") : StrCat(v); }

std::string Range(int32_t lo, int32_t hi, bool show_range) {
  return show_range && hi > 0 ? StrCat(lo, "-", hi) : StrCat(lo);
}

bool IsArray(const JobView& j) {
  return j.array_job_id != 0 || j.array_task_id.has_value() || !j.array_task_string.empty();
}

// Fills Slurm's filename patterns and makes the path absolute against WorkDir.
std::string ExpandPath(const JobView& j, std::string_view pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%' || i + 1 == pattern.size()) {
      out.push_back(c);
      continue;
    }
    char k = pattern[++i];
    uint32_t array_id = j.array_job_id != 0 ? j.array_job_id : j.job_id;
    switch (k) {
      case '%':
        out.push_back('%');
        break;
      case 'j':
        out += StrCat(j.job_id);
        break;
      case 'A':
        out += StrCat(array_id);
        break;
      case 'a':
        out += j.array_task_id ? StrCat(*j.array_task_id) : std::string("4294967294");
        break;
      case 'x':
        out += j.name;
        break;
      case 'u':
        out += j.user_name;
        break;
      case 'N':
        out += j.batch_host;
        break;
      default:
        out.push_back('%');
        out.push_back(k);
    }
  }
  if (!out.empty() && out.front() != '/' && !j.work_dir.empty()) {
    out = StrCat(j.work_dir, j.work_dir.back() == '/' ? "" : "/", out);
  }
  return out;
}

}  // namespace

std::string ResolvedStdIn(const JobView& job) {
  return job.std_in.empty() ? std::string("/dev/null") : ExpandPath(job, job.std_in);
}

std::string ResolvedStdOut(const JobView& job) {
  if (!job.std_out.empty()) return ExpandPath(job, job.std_out);
  return ExpandPath(job, job.array_task_id ? "slurm-%A_%a.out" : "slurm-%j.out");
}

std::string ResolvedStdErr(const JobView& job) {
  return job.std_err.empty() ? ResolvedStdOut(job) : ExpandPath(job, job.std_err);
}

std::string RenderJob(const JobView& j, const ScontrolOptions& options, const RenderContext& ctx) {
  Record r(options.one_liner);
  bool pending = j.state == JobState::kPending;

  r.Add("JobId=", j.job_id);
  if (IsArray(j)) {
    r.Add(" ArrayJobId=", j.array_job_id != 0 ? j.array_job_id : j.job_id, " ArrayTaskId=");
    if (j.array_task_id) {
      r.Add(*j.array_task_id);
    } else {
      r.Add(j.array_task_string);
    }
    if (j.array_max_tasks > 0) r.Add(" ArrayTaskThrottle=", j.array_max_tasks);
  }
  r.Add(" JobName=", j.name).NewLine();
  r.Add("UserId=", j.user_name, "(", j.user_id, ") GroupId=", j.group_name, "(", j.group_id,
        ") MCS_label=", OrNa(j.mcs_label))
      .NewLine();
  r.Add("Priority=", j.priority, " Nice=", j.nice, " Account=", OrNull(j.account),
        " QOS=", OrNull(j.qos));
  if (!j.wckey.empty()) r.Add(" WCKey=", j.wckey);
  r.NewLine();
  // A reason that is a description ("launch failed requeued held") stays one word here.
  std::string reason(JobReasonText(j));
  std::replace(reason.begin(), reason.end(), ' ', '_');
  r.Add("JobState=", model::JobStateName(j.state), " Reason=", reason,
        " Dependency=", OrNull(j.dependency))
      .NewLine();
  r.Add("Requeue=", j.requeue ? 1 : 0, " Restarts=", j.restarts, " BatchFlag=", j.batch ? 1 : 0,
        " Reboot=", j.reboot ? 1 : 0, " ExitCode=", j.exit_status, ":", j.exit_signal)
      .NewLine();
  if (options.details) {
    r.Add("DerivedExitCode=", j.derived_exit_status, ":", j.derived_exit_signal).NewLine();
  }
  r.Add("RunTime=", core::FormatDuration(JobTimeUsed(j, ctx.now)),
        " TimeLimit=", core::FormatDuration(j.time_limit_s),
        " TimeMin=", j.time_min_s == 0 ? std::string("N/A") : core::FormatDuration(j.time_min_s))
      .NewLine();
  r.Add("SubmitTime=", TimeOr(j.submit_time, "Unknown", ctx),
        " EligibleTime=", TimeOr(j.eligible_time, "Unknown", ctx))
      .NewLine();
  r.Add("AccrueTime=", TimeOr(j.accrue_time, "Unknown", ctx)).NewLine();
  r.Add("StartTime=", TimeOr(j.start_time, "Unknown", ctx),
        " EndTime=", TimeOr(j.end_time, "Unknown", ctx),
        " Deadline=", TimeOr(j.deadline, "N/A", ctx))
      .NewLine();
  r.Add("SuspendTime=", TimeOr(j.suspend_time, "None", ctx), " SecsPreSuspend=", j.secs_pre_suspend,
        " LastSchedEval=", TimeOr(j.last_sched_eval, "Unknown", ctx));
  if (!j.scheduler.empty()) r.Add(" Scheduler=", j.scheduler);
  r.NewLine();
  r.Add("Partition=", j.partition, " AllocNode:Sid=", j.alloc_node, ":", j.alloc_sid).NewLine();
  if (!j.reservation.empty()) r.Add("Reservation=", j.reservation).NewLine();
  r.Add("ReqNodeList=", OrNull(j.req_nodes), " ExcNodeList=", OrNull(j.exc_nodes)).NewLine();
  r.Add("NodeList=", j.nodes);
  if (!j.sched_nodes.empty()) r.Add(" SchedNodeList=", j.sched_nodes);
  r.NewLine();
  if (!j.batch_host.empty()) r.Add("BatchHost=", j.batch_host).NewLine();
  r.Add("NumNodes=", Range(j.num_nodes, j.max_nodes, pending),
        " NumCPUs=", Range(j.num_cpus, j.max_cpus, pending), " NumTasks=", j.num_tasks,
        " CPUs/Task=", j.cpus_per_task, " ReqB:S:C:T=", StarOr(j.req_boards), ":",
        StarOr(j.req_sockets), ":", StarOr(j.req_cores), ":", StarOr(j.req_threads))
      .NewLine();
  r.Add("TRES=", core::FormatTres(j.tres_alloc.empty() ? j.tres_req : j.tres_alloc)).NewLine();
  r.Add("Socks/Node=", StarOr(j.sockets_per_node), " NtasksPerN:B:S:C=", StarOr(j.ntasks_per_node),
        ":", StarOr(j.ntasks_per_board), ":", StarOr(j.ntasks_per_socket), ":",
        StarOr(j.ntasks_per_core), " CoreSpec=", StarOr(j.core_spec))
      .NewLine();
  if (options.details && !j.nodes.empty()) {
    r.Add("JOB_GRES=", OrNull(j.job_gres)).NewLine();
    for (const JobNodeDetail& d : j.node_details) {
      r.Add("  Nodes=", d.nodes, " CPU_IDs=", d.cpu_ids, " Mem=", d.mem_mb, " GRES=", d.gres)
          .NewLine();
    }
  }
  r.Add("MinCPUsNode=", j.min_cpus_node,
        j.memory_per_cpu ? " MinMemoryCPU=" : " MinMemoryNode=", FormatMemory(j.min_memory_mb),
        " MinTmpDiskNode=", FormatMemory(j.min_tmp_disk_mb))
      .NewLine();
  r.Add("Features=", OrNull(j.features), " DelayBoot=", core::FormatDuration(j.delay_boot_s))
      .NewLine();
  if (!j.prefer.empty()) r.Add("Prefer=", j.prefer).NewLine();
  r.Add("OverSubscribe=", j.oversubscribe, " Contiguous=", j.contiguous ? 1 : 0,
        " Licenses=", OrNull(j.licenses), " Network=", OrNull(j.network))
      .NewLine();
  r.Add("Command=", OrNull(j.command)).NewLine();
  r.Add("WorkDir=", j.work_dir).NewLine();
  if (!j.comment.empty()) r.Add("Comment=", j.comment).NewLine();
  if (!j.admin_comment.empty()) r.Add("AdminComment=", j.admin_comment).NewLine();
  if (!j.system_comment.empty()) r.Add("SystemComment=", j.system_comment).NewLine();
  if (j.batch) {
    r.Add("StdErr=", ResolvedStdErr(j)).NewLine();
    r.Add("StdIn=", ResolvedStdIn(j)).NewLine();
    r.Add("StdOut=", ResolvedStdOut(j)).NewLine();
  }
  r.Add("Power=", j.power);
  auto optional_line = [&](std::string_view key, const std::string& value) {
    if (!value.empty()) r.NewLine().Add(key, "=", value);
  };
  optional_line("CpusPerTres", j.cpus_per_tres);
  optional_line("MemPerTres", j.mem_per_tres);
  optional_line("TresBind", j.tres_bind);
  optional_line("TresFreq", j.tres_freq);
  optional_line("TresPerJob", j.tres_per_job);
  optional_line("TresPerNode", j.tres_per_node);
  optional_line("TresPerSocket", j.tres_per_socket);
  optional_line("TresPerTask", j.tres_per_task);
  if (!j.mail_user.empty() || !j.mail_type.empty()) {
    r.NewLine().Add("MailUser=", OrNull(j.mail_user),
                    " MailType=", j.mail_type.empty() ? std::string_view("NONE") : j.mail_type);
  }
  return r.Finish(/*trailing_sep=*/true);
}

std::string RenderJobs(const std::vector<JobView>& jobs, const ScontrolOptions& options,
                       const RenderContext& ctx) {
  std::string out;
  for (const JobView& j : jobs) out += RenderJob(j, options, ctx);
  return out;
}

std::string RenderNode(const NodeView& n, const ScontrolOptions& options,
                       const RenderContext& ctx) {
  Record r(options.one_liner);
  r.Add("NodeName=", n.name, " ");
  if (!n.arch.empty()) r.Add("Arch=", n.arch, " ");
  r.Add("CoresPerSocket=", n.cores_per_socket, " ").NewLine();
  std::string load = "N/A";
  if (n.cpu_load) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", *n.cpu_load);
    load = buf;
  }
  r.Add("CPUAlloc=", n.cpus_alloc, " CPUEfctv=", n.cpus_effective, " CPUTot=", n.cpus,
        " CPULoad=", load)
      .NewLine();
  r.Add("AvailableFeatures=", OrNull(n.features_available)).NewLine();
  r.Add("ActiveFeatures=", OrNull(n.features_active)).NewLine();
  r.Add("Gres=", OrNull(n.gres)).NewLine();
  if (options.details && !n.gres_used.empty()) r.Add("GresUsed=", n.gres_used).NewLine();
  r.Add("NodeAddr=", n.node_addr, " NodeHostName=", n.node_hostname, " Port=", n.port,
        " Version=", OrNa(n.version))
      .NewLine();
  if (!n.os.empty()) r.Add("OS=", n.os, " ").NewLine();
  r.Add("RealMemory=", n.real_memory_mb, " AllocMem=", n.alloc_memory_mb,
        " FreeMem=", n.free_memory_mb ? StrCat(*n.free_memory_mb) : std::string("N/A"),
        " Sockets=", n.sockets, " Boards=", n.boards)
      .NewLine();
  r.Add("State=", NodeStateComplete(n.state, n.flags), " ThreadsPerCore=", n.threads_per_core,
        " TmpDisk=", n.tmp_disk_mb, " Weight=", n.weight, " Owner=", OrNa(n.owner),
        " MCS_label=", OrNa(n.mcs_label))
      .NewLine();
  if (!n.partitions.empty()) {
    r.Add("Partitions=");
    for (size_t i = 0; i < n.partitions.size(); ++i) r.Add(i ? "," : "", n.partitions[i]);
    r.Add(" ").NewLine();
  }
  r.Add("BootTime=", TimeOr(n.boot_time, "None", ctx),
        " SlurmdStartTime=", TimeOr(n.slurmd_start_time, "None", ctx))
      .NewLine();
  r.Add("LastBusyTime=", TimeOr(n.last_busy_time, "None", ctx)).NewLine();
  r.Add("CfgTRES=", core::FormatTres(n.cfg_tres)).NewLine();
  r.Add("AllocTRES=", core::FormatTres(n.alloc_tres)).NewLine();
  r.Add("CapWatts=", n.cap_watts ? StrCat(*n.cap_watts) : std::string("n/a")).NewLine();
  r.Add("CurrentWatts=", n.current_watts, " AveWatts=", n.ave_watts).NewLine();
  r.Add("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s");
  if (!n.reason.empty()) {
    r.NewLine().Add("Reason=", n.reason, " [", n.reason_user.empty() ? "Unknown" : n.reason_user,
                    "@", TimeOr(n.reason_time, "Unknown", ctx), "]");
  }
  return r.Finish(/*trailing_sep=*/false);
}

std::string RenderNodes(const std::vector<NodeView>& nodes, const ScontrolOptions& options,
                        const RenderContext& ctx) {
  std::string out;
  for (const NodeView& n : nodes) out += RenderNode(n, options, ctx);
  return out;
}

std::string RenderPartition(const PartitionView& p, const ScontrolOptions& options,
                            const RenderContext& ctx) {
  auto yes_no = [](bool b) { return b ? "YES" : "NO"; };
  auto unlimited_or = [](int64_t v) { return v < 0 ? std::string("UNLIMITED") : StrCat(v); };
  Record r(options.one_liner);
  r.Add("PartitionName=", p.name).NewLine();
  r.Add("AllowGroups=", p.allow_groups);
  if (!p.deny_accounts.empty()) {
    r.Add(" DenyAccounts=", p.deny_accounts);
  } else {
    r.Add(" AllowAccounts=", p.allow_accounts);
  }
  if (!p.deny_qos.empty()) {
    r.Add(" DenyQos=", p.deny_qos);
  } else {
    r.Add(" AllowQos=", p.allow_qos);
  }
  r.NewLine();
  r.Add("AllocNodes=", p.alloc_nodes, " Default=", yes_no(p.is_default), " QoS=", OrNa(p.qos))
      .NewLine();
  std::string default_time =
      p.default_time_s < 0 ? std::string("NONE") : core::FormatDuration(p.default_time_s);
  r.Add("DefaultTime=", default_time, " DisableRootJobs=", yes_no(p.disable_root_jobs),
        " ExclusiveUser=", yes_no(p.exclusive_user), " GraceTime=", p.grace_time_s,
        " Hidden=", yes_no(p.hidden))
      .NewLine();
  r.Add("MaxNodes=", unlimited_or(p.max_nodes), " MaxTime=", core::FormatDuration(p.max_time_s),
        " MinNodes=", p.min_nodes, " LLN=", yes_no(p.lln),
        " MaxCPUsPerNode=", unlimited_or(p.max_cpus_per_node))
      .NewLine();
  r.Add("Nodes=",
        p.node_names.empty() ? std::string("(null)") : core::CompressHostlist(p.node_names))
      .NewLine();
  r.Add("PriorityJobFactor=", p.priority_job_factor, " PriorityTier=", p.priority_tier,
        " RootOnly=", yes_no(p.root_only), " ReqResv=", yes_no(p.req_resv),
        " OverSubscribe=", p.oversubscribe)
      .NewLine();
  r.Add("OverTimeLimit=",
        p.over_time_limit_min < 0 ? std::string("NONE") : StrCat(p.over_time_limit_min),
        " PreemptMode=", p.preempt_mode)
      .NewLine();
  std::string_view state = "UP";
  switch (p.state) {
    case PartitionState::kUp:
      state = "UP";
      break;
    case PartitionState::kDown:
      state = "DOWN";
      break;
    case PartitionState::kDrain:
      state = "DRAIN";
      break;
    case PartitionState::kInactive:
      state = "INACTIVE";
      break;
  }
  r.Add("State=", state, " TotalCPUs=", p.total_cpus, " TotalNodes=", p.total_nodes,
        " SelectTypeParameters=", p.select_type_parameters)
      .NewLine();
  r.Add("JobDefaults=", OrNull(p.job_defaults)).NewLine();
  if (p.def_mem_per_cpu_mb >= 0) {
    r.Add("DefMemPerCPU=", p.def_mem_per_cpu_mb);
  } else {
    r.Add("DefMemPerNode=", unlimited_or(p.def_mem_per_node_mb));
  }
  if (p.max_mem_per_cpu_mb >= 0) {
    r.Add(" MaxMemPerCPU=", p.max_mem_per_cpu_mb);
  } else {
    r.Add(" MaxMemPerNode=", unlimited_or(p.max_mem_per_node_mb));
  }
  if (!p.tres.empty()) r.NewLine().Add("TRES=", core::FormatTres(p.tres));
  if (!p.tres_billing_weights.empty()) {
    r.NewLine().Add("TRESBillingWeights=", p.tres_billing_weights);
  }
  return r.Finish(/*trailing_sep=*/false);
}

std::string RenderPartitions(const std::vector<PartitionView>& partitions,
                             const ScontrolOptions& options, const RenderContext& ctx) {
  std::string out;
  for (const PartitionView& p : partitions) out += RenderPartition(p, options, ctx);
  return out;
}

}  // namespace loom::cli::format
