#include "sim/accounting_records.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <functional>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::sim {
namespace {

using core::StrCat;

// The columns the records keep, in the order they are written (sacct's names).
enum class Col {
  kCluster,
  kJobId,
  kJobIdRaw,
  kJobName,
  kUser,
  kUid,
  kGroup,
  kGid,
  kAccount,
  kPartition,
  kQos,
  kSubmit,
  kEligible,
  kStart,
  kEnd,
  kTimelimit,
  kState,
  kExitCode,
  kDerivedExitCode,
  kNNodes,
  kNCpus,
  kReqTres,
  kAllocTres,
  kNodeList,
  kWorkDir,
  kCount
};

constexpr std::array<std::string_view, static_cast<size_t>(Col::kCount)> kNames = {
    "Cluster",   "JobID",   "JobIDRaw",  "JobName",         "User",
    "UID",       "Group",   "GID",       "Account",         "Partition",
    "QOS",       "Submit",  "Eligible",  "Start",           "End",
    "Timelimit", "State",   "ExitCode",  "DerivedExitCode", "NNodes",
    "NCPUS",     "ReqTRES", "AllocTRES", "NodeList",        "WorkDir"};

// The base states a record may end in or be in (sacct's names).
constexpr std::string_view kStates[] = {"PENDING",   "RUNNING",   "SUSPENDED", "COMPLETED",
                                        "CANCELLED", "FAILED",    "TIMEOUT",   "NODE_FAIL",
                                        "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY",
                                        "REQUEUED",  "RESIZING",  "REVOKED"};

std::string FormatTime(int64_t t) {
  if (t <= 0) return "Unknown";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S", absl::FromUnixSeconds(t), absl::LocalTimeZone());
}

// A value as one field: no delimiter or line break inside.
void AppendField(std::string* out, std::string_view v) {
  for (char c : v) out->push_back(c == '|' || c == '\n' || c == '\r' ? ' ' : c);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

StatusOr<int64_t> ParseTime(std::string_view s) {
  if (s.empty() || s == "Unknown" || s == "None") return int64_t{0};
  int64_t t = 0;
  if (AllDigits(s) && ParseNumber(s, &t)) return t;
  absl::Time at;
  std::string err;
  if (!absl::ParseTime("%Y-%m-%dT%H:%M:%S", std::string(s), absl::LocalTimeZone(), &at, &err)) {
    return absl::InvalidArgumentError(StrCat(
        "'", s, "' is not a time (sacct's YYYY-MM-DDTHH:MM:SS in local time, or Unix seconds)"));
  }
  return absl::ToUnixSeconds(at);
}

// "0:0", "1:0", "0:9": ExitCode's code and signal.
bool ParseExit(std::string_view s, int32_t* code, int32_t* signal) {
  if (s.empty()) return true;
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos) return ParseNumber(s, code);
  return ParseNumber(s.substr(0, colon), code) && ParseNumber(s.substr(colon + 1), signal);
}

// Reads one record's fields; `at` maps a column to its index in `fields` (-1: absent).
Status ReadRecord(const std::vector<std::string_view>& fields,
                  const std::array<int, static_cast<size_t>(Col::kCount)>& at, AccountingRecord* r,
                  bool* skip_step, bool* skip_pending) {
  auto get = [&](Col c) -> std::string_view {
    const int i = at[static_cast<size_t>(c)];
    return i < 0 || static_cast<size_t>(i) >= fields.size() ? std::string_view()
                                                            : core::Trim(fields[i]);
  };
  auto bad = [&](Col c, std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat(kNames[static_cast<size_t>(c)], " '", get(c), "': ", why));
  };
  // JobID: 123, 123_4 (an array task), 123_[4-10%2] (pending tasks), 123.batch (a step).
  std::string_view id = get(Col::kJobId);
  std::string_view raw = get(Col::kJobIdRaw);
  if (id.find('.') != std::string_view::npos || raw.find('.') != std::string_view::npos) {
    *skip_step = true;
    return absl::OkStatus();
  }
  if (id.find('[') != std::string_view::npos) {
    *skip_pending = true;
    return absl::OkStatus();
  }
  if (!id.empty()) {
    const size_t us = id.find('_');
    uint64_t first = 0;
    if (!ParseNumber(id.substr(0, us), &first)) return bad(Col::kJobId, "not a job id");
    r->job_id = first;
    if (us != std::string_view::npos) {
      if (!ParseNumber(id.substr(us + 1), &r->array_task_id)) {
        return bad(Col::kJobId, "not an array task (JOB_TASK)");
      }
      r->array_job_id = first;
      if (raw.empty()) return bad(Col::kJobId, "an array task needs its JobIDRaw column");
    }
  }
  if (!raw.empty() && !ParseNumber(raw, &r->job_id)) return bad(Col::kJobIdRaw, "not a job id");
  if (r->job_id == 0) {
    return absl::InvalidArgumentError("no job id: the line needs JobIDRaw or JobID");
  }
  r->cluster = get(Col::kCluster);
  r->name = get(Col::kJobName);
  r->user = get(Col::kUser);
  r->group = get(Col::kGroup);
  r->account = get(Col::kAccount);
  r->partition = get(Col::kPartition);
  r->qos = get(Col::kQos);
  r->req_tres = get(Col::kReqTres);
  r->alloc_tres = get(Col::kAllocTres);
  r->node_list = get(Col::kNodeList);
  if (r->node_list == "None assigned") r->node_list.clear();
  r->work_dir = get(Col::kWorkDir);
  if (std::string_view u = get(Col::kUid); !u.empty()) {
    uint32_t v = 0;
    if (!ParseNumber(u, &v)) return bad(Col::kUid, "not a user id");
    r->uid = v;
  }
  if (std::string_view g = get(Col::kGid); !g.empty()) {
    uint32_t v = 0;
    if (!ParseNumber(g, &v)) return bad(Col::kGid, "not a group id");
    r->gid = v;
  }
  if (r->user.empty() && !r->uid) return absl::InvalidArgumentError("no User and no UID");
  const std::pair<Col, int64_t*> times[] = {{Col::kSubmit, &r->submit},
                                            {Col::kEligible, &r->eligible},
                                            {Col::kStart, &r->start},
                                            {Col::kEnd, &r->end}};
  for (const auto& [c, out] : times) {
    auto t = ParseTime(get(c));
    if (!t.ok()) return bad(c, std::string(t.status().message()));
    *out = *t;
  }
  if (r->submit <= 0) return bad(Col::kSubmit, "every job needs its submit time");
  if (r->eligible == 0 && r->start > 0) r->eligible = r->submit;
  if (std::string_view l = get(Col::kTimelimit); !l.empty()) {
    if (core::EqualsIgnoreCase(l, "Partition_Limit")) {
      r->time_limit_s = core::kUnlimitedSeconds;
    } else {
      auto d = core::ParseDuration(l);
      if (!d.ok()) return bad(Col::kTimelimit, std::string(d.status().message()));
      r->time_limit_s = *d;
    }
  }
  // State: "COMPLETED", "CANCELLED by 1000".
  std::string_view state = get(Col::kState);
  if (state.empty()) return absl::InvalidArgumentError("no State");
  const size_t sp = state.find(' ');
  r->state = absl::AsciiStrToUpper(std::string(state.substr(0, sp)));
  if (std::find(std::begin(kStates), std::end(kStates), r->state) == std::end(kStates)) {
    return bad(Col::kState, "not a job state sacct knows");
  }
  if (sp != std::string_view::npos) {
    std::string_view by = core::Trim(state.substr(sp));
    uint32_t uid = 0;
    if (r->state != "CANCELLED" || by.substr(0, 3) != "by " ||
        !ParseNumber(core::Trim(by.substr(3)), &uid)) {
      return bad(Col::kState, "expected STATE or 'CANCELLED by UID'");
    }
    r->cancelled_by = uid;
  }
  if (!ParseExit(get(Col::kExitCode), &r->exit_code, &r->exit_signal)) {
    return bad(Col::kExitCode, "expected CODE:SIGNAL");
  }
  int32_t ignored_signal = 0;
  if (!ParseExit(get(Col::kDerivedExitCode), &r->derived_exit_code, &ignored_signal)) {
    return bad(Col::kDerivedExitCode, "expected CODE:SIGNAL");
  }
  if (std::string_view n = get(Col::kNNodes); !n.empty() && !ParseNumber(n, &r->nodes)) {
    return bad(Col::kNNodes, "not a count");
  }
  if (std::string_view n = get(Col::kNCpus); !n.empty() && !ParseNumber(n, &r->cpus)) {
    return bad(Col::kNCpus, "not a count");
  }
  return absl::OkStatus();
}

}  // namespace

