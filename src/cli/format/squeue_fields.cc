#include "cli/format/internal/squeue_fields.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "cli/format/job_fields.h"
#include "cli/format/text.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli::format::internal {

using core::StrCat;
using model::JobState;

// Every job field squeue can print.
enum class Field : uint8_t {
  kAccount,
  kTresPerNode,
  kMinCpus,
  kMinTmpDisk,
  kEndTime,
  kFeatures,
  kGroupName,
  kOverSubscribe,
  kJobId,  // "7_1", "7_[3-10%2]"
  kName,
  kComment,
  kTimeLimit,
  kMinMemory,
  kReqNodes,
  kCommand,
  kPriority,  // normalized, 0..1
  kQos,
  kReason,
  kSelectJobInfo,
  kStateCompact,
  kUserName,
  kReservation,
  kWckey,
  kExcNodes,
  kNice,
  kSct,
  kJobIdRaw,  // the record's own job id
  kBatchHost,
  kNumCpus,
  kNumNodes,
  kDependency,
  kArrayJobId,
  kGroupId,
  kSockets,
  kCores,
  kThreads,
  kArrayTaskId,
  kTimeLeft,
  kTimeUsed,
  kNodeList,
  kContiguous,
  kPartition,
  kPriorityLong,
  kReasonList,
  kStartTime,
  kState,
  kUserId,
  kSubmitTime,
  kLicenses,
  kCoreSpec,
  kSchedNodes,
  kWorkDir,
  // Only through -O.
  kAccrueTime,
  kAdminComment,
  kAllocNode,
  kAllocSid,
  kAssocId,
  kBatchFlag,
  kCluster,
  kCpusPerTask,
  kCpusPerTres,
  kDeadline,
  kDelayBoot,
  kDerivedExitCode,
  kEligibleTime,
  kExitCode,
  kLastSchedEval,
  kMaxCpus,
  kMaxNodes,
  kMcsLabel,
  kMemPerTres,
  kMinTime,
  kNetwork,
  kNumTasks,
  kPendingTime,
  kPreemptTime,
  kPrefer,
  kReboot,
  kRequeue,
  kResizeTime,
  kRestartCount,
  kStdErr,
  kStdIn,
  kStdOut,
  kSystemComment,
  kTresAlloc,
  kTresBind,
  kTresFreq,
  kTresPerJob,
  kTresPerSocket,
  kTresPerTask,
};

struct FieldSpec {
  char letter;                 // the -o letter; '\0' for -O only
  std::string_view long_name;  // the -O name; "" for -o only
  std::string_view header;
  Field field;
};

