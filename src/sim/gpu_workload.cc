#include "sim/gpu_workload.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>
#include <utility>

#include "core/strings.h"
#include "model/gpu_topology.h"
#include "model/constraint.h"

namespace loom::sim {
namespace {

namespace fs = std::filesystem;
using core::StrCat;

constexpr std::string_view kNodeList = "openb_node_list_gpu_node.csv";
constexpr std::string_view kDefaultPodList = "openb_pod_list_default.csv";

// 3078 -> "3,078".
std::string Grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

// "1 task", "3,078 tasks".
std::string Count(int64_t n, std::string_view noun) {
  return StrCat(Grouped(n), " ", noun, n == 1 ? "" : "s");
}

// One CSV file of the trace: its header and data rows, split at commas (the trace quotes
// nothing). Blank lines are skipped; line numbers count every line of the file.
struct CsvRow {
  int64_t line = 0;
  std::vector<std::string> fields;
};
struct Csv {
  std::string name;  // the path, for messages
  std::vector<std::string> header;
  std::vector<CsvRow> rows;

  int Column(std::string_view col) const {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == col) return static_cast<int>(i);
    }
    return -1;
  }
  std::string Where(const CsvRow& row) const { return StrCat(name, ":", row.line); }
};

StatusOr<Csv> ReadCsv(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot open ", path.string()));
  std::stringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return absl::DataLossError(StrCat("cannot read ", path.string()));
  const std::string text = buf.str();

  Csv csv;
  csv.name = path.string();
  int64_t line_no = 0;
  for (std::string_view line : core::Split(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (core::Trim(line).empty()) continue;
    std::vector<std::string> fields;
    for (std::string_view f : core::Split(line, ',')) fields.emplace_back(core::Trim(f));
    if (csv.header.empty()) {
      csv.header = std::move(fields);
      continue;
    }
    if (fields.size() != csv.header.size()) {
      return absl::InvalidArgumentError(StrCat(csv.name, ":", line_no, ": ", fields.size(),
                                               " fields, but the header has ", csv.header.size()));
    }
    csv.rows.push_back(CsvRow{line_no, std::move(fields)});
  }
  if (csv.header.empty()) return absl::InvalidArgumentError(StrCat(csv.name, ": empty file"));
  return csv;
}

// The indices of `cols` in the header, or an error naming the first that is missing.
StatusOr<std::vector<int>> Columns(const Csv& csv, std::initializer_list<std::string_view> cols) {
  std::vector<int> idx;
  for (std::string_view c : cols) {
    int i = csv.Column(c);
    if (i < 0) {
      return absl::InvalidArgumentError(StrCat(csv.name, ": no column '", c,
                                               "' in the header; expected the columns of the ",
                                               "Alibaba openb trace"));
    }
    idx.push_back(i);
  }
  return idx;
}

// Field `col` of `row` as a non-negative whole number.
StatusOr<int64_t> Whole(const Csv& csv, const CsvRow& row, int col) {
  const std::string& v = row.fields[col];
  std::optional<int64_t> n = core::ParseInt(v);
  if (!n || *n < 0) {
    return absl::InvalidArgumentError(StrCat(csv.Where(row), ": ", csv.header[col], " '", v,
                                             "' is not a non-negative whole number"));
  }
  return *n;
}

// The inside of a node of the trace, by GPU model and count (docs/sim.md, "GPU traces").
// V100 nodes of 4 or 8 GPUs are SXM2 boards: NVLink joins GPUs in groups of four (the two
// quads of a DGX-1's hybrid cube-mesh), two GPUs share a PCIe switch. Every other model is
// taken for PCIe cards without NVLink. Nodes of 32 CPUs or more have two NUMA nodes.
model::NodeTopology TraceTopology(std::string_view gpu_model, int32_t gpus, int32_t cpus) {
  const std::string type = core::ToLower(gpu_model);
  const int32_t numa = cpus >= 32 ? 2 : 1;
  model::NodeTopology t = model::PlainTopology(gpus, type, cpus, numa);
  if (type.starts_with("v100") && (gpus == 4 || gpus == 8)) {
    t.name = StrCat("v100-sxm2-", gpus, "gpu");
    for (model::Gpu& g : t.gpus) {
      g.domain = g.index / 4;
      g.pcie_switch = g.index / 2;
    }
  } else {
    t.name = StrCat(type, "-pcie-", gpus, "gpu");
  }
  return t;
}

struct NodeList {
  std::vector<model::Node> nodes;
  int64_t gpus = 0;
};

StatusOr<NodeList> ReadNodes(const fs::path& path) {
  ASSIGN_OR_RETURN(Csv csv, ReadCsv(path));
  ASSIGN_OR_RETURN(std::vector<int> col,
                   Columns(csv, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}));
  NodeList out;
  std::map<std::string, int64_t> line_of;
  std::map<std::tuple<std::string, int32_t, int32_t>, std::shared_ptr<const model::NodeTopology>>
      topologies;
  for (const CsvRow& row : csv.rows) {
    const std::string& sn = row.fields[col[0]];
    if (sn.empty()) return absl::InvalidArgumentError(StrCat(csv.Where(row), ": empty sn"));
    auto [it, fresh] = line_of.emplace(sn, row.line);
    if (!fresh) {
      return absl::InvalidArgumentError(StrCat(
          csv.Where(row), ": node '", sn, "' is listed twice (first on line ", it->second, ")"));
    }
    ASSIGN_OR_RETURN(int64_t cpu_milli, Whole(csv, row, col[1]));
    ASSIGN_OR_RETURN(int64_t mem, Whole(csv, row, col[2]));
    ASSIGN_OR_RETURN(int64_t gpus, Whole(csv, row, col[3]));
    const std::string& gpu_model = row.fields[col[4]];
    if (gpus > model::kMaxGpusPerNode) {
      return absl::InvalidArgumentError(
          StrCat(csv.Where(row), ": ", gpus, " GPUs; a node has at most ", model::kMaxGpusPerNode));
    }
    if (gpus > 0 && gpu_model.empty()) {
      return absl::InvalidArgumentError(
          StrCat(csv.Where(row), ": node '", sn, "' has GPUs but no model"));
    }
    if (cpu_milli / 1000 > INT32_MAX) {
      return absl::InvalidArgumentError(StrCat(csv.Where(row), ": cpu_milli out of range"));
    }
    model::Node n;
    n.name = sn;
    n.capacity =
        model::Resources{static_cast<int32_t>(cpu_milli / 1000), static_cast<int32_t>(gpus), mem};
    if (!gpu_model.empty()) n.features.push_back(gpu_model);
    if (gpus > 0) {
      n.gpu_type = core::ToLower(gpu_model);
      auto key = std::make_tuple(gpu_model, n.capacity.gpus, n.capacity.cpus);
      auto& topo = topologies[key];
      if (!topo) {
        topo = std::make_shared<const model::NodeTopology>(
            TraceTopology(gpu_model, n.capacity.gpus, n.capacity.cpus));
      }
      n.topology = topo;
      n.sockets = topo->sockets;
      n.cores_per_socket = std::max(1, n.capacity.cpus / std::max(1, topo->sockets));
    } else {
      n.cores_per_socket = std::max(1, n.capacity.cpus);
    }
    out.gpus += gpus;
    out.nodes.push_back(std::move(n));
  }
  if (out.nodes.empty()) {
    return absl::InvalidArgumentError(StrCat(csv.name, ": no nodes"));
  }
  return out;
}

