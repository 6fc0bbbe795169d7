// squeue: the jobs loomctld holds, in Slurm's layouts (cli/format/squeue_format.h).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format/squeue_format.h"
#include "cli/step_views.h"
#include "core/strings.h"
#include "rpc/convert.h"

namespace loom::cli {
namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  for (std::string_view p : core::Split(s, ',')) {
    if (!core::Trim(p).empty()) out.emplace_back(core::Trim(p));
  }
  return out;
}

}  // namespace

int RunSqueue(int argc, char** argv) {
  CLI::App app{"view information about jobs", "squeue"};
  app.set_help_flag("--help");
  format::SqueueOptions opts;
  std::string jobs, users, partitions, states, names;
  bool json = false;
  bool steps = false;
  app.add_flag("-h,--noheader", opts.no_header);
  app.add_flag("-l,--long", opts.long_listing);
  app.add_option("-o,--format", opts.format);
  app.add_option("-O,--Format", opts.long_format);
  app.add_option("-S,--sort", opts.sort);
  app.add_option("-j,--jobs", jobs);
  app.add_option("-u,--user", users);
  app.add_option("-p,--partition", partitions);
  app.add_option("-t,--states", states);
  app.add_option("-n,--name", names);
  app.add_flag("-r,--array", opts.expand_arrays);
  app.add_flag("--start", opts.start);
  app.add_flag("--json", json);
  app.add_flag("-s,--steps", steps);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (const std::string& j : SplitList(jobs)) {
    auto id = core::ParseInt(j);
    if (!id || *id <= 0) {
      std::fprintf(stderr, "squeue: error: Invalid job id: %s\n", j.c_str());
      return 1;
    }
    opts.job_ids.push_back(static_cast<uint32_t>(*id));
  }
  opts.users = SplitList(users);
  opts.partitions = SplitList(partitions);
  opts.names = SplitList(names);
  if (!states.empty()) {
    auto f = format::ParseJobStateFilter(states);
    if (!f.ok()) {
      std::fprintf(stderr, "squeue: error: %s\n", std::string(f.status().message()).c_str());
      return 1;
    }
    opts.states = *f;
  }
  if (Status v = format::ValidateSqueueOptions(opts); !v.ok()) {
    std::fprintf(stderr, "squeue: error: %s\n", std::string(v.message()).c_str());
    return 1;
  }
  auto client = Client::Connect("squeue");
  if (!client.ok()) {
    std::fprintf(stderr, "squeue: error: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  if (steps) {
    // The running steps of the jobs asked for (all jobs': none asked), -u and -p narrowing.
    v1::QueryStepsRequest sreq;
    for (uint32_t id : opts.job_ids) sreq.add_job_ids(id);
    v1::QueryStepsReply sreply;
    if (Status s = client->Call("QuerySteps", sreq, &sreply); !s.ok()) {
      std::fprintf(stderr, "slurm_get_job_steps error: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::vector<v1::StepInfo> shown;
    for (const v1::StepInfo& st : sreply.steps()) {
      const bool user_ok = opts.users.empty() || std::find(opts.users.begin(), opts.users.end(),
                                                           st.user()) != opts.users.end();
      const bool part_ok =
          opts.partitions.empty() || std::find(opts.partitions.begin(), opts.partitions.end(),
                                               st.partition()) != opts.partitions.end();
      if (user_ok && part_ok) shown.push_back(st);
    }
    std::fputs(
        RenderStepsSqueue(shown, static_cast<int64_t>(std::time(nullptr)), !opts.no_header).c_str(),
        stdout);
    return 0;
  }
  v1::QueryJobsRequest req;
  auto bytes = client->CallForBytes("QueryJobs", req);
  StatusOr<JobViewStream> stream =
      bytes.ok() ? JobViewStream::Open(*std::move(bytes)) : StatusOr<JobViewStream>(bytes.status());
  if (!stream.ok()) {
    std::fprintf(stderr, "slurm_load_jobs error: %s\n",
                 std::string(stream.status().message()).c_str());
    return 1;
  }
  format::RenderContext ctx{stream->snapshot_time() ? stream->snapshot_time()
                                                    : static_cast<int64_t>(std::time(nullptr)),
                            0};
  if (json) {
    if (!format::WriteSqueueJson([&] { return stream->Next(); }, opts, ctx, stdout) ||
        std::fputs("\n", stdout) < 0 || std::fflush(stdout) != 0) {
      std::fprintf(stderr, "squeue: error: writing the output: %s\n", std::strerror(errno));
      return 1;
    }
    return stream->status().ok() ? 0 : 1;
  }
  std::vector<format::JobView> views = JobViews(*stream);
  if (!stream->status().ok()) {
    std::fprintf(stderr, "slurm_load_jobs error: %s\n",
                 std::string(stream->status().message()).c_str());
    return 1;
  }
  auto out = format::RenderSqueue(views, opts, ctx);
  if (!out.ok()) {
    std::fprintf(stderr, "squeue: error: %s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  std::fputs(out->c_str(), stdout);
  return 0;
}

}  // namespace loom::cli