namespace {

// -o letters in Slurm's order (a-z, then A-Z: the order "%all" prints), then the -O names.
constexpr FieldSpec kFields[] = {
    {'a', "Account", "ACCOUNT", Field::kAccount},
    {'b', "tres-per-node", "TRES_PER_NODE", Field::kTresPerNode},
    {'c', "MinCpus", "MIN_CPUS", Field::kMinCpus},
    {'d', "MinTmpDisk", "MIN_TMP_DISK", Field::kMinTmpDisk},
    {'e', "EndTime", "END_TIME", Field::kEndTime},
    {'f', "Feature", "FEATURES", Field::kFeatures},
    {'g', "GroupName", "GROUP", Field::kGroupName},
    {'h', "OverSubscribe", "OVER_SUBSCRIBE", Field::kOverSubscribe},
    {'i', "JobArrayID", "JOBID", Field::kJobId},
    {'j', "Name", "NAME", Field::kName},
    {'k', "Comment", "COMMENT", Field::kComment},
    {'l', "TimeLimit", "TIME_LIMIT", Field::kTimeLimit},
    {'m', "MinMemory", "MIN_MEMORY", Field::kMinMemory},
    {'n', "ReqNodes", "REQ_NODES", Field::kReqNodes},
    {'o', "Command", "COMMAND", Field::kCommand},
    {'p', "Priority", "PRIORITY", Field::kPriority},
    {'q', "QOS", "QOS", Field::kQos},
    {'r', "Reason", "REASON", Field::kReason},
    {'s', "SelectJobInfo", "", Field::kSelectJobInfo},
    {'t', "StateCompact", "ST", Field::kStateCompact},
    {'u', "UserName", "USER", Field::kUserName},
    {'v', "Reservation", "RESERVATION", Field::kReservation},
    {'w', "WCKey", "WCKEY", Field::kWckey},
    {'x', "", "EXC_NODES", Field::kExcNodes},
    {'y', "Nice", "NICE", Field::kNice},
    {'z', "SCT", "S:C:T", Field::kSct},
    {'A', "JobID", "JOBID", Field::kJobIdRaw},
    {'B', "BatchHost", "EXEC_HOST", Field::kBatchHost},
    {'C', "NumCPUs", "CPUS", Field::kNumCpus},
    {'D', "NumNodes", "NODES", Field::kNumNodes},
    {'E', "Dependency", "DEPENDENCY", Field::kDependency},
    {'F', "ArrayJobID", "ARRAY_JOB_ID", Field::kArrayJobId},
    {'G', "GroupID", "GROUP", Field::kGroupId},
    {'H', "Sockets", "SOCKETS_PER_NODE", Field::kSockets},
    {'I', "Cores", "CORES_PER_SOCKET", Field::kCores},
    {'J', "Threads", "THREADS_PER_CORE", Field::kThreads},
    {'K', "ArrayTaskID", "ARRAY_TASK_ID", Field::kArrayTaskId},
    {'L', "TimeLeft", "TIME_LEFT", Field::kTimeLeft},
    {'M', "TimeUsed", "TIME", Field::kTimeUsed},
    {'N', "NodeList", "NODELIST", Field::kNodeList},
    {'O', "Contiguous", "CONTIGUOUS", Field::kContiguous},
    {'P', "Partition", "PARTITION", Field::kPartition},
    {'Q', "PriorityLong", "PRIORITY", Field::kPriorityLong},
    {'R', "ReasonList", "NODELIST(REASON)", Field::kReasonList},
    {'S', "StartTime", "START_TIME", Field::kStartTime},
    {'T', "State", "STATE", Field::kState},
    {'U', "UserID", "UID", Field::kUserId},
    {'V', "SubmitTime", "SUBMIT_TIME", Field::kSubmitTime},
    {'W', "Licenses", "LICENSES", Field::kLicenses},
    {'X', "CoreSpec", "CORE_SPEC", Field::kCoreSpec},
    {'Y', "SchedNodes", "SCHEDNODES", Field::kSchedNodes},
    {'Z', "WorkDir", "WORK_DIR", Field::kWorkDir},
    {'\0', "Nodes", "NODELIST", Field::kNodeList},
    {'\0', "AccrueTime", "ACCRUE_TIME", Field::kAccrueTime},
    {'\0', "admin_comment", "ADMIN_COMMENT", Field::kAdminComment},
    {'\0', "AllocNodes", "ALLOC_NODES", Field::kAllocNode},
    {'\0', "AllocSID", "ALLOC_SID", Field::kAllocSid},
    {'\0', "AssocID", "ASSOC_ID", Field::kAssocId},
    {'\0', "BatchFlag", "BATCH_FLAG", Field::kBatchFlag},
    {'\0', "Cluster", "CLUSTER", Field::kCluster},
    {'\0', "cpus-per-task", "CPUS_PER_TASK", Field::kCpusPerTask},
    {'\0', "cpus-per-tres", "CPUS_PER_TRES", Field::kCpusPerTres},
    {'\0', "Deadline", "DEADLINE", Field::kDeadline},
    {'\0', "DelayBoot", "DELAY_BOOT", Field::kDelayBoot},
    {'\0', "DerivedEC", "DERIVED_EC", Field::kDerivedExitCode},
    {'\0', "EligibleTime", "ELIGIBLE_TIME", Field::kEligibleTime},
    {'\0', "exit_code", "EXIT_CODE", Field::kExitCode},
    {'\0', "LastSchedEval", "LAST_SCHED_EVAL", Field::kLastSchedEval},
    {'\0', "MaxCPUs", "MAX_CPUS", Field::kMaxCpus},
    {'\0', "MaxNodes", "MAX_NODES", Field::kMaxNodes},
    {'\0', "MCSLabel", "MCSLABEL", Field::kMcsLabel},
    {'\0', "mem-per-tres", "MEM_PER_TRES", Field::kMemPerTres},
    {'\0', "MinTime", "MIN_TIME", Field::kMinTime},
    {'\0', "Network", "NETWORK", Field::kNetwork},
    {'\0', "NumTasks", "TASKS", Field::kNumTasks},
    {'\0', "PendingTime", "PENDING_TIME", Field::kPendingTime},
    {'\0', "PreemptTime", "PREEMPT_TIME", Field::kPreemptTime},
    {'\0', "Prefer", "PREFER", Field::kPrefer},
    {'\0', "Reboot", "REBOOT", Field::kReboot},
    {'\0', "Requeue", "REQUEUE", Field::kRequeue},
    {'\0', "ResizeTime", "RESIZE_TIME", Field::kResizeTime},
    {'\0', "RestartCnt", "RESTARTCNT", Field::kRestartCount},
    {'\0', "STDERR", "STDERR", Field::kStdErr},
    {'\0', "STDIN", "STDIN", Field::kStdIn},
    {'\0', "STDOUT", "STDOUT", Field::kStdOut},
    {'\0', "system_comment", "SYSTEM_COMMENT", Field::kSystemComment},
    {'\0', "tres-alloc", "TRES_ALLOC", Field::kTresAlloc},
    {'\0', "tres-bind", "TRES_BIND", Field::kTresBind},
    {'\0', "tres-freq", "TRES_FREQ", Field::kTresFreq},
    {'\0', "tres-per-job", "TRES_PER_JOB", Field::kTresPerJob},
    {'\0', "tres-per-socket", "TRES_PER_SOCKET", Field::kTresPerSocket},
    {'\0', "tres-per-task", "TRES_PER_TASK", Field::kTresPerTask},
};

const FieldSpec* FindLetter(char c) {
  for (const FieldSpec& f : kFields) {
    if (f.letter == c && c != '\0') return &f;
  }
  return nullptr;
}

const FieldSpec* FindLongName(std::string_view name) {
  for (const FieldSpec& f : kFields) {
    if (!f.long_name.empty() && core::EqualsIgnoreCase(f.long_name, name)) return &f;
  }
  return nullptr;
}

std::string_view OrNull(const std::string& s) {
  return s.empty() ? std::string_view("(null)") : std::string_view(s);
}

std::string TimeOrNa(int64_t t, const RenderContext& ctx) {
  return t == 0 ? std::string("N/A") : FormatIsoTime(t, ctx.utc_offset_s);
}

std::string StarOr(int32_t v) { return v < 0 ? std::string("*") : StrCat(v); }

std::string LimitText(int64_t seconds) {
  return seconds == core::kUnlimitedSeconds ? std::string("UNLIMITED")
                                            : core::FormatElapsed(seconds);
}

// Jobs whose NODELIST(REASON) shows the reason rather than the nodes.
bool ShowsReason(JobState s) {
  switch (s) {
    case JobState::kPending:
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kOutOfMemory:
    case JobState::kDeadline:
    case JobState::kBootFail:
      return true;
    default:
      return false;
  }
}

// The value of one field; `buf` holds it when it has to be built.
std::string_view Value(Field f, const JobView& j, const RenderContext& ctx, std::string* buf) {
  auto set = [&](std::string s) -> std::string_view {
    *buf = std::move(s);
    return *buf;
  };
  switch (f) {
    case Field::kAccount:
      return OrNull(j.account);
    case Field::kTresPerNode:
      return j.tres_per_node.empty() ? std::string_view("N/A") : j.tres_per_node;
    case Field::kMinCpus:
      return set(StrCat(j.min_cpus_node));
    case Field::kMinTmpDisk:
      return set(FormatMemory(j.min_tmp_disk_mb));
    case Field::kEndTime:
      return set(TimeOrNa(j.end_time, ctx));
    case Field::kFeatures:
      return OrNull(j.features);
    case Field::kGroupName:
      return j.group_name;
    case Field::kOverSubscribe:
      return j.oversubscribe;
    case Field::kJobId:
      return set(FormatJobId(j));
    case Field::kName:
      return j.name;
    case Field::kComment:
      return OrNull(j.comment);
    case Field::kTimeLimit:
      return set(LimitText(j.time_limit_s));
    case Field::kMinMemory:
      return set(FormatMemory(j.min_memory_mb));
    case Field::kReqNodes:
      return j.req_nodes;
    case Field::kCommand:
      return OrNull(j.command);
    case Field::kPriority: {
      char tmp[32];
      std::snprintf(tmp, sizeof tmp, "%.14f", static_cast<double>(j.priority) / 4294967295.0);
      return set(tmp);
    }
    case Field::kQos:
      return OrNull(j.qos);
    case Field::kReason:
      return JobReasonText(j);
    case Field::kSelectJobInfo:
      return {};
    case Field::kStateCompact:
      return model::JobStateShortName(j.state);
    case Field::kUserName:
      return j.user_name;
    case Field::kReservation:
      return OrNull(j.reservation);
    case Field::kWckey:
      return OrNull(j.wckey);
    case Field::kExcNodes:
      return j.exc_nodes;
    case Field::kNice:
      return set(StrCat(j.nice));
    case Field::kSct:
      return set(
          StrCat(StarOr(j.sockets_per_node), ":", StarOr(j.req_cores), ":", StarOr(j.req_threads)));
    case Field::kJobIdRaw:
      return set(StrCat(j.job_id));
    case Field::kBatchHost:
      return j.batch_host.empty() ? std::string_view("n/a") : j.batch_host;
    case Field::kNumCpus:
      return set(StrCat(j.num_cpus));
    case Field::kNumNodes:
      return set(StrCat(j.num_nodes));
    case Field::kDependency:
      return OrNull(j.dependency);
    case Field::kArrayJobId:
      return set(StrCat(j.array_job_id != 0 ? j.array_job_id : j.job_id));
    case Field::kGroupId:
      return set(StrCat(j.group_id));
    case Field::kSockets:
      return set(StarOr(j.sockets_per_node));
    case Field::kCores:
      return set(StarOr(j.req_cores));
    case Field::kThreads:
      return set(StarOr(j.req_threads));
    case Field::kArrayTaskId:
      if (j.array_task_id.has_value()) return set(StrCat(*j.array_task_id));
      return j.array_task_string.empty() ? std::string_view("N/A") : j.array_task_string;
    case Field::kTimeLeft: {
      if (j.time_limit_s == core::kUnlimitedSeconds) return "UNLIMITED";
      int64_t left = j.time_limit_s - JobTimeUsed(j, ctx.now);
      return set(core::FormatElapsed(left < 0 ? 0 : left));
    }
    case Field::kTimeUsed:
      return set(core::FormatElapsed(JobTimeUsed(j, ctx.now)));
    case Field::kNodeList:
      return j.nodes;
    case Field::kContiguous:
      return j.contiguous ? "1" : "0";
    case Field::kPartition:
      return j.partition;
    case Field::kPriorityLong:
      return set(StrCat(j.priority));
    case Field::kReasonList:
      if (ShowsReason(j.state)) return set(StrCat("(", JobReasonText(j), ")"));
      return j.nodes;
    case Field::kStartTime:
      return set(TimeOrNa(j.start_time, ctx));
    case Field::kState:
      return model::JobStateName(j.state);
    case Field::kUserId:
      return set(StrCat(j.user_id));
    case Field::kSubmitTime:
      return set(TimeOrNa(j.submit_time, ctx));
    case Field::kLicenses:
      return OrNull(j.licenses);
    case Field::kCoreSpec:
      return j.core_spec < 0 ? std::string_view("N/A") : set(StrCat(j.core_spec));
    case Field::kSchedNodes:
      return OrNull(j.sched_nodes);
    case Field::kWorkDir:
      return j.work_dir;
    case Field::kAccrueTime:
      return set(TimeOrNa(j.accrue_time, ctx));
    case Field::kAdminComment:
      return OrNull(j.admin_comment);
    case Field::kAllocNode:
      return j.alloc_node;
    case Field::kAllocSid:
      return set(StrCat(j.alloc_sid));
    case Field::kAssocId:
      return set(StrCat(j.association_id));
    case Field::kBatchFlag:
      return j.batch ? "1" : "0";
    case Field::kCluster:
      return j.cluster;
    case Field::kCpusPerTask:
      return set(StrCat(j.cpus_per_task));
    case Field::kCpusPerTres:
      return j.cpus_per_tres.empty() ? "N/A" : std::string_view(j.cpus_per_tres);
    case Field::kDeadline:
      return set(TimeOrNa(j.deadline, ctx));
    case Field::kDelayBoot:
      return set(core::FormatElapsed(j.delay_boot_s));
    case Field::kDerivedExitCode:
      return set(StrCat(j.derived_exit_status, ":", j.derived_exit_signal));
    case Field::kEligibleTime:
      return set(TimeOrNa(j.eligible_time, ctx));
    case Field::kExitCode:
      return set(StrCat(j.exit_status, ":", j.exit_signal));
    case Field::kLastSchedEval:
      return set(TimeOrNa(j.last_sched_eval, ctx));
    case Field::kMaxCpus:
      return set(StrCat(j.max_cpus));
    case Field::kMaxNodes:
      return set(StrCat(j.max_nodes));
    case Field::kMcsLabel:
      return j.mcs_label.empty() ? "N/A" : std::string_view(j.mcs_label);
    case Field::kMemPerTres:
      return j.mem_per_tres.empty() ? "N/A" : std::string_view(j.mem_per_tres);
    case Field::kMinTime:
      return j.time_min_s == 0 ? std::string_view("N/A") : set(core::FormatElapsed(j.time_min_s));
    case Field::kNetwork:
      return OrNull(j.network);
    case Field::kNumTasks:
      return set(StrCat(j.num_tasks));
    case Field::kPendingTime: {
      int64_t from = j.eligible_time;
      int64_t to = j.start_time != 0 && j.state != JobState::kPending ? j.start_time : ctx.now;
      return set(StrCat(from == 0 || to < from ? 0 : to - from));
    }
    case Field::kPreemptTime:
      return set(TimeOrNa(j.preempt_time, ctx));
    case Field::kPrefer:
      return OrNull(j.prefer);
    case Field::kReboot:
      return j.reboot ? "1" : "0";
    case Field::kRequeue:
      return j.requeue ? "1" : "0";
    case Field::kResizeTime:
      return set(TimeOrNa(j.resize_time, ctx));
    case Field::kRestartCount:
      return set(StrCat(j.restarts));
    case Field::kStdErr:
      return j.std_err;
    case Field::kStdIn:
      return j.std_in;
    case Field::kStdOut:
      return j.std_out;
    case Field::kSystemComment:
      return OrNull(j.system_comment);
    case Field::kTresAlloc:
      return set(core::FormatTres(j.tres_alloc));
    case Field::kTresBind:
      return j.tres_bind.empty() ? "N/A" : std::string_view(j.tres_bind);
    case Field::kTresFreq:
      return j.tres_freq.empty() ? "N/A" : std::string_view(j.tres_freq);
    case Field::kTresPerJob:
      return j.tres_per_job.empty() ? "N/A" : std::string_view(j.tres_per_job);
    case Field::kTresPerSocket:
      return j.tres_per_socket.empty() ? "N/A" : std::string_view(j.tres_per_socket);
    case Field::kTresPerTask:
      return j.tres_per_task.empty() ? "N/A" : std::string_view(j.tres_per_task);
  }
  return {};
}

}  // namespace