// Nodes grouped by what a placement check looks at: features and capacity.
struct NodeKind {
  std::vector<std::string> features;
  model::Resources capacity;
};

std::vector<NodeKind> NodeKinds(const std::vector<model::Node>& nodes) {
  std::vector<NodeKind> kinds;
  for (const model::Node& n : nodes) {
    bool seen = std::any_of(kinds.begin(), kinds.end(), [&](const NodeKind& k) {
      return k.features == n.features && k.capacity == n.capacity;
    });
    if (!seen) kinds.push_back(NodeKind{n.features, n.capacity});
  }
  return kinds;
}

}  // namespace

StatusOr<GpuWorkload> ReadAlibabaGpuTrace(const std::string& path) {
  fs::path pods_path(path);
  std::error_code ec;
  if (fs::is_directory(pods_path, ec)) {
    pods_path /= kDefaultPodList;
  } else if (!fs::exists(pods_path, ec)) {
    return absl::NotFoundError(StrCat(path, ": no such file or directory"));
  }
  pods_path = pods_path.lexically_normal();
  fs::path dir = pods_path.parent_path();
  if (dir.empty()) dir = ".";
  const fs::path node_path = dir / kNodeList;
  if (!fs::exists(node_path, ec)) {
    return absl::NotFoundError(StrCat(node_path.string(), " not found: the node list must be ",
                                      "next to the pod list ", pods_path.string()));
  }

  ASSIGN_OR_RETURN(NodeList nodes, ReadNodes(node_path));
  ASSIGN_OR_RETURN(Csv csv, ReadCsv(pods_path));
  const bool has_times = csv.Column("creation_time") >= 0 || csv.Column("scheduled_time") >= 0 ||
                         csv.Column("deletion_time") >= 0;
  if (!has_times) {
    return absl::InvalidArgumentError(StrCat(
        csv.name, " has no times (creation_time, scheduled_time, deletion_time), so it ",
        "cannot be replayed; use openb_pod_list_default.csv or openb_pod_list_gpuspec33.csv"));
  }
  ASSIGN_OR_RETURN(std::vector<int> col,
                   Columns(csv, {"cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time",
                                 "scheduled_time", "deletion_time"}));
  const int spec_col = csv.Column("gpu_spec");

  GpuWorkload w;
  const std::string dir_name = dir.filename().string();
  w.name =
      StrCat(dir_name.empty() || dir_name == "." ? "" : dir_name + "/", pods_path.stem().string());

  const std::vector<NodeKind> kinds = NodeKinds(nodes.nodes);
  int64_t unscheduled = 0, no_run = 0, fractional = 0, rounded_cpus = 0, unhostable = 0;
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    const CsvRow& row = csv.rows[r];
    ASSIGN_OR_RETURN(int64_t cpu_milli, Whole(csv, row, col[0]));
    ASSIGN_OR_RETURN(int64_t mem, Whole(csv, row, col[1]));
    ASSIGN_OR_RETURN(int64_t num_gpu, Whole(csv, row, col[2]));
    ASSIGN_OR_RETURN(int64_t gpu_milli, Whole(csv, row, col[3]));
    std::string constraint = spec_col >= 0 ? row.fields[spec_col] : "";
    model::FeatureExpr expr;
    if (!constraint.empty()) {
      StatusOr<model::FeatureExpr> e = model::FeatureExpr::Parse(constraint);
      if (!e.ok()) {
        return absl::InvalidArgumentError(StrCat(csv.Where(row), ": gpu_spec '", constraint,
                                                 "': ", std::string(e.status().message())));
      }
      expr = *std::move(e);
    }
    const std::string& created = row.fields[col[4]];
    const std::string& scheduled = row.fields[col[5]];
    const std::string& deleted = row.fields[col[6]];
    if (created.empty() || scheduled.empty() || deleted.empty()) {
      ++unscheduled;
      continue;
    }
    ASSIGN_OR_RETURN(int64_t creation_time, Whole(csv, row, col[4]));
    ASSIGN_OR_RETURN(int64_t scheduled_time, Whole(csv, row, col[5]));
    ASSIGN_OR_RETURN(int64_t deletion_time, Whole(csv, row, col[6]));
    const int64_t run = deletion_time - scheduled_time;
    if (run <= 0) {
      ++no_run;
      continue;
    }

    const int64_t cpus = std::max<int64_t>(1, (cpu_milli + 999) / 1000);
    const model::Resources need{static_cast<int32_t>(std::min<int64_t>(cpus, INT32_MAX)),
                                static_cast<int32_t>(std::min<int64_t>(num_gpu, INT32_MAX)), mem};
    const bool hostable = std::any_of(kinds.begin(), kinds.end(), [&](const NodeKind& k) {
      return k.capacity.Covers(need) && expr.Matches(k.features);
    });
    if (!hostable) {
      ++unhostable;
      continue;
    }
    if (cpus * 1000 != cpu_milli) ++rounded_cpus;
    if (num_gpu > 0 && gpu_milli < 1000) ++fractional;

    SimJob job;
    job.id = r + 1;
    job.submit = creation_time;
    job.run = run;
    job.estimate = run;
    job.constraint = std::move(constraint);
    job.shape.min_nodes = job.shape.max_nodes = 1;
    job.shape.ntasks = 1;
    job.shape.cpus_per_task = need.cpus;
    job.shape.mem_per_node_mb = mem;
    job.shape.gpus_per_node = need.gpus;
    w.jobs.push_back(std::move(job));
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const SimJob& a, const SimJob& b) { return a.submit < b.submit; });

  w.cluster.nodes = std::move(nodes.nodes);
  model::Partition part;
  part.name = "gpu";
  part.is_default = true;
  for (size_t i = 0; i < w.cluster.nodes.size(); ++i) {
    part.nodes.push_back(static_cast<int32_t>(i));
  }
  w.cluster.partitions.push_back(std::move(part));

  w.notes.push_back(StrCat(Count(static_cast<int64_t>(w.cluster.nodes.size()), "node"), " (",
                           Count(nodes.gpus, "GPU"), ") from ", kNodeList,
                           "; tasks without GPUs run on their CPUs"));
  w.notes.push_back(StrCat(Grouped(static_cast<int64_t>(w.jobs.size())), " of ",
                           Count(static_cast<int64_t>(csv.rows.size()), "task"), " replayed"));
  if (unscheduled > 0) {
    w.notes.push_back(
        StrCat(Count(unscheduled, "task"), " never scheduled (no scheduled_time) skipped"));
  }
  if (no_run > 0) {
    w.notes.push_back(
        StrCat(Count(no_run, "task"), " deleted no later than scheduled (no run time) skipped"));
  }
  if (unhostable > 0) {
    w.notes.push_back(StrCat(Count(unhostable, "task"),
                             " that no node could ever host skipped (more CPUs, memory or GPUs "
                             "than any node of an allowed model has)"));
  }
  if (fractional > 0) {
    w.notes.push_back(
        StrCat(Count(fractional, "fractional-GPU task"), " given one whole GPU each"));
  }
  if (rounded_cpus > 0) {
    w.notes.push_back(
        StrCat("CPU requests of ", Count(rounded_cpus, "task"), " rounded up to whole CPUs"));
  }
  w.notes.push_back("the trace has no time limits: each job's estimate is its run time");
  return w;
}

}  // namespace loom::sim
