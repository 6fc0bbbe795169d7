#include "cli/format/squeue_format.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <optional>

#include "cli/format/job_fields.h"
#include "cli/format/text.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli::format {
namespace {

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

// One column of the layout: a field, or literal text when `spec` is null.
struct Column {
  const FieldSpec* spec = nullptr;
  int width = 0;
  bool right = false;
  std::string suffix;  // printed after the column (the text up to the next field)
};

constexpr std::string_view kDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
constexpr std::string_view kLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
constexpr std::string_view kStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

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

StatusOr<std::vector<Column>> LayoutFor(const SqueueOptions& o) {
  if (!o.format.empty()) return ParseFormat(o.format);
  if (!o.long_format.empty()) return ParseLongFormat(o.long_format);
  if (o.start) return ParseFormat(kStartFormat);
  return ParseFormat(o.long_listing ? kLongFormat : kDefaultFormat);
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

// ---------------------------------------------------------------------------------------------
// Sorting

struct SortKey {
  char letter;
  bool descending;
};

// The sort keys squeue accepts, by the -o letter they name.
constexpr std::string_view kSortLetters = "aAbBcCdDeEfFgGhHiIjJkKlLmMnNpPqQrRSTtuUvVwxyYzZ";

StatusOr<std::vector<SortKey>> ParseSort(std::string_view text) {
  std::vector<SortKey> keys;
  for (std::string_view item : core::Split(text, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    SortKey k{'\0', false};
    if (item.front() == '-' || item.front() == '+') {
      k.descending = item.front() == '-';
      item.remove_prefix(1);
    }
    if (item.size() != 1 || kSortLetters.find(item.front()) == std::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat("-S: invalid sort specification '", item,
                 "'; expected a comma separated list of field letters such as P,t,-p"));
    }
    k.letter = item.front();
    keys.push_back(k);
  }
  return keys;
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// An array's records sort together: by the array's id, then task id, the record of the pending
// tasks last.
std::pair<uint32_t, uint32_t> ArrayOrder(const JobView& j) {
  return {j.array_job_id != 0 ? j.array_job_id : j.job_id, j.array_task_id.value_or(UINT32_MAX)};
}

int Compare(char letter, const JobView& a, const JobView& b, const RenderContext& ctx) {
  switch (letter) {
    case 'i':
    case 'F':
    case 'K':
      return Cmp(ArrayOrder(a), ArrayOrder(b));
    case 'A':
      return Cmp(a.job_id, b.job_id);
    case 'j':
      return Cmp(a.name, b.name);
    case 'u':
      return Cmp(a.user_name, b.user_name);
    case 'U':
      return Cmp(a.user_id, b.user_id);
    case 'g':
      return Cmp(a.group_name, b.group_name);
    case 'G':
      return Cmp(a.group_id, b.group_id);
    case 'a':
      return Cmp(a.account, b.account);
    case 'q':
      return Cmp(a.qos, b.qos);
    case 'P':
      return Cmp(a.partition, b.partition);
    case 't':
    case 'T':
      return Cmp(model::JobStateName(a.state), model::JobStateName(b.state));
    case 'p':
    case 'Q':
      return Cmp(a.priority, b.priority);
    case 'S':
      return Cmp(a.start_time, b.start_time);
    case 'e':
      return Cmp(a.end_time, b.end_time);
    case 'V':
      return Cmp(a.submit_time, b.submit_time);
    case 'M':
      return Cmp(JobTimeUsed(a, ctx.now), JobTimeUsed(b, ctx.now));
    case 'l':
      return Cmp(a.time_limit_s, b.time_limit_s);
    case 'L':
      return Cmp(a.time_limit_s - JobTimeUsed(a, ctx.now),
                 b.time_limit_s - JobTimeUsed(b, ctx.now));
    case 'D':
      return Cmp(a.num_nodes, b.num_nodes);
    case 'C':
      return Cmp(a.num_cpus, b.num_cpus);
    case 'c':
      return Cmp(a.min_cpus_node, b.min_cpus_node);
    case 'm':
      return Cmp(a.min_memory_mb, b.min_memory_mb);
    case 'd':
      return Cmp(a.min_tmp_disk_mb, b.min_tmp_disk_mb);
    case 'N':
      return Cmp(a.nodes, b.nodes);
    case 'B':
      return Cmp(a.batch_host, b.batch_host);
    case 'r':
    case 'R':
      return Cmp(JobReasonText(a), JobReasonText(b));
    case 'E':
      return Cmp(a.dependency, b.dependency);
    case 'f':
      return Cmp(a.features, b.features);
    case 'k':
      return Cmp(a.comment, b.comment);
    case 'n':
      return Cmp(a.req_nodes, b.req_nodes);
    case 'v':
      return Cmp(a.reservation, b.reservation);
    case 'w':
      return Cmp(a.wckey, b.wckey);
    case 'x':
      return Cmp(a.exc_nodes, b.exc_nodes);
    case 'y':
      return Cmp(a.nice, b.nice);
    case 'Y':
      return Cmp(a.sched_nodes, b.sched_nodes);
    case 'Z':
      return Cmp(a.work_dir, b.work_dir);
    case 'b':
      return Cmp(a.tres_per_node, b.tres_per_node);
    case 'h':
      return Cmp(a.oversubscribe, b.oversubscribe);
    default:
      return 0;  // H, I, J, z, ...: per-node request shapes, rarely sorted on
  }
}

// ---------------------------------------------------------------------------------------------
// Filters

bool Contains(const std::vector<std::string>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

bool PassesExplicitFilters(const JobView& j, const SqueueOptions& o) {
  if (!o.job_ids.empty()) {
    bool hit = false;
    for (uint32_t id : o.job_ids) {
      if (j.job_id == id || (j.array_job_id != 0 && j.array_job_id == id)) hit = true;
    }
    if (!hit) return false;
  }
  if (!o.users.empty() && !Contains(o.users, j.user_name) &&
      !Contains(o.users, StrCat(j.user_id))) {
    return false;
  }
  if (!o.partitions.empty() && !Contains(o.partitions, j.partition)) return false;
  if (!o.names.empty() && !Contains(o.names, j.name)) return false;
  return true;
}

// Task ids of an array's pending record: "3-10%2", "1,4-6", "0-15:4".
std::vector<uint32_t> ExpandTaskString(std::string_view s) {
  std::vector<uint32_t> ids;
  size_t pct = s.find('%');
  if (pct != std::string_view::npos) s = s.substr(0, pct);
  for (std::string_view part : core::Split(s, ',')) {
    size_t colon = part.find(':');
    int64_t step = 1;
    if (colon != std::string_view::npos) {
      step = core::ParseInt(part.substr(colon + 1)).value_or(1);
      part = part.substr(0, colon);
    }
    if (step < 1) step = 1;
    size_t dash = part.find('-');
    std::optional<int64_t> lo = core::ParseInt(part.substr(0, dash));
    std::optional<int64_t> hi =
        dash == std::string_view::npos ? lo : core::ParseInt(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi - *lo > 10'000'000) continue;
    for (int64_t t = *lo; t <= *hi; t += step) ids.push_back(static_cast<uint32_t>(t));
  }
  return ids;
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

}  // namespace

// ---------------------------------------------------------------------------------------------

bool JobStateFilter::Matches(JobState s) const {
  if (all) return true;
  if (!given) return !model::IsFinal(s);
  return std::find(states.begin(), states.end(), s) != states.end();
}

StatusOr<JobStateFilter> ParseJobStateFilter(std::string_view text) {
  // States Slurm names that Loom's jobs never enter.
  static constexpr std::string_view kOtherStates[] = {
      "CONFIGURING",  "CF", "RESV_DEL_HOLD", "RD", "REQUEUE_FED", "RF", "REQUEUE_HOLD", "RH",
      "REQUEUED",     "RQ", "RESIZING",      "RS", "REVOKED",     "RV", "SIGNALING",    "SI",
      "SPECIAL_EXIT", "SE", "STAGE_OUT",     "SO", "STOPPED",     "ST"};
  JobStateFilter filter;
  filter.given = true;
  for (std::string_view item : core::Split(text, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    if (core::EqualsIgnoreCase(item, "all")) {
      filter.all = true;
      continue;
    }
    if (std::optional<JobState> s = model::ParseJobState(item)) {
      filter.states.push_back(*s);
      continue;
    }
    bool known = false;
    for (std::string_view o : kOtherStates) known = known || core::EqualsIgnoreCase(item, o);
    if (known) continue;
    return absl::InvalidArgumentError(
        StrCat("-t: invalid job state '", item,
               "'; valid states are PENDING (PD), RUNNING (R), SUSPENDED (S), COMPLETING (CG), "
               "COMPLETED (CD), CANCELLED (CA), FAILED (F), TIMEOUT (TO), NODE_FAIL (NF), "
               "PREEMPTED (PR), BOOT_FAIL (BF), DEADLINE (DL), OUT_OF_MEMORY (OOM) and all"));
  }
  return filter;
}

Status ValidateSqueueOptions(const SqueueOptions& options) {
  RETURN_IF_ERROR(LayoutFor(options).status());
  return ParseSort(options.sort).status();
}

StatusOr<std::string> RenderSqueue(const std::vector<JobView>& jobs, const SqueueOptions& options,
                                   const RenderContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Column> cols, LayoutFor(options));
  std::string_view sort_text = options.sort;
  if (sort_text.empty()) sort_text = options.start ? "S" : "P,t,-p";
  ASSIGN_OR_RETURN(std::vector<SortKey> keys, ParseSort(sort_text));

  // Select, then expand arrays (-r) so each pending task is its own row.
  std::vector<const JobView*> rows;
  std::vector<JobView> expanded;                       // owns the per-task copies
  std::vector<std::pair<size_t, size_t>> expanded_at;  // (position in rows, index in expanded)
  for (const JobView& j : jobs) {
    bool state_ok = options.start ? j.state == JobState::kPending : options.states.Matches(j.state);
    if (!state_ok || !PassesExplicitFilters(j, options)) continue;
    if (options.expand_arrays && !j.array_task_string.empty() && !j.array_task_id.has_value()) {
      for (uint32_t task : ExpandTaskString(j.array_task_string)) {
        JobView t = j;
        t.array_job_id = j.array_job_id != 0 ? j.array_job_id : j.job_id;
        t.array_task_id = task;
        t.array_task_string.clear();
        expanded_at.emplace_back(rows.size(), expanded.size());
        expanded.push_back(std::move(t));
        rows.push_back(nullptr);
      }
      continue;
    }
    rows.push_back(&j);
  }
  for (auto [row, index] : expanded_at) rows[row] = &expanded[index];

  std::stable_sort(rows.begin(), rows.end(), [&](const JobView* a, const JobView* b) {
    for (const SortKey& k : keys) {
      int c = Compare(k.letter, *a, *b, ctx);
      if (c != 0) return k.descending ? c > 0 : c < 0;
    }
    return false;
  });

  std::string out;
  std::string buf;
  if (options.long_listing && options.format.empty() && options.long_format.empty()) {
    out += FormatCtime(ctx.now, ctx.utc_offset_s);
    out.push_back('\n');
  }
  if (!options.no_header) AppendRow(&out, cols, nullptr, ctx, &buf);
  for (const JobView* j : rows) AppendRow(&out, cols, j, ctx, &buf);
  return out;
}

// ---------------------------------------------------------------------------------------------
// --json

namespace {

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

}  // namespace

std::string RenderSqueueJson(const std::vector<JobView>& jobs, const SqueueOptions& options,
                             const RenderContext& ctx, const JsonMeta& meta) {
  std::string out;
  out.reserve(512 + jobs.size() * 3200);
  JsonWriter w(&out);
  w.BeginObject();
  w.BeginObject("meta");
  w.BeginObject("plugin");
  w.String("type", meta.plugin_type);
  w.String("name", meta.plugin_name);
  w.EndObject();
  w.BeginObject("Slurm");
  w.BeginObject("version");
  w.Int("major", meta.major);
  w.Int("micro", meta.micro);
  w.Int("minor", meta.minor);
  w.EndObject();
  w.String("release", meta.release);
  w.EndObject();
  w.EndObject();
  w.BeginArray("errors");
  w.EndArray();
  w.BeginArray("jobs");
  for (const JobView& j : jobs) {
    if (options.states.given && !options.states.Matches(j.state)) continue;
    if (!PassesExplicitFilters(j, options)) continue;
    WriteJob(w, j);
  }
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace loom::cli::format
