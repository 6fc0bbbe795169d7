// libFuzzer target for the topology.conf reader, against a fixed cluster (the node names of
// the examples plus n[1-16]). Parsing any text must not crash, hang or leak; a file that
// parses must give a consistent ClusterTopology: every node's leaf_of names a switch or
// block that lists it, parents list their children, levels are one above the highest
// child, block sizes ascend.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "conf/topology_conf.h"
#include "core/hostlist.h"

namespace {

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "topology.conf invariant violated: %s\n", what);
  std::abort();
}

const std::vector<std::string>& NodeNames() {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>();
    for (const char* expr : {"gpu-[01-64]", "gb[001-036]", "n[1-16]"}) {
      std::vector<std::string> names = loom::core::ExpandHostlist(expr).value();
      v->insert(v->end(), names.begin(), names.end());
    }
    return v;
  }();
  return *names;
}

bool Contains(const std::vector<int32_t>& v, int32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<loom::conf::Diagnostic> warnings;
  loom::StatusOr<loom::model::ClusterTopology> t =
      loom::conf::ParseTopologyConf(text, "/etc/slurm/topology.conf", NodeNames(), &warnings);
  for (const loom::conf::Diagnostic& w : warnings) Check(!w.ToString().empty(), "warning text");
  if (!t.ok()) return 0;
  using Kind = loom::model::ClusterTopology::Kind;
  if (t->kind == Kind::kFlat) {
    Check(t->switches.empty() && t->blocks.empty(), "flat topology with members");
    return 0;
  }
  Check(t->leaf_of.size() == NodeNames().size(), "leaf_of size");
  for (size_t n = 0; n < t->leaf_of.size(); ++n) {
    const int32_t leaf = t->leaf_of[n];
    if (leaf < 0) continue;
    const auto& nodes =
        t->kind == Kind::kTree ? t->switches.at(leaf).nodes : t->blocks.at(leaf).nodes;
    Check(Contains(nodes, static_cast<int32_t>(n)), "leaf_of names a member that lists the node");
  }
  for (size_t s = 0; s < t->switches.size(); ++s) {
    const loom::model::Switch& sw = t->switches[s];
    int32_t want = 0;
    for (int32_t c : sw.children) {
      Check(t->switches.at(c).parent == static_cast<int32_t>(s), "child's parent");
      want = std::max(want, t->switches[c].level + 1);
    }
    Check(sw.level == want, "level one above the highest child");
    Check(sw.children.empty() || sw.nodes.empty(), "switch with both children and nodes");
    if (sw.parent >= 0) Check(Contains(t->switches.at(sw.parent).children, s), "parent's child");
  }
  for (size_t i = 1; i < t->block_sizes.size(); ++i) {
    Check(t->block_sizes[i] > t->block_sizes[i - 1], "block sizes ascend");
  }
  Check(t->kind != Kind::kBlock || !t->block_sizes.empty(), "block sizes set");
  return 0;
}
