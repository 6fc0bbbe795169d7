#include "conf/gres_conf.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "conf/internal/conf_file.h"
#include "core/cpu_list.h"
#include "conf/internal/union_find.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

using core::EqualsIgnoreCase;
using core::StrCat;
using internal::Diagnostics;

std::string Nodes(std::vector<std::string> names) {
  return core::CompressHostlist(std::move(names));
}

}  // namespace

GresCluster GresClusterOf(const ClusterConfig& config) {
  GresCluster c;
  c.gres_types = config.gres_types;
  for (const NodeConfig& n : config.nodes) {
    c.nodes.push_back({n.name, n.gres, n.cpus, n.sockets});
  }
  return c;
}

namespace {

// A message about one node of a kind; nodes with the same message are reported together.
struct Issue {
  Diagnostic::Severity severity = Diagnostic::Severity::kError;
  SourceLocation at;
  std::string key;
  std::string message;  // follows "node <name>: "
};

struct NodeResult {
  std::shared_ptr<const model::NodeTopology> topology;
  std::vector<Issue> issues;
};

// One GPU of a node as gres.conf lists it.
struct Device {
  const GresConfLine* line = nullptr;
  std::string file;
};

bool Intersect(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) return true;
    a[i] < b[j] ? ++i : ++j;
  }
  return false;
}

std::string Line(const GresConfLine* l) { return StrCat("line ", l->location.line); }

class TopologyBuilder {
 public:
  TopologyBuilder(const GresConf& conf, const GresCluster& cluster,
                  std::vector<Diagnostic>* warnings)
      : conf_(conf), cluster_(cluster), diag_(warnings) {}

  StatusOr<std::vector<std::shared_ptr<const model::NodeTopology>>> Build();

 private:
  // Checks of single lines against the cluster; true when the line may be used.
  bool CheckLine(const GresConfLine& line,
                 const std::unordered_map<std::string, size_t>& node_index);
  NodeResult Evaluate(const GresNode& node, const std::vector<const GresConfLine*>& lines,
                      GresAutoDetect autodetect, const SourceLocation& autodetect_at);
  std::optional<model::NodeTopology> FromDevices(const GresNode& node,
                                                 const std::vector<Device>& gpus,
                                                 const std::string& single_type,
                                                 std::vector<Issue>* issues);
  std::shared_ptr<const model::NodeTopology> Intern(model::NodeTopology t);
  void Report(const Issue& issue, const std::string& node);
  void Flush();

  const GresConf& conf_;
  const GresCluster& cluster_;
  Diagnostics diag_;
  std::vector<std::shared_ptr<const model::NodeTopology>> distinct_;
  struct Aggregate {
    Issue issue;
    std::vector<std::string> nodes;
  };
  std::vector<Aggregate> aggregates_;
  std::map<std::tuple<int, std::string, std::string>, size_t> aggregate_index_;
};

std::shared_ptr<const model::NodeTopology> TopologyBuilder::Intern(model::NodeTopology t) {
  for (const auto& d : distinct_) {
    if (*d == t) return d;
  }
  distinct_.push_back(std::make_shared<const model::NodeTopology>(std::move(t)));
  return distinct_.back();
}

void TopologyBuilder::Report(const Issue& issue, const std::string& node) {
  auto key = std::make_tuple(static_cast<int>(issue.severity), issue.at.ToString(), issue.message);
  auto [it, inserted] = aggregate_index_.emplace(key, aggregates_.size());
  if (inserted) aggregates_.push_back({issue, {}});
  aggregates_[it->second].nodes.push_back(node);
}

void TopologyBuilder::Flush() {
  for (Aggregate& a : aggregates_) {
    std::string message = StrCat(a.nodes.size() == 1 ? "node " : "nodes ",
                                 core::CompressHostlist(a.nodes), ": ", a.issue.message);
    if (a.issue.severity == Diagnostic::Severity::kError) {
      diag_.Error(a.issue.at, a.issue.key, std::move(message));
    } else {
      diag_.Warn(a.issue.at, a.issue.key, std::move(message));
    }
  }
  aggregates_.clear();
}

