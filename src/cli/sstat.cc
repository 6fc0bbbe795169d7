// sstat: what the running steps of jobs use now, in sacct's layout (cli/format/sstat_format.h).
// The controller asks each node of a job for its tasks' usage (/proc, when asked).
#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/sstat_format.h"
#include "cli/slurm_help.h"
#include "core/strings.h"

namespace loom::cli {
namespace {

// Slurm 22.05's sstat options; rows of one option share an id.
enum class Opt {
  kAllSteps,
  kFormat,
  kHelpFormat,
  kHelp,
  kPidFormat,
  kJobs,
  kNoHeader,
  kNoConvert,
  kParsable,
  kParsable2,
  kUsage,
  kVerbose,
  kVersion,
};

// In sstat's order within each first letter (its "ambiguous" messages list them so).
constexpr OptionSpec<Opt> kOptions[] = {
    {"allsteps", 'a', kNoArg, Opt::kAllSteps},
    {"fields", 0, kArg, Opt::kFormat},
    {"format", 'o', kArg, Opt::kFormat},
    {"helpformat", 'e', kNoArg, Opt::kHelpFormat},
    {"help", 'h', kNoArg, Opt::kHelp},
    {"pidformat", 'i', kNoArg, Opt::kPidFormat},
    {"jobs", 'j', kArg, Opt::kJobs},
    {"noheader", 'n', kNoArg, Opt::kNoHeader},
    {"noconvert", 0, kNoArg, Opt::kNoConvert},
    {"parsable", 'p', kNoArg, Opt::kParsable},
    {"parsable2", 'P', kNoArg, Opt::kParsable2},
    {"usage", 0, kNoArg, Opt::kUsage},
    {"verbose", 'v', kNoArg, Opt::kVerbose},
    {"version", 'V', kNoArg, Opt::kVersion},
};

// Slurm's sstat adds no "Try --help" line after a malformed option.
constexpr CommandText kText{"sstat", kSstatHelp, kSstatUsage, /*try_help=*/false};

// "batch" first, then the numbered steps in order.
bool StepBefore(const std::string& a, const std::string& b) {
  if (a == "batch" || b == "batch") return a == "batch" && b != "batch";
  return core::ParseInt(a).value_or(0) < core::ParseInt(b).value_or(0);
}

}  // namespace

int RunSstat(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  std::string jobs, fields;
  bool all_steps = false, parsable = false, parsable2 = false, no_header = false;
  bool help_format = false;
  for (const ParsedOption<Opt>& o : scan.options) {
    switch (o.id) {
      case Opt::kJobs:
        jobs = *o.value;
        break;
      case Opt::kFormat:
        fields = *o.value;
        break;
      case Opt::kAllSteps:
        all_steps = true;
        break;
      case Opt::kParsable:
        parsable = true;
        break;
      case Opt::kParsable2:
        parsable2 = true;
        break;
      case Opt::kNoHeader:
        no_header = true;
        break;
      case Opt::kHelpFormat:
        help_format = true;
        break;
      default:
        return NotSupported("sstat", LongName<Opt>(kOptions, o.id));
    }
  }
  if (help_format) {
    std::printf("%s\n", core::Join(format::SstatFields(), " ").c_str());
    return 0;
  }
  // A bare argument names jobs as -j does (sstat 123).
  for (const std::string& extra : scan.rest) jobs += (jobs.empty() ? "" : ",") + extra;
  if (jobs.empty()) {
    std::fprintf(stderr, "sstat: error: You didn't give me any jobs to stat.\n");
    return 1;
  }
  format::SstatOptions opts;
  if (!fields.empty()) {
    auto parsed = format::ParseSstatFormat(fields);
    if (!parsed.ok()) {
      std::fprintf(stderr, "sstat: error: %s\n", std::string(parsed.status().message()).c_str());
      return 1;
    }
    opts.fields = *parsed;
  }
  opts.header = !no_header;
  if (parsable || parsable2) opts.delimiter = '|';
  opts.trailing_delimiter = parsable && !parsable2;

  auto client = Client::Connect("sstat");
  if (!client.ok()) {
    std::fprintf(stderr, "sstat: error: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  int rc = 0;
  bool first = true;
  for (std::string_view ref : core::Split(jobs, ',')) {
    ref = core::Trim(ref);
    if (ref.empty()) continue;
    const size_t dot = ref.find('.');
    auto id = core::ParseInt(ref.substr(0, dot));
    if (!id || *id <= 0) {
      std::fprintf(stderr, "sstat: error: Invalid job id: %s\n", std::string(ref).c_str());
      rc = 1;
      continue;
    }
    v1::StepUsageRequest req;
    req.set_job_id(static_cast<uint64_t>(*id));
    v1::StepUsageReply reply;
    if (Status s = client->Call("StepUsage", req, &reply); !s.ok()) {
      std::fprintf(stderr, "sstat: error: couldn't get steps for job %lld: %s\n",
                   static_cast<long long>(*id), std::string(s.message()).c_str());
      rc = 1;
      continue;
    }
    std::vector<format::TaskUsageView> tasks;
    std::set<std::string> running;
    for (const v1::TaskUsage& t : reply.tasks()) {
      tasks.push_back({t.step(), t.task(), t.node(), t.cpu_usec(), t.rss_bytes(),
                       t.vsize_bytes(), t.major_faults()});
      running.insert(t.step());
    }
    std::vector<std::string> steps(running.begin(), running.end());
    std::sort(steps.begin(), steps.end(), StepBefore);
    if (dot != std::string_view::npos) {
      const std::string wanted(ref.substr(dot + 1));
      steps.assign(1, wanted);
      if (!running.contains(wanted)) {
        std::fprintf(stderr, "sstat: error: no running step %s of job %lld on its nodes\n",
                     wanted.c_str(), static_cast<long long>(*id));
        rc = 1;
        continue;
      }
    } else if (!all_steps) {
      // The lowest numbered step running, else the batch script, as Slurm's sstat.
      auto numbered = std::find_if(steps.begin(), steps.end(),
                                   [](const std::string& s) { return s != "batch"; });
      if (numbered != steps.end()) steps.assign(1, *numbered);
    }
    if (steps.empty()) {
      std::fprintf(stderr, "sstat: error: no running step of job %lld on its nodes\n",
                   static_cast<long long>(*id));
      rc = 1;
      continue;
    }
    format::SstatOptions these = opts;
    these.header = opts.header && first;
    first = false;
    std::fputs(format::RenderSstat(static_cast<uint64_t>(*id), steps, tasks, these).c_str(),
               stdout);
  }
  return rc;
}

}  // namespace loom::cli
