// libFuzzer target for the gres.conf reader and the node topologies built from it, against
// a fixed cluster: n[1-8] with 4 a100 GPUs and 32 CPUs on 2 sockets, c[1-2] without GPUs.
// The input is gres.conf, optionally followed by a line "%%" and the text of a topology
// matrix that Topology=topo/node.topo names. Nothing may crash, hang or leak; a node given
// a topology must have the GPUs slurm.conf gives it, indexed in order.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "conf/gres_conf.h"

namespace {

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "gres.conf invariant violated: %s\n", what);
  std::abort();
}

loom::conf::GresCluster Cluster() {
  loom::conf::GresCluster c;
  c.gres_types = {"gpu", "mps", "shard"};
  for (int i = 1; i <= 8; ++i) {
    c.nodes.push_back({"n" + std::to_string(i), {{"gpu", "a100", 4}, {"mps", "", 400}}, 32, 2});
  }
  c.nodes.push_back({"c1", {}, 16, 1});
  c.nodes.push_back({"c2", {}, 16, 1});
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view gres = input, matrix;
  if (size_t split = input.find("\n%%\n"); split != std::string_view::npos) {
    gres = input.substr(0, split);
    matrix = input.substr(split + 4);
  }
  loom::conf::InMemoryIncludeResolver files;
  files.Add("/etc/slurm/topo/node.topo", std::string(matrix));
  std::vector<loom::conf::Diagnostic> warnings;
  loom::StatusOr<loom::conf::GresConf> conf =
      loom::conf::ParseGresConf(gres, "/etc/slurm/gres.conf", files, &warnings);
  if (!conf.ok()) return 0;
  static const loom::conf::GresCluster* cluster = new loom::conf::GresCluster(Cluster());
  auto topologies = loom::conf::BuildNodeTopologies(*conf, *cluster, &warnings);
  for (const loom::conf::Diagnostic& w : warnings) Check(!w.ToString().empty(), "warning text");
  if (!topologies.ok()) return 0;
  Check(topologies->size() == cluster->nodes.size(), "one entry per node");
  for (size_t n = 0; n < topologies->size(); ++n) {
    const auto& t = (*topologies)[n];
    if (t == nullptr) continue;
    int64_t gpus = 0;
    for (const auto& g : cluster->nodes[n].gres) gpus += g.name == "gpu" ? g.count : 0;
    Check(t->num_gpus() == gpus, "GPU count as slurm.conf gives it");
    for (int32_t i = 0; i < t->num_gpus(); ++i) {
      Check(t->gpus[i].index == i, "index");
      Check(t->gpus[i].numa >= 0 && t->gpus[i].numa < t->num_numa(), "numa");
    }
  }
  return 0;
}