bool TopologyBuilder::CheckLine(const GresConfLine& line,
                                const std::unordered_map<std::string, size_t>& node_index) {
  bool ok = true;
  std::vector<std::string> unknown;
  for (const std::string& n : line.nodes) {
    if (node_index.count(n) == 0) unknown.push_back(n);
  }
  if (const size_t u = unknown.size(); u > 0) {
    diag_.Error(line.location, "NodeName",
                StrCat("NodeName= names ", u, u == 1 ? " node" : " nodes",
                       " slurm.conf does not define: ", Nodes(std::move(unknown)), "; define ",
                       u == 1 ? "it" : "them", " in slurm.conf or remove ", u == 1 ? "it" : "them",
                       " here"));
    ok = false;
  }
  if (!line.name.empty() && !cluster_.gres_types.empty() &&
      std::find(cluster_.gres_types.begin(), cluster_.gres_types.end(), line.name) ==
          cluster_.gres_types.end()) {
    std::string types;
    for (const std::string& t : cluster_.gres_types) types += StrCat(types.empty() ? "" : ",", t);
    diag_.Error(line.location, "Name",
                StrCat("Name=", line.name, " is not in slurm.conf's GresTypes (", types,
                       "); add it there"));
    ok = false;
  }
  return ok;
}

std::optional<model::NodeTopology> TopologyBuilder::FromDevices(const GresNode& node,
                                                                const std::vector<Device>& gpus,
                                                                const std::string& single_type,
                                                                std::vector<Issue>* issues) {
  using Severity = Diagnostic::Severity;
  const size_t n = gpus.size();
  auto gpu_name = [&](size_t i) {
    return gpus[i].file.empty() ? StrCat("GPU ", i) : StrCat("GPU ", i, " (", gpus[i].file, ")");
  };

  // NVLink domains from Links=.
  internal::UnionFind domains(n);
  size_t with_links = 0;
  const GresConfLine* missing_links = nullptr;
  bool bad = false;
  for (size_t i = 0; i < n; ++i) {
    const GresConfLine* l = gpus[i].line;
    if (l->links.empty()) {
      if (!missing_links) missing_links = l;
      continue;
    }
    ++with_links;
    if (l->links.size() != n) {
      issues->push_back({Severity::kError, l->location, "Links",
                         StrCat("Links= has ", l->links.size(), " entries but the node has ", n,
                                " GPUs; give one entry per GPU, in the order gres.conf lists "
                                "them (-1 for this GPU itself)")});
      bad = true;
      continue;
    }
    for (size_t j = 0; j < n; ++j) {
      if (j == i && l->links[j] != -1) {
        issues->push_back({Severity::kError, l->location, "Links",
                           StrCat("entry ", j + 1, " of Links= is ", gpu_name(i),
                                  " itself and must be -1, not ", l->links[j])});
        bad = true;
      } else if (j != i && l->links[j] == -1) {
        issues->push_back(
            {Severity::kError, l->location, "Links",
             StrCat("entry ", j + 1,
                    " of Links= is -1, but -1 marks the GPU "
                    "itself and this line is ",
                    gpu_name(i), "; write the number of links to ", gpu_name(j), " (0 for none)")});
        bad = true;
      }
    }
  }
  if (bad) return std::nullopt;
  bool asymmetry_reported = false;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<int32_t>& li = gpus[i].line->links;
    if (li.empty()) continue;
    for (size_t j = 0; j < n; ++j) {
      if (j != i && li[j] > 0) domains.Union(i, j);
      const std::vector<int32_t>& lj = gpus[j].line->links;
      if (j <= i || lj.empty() || li[j] == lj[i] || asymmetry_reported) continue;
      asymmetry_reported = true;
      issues->push_back({Severity::kWarning, gpus[j].line->location, "Links",
                         StrCat("Links= of ", gpu_name(j), " gives ", lj[i], " links to ",
                                gpu_name(i), ", but that GPU's Links= (", Line(gpus[i].line),
                                ") gives ", li[j], "; Loom joins GPUs that either side links")});
    }
  }
  if (with_links > 0 && missing_links) {
    issues->push_back({Severity::kWarning, missing_links->location, "Links",
                       StrCat("Links= is given for ", with_links, " of the node's ", n,
                              " GPUs but not on this line; Loom joins only the GPUs that the "
                              "given Links= name")});
  }

  // NUMA nodes from Cores=: GPUs whose core sets overlap share one.
  internal::UnionFind numa_groups(n);
  size_t with_cores = 0;
  const GresConfLine* missing_cores = nullptr;
  bool overlap_reported = false;
  for (size_t i = 0; i < n; ++i) {
    const auto& ci = gpus[i].line->cores;
    if (!ci) {
      if (!missing_cores) missing_cores = gpus[i].line;
      for (size_t j = 0; j < i; ++j) {
        if (!gpus[j].line->cores) numa_groups.Union(i, j);
      }
      continue;
    }
    ++with_cores;
    for (size_t j = 0; j < i; ++j) {
      const auto& cj = gpus[j].line->cores;
      if (!cj || !Intersect(*ci, *cj)) continue;
      numa_groups.Union(i, j);
      if (*ci == *cj || overlap_reported) continue;
      overlap_reported = true;
      issues->push_back({Severity::kWarning, gpus[i].line->location, "Cores",
                         StrCat("Cores=", core::FormatCpuList(*ci), " of ", gpu_name(i),
                                " overlaps Cores=", core::FormatCpuList(*cj), " of ",
                                gpu_name(j), " (", Line(gpus[j].line),
                                ") without being equal; Loom puts both GPUs in one NUMA node "
                                "with the cores of both")});
    }
  }
  std::vector<int32_t> numa = numa_groups.Groups();
  const int32_t num_numa = n == 0 ? 1 : *std::max_element(numa.begin(), numa.end()) + 1;
  std::vector<std::set<int32_t>> cpus(num_numa);
  std::set<int32_t> listed;
  for (size_t i = 0; i < n; ++i) {
    if (const auto& c = gpus[i].line->cores) {
      cpus[numa[i]].insert(c->begin(), c->end());
      listed.insert(c->begin(), c->end());
    }
  }
  if (with_cores < n) {
    // GPUs without Cores= share the CPUs no Cores= lists.
    int32_t group = numa[0];
    for (size_t i = 0; i < n; ++i) {
      if (!gpus[i].line->cores) group = numa[i];
    }
    for (int32_t c = 0; c < node.cpus; ++c) {
      if (listed.count(c) == 0) cpus[group].insert(c);
    }
    if (with_cores > 0) {
      issues->push_back({Severity::kWarning, missing_cores->location, "Cores",
                         StrCat("Cores= is given for ", with_cores, " of the node's ", n,
                                " GPUs but not on this line; Loom puts the GPUs without Cores= "
                                "in one NUMA node with the CPUs no Cores= lists")});
    }
  }

  model::NodeTopology t;
  t.name = gpus.front().line->location.ToString();
  for (const std::set<int32_t>& c : cpus) t.numa_cpus.emplace_back(c.begin(), c.end());
  t.sockets = node.sockets > 0 ? node.sockets : num_numa;
  std::vector<int32_t> domain = domains.Groups();
  for (size_t i = 0; i < n; ++i) {
    const std::string& type = gpus[i].line->type.empty() ? single_type : gpus[i].line->type;
    t.gpus.push_back(model::Gpu{static_cast<int32_t>(i), type, gpus[i].file, domain[i],
                                static_cast<int32_t>(i), numa[i], -1});
  }
  return t;
}