// "-o": "%[.][width]letter" fields; text between fields is printed as it stands.
StatusOr<std::vector<Column>> ParseFormat(std::string_view fmt) {
  std::vector<Column> cols;
  if (core::EqualsIgnoreCase(fmt, "%all")) {
    for (const FieldSpec& f : kFields) {
      if (f.letter == '\0') continue;
      if (!cols.empty()) cols.back().suffix.push_back('|');
      cols.push_back(Column{&f, 0, false, ""});
    }
    return cols;
  }
  size_t i = 0;
  size_t first = fmt.find('%');
  if (first != 0) {
    cols.push_back(Column{nullptr, 0, false, std::string(fmt.substr(0, first))});
    if (first == std::string_view::npos) return cols;
    i = first;
  }
  while (i < fmt.size()) {
    // fmt[i] == '%'
    size_t j = i + 1;
    Column col;
    if (j < fmt.size() && fmt[j] == '.') {
      col.right = true;
      ++j;
    }
    int width = 0;
    while (j < fmt.size() && fmt[j] >= '0' && fmt[j] <= '9') {
      width = std::min(width * 10 + (fmt[j] - '0'), 100000);
      ++j;
    }
    if (j >= fmt.size()) {
      return absl::InvalidArgumentError(
          StrCat("-o: format '", fmt, "' ends inside a field; expected %[.][size]type"));
    }
    col.spec = FindLetter(fmt[j]);
    if (col.spec == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("-o: invalid job format specification: %", std::string_view(&fmt[j], 1)));
    }
    col.width = width;
    size_t next = fmt.find('%', j + 1);
    col.suffix =
        std::string(fmt.substr(j + 1, next == std::string_view::npos ? next : next - j - 1));
    cols.push_back(std::move(col));
    i = next == std::string_view::npos ? fmt.size() : next;
  }
  return cols;
}

