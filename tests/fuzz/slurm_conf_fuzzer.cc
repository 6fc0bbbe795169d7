// libFuzzer target for the slurm.conf parser: arbitrary text through ParseSlurmConf, with
// an include resolver that has no files. Parsing must never crash, hang or leak, whatever
// it is given; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "conf/slurm_conf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  loom::conf::NoIncludeResolver resolver;
  std::vector<loom::conf::Diagnostic> warnings;
  loom::StatusOr<loom::conf::ClusterConfig> config =
      loom::conf::ParseSlurmConf(text, "/etc/slurm/slurm.conf", resolver, &warnings);
  size_t sink = 0;
  for (const loom::conf::Diagnostic& w : warnings) sink += w.ToString().size();
  if (config.ok()) {
    for (const loom::conf::NodeConfig& n : config->nodes) sink += n.GpuCount() + n.cpus;
    for (const loom::conf::PartitionConfig& p : config->partitions) {
      sink += p.nodes.size() + (config->BillingWeightsFor(p).empty() ? 0 : 1);
    }
    sink += config->select.ToString().size() + config->preempt_mode.ToString().size();
  } else {
    sink += config.status().message().size();
  }
  static volatile size_t keep;
  keep = keep + sink;  // reads and writes a volatile: the work above is not optimized away
  return 0;
}