NodeResult TopologyBuilder::Evaluate(const GresNode& node,
                                     const std::vector<const GresConfLine*>& lines,
                                     GresAutoDetect autodetect,
                                     const SourceLocation& autodetect_at) {
  using Severity = Diagnostic::Severity;
  NodeResult r;
  auto slurm_count = [&](std::string_view name, std::optional<std::string_view> type) {
    int64_t n = 0;
    for (const GresSpec& g : node.gres) {
      if (g.name == name && (!type || EqualsIgnoreCase(g.type, *type))) n += g.count;
    }
    return n;
  };

  // Counts per GRES name, and GPUs per type.
  std::vector<std::pair<std::string, std::pair<int64_t, const GresConfLine*>>> counts;
  std::vector<std::pair<std::string, std::pair<int64_t, const GresConfLine*>>> gpu_types;
  auto add = [](auto* list, const std::string& key, int64_t n, const GresConfLine* l) {
    for (auto& [k, v] : *list) {
      if (EqualsIgnoreCase(k, key)) {
        v.first = v.first > INT64_MAX - n ? INT64_MAX : v.first + n;
        return;
      }
    }
    list->push_back({key, {n, l}});
  };
  for (const GresConfLine* l : lines) {
    if (l->name.empty()) continue;
    add(&counts, l->name, l->Count(), l);
    if (l->name == "gpu" && !l->type.empty()) add(&gpu_types, l->type, l->Count(), l);
  }
  bool counts_ok = true;
  for (const auto& [name, v] : counts) {
    const int64_t want = slurm_count(name, std::nullopt);
    if (want == v.first) continue;
    counts_ok = false;
    r.issues.push_back({Severity::kError, v.second->location, "Count",
                        want == 0
                            ? StrCat("gres.conf lists ", v.first, " ", name,
                                     " but slurm.conf Gres= has none; add ", name, ":", v.first,
                                     " to its Gres= or remove the gres.conf lines")
                            : StrCat("gres.conf lists ", v.first, " ", name,
                                     " but slurm.conf Gres= says ", want, "; make them agree")});
  }
  bool slurm_typed = false;
  std::string single_type;
  int distinct_types = 0;
  for (const GresSpec& g : node.gres) {
    if (g.name != "gpu" || g.type.empty()) continue;
    slurm_typed = true;
    if (!EqualsIgnoreCase(single_type, g.type)) {
      single_type = g.type;
      ++distinct_types;
    }
  }
  if (distinct_types > 1) single_type.clear();
  if (slurm_typed && counts_ok) {
    for (const auto& [type, v] : gpu_types) {
      const int64_t want = slurm_count("gpu", type);
      if (want == v.first) continue;
      counts_ok = false;
      r.issues.push_back({Severity::kError, v.second->location, "Type",
                          StrCat("gres.conf lists ", v.first, " gpu of Type=", type,
                                 " but slurm.conf Gres= says ", want, "; make them agree")});
    }
  }

  const GresConfLine* topo = nullptr;
  for (const GresConfLine* l : lines) {
    if (l->topology.empty()) continue;
    if (topo) {
      r.issues.push_back(
          {Severity::kError, l->location, "Topology",
           StrCat("a second Topology=; the first is at ", Line(topo), "; give one per node")});
      return r;
    }
    topo = l;
  }

  // The node's GPUs, in the order gres.conf lists them.
  std::vector<Device> gpus;
  bool described = false;
  for (const GresConfLine* l : lines) {
    if (l->name != "gpu") continue;
    described = described || !l->files.empty() || l->cores || !l->links.empty();
    const int64_t count = std::min<int64_t>(l->Count(), model::kMaxGpusPerNode + 1);
    for (int64_t k = 0; k < count && gpus.size() <= model::kMaxGpusPerNode; ++k) {
      std::string file;
      if (!l->files.empty())
        file = l->files[l->multiple_files ? 0 : std::min<size_t>(k, l->files.size() - 1)];
      gpus.push_back({l, std::move(file)});
    }
  }
  if (gpus.size() > model::kMaxGpusPerNode) {
    r.issues.push_back({Severity::kError, gpus.front().line->location, "Count",
                        StrCat("gres.conf lists more than ", model::kMaxGpusPerNode,
                               " GPUs; a node may have at most ", model::kMaxGpusPerNode)});
    return r;
  }
  const int64_t slurm_gpus = slurm_count("gpu", std::nullopt);

  if (topo) {
    if (!topo->topology_matrix) return r;  // its errors were reported when it was read
    model::NodeTopology t = *topo->topology_matrix;
    if (t.num_gpus() != slurm_gpus) {
      r.issues.push_back({Severity::kError, topo->location, "Topology",
                          StrCat("the topology matrix ", topo->topology, " describes ",
                                 t.num_gpus(), " GPUs but slurm.conf Gres= gives the node ",
                                 slurm_gpus, "; name a matrix of this kind of node")});
      return r;
    }
    const bool use_devices = counts_ok && gpus.size() == t.gpus.size();
    for (size_t i = 0; i < t.gpus.size(); ++i) {
      t.gpus[i].type = single_type;
      if (!use_devices) continue;
      if (!gpus[i].line->type.empty()) t.gpus[i].type = gpus[i].line->type;
      if (!gpus[i].file.empty()) t.gpus[i].file = gpus[i].file;
    }
    r.topology = Intern(std::move(t));
    return r;
  }
  if (described && counts_ok && !gpus.empty()) {
    if (std::optional<model::NodeTopology> t = FromDevices(node, gpus, single_type, &r.issues)) {
      r.topology = Intern(std::move(*t));
    }
  }
  if (!r.topology && slurm_gpus > 0 && autodetect != GresAutoDetect::kNotSet &&
      autodetect != GresAutoDetect::kOff) {
    r.issues.push_back(
        {Severity::kWarning, autodetect_at, "AutoDetect",
         StrCat("with AutoDetect=", GresAutoDetectName(autodetect),
                " and no File=/Cores=/Links= or Topology= in gres.conf, placement knows nothing "
                "of how the GPUs are connected and treats them as interchangeable; save "
                "`nvidia-smi topo -m` from such a node and name it with Topology=")});
  }
  return r;
}

