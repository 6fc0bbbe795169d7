// sacct: jobs and steps as loomdbd recorded them, in Slurm 22.05's layout and selection
// rules (the caller's jobs since midnight by default; root's: everyone's).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "auth/identity.h"
#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/sstat_format.h"
#include "cli/format/text.h"
#include "cli/sacct_json.h"
#include "cli/submit/begin_time.h"
#include "core/clock.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "model/job_state.h"

namespace loom::cli {
namespace {

using core::StrCat;

enum class Opt {
  kAllClusters,
  kAllUsers,
  kAccounts,
  kAllocations,
  kClusters,
  kDuplicates,
  kEndTime,
  kFormat,
  kHelpFormat,
  kHelp,
  kJobs,
  kJson,
  kLong,
  kNoHeader,
  kParsable,
  kParsable2,
  kPartition,
  kQos,
  kStartTime,
  kState,
  kUnits,
  kUsage,
  kUser,
  kVerbose,
  kVersion,
};

constexpr OptionSpec<Opt> kOptions[] = {
    {"allclusters", 'L', kNoArg, Opt::kAllClusters},
    {"allusers", 'a', kNoArg, Opt::kAllUsers},
    {"accounts", 'A', kArg, Opt::kAccounts},
    {"allocations", 'X', kNoArg, Opt::kAllocations},
    {"clusters", 'M', kArg, Opt::kClusters},
    {"duplicates", 'D', kNoArg, Opt::kDuplicates},
    {"endtime", 'E', kArg, Opt::kEndTime},
    {"format", 'o', kArg, Opt::kFormat},
    {"helpformat", 'e', kNoArg, Opt::kHelpFormat},
    {"help", 'h', kNoArg, Opt::kHelp},
    {"jobs", 'j', kArg, Opt::kJobs},
    {"json", 0, kNoArg, Opt::kJson},
    {"long", 'l', kNoArg, Opt::kLong},
    {"noheader", 'n', kNoArg, Opt::kNoHeader},
    {"parsable", 'p', kNoArg, Opt::kParsable},
    {"parsable2", 'P', kNoArg, Opt::kParsable2},
    {"partition", 'r', kArg, Opt::kPartition},
    {"qos", 'q', kArg, Opt::kQos},
    {"starttime", 'S', kArg, Opt::kStartTime},
    {"state", 's', kArg, Opt::kState},
    {"units", 0, kArg, Opt::kUnits},
    {"usage", 0, kNoArg, Opt::kUsage},
    {"user", 'u', kArg, Opt::kUser},
    {"verbose", 'v', kNoArg, Opt::kVerbose},
    {"version", 'V', kNoArg, Opt::kVersion},
};

constexpr std::string_view kHelpText =
    "Usage: sacct [OPTIONS]\n"
    "  -a, --allusers         every user's jobs (root's default)\n"
    "  -A, --accounts=LIST    jobs of these accounts\n"
    "  -D, --duplicates       every attempt of a requeued job (Loom keeps the last)\n"
    "  -e, --helpformat       the fields -o takes\n"
    "  -E, --endtime=TIME     the window's end (default: now; with -s: the start)\n"
    "  -j, --jobs=LIST        these jobs (an array's id selects its tasks); no window\n"
    "  -l, --long             the long field list\n"
    "  -L, --allclusters      every cluster's jobs\n"
    "  -M, --clusters=LIST    these clusters' jobs\n"
    "  -n, --noheader         no header lines\n"
    "  -o, --format=LIST      the fields to print, each optionally NAME%WIDTH\n"
    "  -p, --parsable         '|' after every field;  -P, --parsable2: between fields\n"
    "  -q, --qos=LIST         jobs of these QOS\n"
    "  -r, --partition=LIST   jobs of these partitions\n"
    "  -s, --state=LIST       jobs in these states during the window (CD,F,CA,TO,R,PD,...)\n"
    "  -S, --starttime=TIME   the window's start (default: midnight)\n"
    "  -u, --user=LIST        these users' jobs\n"
    "  -X, --allocations      jobs only, not their steps\n"
    "  -h, --help, --usage, -V, --version\n";
constexpr std::string_view kUsageText =
    "Usage: sacct [-aDeLlnPpXV] [-A accounts] [-E end] [-j jobs] [-M clusters] [-o format]\n"
    "             [-q qos] [-r partitions] [-S start] [-s states] [-u users]\n";
constexpr CommandText kText{"sacct", kHelpText, kUsageText};

// One line: a job, or one of its steps.
struct Line {
  const v1::AcctJob* job;
  const v1::AcctStep* step;   // null: the job itself
  std::string pending_array;  // set: the job stands for its array's pending tasks ("3-10%2")
};

struct Field {
  std::string_view name;
  int width;
  bool left;  // JobID and JobIDRaw are left-justified
  std::function<std::string(const Line&, int64_t now)> value;
};

std::string Time(int64_t t) { return LocalAcctTime(t); }

std::string ExitPair(int32_t status) {
  if (WIFSIGNALED(status)) return StrCat(WEXITSTATUS(status), ":", WTERMSIG(status));
  return StrCat(WEXITSTATUS(status), ":0");
}

// "billing=8,cpu=8,gres/gpu=2,mem=8000M,node=1": Slurm lists TRES by name.
std::string SortedTres(const std::string& tres) {
  std::vector<std::string> parts;
  for (std::string_view p : core::Split(tres, ',')) {
    if (!p.empty()) parts.emplace_back(p);
  }
  std::sort(parts.begin(), parts.end());
  return core::Join(parts, ",");
}

int64_t Elapsed(const Line& l, int64_t now) {
  const int64_t start = l.step ? l.step->start_time() : l.job->job().start_time();
  const int64_t end = l.step ? l.step->end_time() : l.job->job().end_time();
  if (start <= 0) return 0;
  return std::max<int64_t>(0, (end > 0 ? end : now) - start);
}

std::string JobIdText(const Line& l) {
  const v1::JobInfo& j = l.job->job();
  std::string id = !l.pending_array.empty() ? StrCat(j.array_job_id(), "_[", l.pending_array, "]")
                   : j.array_task_id() >= 0 ? StrCat(j.array_job_id(), "_", j.array_task_id())
                                            : StrCat(j.job_id());
  if (l.step != nullptr) id += "." + l.step->id();
  return id;
}

std::string StateText(const Line& l) {
  if (l.step != nullptr) return l.step->state();
  const v1::AcctJob& a = *l.job;
  if (a.job().state() == "CANCELLED" && a.has_cancelled_by()) {
    return StrCat("CANCELLED by ", a.cancelled_by());
  }
  return a.job().state();
}

// CPU time as sacct prints it: a step's own, a job's its steps' added up.
std::string CpuTime(const Line& l, int64_t (*of)(const v1::AcctStep&)) {
  int64_t usec = 0;
  if (l.step != nullptr) {
    usec = of(*l.step);
  } else {
    for (const v1::AcctStep& s : l.job->steps()) usec += of(s);
  }
  return usec == 0 ? std::string("00:00:00") : format::FormatCpuTime(usec);
}
int64_t UserCpu(const v1::AcctStep& s) { return s.user_cpu_usec(); }
int64_t SystemCpu(const v1::AcctStep& s) { return s.system_cpu_usec(); }
int64_t TotalCpu(const v1::AcctStep& s) { return s.user_cpu_usec() + s.system_cpu_usec(); }

// Memory fields are the steps' (a job's line has none, as in Slurm).
std::string StepMemory(const Line& l) {
  if (l.step == nullptr || !l.step->usage_known()) return "";
  return format::FormatKib(l.step->max_rss_bytes());
}

// A figure Loom does not measure yet: nothing on either line.
std::string Unmeasured(const Line&, int64_t) { return ""; }
// What Slurm prints for a figure nothing gathered: a step's "0", nothing on the job's line.
std::string StepZero(const Line& l, int64_t) { return l.step ? "0" : ""; }

std::vector<Field> AllFields() {
  auto job = [](const Line& l) -> const v1::JobInfo& { return l.job->job(); };
  auto job_only = [](auto f) {
    return [f](const Line& l, int64_t now) { return l.step ? std::string() : f(l, now); };
  };
  return {
      {"Account", 10, false, [=](const Line& l, int64_t) { return job(l).spec().account(); }},
      {"AllocCPUS", 10, false,
       [=](const Line& l, int64_t) {
         return StrCat(l.step ? l.step->num_cpus() : job(l).num_cpus());
       }},
      {"AllocNodes", 10, false,
       [=](const Line& l, int64_t) {
         return StrCat(l.step                    ? l.step->num_nodes()
                       : job(l).start_time() > 0 ? job(l).num_nodes()
                                                 : 0);
       }},
      {"AllocTRES", 10, false,
       [=](const Line& l, int64_t) {
         return SortedTres(l.step ? l.step->tres_alloc() : job(l).tres_alloc());
       }},
      {"AveCPU", 10, false, Unmeasured},
      // Per-task figures are known only where one task ran.
      {"AveRSS", 10, false,
       [](const Line& l, int64_t) {
         return l.step && l.step->num_tasks() == 1 ? StepMemory(l) : std::string();
       }},
      {"AveVMSize", 10, false, Unmeasured},
      {"AveCPUFreq", 10, false, StepZero},
      {"AveDiskRead", 14, false, Unmeasured},
      {"AveDiskWrite", 14, false, Unmeasured},
      {"AvePages", 10, false, Unmeasured},
      {"ConsumedEnergy", 14, false, StepZero},
      {"ConsumedEnergyRaw", 17, false, StepZero},
      {"Cluster", 10, false, [](const Line& l, int64_t) { return l.job->cluster(); }},
      {"Comment", 15, false,
       job_only([=](const Line& l, int64_t) { return job(l).spec().comment(); })},
      {"Constraints", 19, false,
       job_only([=](const Line& l, int64_t) { return job(l).spec().constraint(); })},
      {"CPUTime", 10, false,
       [=](const Line& l, int64_t now) {
         const int cpus = l.step ? l.step->num_cpus() : job(l).num_cpus();
         return core::FormatDuration(Elapsed(l, now) * cpus);
       }},
      {"CPUTimeRAW", 10, false,
       [=](const Line& l, int64_t now) {
         const int cpus = l.step ? l.step->num_cpus() : job(l).num_cpus();
         return StrCat(Elapsed(l, now) * cpus);
       }},
      {"DerivedExitCode", 15, false,
       job_only([](const Line& l, int64_t) { return ExitPair(l.job->derived_exit_code()); })},
      {"Elapsed", 10, false,
       [](const Line& l, int64_t now) { return core::FormatDuration(Elapsed(l, now)); }},
      {"ElapsedRaw", 10, false, [](const Line& l, int64_t now) { return StrCat(Elapsed(l, now)); }},
      {"Eligible", 19, false, [=](const Line& l, int64_t) { return Time(job(l).eligible_time()); }},
      {"End", 19, false,
       [=](const Line& l, int64_t) {
         return Time(l.step ? l.step->end_time() : job(l).end_time());
       }},
      {"ExitCode", 8, false,
       [=](const Line& l, int64_t) {
         if (l.step) return ExitPair(l.step->exit_code());
         return StrCat(job(l).exit_code(), ":", job(l).exit_signal());
       }},
      {"GID", 6, false, [=](const Line& l, int64_t) { return StrCat(job(l).gid()); }},
      {"Group", 9, false,
       [=](const Line& l, int64_t) {
         if (!job(l).group_name().empty()) return job(l).group_name();
         auto g = auth::GroupName(job(l).gid());
         return g.ok() ? *g : StrCat(job(l).gid());
       }},
      {"JobID", 12, true, [](const Line& l, int64_t) { return JobIdText(l); }},
      {"JobIDRaw", 12, true,
       [=](const Line& l, int64_t) {
         const uint64_t raw = l.pending_array.empty() ? job(l).job_id() : job(l).array_job_id();
         return l.step ? StrCat(raw, ".", l.step->id()) : StrCat(raw);
       }},
      {"JobName", 10, false,
       [=](const Line& l, int64_t) { return l.step ? l.step->name() : job(l).name(); }},
      {"MaxRSS", 10, false, [](const Line& l, int64_t) { return StepMemory(l); }},
      {"MaxRSSNode", 10, false,
       [](const Line& l, int64_t) {
         return l.step && l.step->usage_known() ? l.step->max_rss_node() : std::string();
       }},
      {"MaxRSSTask", 10, false,
       [](const Line& l, int64_t) {
         return l.step && l.step->usage_known() && l.step->num_tasks() == 1 ? std::string("0")
                                                                            : std::string();
       }},
      {"MaxVMSize", 10, false, Unmeasured},
      {"MaxVMSizeNode", 14, false, Unmeasured},
      {"MaxVMSizeTask", 14, false, Unmeasured},
      {"MaxPages", 8, false, Unmeasured},
      {"MaxPagesNode", 12, false, Unmeasured},
      {"MaxPagesTask", 14, false, Unmeasured},
      {"MaxDiskRead", 12, false, Unmeasured},
      {"MaxDiskReadNode", 15, false, Unmeasured},
      {"MaxDiskReadTask", 15, false, Unmeasured},
      {"MaxDiskWrite", 12, false, Unmeasured},
      {"MaxDiskWriteNode", 16, false, Unmeasured},
      {"MaxDiskWriteTask", 16, false, Unmeasured},
      {"MinCPU", 10, false, Unmeasured},
      {"MinCPUNode", 10, false, Unmeasured},
      {"MinCPUTask", 10, false, Unmeasured},
      {"NCPUS", 10, false,
       [=](const Line& l, int64_t) {
         return StrCat(l.step ? l.step->num_cpus() : job(l).num_cpus());
       }},
      {"NNodes", 8, false,
       [=](const Line& l, int64_t) {
         return StrCat(l.step ? l.step->num_nodes() : job(l).num_nodes());
       }},
      {"NodeList", 15, false,
       [=](const Line& l, int64_t) {
         if (l.step) return l.step->node_list();
         return job(l).start_time() > 0 && !job(l).node_list().empty()
                    ? job(l).node_list()
                    : std::string("None assigned");
       }},
      {"NTasks", 8, false,
       [](const Line& l, int64_t) { return l.step ? StrCat(l.step->num_tasks()) : std::string(); }},
      {"Partition", 10, false,
       job_only([=](const Line& l, int64_t) { return job(l).partition(); })},
      {"Priority", 10, false,
       job_only([=](const Line& l, int64_t) { return StrCat(job(l).priority()); })},
      {"QOS", 10, false, job_only([](const Line& l, int64_t) { return l.job->qos(); })},
      {"Reason", 20, false, job_only([=](const Line& l, int64_t) {
         return job(l).reason().empty() ? std::string("None") : job(l).reason();
       })},
      // No CPU frequency is ever asked for: Slurm's "Unknown" on the job, 0 on its steps.
      {"ReqCPUFreq", 13, false,
       [](const Line& l, int64_t) { return std::string(l.step ? "0" : "Unknown"); }},
      {"ReqCPUFreqGov", 13, false,
       [](const Line& l, int64_t) { return std::string(l.step ? "0" : "Unknown"); }},
      {"ReqCPUFreqMax", 13, false,
       [](const Line& l, int64_t) { return std::string(l.step ? "0" : "Unknown"); }},
      {"ReqCPUFreqMin", 13, false,
       [](const Line& l, int64_t) { return std::string(l.step ? "0" : "Unknown"); }},
      {"ReqCPUS", 8, false,
       job_only([=](const Line& l, int64_t) { return StrCat(job(l).num_cpus()); })},
      {"ReqMem", 10, false, job_only([=](const Line& l, int64_t) {
         return job(l).min_memory_mb() > 0 ? StrCat(job(l).min_memory_mb(), "M") : std::string("0");
       })},
      {"ReqNodes", 8, false,
       job_only([=](const Line& l, int64_t) { return StrCat(std::max(1, job(l).num_nodes())); })},
      {"ReqTRES", 10, false,
       job_only([=](const Line& l, int64_t) { return SortedTres(job(l).tres_req()); })},
      {"Restarts", 8, false,
       job_only([=](const Line& l, int64_t) { return StrCat(job(l).restarts()); })},
      {"Start", 19, false,
       [=](const Line& l, int64_t) {
         return Time(l.step ? l.step->start_time() : job(l).start_time());
       }},
      {"State", 10, false, [](const Line& l, int64_t) { return StateText(l); }},
      {"Submit", 19, false, [=](const Line& l, int64_t) { return Time(job(l).submit_time()); }},
      {"SystemCPU", 10, false, [](const Line& l, int64_t) { return CpuTime(l, SystemCpu); }},
      {"Timelimit", 10, false, job_only([=](const Line& l, int64_t) {
         return job(l).time_limit_s() <= 0 ? std::string("UNLIMITED")
                                           : core::FormatDuration(job(l).time_limit_s());
       })},
      {"TimelimitRaw", 12, false, job_only([=](const Line& l, int64_t) {
         return job(l).time_limit_s() <= 0 || job(l).time_limit_s() == core::kUnlimitedSeconds
                    ? std::string("UNLIMITED")
                    : StrCat(job(l).time_limit_s() / 60);
       })},
      {"TRESUsageInAve", 14, false, Unmeasured},
      {"TRESUsageInMax", 14, false, Unmeasured},
      {"TRESUsageInMaxNode", 18, false, Unmeasured},
      {"TRESUsageInMaxTask", 18, false, Unmeasured},
      {"TRESUsageInMin", 14, false, Unmeasured},
      {"TRESUsageInMinNode", 18, false, Unmeasured},
      {"TRESUsageInMinTask", 18, false, Unmeasured},
      {"TRESUsageInTot", 14, false, Unmeasured},
      {"TRESUsageOutAve", 15, false, Unmeasured},
      {"TRESUsageOutMax", 15, false, Unmeasured},
      {"TRESUsageOutMaxNode", 19, false, Unmeasured},
      {"TRESUsageOutMaxTask", 19, false, Unmeasured},
      {"TRESUsageOutTot", 15, false, Unmeasured},
      {"TotalCPU", 10, false, [](const Line& l, int64_t) { return CpuTime(l, TotalCpu); }},
      {"UID", 6, false, [=](const Line& l, int64_t) { return StrCat(job(l).uid()); }},
      {"User", 9, false, job_only([=](const Line& l, int64_t) { return job(l).user(); })},
      {"UserCPU", 10, false, [](const Line& l, int64_t) { return CpuTime(l, UserCpu); }},
      {"WCKey", 10, false, job_only([](const Line& l, int64_t) { return l.job->wckey(); })},
      {"WorkDir", 15, false,
       job_only([=](const Line& l, int64_t) { return job(l).spec().work_dir(); })},
  };
}

struct Column {
  const Field* field;
  int width;
};

StatusOr<std::vector<Column>> ParseFormat(const std::string& list, const std::vector<Field>& all) {
  std::vector<Column> out;
  for (std::string_view item : core::Split(list, ',')) {
    if (item.empty()) continue;
    std::string_view name = item;
    std::optional<int> width;
    if (size_t pct = item.find('%'); pct != std::string_view::npos) {
      name = item.substr(0, pct);
      std::optional<int64_t> w = core::ParseInt(item.substr(pct + 1));
      if (!w || *w < 0) {
        return absl::InvalidArgumentError(StrCat("Invalid field requested: \"", item, "\""));
      }
      width = static_cast<int>(*w);
    }
    const Field* f = nullptr;
    for (const Field& c : all) {
      if (core::EqualsIgnoreCase(c.name, name)) f = &c;
    }
    if (f == nullptr) {
      return absl::InvalidArgumentError(StrCat("Invalid field requested: \"", name, "\""));
    }
    out.push_back({f, width.value_or(f->width)});
  }
  return out;
}

// The pending tasks of an array that never started, folded into one line as Slurm keeps
// them ("7_[4-10%2]"), where the first of them was.
std::vector<Line> LinesOf(const v1::AcctQueryJobsReply& reply, bool steps) {
  std::vector<Line> lines;
  std::map<uint64_t, std::vector<int32_t>> pending_tasks;
  std::map<uint64_t, size_t> pending_line;
  for (const v1::AcctJob& a : reply.jobs()) {
    const v1::JobInfo& j = a.job();
    if (j.array_task_id() >= 0 && j.state() == "PENDING" && j.start_time() == 0) {
      pending_tasks[j.array_job_id()].push_back(j.array_task_id());
      if (pending_line.try_emplace(j.array_job_id(), lines.size()).second) {
        lines.push_back({&a, nullptr, "?"});
      }
      continue;
    }
    lines.push_back({&a, nullptr, ""});
    if (!steps) continue;
    for (const v1::AcctStep& s : a.steps()) lines.push_back({&a, &s, ""});
  }
  for (auto& [array, tasks] : pending_tasks) {
    std::sort(tasks.begin(), tasks.end());
    std::vector<std::string> ranges;
    for (size_t i = 0; i < tasks.size();) {
      size_t k = i;
      while (k + 1 < tasks.size() && tasks[k + 1] == tasks[k] + 1) ++k;
      ranges.push_back(k == i ? StrCat(tasks[i]) : StrCat(tasks[i], "-", tasks[k]));
      i = k + 1;
    }
    Line& l = lines[pending_line[array]];
    l.pending_array = core::Join(ranges, ",");
    if (l.job->job().array_max_tasks() > 0) {
      l.pending_array += StrCat("%", l.job->job().array_max_tasks());
    }
  }
  return lines;
}

int Fail(const Status& s) {
  std::fprintf(stderr, "sacct: error: %s\n", std::string(s.message()).c_str());
  return 1;
}

std::vector<std::string> List(const std::string& v) {
  std::vector<std::string> out;
  for (std::string_view p : core::Split(v, ',')) {
    if (!p.empty()) out.emplace_back(p);
  }
  return out;
}

constexpr std::string_view kDefaultFields =
    "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
constexpr std::string_view kLongFields =
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,"
    "MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,"
    "MinCPUTask,AveCPU,NTasks,AllocCPUS,Elapsed,State,ExitCode,AveCPUFreq,ReqCPUFreqMin,"
    "ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,"
    "MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,"
    "ReqTRES,AllocTRES,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"
    "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,"
    "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot";

}  // namespace

int RunSacct(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  std::optional<std::string> start_text, end_text;
  std::string fields(kDefaultFields);
  bool steps = true, header = true, json = false, all_users = false, all_clusters = false,
       help_format = false;
  char delimiter = 0;
  bool trailing = false;
  v1::AcctQueryJobsRequest req;
  std::vector<std::string> users, clusters;
  for (const ParsedOption<Opt>& o : scan.options) {
    switch (o.id) {
      case Opt::kAllClusters:
        all_clusters = true;
        break;
      case Opt::kAllUsers:
        all_users = true;
        break;
      case Opt::kAccounts:
        for (const std::string& a : List(*o.value)) req.add_accounts(core::ToLower(a));
        break;
      case Opt::kAllocations:
        steps = false;
        break;
      case Opt::kClusters:
        clusters = List(*o.value);
        break;
      case Opt::kDuplicates:
        break;  // one record per job is kept: its last attempt
      case Opt::kEndTime:
        end_text = *o.value;
        break;
      case Opt::kFormat:
        fields = *o.value;
        break;
      case Opt::kHelpFormat:
        help_format = true;
        break;
      case Opt::kJobs:
        for (const std::string& id : List(*o.value)) {
          std::string_view base = id;
          base = base.substr(0, base.find_first_of("_."));
          std::optional<int64_t> n = core::ParseInt(base);
          if (!n || *n <= 0) {
            std::fprintf(stderr, "sacct: fatal: Bad job/step specified: %s\n", id.c_str());
            return 1;
          }
          req.add_job_ids(static_cast<uint64_t>(*n));
        }
        break;
      case Opt::kJson:
        json = true;
        break;
      case Opt::kLong:
        fields = kLongFields;
        break;
      case Opt::kNoHeader:
        header = false;
        break;
      case Opt::kParsable:
        delimiter = '|';
        trailing = true;
        break;
      case Opt::kParsable2:
        delimiter = '|';
        trailing = false;
        break;
      case Opt::kPartition:
        for (const std::string& p : List(*o.value)) req.add_partitions(p);
        break;
      case Opt::kQos:
        for (const std::string& q : List(*o.value)) req.add_qos(core::ToLower(q));
        break;
      case Opt::kStartTime:
        start_text = *o.value;
        break;
      case Opt::kState:
        for (const std::string& s : List(*o.value)) {
          std::optional<model::JobState> st = model::ParseJobState(s);
          if (!st) {
            std::fprintf(stderr, "sacct: error: Invalid state: %s\n", s.c_str());
            return 1;
          }
          req.add_states(std::string(model::JobStateName(*st)));
        }
        break;
      case Opt::kUnits:
        break;  // memory fields Loom fills are printed as recorded
      case Opt::kUser:
        users = List(*o.value);
        break;
      case Opt::kVerbose:
        break;
      default:
        break;
    }
  }
  const std::vector<Field> all = AllFields();
  if (help_format) {
    std::string out;
    int col = 0;
    for (const Field& f : all) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%-20.*s", static_cast<int>(f.name.size()), f.name.data());
      out += cell;
      if (++col % 4 == 0) out += "\n";
    }
    if (col % 4 != 0) out += "\n";
    return PrintText(out);
  }
  auto columns = ParseFormat(fields, all);
  if (!columns.ok()) return Fail(columns.status());
  auto client = Client::Connect("sacct");
  if (!client.ok()) return Fail(client.status());
  const int64_t now = core::RealClock().UnixSeconds();
  const absl::TimeZone zone = absl::LocalTimeZone();
  if (!clusters.empty() && !all_clusters) {
    req.set_cluster(clusters.size() == 1 ? clusters[0] : "");
  } else if (!all_clusters) {
    req.set_cluster(client->config().cluster_name);
  }
  // The window: since midnight unless jobs are named or states given (then: now); with states
  // and no end, the end is the start (Slurm's rule: a state is looked for at an instant
  // unless a window is given).
  int64_t start = 0, end = 0;
  if (start_text) {
    auto t = submit::ParseSlurmDateTime(*start_text, now, zone);
    if (!t.ok()) return Fail(t.status());
    start = *t;
  } else if (req.job_ids().empty() && !req.states().empty()) {
    start = now;  // states without -S: the jobs in them now, as Slurm's sacct
  } else if (req.job_ids().empty()) {
    const absl::CivilDay today = absl::ToCivilDay(absl::FromUnixSeconds(now), zone);
    start = absl::ToUnixSeconds(absl::FromCivil(today, zone));
  }
  if (end_text) {
    auto t = submit::ParseSlurmDateTime(*end_text, now, zone);
    if (!t.ok()) return Fail(t.status());
    end = *t;
  } else if (start > 0) {
    end = req.states().empty() ? now : start;
  }
  req.set_start(start);
  req.set_end(end);
  const uint32_t me = ::getuid();
  if (!users.empty()) {
    for (const std::string& u : users) {
      // A name this system does not know still selects the records that carry it (people
      // who left, records loaded from another site or from the simulator).
      auto info = auth::LookupUserByName(u);
      if (!info.ok()) {
        if (auto uid = core::ParseInt(u); uid && *uid >= 0 && *uid <= UINT32_MAX) {
          req.add_uids(static_cast<uint32_t>(*uid));
        } else {
          req.add_user_names(u);
        }
        continue;
      }
      req.add_uids(info->uid);
    }
  } else if (all_users || me == 0 || !req.job_ids().empty()) {
    req.set_all_users(true);
  } else {
    req.add_uids(me);
  }
  v1::AcctQueryJobsReply reply;
  Status s = client->CallDbd("AcctQueryJobs", req, &reply);
  if (!s.ok()) return Fail(s);
  if (json) {
    format::JsonMeta meta;
    meta.plugin_type = "openapi/dbv0.0.38";
    meta.plugin_name = "Slurm OpenAPI DB v0.0.38";
    return PrintText(SacctJson(reply, meta, now,
                               [](uint32_t uid) {
                                 auto u = auth::LookupUserById(uid);
                                 return u.ok() ? u->name : StrCat(uid);
                               }) +
                     "\n");
  }

  std::string out;
  const format::AcctTableStyle style{delimiter, trailing};
  // Headers are placed as the values below them.
  auto cells_of = [&](const std::vector<std::string>& values) {
    std::vector<format::AcctCell> cells;
    for (size_t i = 0; i < values.size(); ++i) {
      cells.push_back({values[i], (*columns)[i].width, (*columns)[i].field->left});
    }
    return cells;
  };
  if (header) {
    std::vector<std::string> names;
    for (const Column& c : *columns) names.emplace_back(c.field->name);
    format::AppendAcctHeader(&out, cells_of(names), style);
  }
  for (const Line& l : LinesOf(reply, steps)) {
    std::vector<std::string> values;
    for (const Column& c : *columns) values.push_back(c.field->value(l, now));
    format::AppendAcctRow(&out, cells_of(values), style);
  }
  return PrintText(out);
}

}  // namespace loom::cli