void WriteAccountingFile(std::ostream& os, const AccountingFile& file) {
  std::string out;
  for (const auto& [cluster, tres] : file.cluster_tres) {
    out += StrCat("# Cluster=", cluster, " TRES=", tres, "\n");
  }
  for (size_t c = 0; c < kNames.size(); ++c) {
    if (c > 0) out += '|';
    out += kNames[c];
  }
  out += '\n';
  for (const AccountingRecord& r : file.records) {
    const std::string job_id =
        r.array_job_id != 0 ? StrCat(r.array_job_id, "_", r.array_task_id) : StrCat(r.job_id);
    const std::string state = r.cancelled_by ? StrCat(r.state, " by ", *r.cancelled_by) : r.state;
    const std::string limit = r.time_limit_s == 0 ? "" : core::FormatDuration(r.time_limit_s);
    const std::string values[] = {r.cluster,
                                  job_id,
                                  StrCat(r.job_id),
                                  r.name,
                                  r.user,
                                  r.uid ? StrCat(*r.uid) : "",
                                  r.group,
                                  r.gid ? StrCat(*r.gid) : "",
                                  r.account,
                                  r.partition,
                                  r.qos,
                                  FormatTime(r.submit),
                                  FormatTime(r.eligible),
                                  FormatTime(r.start),
                                  FormatTime(r.end),
                                  limit,
                                  state,
                                  StrCat(r.exit_code, ":", r.exit_signal),
                                  StrCat(r.derived_exit_code, ":0"),
                                  StrCat(r.nodes),
                                  StrCat(r.cpus),
                                  r.req_tres,
                                  r.alloc_tres,
                                  r.node_list.empty() ? "None assigned" : r.node_list,
                                  r.work_dir};
    for (size_t c = 0; c < std::size(values); ++c) {
      if (c > 0) out += '|';
      AppendField(&out, values[c]);
    }
    out += '\n';
    if (out.size() > (1 << 20)) {
      os << out;
      out.clear();
    }
  }
  os << out;
}

