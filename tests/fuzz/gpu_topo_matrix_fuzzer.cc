// libFuzzer target for the topology matrix reader (the table `nvidia-smi topo -m` prints).
// Parsing any text must not crash, hang or leak; a matrix that parses must give a
// consistent NodeTopology: GPUs indexed in order, domain/switch/NUMA ids without gaps past
// the largest, NIC ids within range, NUMA CPU lists ascending and disjoint.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>

#include "conf/gpu_topo_matrix.h"

namespace {

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "topology matrix invariant violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  loom::StatusOr<loom::model::NodeTopology> t =
      loom::conf::ParseTopoMatrix(text, "/etc/slurm/topo/node.topo", "a100");
  if (!t.ok()) return 0;
  Check(t->num_gpus() >= 1 && t->num_gpus() <= loom::model::kMaxGpusPerNode, "GPU count");
  Check(t->sockets >= 1, "sockets");
  for (int32_t i = 0; i < t->num_gpus(); ++i) {
    const loom::model::Gpu& g = t->gpus[i];
    Check(g.index == i, "index");
    Check(g.domain >= 0 && g.domain <= i, "domain numbered by first GPU");
    Check(g.pcie_switch >= 0 && g.pcie_switch <= i, "switch numbered by first GPU");
    Check(g.numa >= 0 && g.numa < t->num_numa(), "numa");
    Check(g.nic >= -1, "nic");
    Check(g.type == "a100", "type");
  }
  std::set<int32_t> seen;
  for (const auto& cpus : t->numa_cpus) {
    for (size_t k = 0; k < cpus.size(); ++k) {
      Check(k == 0 || cpus[k - 1] < cpus[k], "NUMA CPUs ascending");
      Check(seen.insert(cpus[k]).second, "a CPU in two NUMA nodes");
    }
  }
  return 0;
}
