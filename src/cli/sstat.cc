// sstat: what the running steps of jobs use now, in sacct's layout (cli/format/sstat_format.h).
// The controller asks each node of a job for its tasks' usage (/proc, when asked).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format/sstat_format.h"
#include "core/strings.h"

namespace loom::cli {
namespace {

// "batch" first, then the numbered steps in order.
bool StepBefore(const std::string& a, const std::string& b) {
  if (a == "batch" || b == "batch") return a == "batch" && b != "batch";
  return core::ParseInt(a).value_or(0) < core::ParseInt(b).value_or(0);
}

}  // namespace

int RunSstat(int argc, char** argv) {
  CLI::App app{"display the status of running job steps", "sstat"};
  app.set_help_flag("--help");
  std::string jobs, fields;
  bool all_steps = false, parsable = false, parsable2 = false, no_header = false;
  bool help_format = false;
  app.add_option("-j,--jobs", jobs);
  app.add_option("-o,--format,--fields", fields);
  app.add_flag("-a,--allsteps", all_steps);
  app.add_flag("-p,--parsable", parsable);
  app.add_flag("-P,--parsable2", parsable2);
  app.add_flag("-n,--noheader", no_header);
  app.add_flag("-e,--helpformat", help_format);
  app.allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (help_format) {
    std::printf("%s\n", core::Join(format::SstatFields(), " ").c_str());
    return 0;
  }
  // A bare argument names jobs as -j does (sstat 123).
  for (const std::string& extra : app.remaining()) jobs += (jobs.empty() ? "" : ",") + extra;
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