StatusOr<AccountingFile> ParseAccountingFile(std::string_view text, std::string_view name,
                                             std::string_view default_cluster) {
  std::vector<AccountingRecord> records;
  ASSIGN_OR_RETURN(AccountingFile file,
                   ReadAccountingFile(text, name, default_cluster, [&](AccountingRecord&& r) {
                     records.push_back(std::move(r));
                     return absl::OkStatus();
                   }));
  file.records = std::move(records);
  return file;
}

StatusOr<AccountingFile> ReadAccountingFile(std::string_view text, std::string_view name,
                                            std::string_view default_cluster,
                                            const std::function<Status(AccountingRecord&&)>& each) {
  AccountingFile file;
  std::array<int, static_cast<size_t>(Col::kCount)> at;
  at.fill(-1);
  bool have_header = false, trailing = false;
  size_t columns = 0;
  int64_t line_no = 0;
  std::vector<std::string_view> fields;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (core::Trim(line).empty()) continue;
    auto where = [&](std::string_view why) {
      return absl::InvalidArgumentError(StrCat(name, ":", line_no, ": ", why));
    };
    if (line.front() == '#') {
      // "# Cluster=NAME TRES=..."
      std::string cluster, tres;
      for (std::string_view w : core::Split(core::Trim(line.substr(1)), ' ')) {
        if (core::EqualsIgnoreCase(w.substr(0, 8), "Cluster=")) cluster = std::string(w.substr(8));
        if (core::EqualsIgnoreCase(w.substr(0, 5), "TRES=")) tres = std::string(w.substr(5));
      }
      if (!cluster.empty() && !tres.empty()) file.cluster_tres[cluster] = tres;
      continue;
    }
    fields.clear();
    for (std::string_view f : core::Split(line, '|')) fields.push_back(f);
    // sacct -p ends every line, the header's too, with the delimiter.
    if (!have_header) trailing = fields.size() > 1 && fields.back().empty();
    if (trailing && fields.size() > 1 && fields.back().empty()) fields.pop_back();
    if (!have_header) {
      have_header = true;
      columns = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) {
        const std::string_view f = core::Trim(fields[i]);
        bool known = false;
        for (size_t c = 0; c < kNames.size(); ++c) {
          if (core::EqualsIgnoreCase(f, kNames[c])) {
            if (at[c] >= 0) return where(StrCat("column ", kNames[c], " appears twice"));
            at[c] = static_cast<int>(i);
            known = true;
          }
        }
        if (!known) file.ignored_columns.emplace_back(f);
      }
      for (Col c : {Col::kState, Col::kSubmit}) {
        if (at[static_cast<size_t>(c)] < 0) {
          return where(StrCat("the header line has no ", kNames[static_cast<size_t>(c)],
                              " column; write the file with sacct -P -o ",
                              "JobIDRaw,JobID,User,Account,Submit,Start,End,State,..."));
        }
      }
      if (at[static_cast<size_t>(Col::kJobId)] < 0 && at[static_cast<size_t>(Col::kJobIdRaw)] < 0) {
        return where("the header line has no JobIDRaw or JobID column");
      }
      continue;
    }
    if (fields.size() != columns) {
      return where(StrCat(fields.size(), " fields where the header has ", columns));
    }
    AccountingRecord r;
    bool step = false, pending = false;
    if (Status s = ReadRecord(fields, at, &r, &step, &pending); !s.ok()) {
      return where(std::string(s.message()));
    }
    if (step) {
      ++file.skipped_steps;
      continue;
    }
    if (pending) {
      ++file.skipped_pending_arrays;
      continue;
    }
    if (at[static_cast<size_t>(Col::kCluster)] < 0 || r.cluster.empty()) {
      r.cluster = std::string(default_cluster);
    }
    RETURN_IF_ERROR(each(std::move(r)));
  }
  if (!have_header) {
    return absl::InvalidArgumentError(
        StrCat(name,
               ": no header line: the file must begin with sacct's field names "
               "(as sacct -P prints them)"));
  }
  return file;
}

