// Applying one option, from any source, to what the sources say so far: the option's value
// is validated and recorded. Shared by the files of the submission layer; not part of its
// interface.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/submit/internal/sbatch_getopt.h"
#include "cli/submit/sbatch_options.h"
#include "core/status.h"
#include "model/job_request.h"

namespace loom::cli::submit::internal {

enum class Source { kCommandLine, kEnvironment, kScript };

inline bool IsMemOption(Opt id) {
  return id == Opt::kMem || id == Opt::kMemPerCpu || id == Opt::kMemPerGpu;
}

// Everything the sources say, before the request is assembled.
struct State {
  model::JobRequest r;
  std::optional<std::string> job_name, chdir, output, error, input, export_text;
  std::optional<std::string> gres, gpus, gpus_per_node, gpus_per_task, gpus_per_socket;
  std::optional<std::string> dependency, array;
  std::optional<std::string> wrap;
  SbatchInput::Action action = SbatchInput::Action::kSubmit;
  bool parsable = false, wait = false, quiet = false;
  int verbose = 0;
  std::vector<std::string> warnings;
  std::set<Opt> warned;
};

class Resolver {
 public:
  Resolver(int64_t now, const SbatchSettings& settings) : now_(now), settings_(settings) {}

  // Applies one option from `source` to `st`, validating its value.
  Status Apply(const ParsedOption& o, Source source, State* st);

 private:
  // Values Slurm checks even for options Loom does not act on.
  Status ValidateIgnored(const ParsedOption& o);

  Status ApplyNodes(std::string_view v, model::JobRequest* r);

  int64_t now_;
  const SbatchSettings& settings_;
};

}  // namespace loom::cli::submit::internal
