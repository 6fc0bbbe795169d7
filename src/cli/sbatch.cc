// sbatch: submits a batch script (or --wrap) to loomctld. Options, #SBATCH directives and
// SBATCH_* variables are resolved by cli/submit exactly as Slurm resolves them; errors and
// exit statuses are Slurm's.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_filter.h"
#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/text.h"
#include "cli/submit/batch_script.h"
#include "cli/submit/sbatch_options.h"
#include "core/clock.h"
#include "core/strings.h"
#include "model/job_state.h"
#include "rpc/convert.h"

namespace loom::cli {
namespace {

// sbatch --wait: until every job of submission `id` (each task of an array) has ended; then
// the exit status Slurm's sbatch gives: the job's exit code, the highest over an array's
// tasks, and 1 when one was ended by a signal.
int WaitForJob(Client& client, uint64_t id) {
  auto pause = std::chrono::milliseconds(100);
  for (;;) {
    v1::QueryJobsRequest req;
    req.add_job_ids(id);
    v1::QueryJobsReply reply;
    if (Status s = client.Call("QueryJobs", req, &reply); !s.ok()) {
      std::fprintf(stderr, "sbatch: error: waiting for job %llu: %s\n",
                   static_cast<unsigned long long>(id), std::string(s.message()).c_str());
      return 1;
    }
    if (reply.jobs().empty()) {
      std::fprintf(stderr,
                   "sbatch: error: job %llu is no longer known to the controller; its exit "
                   "code cannot be read (MinJobAge may be too short)\n",
                   static_cast<unsigned long long>(id));
      return 1;
    }
    bool ended = true;
    int rc = 0;
    for (const v1::JobInfo& j : reply.jobs()) {
      const std::optional<model::JobState> state = model::ParseJobState(j.state());
      if (!state || !model::IsFinal(*state)) {
        ended = false;
        break;
      }
      rc = std::max(rc, j.exit_signal() != 0 ? 1 : j.exit_code());
    }
    if (ended) return rc;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(2000));
  }
}

}  // namespace

int RunSbatch(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);  // argv[0] included, as main() has it
  const std::map<std::string, std::string> env = ProcessEnvironment();
  submit::SbatchCommandLine cl = submit::ScanSbatchCommandLine(args);
  std::string script;
  if (cl.script_path && !cl.wrap) {
    std::ifstream in(*cl.script_path);
    if (!in) {
      std::fprintf(stderr, "sbatch: error: Unable to open file %s\n", cl.script_path->c_str());
      return 1;
    }
    script.assign(std::istreambuf_iterator<char>(in), {});
  } else if (!cl.wrap) {
    script.assign(std::istreambuf_iterator<char>(std::cin), {});
  }
  submit::SbatchSettings settings;
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd))) settings.submit_dir = cwd;
  std::unique_ptr<LuaCliFilter> filter;
  if (!LoadCliFilterFor("sbatch", &filter)) return 1;
  settings.cli_filter = filter.get();
  auto input = submit::ParseSbatch(args, script, env, core::RealClock().UnixSeconds(),
                                   settings);
  if (!input.ok()) {
    std::fprintf(stderr, "%s\n", std::string(input.status().message()).c_str());
    return submit::SbatchExitCode(input.status());
  }
  for (const std::string& w : input->warnings) std::fprintf(stderr, "%s\n", w.c_str());
  model::JobRequest& request = input->request;
  if (cl.script_path && !cl.wrap) {
    auto path = env.find("PATH");
    request.command = submit::RecordedCommand(
        *cl.script_path, request.script_args, request.work_dir,
        path == env.end() ? "" : path->second,
        [](const std::string& p) { return ::access(p.c_str(), F_OK) == 0; });
  }
  request.alloc_node = ShortHostName();
  request.alloc_sid = static_cast<uint32_t>(std::max<pid_t>(0, ::getsid(0)));
  switch (input->action) {
    case submit::SbatchInput::Action::kSubmit:
      break;
    case submit::SbatchInput::Action::kVersion:
      return PrintText(kSlurmVersion);
    case submit::SbatchInput::Action::kGresHelp:
      std::printf("%s", submit::GresHelpText(settings.gres_types).c_str());
      return 0;
    case submit::SbatchInput::Action::kUsage:
    case submit::SbatchInput::Action::kHelp:
      std::printf(
          "Usage: sbatch [OPTIONS(0)...] script(0) [args(0)...]\n"
          "       sbatch [OPTIONS...] --wrap=\"command string\"\n\n"
          "Loom's sbatch takes Slurm 22.05's options, #SBATCH directives and SBATCH_*\n"
          "variables; docs/user/sbatch.md lists what each does in Loom.\n");
      return 0;
  }
  auto client = Client::Connect("sbatch");
  if (!client.ok()) {
    std::fprintf(stderr, "sbatch: error: %s\n", std::string(client.status().message()).c_str());
    return input->error_exit;
  }
  v1::SubmitRequest req;
  *req.mutable_spec() = rpc::ToWire(request);
  req.set_test_only(input->request.test_only);
  v1::SubmitReply reply;
  Status s = client->Call("Submit", req, &reply);
  SayUserMsg("sbatch", reply.user_msg(), s.ok());
  if (!s.ok()) {
    std::fprintf(stderr, "sbatch: error: Batch job submission failed: %s\n",
                 std::string(s.message()).c_str());
    return input->error_exit;
  }
  if (input->request.test_only) {
    const time_t start = static_cast<time_t>(reply.expected_start());
    std::tm tm{};
    localtime_r(&start, &tm);
    std::fprintf(stderr, "sbatch: Job %llu to start at %s using %d processors on nodes %s in partition %s\n",
                 static_cast<unsigned long long>(reply.job_id()),
                 format::FormatIsoTime(reply.expected_start(), static_cast<int32_t>(tm.tm_gmtoff)).c_str(),
                 reply.expected_cpus(), reply.expected_nodes().c_str(),
                 reply.expected_partition().c_str());
    return 0;
  }
  if (filter) filter->PostSubmit("sbatch", reply.job_id(), 0xfffffffe);
  if (input->parsable) {
    std::printf("%llu\n", static_cast<unsigned long long>(reply.job_id()));
  } else {
    std::printf("Submitted batch job %llu\n", static_cast<unsigned long long>(reply.job_id()));
  }
  if (input->wait) {
    std::fflush(stdout);
    return WaitForJob(*client, reply.job_id());
  }
  return 0;
}

}  // namespace loom::cli