// "-O": "name[:[.][width][suffix]]" separated by commas; width 20 when not given.
StatusOr<std::vector<Column>> ParseLongFormat(std::string_view fmt) {
  std::vector<Column> cols;
  for (std::string_view item : core::Split(fmt, ',')) {
    if (item.empty()) continue;
    size_t colon = item.find(':');
    std::string_view name = item.substr(0, colon);
    Column col;
    col.spec = FindLongName(name);
    if (col.spec == nullptr) {
      return absl::InvalidArgumentError(StrCat("-O: invalid job format specification: ", name));
    }
    col.width = 20;
    if (colon != std::string_view::npos) {
      std::string_view rest = item.substr(colon + 1);
      size_t j = 0;
      if (j < rest.size() && rest[j] == '.') {
        col.right = true;
        ++j;
      }
      size_t digits = j;
      while (j < rest.size() && rest[j] >= '0' && rest[j] <= '9') ++j;
      if (j > digits) {
        std::optional<int64_t> w = core::ParseInt(rest.substr(digits, j - digits));
        col.width = static_cast<int>(std::min<int64_t>(w.value_or(100000), 100000));
      }
      col.suffix = std::string(rest.substr(j));
    }
    cols.push_back(std::move(col));
  }
  if (cols.empty()) return absl::InvalidArgumentError("-O: no fields given");
  return cols;
}

void AppendRow(std::string* out, const std::vector<Column>& cols, const JobView* job,
               const RenderContext& ctx, std::string* buf) {
  for (const Column& c : cols) {
    if (c.spec != nullptr) {
      std::string_view v = job == nullptr ? c.spec->header : Value(c.spec->field, *job, ctx, buf);
      AppendColumn(out, v, c.width, c.right);
    }
    out->append(c.suffix);
  }
  out->push_back('\n');
}

}  // namespace loom::cli::format::internal
