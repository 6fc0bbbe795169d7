// squeue: the jobs loomctld holds, in Slurm's layouts (cli/format/squeue_format.h).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/squeue_format.h"
#include "cli/slurm_help.h"
#include "cli/step_views.h"
#include "core/clock.h"
#include "core/strings.h"
#include "rpc/convert.h"

namespace loom::cli {
namespace {

// Slurm 22.05's squeue options; rows of one option share an id.
enum class Opt {
  kAccounts,
  kAll,
  kArray,
  kArrayUnique,
  kClusters,
  kFormat,
  kFederation,
  kLongFormat,
  kHelp,
  kHide,
  kIterate,
  kJobs,
  kJson,
  kLocal,
  kLong,
  kLicenses,
  kMe,
  kName,
  kNoConvert,
  kNodelist,
  kNoHeader,
  kPartitions,
  kPriority,
  kQos,
  kReservation,
  kSibling,
  kSort,
  kStart,
  kSteps,
  kStates,
  kUsage,
  kUser,
  kVerbose,
  kVersion,
  kYaml,
};

// In squeue's order within each first letter (its "ambiguous" messages list them so).
constexpr OptionSpec<Opt> kOptions[] = {
    {"accounts", 'A', kArg, Opt::kAccounts},
    {"", 'U', kArg, Opt::kAccounts},
    {"all", 'a', kNoArg, Opt::kAll},
    {"array", 'r', kNoArg, Opt::kArray},
    {"array-unique", 0, kNoArg, Opt::kArrayUnique},
    {"cluster", 0, kArg, Opt::kClusters},
    {"clusters", 'M', kArg, Opt::kClusters},
    {"format", 'o', kArg, Opt::kFormat},
    {"federation", 0, kNoArg, Opt::kFederation},
    {"Format", 'O', kArg, Opt::kLongFormat},
    {"help", 0, kNoArg, Opt::kHelp},
    {"hide", 0, kNoArg, Opt::kHide},
    {"iterate", 'i', kArg, Opt::kIterate},
    {"jobs", 'j', kOptArg, Opt::kJobs},
    {"json", 0, kNoArg, Opt::kJson},
    {"local", 0, kNoArg, Opt::kLocal},
    {"long", 'l', kNoArg, Opt::kLong},
    {"licenses", 'L', kArg, Opt::kLicenses},
    {"me", 0, kNoArg, Opt::kMe},
    {"name", 'n', kArg, Opt::kName},
    {"noconvert", 0, kNoArg, Opt::kNoConvert},
    {"node", 0, kArg, Opt::kNodelist},
    {"nodes", 0, kArg, Opt::kNodelist},
    {"nodelist", 'w', kArg, Opt::kNodelist},
    {"noheader", 'h', kNoArg, Opt::kNoHeader},
    {"partitions", 'p', kArg, Opt::kPartitions},
    {"priority", 'P', kNoArg, Opt::kPriority},
    {"qos", 'q', kArg, Opt::kQos},
    {"reservation", 'R', kArg, Opt::kReservation},
    {"sib", 0, kNoArg, Opt::kSibling},
    {"sibling", 0, kNoArg, Opt::kSibling},
    {"sort", 'S', kArg, Opt::kSort},
    {"start", 0, kNoArg, Opt::kStart},
    {"steps", 's', kOptArg, Opt::kSteps},
    {"states", 't', kArg, Opt::kStates},
    {"usage", 0, kNoArg, Opt::kUsage},
    {"user", 'u', kArg, Opt::kUser},
    {"users", 0, kArg, Opt::kUser},
    {"verbose", 'v', kNoArg, Opt::kVerbose},
    {"version", 'V', kNoArg, Opt::kVersion},
    {"yaml", 0, kNoArg, Opt::kYaml},
};

constexpr CommandText kText{"squeue", kSqueueHelp, kSqueueUsage};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  for (std::string_view p : core::Split(s, ',')) {
    if (!core::Trim(p).empty()) out.emplace_back(core::Trim(p));
  }
  return out;
}

}  // namespace

int RunSqueue(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  format::SqueueOptions opts;
  std::string jobs, users, partitions, states, names, reservations;
  bool json = false;
  bool steps = false;
  bool jobs_flag = false;  // -j without a list: the first operand is the list
  for (const ParsedOption<Opt>& o : scan.options) {
    const std::string value = o.value.value_or("");
    switch (o.id) {
      case Opt::kNoHeader:
        opts.no_header = true;
        break;
      case Opt::kLong:
        opts.long_listing = true;
        break;
      case Opt::kFormat:
        opts.format = value;
        break;
      case Opt::kLongFormat:
        opts.long_format = value;
        break;
      case Opt::kSort:
        opts.sort = value;
        break;
      case Opt::kJobs:
        jobs_flag = !o.value.has_value();
        if (o.value) jobs = value;
        break;
      case Opt::kUser:
        users = value;
        break;
      case Opt::kMe:
        users = CurrentUserName();
        break;
      case Opt::kPartitions:
        partitions = value;
        break;
      case Opt::kStates:
        states = value;
        break;
      case Opt::kName:
        names = value;
        break;
      case Opt::kReservation:
        reservations = value;
        break;
      case Opt::kArray:
        opts.expand_arrays = true;
        break;
      case Opt::kStart:
        opts.start = true;
        break;
      case Opt::kJson:
        json = true;
        break;
      case Opt::kSteps:
        // Loom lists the running steps of the jobs -j names; a list of steps is not narrowed.
        if (o.value) return NotSupported("squeue", "steps=STEPS");
        steps = true;
        break;
      default:
        return NotSupported("squeue", LongName<Opt>(kOptions, o.id));
    }
  }
  // Slurm's squeue takes the list of a bare -j from the next operand; any other is an error.
  std::span<const std::string> operands = scan.rest;
  if (jobs_flag && !operands.empty()) {
    jobs = operands.front();
    operands = operands.subspan(1);
  }
  if (!operands.empty()) {
    std::fprintf(stderr, "squeue: error: Unrecognized option: %s\n", operands.front().c_str());
    PrintText(kSqueueUsage);
    return 1;
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
  opts.reservations = SplitList(reservations);
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
        RenderStepsSqueue(shown, core::RealClock().UnixSeconds(), !opts.no_header).c_str(),
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
                                                    : core::RealClock().UnixSeconds(),
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
  // One job asked for that the controller does not know: Slurm's squeue loads that job alone
  // and fails (with several ids, or with none, an unknown one is just not listed).
  if (opts.job_ids.size() == 1 &&
      std::none_of(views.begin(), views.end(), [id = opts.job_ids.front()](const auto& v) {
        return v.job_id == id || v.array_job_id == id;
      })) {
    std::fprintf(stderr, "slurm_load_jobs error: Invalid job id specified\n");
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
