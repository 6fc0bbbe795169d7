#include "cli/step_views.h"

#include <sys/wait.h>

#include <algorithm>
#include <ctime>

#include "cli/format/text.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli {
namespace {

using core::StrCat;

std::string LocalTime(int64_t t) {
  if (t <= 0) return "Unknown";
  const time_t tt = static_cast<time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  return format::FormatIsoTime(t, static_cast<int32_t>(tm.tm_gmtoff));
}

// "%.Nx": right-aligned in N columns, cut to N.
std::string Column(std::string text, size_t width) {
  if (text.size() > width) text.resize(width);
  return std::string(width - text.size(), ' ') + text;
}

}  // namespace

std::string RenderStepsScontrol(const std::vector<v1::StepInfo>& steps, bool one_liner) {
  const std::string sep = one_liner ? " " : "\n   ";
  std::string out;
  for (const v1::StepInfo& s : steps) {
    std::string dist = s.distribution().empty() ? "block" : s.distribution();
    dist[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(dist[0])));
    out += StrCat("StepId=", s.job_id(), ".", s.step_id(), " UserId=", s.uid(),
                  " StartTime=", LocalTime(s.start_time()),
                  " TimeLimit=", core::FormatDuration(s.time_limit_s()));
    out +=
        StrCat(sep, "State=", s.state(), " Partition=", s.partition(), " NodeList=", s.node_list());
    out += StrCat(sep, "Nodes=", s.nodes_size(), " CPUs=", s.num_cpus(), " Tasks=", s.num_tasks(),
                  " Name=", s.name(), " Network=(null)");
    out += StrCat(sep, "TRES=cpu=", s.num_cpus(), ",node=", s.nodes_size());
    out += StrCat(sep, "ResvPorts=(null)");
    out += StrCat(sep, "CPUFreqReq=Default Dist=", dist);
    if (!s.cpu_bind().empty() || !s.gpu_bind().empty()) {
      std::string bind;
      if (!s.cpu_bind().empty()) bind += StrCat("CpuBind=", s.cpu_bind());
      if (!s.gpu_bind().empty())
        bind += StrCat(bind.empty() ? "" : " ", "TresBind=gpu:", s.gpu_bind());
      out += StrCat(sep, bind);
    }
    if (!s.gpus_per_task().empty()) out += StrCat(sep, "TresPerTask=gres:gpu:", s.gpus_per_task());
    if (s.state() != "RUNNING") {
      const int32_t ws = s.exit_code();
      const int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 0;
      const int sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
      out += StrCat(sep, "EndTime=", LocalTime(s.end_time()), " ExitCode=", code, ":", sig);
    }
    out += one_liner ? "\n" : "\n\n";
  }
  return out;
}

std::string RenderStepsSqueue(const std::vector<v1::StepInfo>& steps, int64_t now, bool header) {
  std::string out;
  if (header) {
    out += StrCat(Column("STEPID", 15), " ", Column("NAME", 8), " ", Column("PARTITION", 9), " ",
                  Column("USER", 8), " ", Column("TIME", 10), " NODELIST\n");
  }
  for (const v1::StepInfo& s : steps) {
    if (s.state() != "RUNNING") continue;
    out += StrCat(Column(StrCat(s.job_id(), ".", s.step_id()), 15), " ", Column(s.name(), 8), " ",
                  Column(s.partition(), 9), " ", Column(s.user(), 8), " ",
                  Column(core::FormatElapsed(std::max<int64_t>(0, now - s.start_time())), 10), " ",
                  s.node_list(), "\n");
  }
  return out;
}

}  // namespace loom::cli