std::string ClusterTres(const sched::Cluster& cluster) {
  int64_t cpus = 0, mem_mb = 0, gpus = 0;
  for (const model::Node& n : cluster.nodes) {
    cpus += n.capacity.cpus;
    mem_mb += n.capacity.mem_mb;
    gpus += n.capacity.gpus;
  }
  std::string out = StrCat("cpu=", cpus);
  if (mem_mb > 0) out += StrCat(",mem=", mem_mb, "M");
  out += StrCat(",node=", cluster.nodes.size(), ",billing=", cpus);
  if (gpus > 0) out += StrCat(",gres/gpu=", gpus);
  return out;
}

std::string SimClusterName(std::string_view run) {
  std::string out;
  for (char c : run) {
    const unsigned char u = static_cast<unsigned char>(c);
    out.push_back(std::isalnum(u) != 0 || c == '_' ? static_cast<char>(std::tolower(u)) : '-');
  }
  return out;
}

std::vector<AccountingRecord> SimAccountingRecords(std::string_view cluster_name,
                                                   const sched::Cluster& cluster,
                                                   std::span<const SimJob> jobs,
                                                   const SimResult& result, int64_t epoch) {
  std::unordered_map<sched::JobId, const SimJob*> by_id;
  by_id.reserve(jobs.size());
  for (const SimJob& j : jobs) by_id.emplace(j.id, &j);
  std::vector<AccountingRecord> out;
  out.reserve(result.jobs.size());
  for (const JobRecord& rec : result.jobs) {
    auto it = by_id.find(rec.id);
    if (it == by_id.end()) continue;
    const SimJob& j = *it->second;
    AccountingRecord r;
    r.cluster = std::string(cluster_name);
    r.job_id = rec.id;
    if (j.array_id != 0) {
      r.array_job_id = j.array_id;
      r.array_task_id = j.array_task;
    }
    r.name = j.name.empty() ? "sim" : j.name;
    r.user = j.user;
    r.uid = j.uid;
    r.account = j.account;
    r.partition = cluster.partitions.empty() ? "" : cluster.partitions[j.partition].name;
    r.qos = "normal";
    r.submit = epoch + rec.submit;
    r.eligible = epoch + std::max(rec.submit, j.begin);
    if (rec.start >= 0) r.start = epoch + rec.start;
    if (rec.end >= 0) r.end = epoch + rec.end;
    r.time_limit_s = rec.estimate;
    const int32_t status = j.exit_status;
    r.exit_code = (status >> 8) & 0xff;
    r.exit_signal = status & 0x7f;
    r.derived_exit_code = r.exit_code;
    r.state = rec.end < 0   ? (rec.start < 0 ? "PENDING" : "RUNNING")
              : status == 0 ? "COMPLETED"
                            : "FAILED";
    r.nodes = rec.nodes;
    r.cpus = static_cast<int32_t>(rec.cpus);
    std::string tres = StrCat("cpu=", rec.cpus, ",node=", rec.nodes, ",billing=", rec.cpus);
    if (rec.gpus > 0) tres += StrCat(",gres/gpu=", rec.gpus);
    r.req_tres = tres;
    if (rec.start >= 0) r.alloc_tres = tres;
    r.node_list = rec.node_list;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace loom::sim
