// libFuzzer target for sbatch's submission layer. The input's first line is the command line
// (split on blanks), the rest the batch script. ParseSbatch must not crash, hang or leak on
// any input; what it accepts must be a sane request (a positive shape, its own script, array
// and dependency values that print back to themselves), and what it refuses must carry one of
// sbatch's exit statuses.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/submit/batch_script.h"
#include "cli/submit/begin_time.h"
#include "cli/submit/sbatch_options.h"
#include "core/strings.h"
#include "model/job_request.h"

namespace {

[[noreturn]] void Fail(std::string_view what, std::string_view input) {
  std::fprintf(stderr, "%.*s\ninput:\n%.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(input.size()), input.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace submit = loom::cli::submit;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t newline = input.find('\n');
  std::string_view command = input.substr(0, newline);
  std::string_view script = newline == std::string_view::npos ? "" : input.substr(newline + 1);

  std::vector<std::string> argv = {"sbatch"};
  for (std::string_view word : loom::core::Split(command, ' ')) {
    if (!word.empty()) argv.emplace_back(word);
  }
  const std::map<std::string, std::string> env = {
      {"PWD", "/home/user"}, {"HOME", "/home/user"}, {"SLURM_CONF", "/etc/slurm/slurm.conf"}};
  constexpr int64_t kNow = 1'800'000'000;

  size_t sink = 0;
  loom::StatusOr<std::vector<submit::Directive>> directives =
      submit::ExtractDirectives(script, "job.sh");
  if (directives.ok()) {
    for (const submit::Directive& d : *directives) sink += d.words.size();
  }
  loom::StatusOr<int64_t> when = submit::ParseSlurmDateTime(command, kNow, absl::UTCTimeZone());
  sink += when.ok() ? 1 : 0;

  loom::StatusOr<submit::SbatchInput> in = submit::ParseSbatch(argv, script, env, kNow);
  if (!in.ok()) {
    int code = submit::SbatchExitCode(in.status());
    if (in.status().message().empty() || (code != 1 && code != 255)) {
      Fail("an error without text or with an unexpected exit status", input);
    }
    static volatile size_t keep;
    keep = keep + sink;
    return 0;
  }
  if (in->action != submit::SbatchInput::Action::kSubmit) return 0;
  const loom::model::JobRequest& r = in->request;
  const loom::model::JobShape& s = r.shape;
  if (s.min_nodes < 1 || s.max_nodes < s.min_nodes || s.ntasks < 1 || s.cpus_per_task < 1 ||
      s.gpus_per_node < 0 || s.gpus_per_task < 0) {
    Fail("an accepted request with an impossible shape", input);
  }
  if (r.script != script && r.script != submit::WrapCommand(r.wrap)) {
    Fail("the script changed on the way", input);
  }
  if (r.array) {
    loom::StatusOr<loom::model::ArraySpec> again = loom::model::ParseArraySpec(r.array->ToString());
    if (!again.ok() || again->Indices() != r.array->Indices()) {
      Fail("the array does not print back to itself", input);
    }
  }
  if (!r.dependency.empty()) {
    loom::StatusOr<loom::model::Dependency> again =
        loom::model::ParseDependency(r.dependency.ToString());
    if (!again.ok() || !(*again == r.dependency)) {
      Fail("the dependency does not print back to itself", input);
    }
  }
  loom::model::OutputPatternContext context;
  context.job_id = 42;
  context.job_name = r.name;
  context.user = "user";
  sink += loom::model::ExpandOutputPattern(r.EffectiveStdout(), context).size();
  sink += loom::model::ExpandOutputPattern(r.EffectiveStderr(), context).size();
  sink += r.environment.size() + in->warnings.size();
  static volatile size_t keep;
  keep = keep + sink;  // reads and writes a volatile: the work above is not optimized away
  return 0;
}