StatusOr<std::vector<std::shared_ptr<const model::NodeTopology>>> TopologyBuilder::Build() {
  std::unordered_map<std::string, size_t> node_index;
  for (size_t i = 0; i < cluster_.nodes.size(); ++i) node_index.emplace(cluster_.nodes[i].name, i);

  // The lines of each node, in file order.
  std::vector<std::vector<const GresConfLine*>> lines_of(cluster_.nodes.size());
  std::vector<GresAutoDetect> autodetect(cluster_.nodes.size(), conf_.autodetect);
  std::vector<const SourceLocation*> autodetect_at(cluster_.nodes.size(), &conf_.autodetect_at);
  for (const GresConfLine& line : conf_.lines) {
    if (line.node_expr.empty() && line.name.empty()) continue;  // global AutoDetect
    if (!CheckLine(line, node_index)) continue;
    if (!line.node_expr.empty()) {
      for (const std::string& n : line.nodes) {
        size_t i = node_index.at(n);
        if (!lines_of[i].empty() && lines_of[i].back() == &line) continue;  // named twice
        lines_of[i].push_back(&line);
        if (line.autodetect != GresAutoDetect::kNotSet) {
          autodetect[i] = line.autodetect;
          autodetect_at[i] = &line.location;
        }
      }
      continue;
    }
    bool any = false;
    for (size_t i = 0; i < cluster_.nodes.size(); ++i) {
      for (const GresSpec& g : cluster_.nodes[i].gres) {
        if (g.name != line.name) continue;
        lines_of[i].push_back(&line);
        any = true;
        break;
      }
    }
    if (!any) {
      diag_.Warn(line.location, "Name",
                 StrCat("this line has no NodeName= and no node of slurm.conf has ", line.name,
                        " in its Gres=, so it applies to no node"));
    }
  }

  // Nodes with the same lines and the same slurm.conf view get the same result.
  std::map<std::string, NodeResult> cache;
  std::vector<std::shared_ptr<const model::NodeTopology>> out(cluster_.nodes.size());
  for (size_t i = 0; i < cluster_.nodes.size(); ++i) {
    const GresNode& node = cluster_.nodes[i];
    std::string key;
    for (const GresConfLine* l : lines_of[i]) key += StrCat(l - conf_.lines.data(), ",");
    key += StrCat("|", node.cpus, "|", node.sockets, "|", static_cast<int>(autodetect[i]), "|",
                  autodetect_at[i]->line, "|");
    for (const GresSpec& g : node.gres) key += StrCat(g.name, ":", g.type, ":", g.count, ",");
    auto it = cache.find(key);
    if (it == cache.end()) {
      it = cache.emplace(key, Evaluate(node, lines_of[i], autodetect[i], *autodetect_at[i])).first;
    }
    out[i] = it->second.topology;
    for (const Issue& issue : it->second.issues) Report(issue, node.name);
  }
  Flush();
  RETURN_IF_ERROR(diag_.ToStatus());
  return out;
}

}  // namespace

StatusOr<std::vector<std::shared_ptr<const model::NodeTopology>>> BuildNodeTopologies(
    const GresConf& conf, const GresCluster& cluster, std::vector<Diagnostic>* warnings) {
  return TopologyBuilder(conf, cluster, warnings).Build();
}

}  // namespace loom::conf
