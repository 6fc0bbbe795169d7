#include "conf/gpu_topo_matrix.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "conf/diagnostic.h"
#include "conf/include_resolver.h"
#include "core/cpu_list.h"
#include "conf/internal/union_find.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

using core::EqualsIgnoreCase;
using core::StrCat;

constexpr size_t kMaxErrors = 50;
constexpr int64_t kMaxNumaNodes = 1024;
constexpr int64_t kMaxNvlinks = 1000;
constexpr std::string_view kEntries = "X, SYS, NODE, PHB, PXB, PIX or NV<n>";

enum class Link : uint8_t { kSelf, kSys, kNode, kPhb, kPxb, kPix, kNvlink };

struct Entry {
  Link link = Link::kSys;
  int32_t nvlinks = 0;  // kNvlink only
  friend bool operator==(const Entry&, const Entry&) = default;
};

std::optional<Entry> ParseEntry(std::string_view s) {
  if (s == "X") return Entry{Link::kSelf};
  if (EqualsIgnoreCase(s, "SYS") || EqualsIgnoreCase(s, "SOC")) return Entry{Link::kSys};
  if (EqualsIgnoreCase(s, "NODE")) return Entry{Link::kNode};
  if (EqualsIgnoreCase(s, "PHB")) return Entry{Link::kPhb};
  if (EqualsIgnoreCase(s, "PXB")) return Entry{Link::kPxb};
  if (EqualsIgnoreCase(s, "PIX")) return Entry{Link::kPix};
  if (s.size() > 2 && EqualsIgnoreCase(s.substr(0, 2), "NV")) {
    std::optional<int64_t> n = core::ParseInt(s.substr(2));
    if (n && *n >= 1 && *n <= kMaxNvlinks) return Entry{Link::kNvlink, static_cast<int32_t>(*n)};
  }
  return std::nullopt;
}

std::string EntryName(const Entry& e) {
  switch (e.link) {
    case Link::kSelf:
      return "X";
    case Link::kSys:
      return "SYS";
    case Link::kNode:
      return "NODE";
    case Link::kPhb:
      return "PHB";
    case Link::kPxb:
      return "PXB";
    case Link::kPix:
      return "PIX";
    case Link::kNvlink:
      return StrCat("NV", e.nvlinks);
  }
  return "?";
}

bool OnSwitch(const Entry& e) { return e.link == Link::kPix || e.link == Link::kPxb; }

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Drops terminal escape sequences (ESC [ ... final letter), such as the underline some
// nvidia-smi versions print around the header.
std::string StripEscapes(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      out.push_back(line[i]);
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '[') {
      size_t j = i + 2;
      while (j < line.size() && !std::isalpha(static_cast<unsigned char>(line[j]))) ++j;
      i = j;  // the final letter (or the end) is skipped by the loop
    }
  }
  return out;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !IsSpace(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// "GPU<n>" -> n.
std::optional<int64_t> GpuNumber(std::string_view s) {
  if (s.size() < 4 || !EqualsIgnoreCase(s.substr(0, 3), "GPU")) return std::nullopt;
  return core::ParseInt(s.substr(3));
}

enum class Affinity { kCpu, kNuma, kGpuNuma };

std::string_view AffinityName(Affinity a) {
  switch (a) {
    case Affinity::kCpu:
      return "CPU Affinity";
    case Affinity::kNuma:
      return "NUMA Affinity";
    case Affinity::kGpuNuma:
      return "GPU NUMA ID";
  }
  return "?";
}

struct Row {
  int line = 0;
  std::vector<Entry> entries;                // by device column
  std::optional<std::vector<int32_t>> cpus;  // nullopt: N/A or no column
  std::optional<int32_t> numa;               // nullopt: N/A or no column
};

class MatrixParser {
 public:
  explicit MatrixParser(std::string_view source) : source_(source) {}

  StatusOr<model::NodeTopology> Parse(std::string_view text, std::string_view gpu_type);

 private:
  void Error(int line, std::string message) {
    if (errors_.size() >= kMaxErrors) return;
    errors_.push_back({Diagnostic::Severity::kError, {source_, line}, "", std::move(message)});
  }
  void Directive(int line, std::string_view comment);
  void Header(int line, const std::vector<std::string_view>& fields);
  void AddRow(int line, const std::vector<std::string_view>& fields);
  void CheckComplete();
  model::NodeTopology Derive(std::string_view gpu_type);
  std::string ColumnSummary() const;

  std::string source_;
  std::vector<Diagnostic> errors_;
  int header_line_ = 0;
  std::vector<std::string> devices_;  // device columns; the first num_gpus_ are GPUs
  int num_gpus_ = 0;
  std::vector<Affinity> affinity_;
  std::vector<std::optional<Row>> rows_;  // by device
  std::optional<int32_t> sockets_;
  bool spans_nodes_ = false;
};

void MatrixParser::Directive(int line, std::string_view comment) {
  std::string_view d = core::Trim(comment.substr(1));
  if (EqualsIgnoreCase(d, "nvlink-spans-nodes")) {
    spans_nodes_ = true;
    return;
  }
  constexpr std::string_view kSockets = "sockets:";
  if (d.size() >= kSockets.size() && EqualsIgnoreCase(d.substr(0, kSockets.size()), kSockets)) {
    std::string_view v = core::Trim(d.substr(kSockets.size()));
    std::optional<int64_t> n = core::ParseInt(v);
    if (!n || *n < 1 || *n > kMaxNumaNodes) {
      Error(line, StrCat("invalid '# sockets: ", v, "': expected a whole number from 1 to ",
                         kMaxNumaNodes));
      return;
    }
    sockets_ = static_cast<int32_t>(*n);
  }
}

std::string MatrixParser::ColumnSummary() const {
  return StrCat(devices_.size(), " device columns (", num_gpus_, " GPUs, ",
                devices_.size() - num_gpus_, " NICs) and ", affinity_.size(), " affinity columns");
}

void MatrixParser::Header(int line, const std::vector<std::string_view>& f) {
  header_line_ = line;
  auto word = [&](size_t k, std::string_view w) {
    return k < f.size() && EqualsIgnoreCase(f[k], w);
  };
  for (size_t k = 0; k < f.size();) {
    std::optional<int64_t> gpu = GpuNumber(f[k]);
    if (word(k, "CPU") && word(k + 1, "Affinity")) {
      affinity_.push_back(Affinity::kCpu);
      k += 2;
    } else if (word(k, "NUMA") && word(k + 1, "Affinity")) {
      affinity_.push_back(Affinity::kNuma);
      k += 2;
    } else if (word(k, "GPU") && word(k + 1, "NUMA") && word(k + 2, "ID")) {
      affinity_.push_back(Affinity::kGpuNuma);
      k += 3;
    } else if (!affinity_.empty()) {
      Error(line, StrCat("unexpected header column '", f[k],
                         "' after the affinity columns; expected CPU Affinity, NUMA Affinity "
                         "or GPU NUMA ID"));
      ++k;
    } else if (gpu) {
      if (static_cast<int>(devices_.size()) != num_gpus_) {
        Error(line, StrCat("header column ", f[k],
                           " comes after a NIC column; list the GPU columns first"));
      } else if (*gpu != num_gpus_) {
        Error(line, StrCat("header column ", f[k], " is out of order: expected GPU", num_gpus_,
                           " (GPUs are numbered from 0 without gaps)"));
      }
      devices_.push_back(std::string(f[k]));
      ++num_gpus_;
      ++k;
    } else {
      if (std::find(devices_.begin(), devices_.end(), f[k]) != devices_.end()) {
        Error(line, StrCat("header column ", f[k], " appears twice"));
      }
      devices_.push_back(std::string(f[k]));
      ++k;
    }
  }
  for (size_t i = 0; i < affinity_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (affinity_[i] == affinity_[j]) {
        Error(line, StrCat("header column ", AffinityName(affinity_[i]), " appears twice"));
      }
    }
  }
  if (num_gpus_ > model::kMaxGpusPerNode) {
    Error(line, StrCat("the header names ", num_gpus_, " GPUs; a node may have at most ",
                       model::kMaxGpusPerNode));
  }
  rows_.assign(devices_.size(), std::nullopt);
}

void MatrixParser::AddRow(int line, const std::vector<std::string_view>& f) {
  std::string_view label = f[0];
  size_t dev = 0;
  while (dev < devices_.size() && !EqualsIgnoreCase(devices_[dev], label)) ++dev;
  if (dev == devices_.size()) {
    Error(line, StrCat("row '", label, "' names no column of the header at line ", header_line_,
                       "; each row starts with a GPU or NIC name from the header"));
    return;
  }
  if (rows_[dev]) {
    Error(line,
          StrCat(devices_[dev], " has a second row; its first is at line ", rows_[dev]->line));
    return;
  }
  const bool is_gpu = static_cast<int>(dev) < num_gpus_;
  const size_t d = devices_.size();
  const size_t t = affinity_.size();
  const size_t values = f.size() - 1;
  if (values != d + t && (is_gpu || values != d)) {
    Error(line,
          StrCat("row ", devices_[dev], " has ", values, " values, but the header at line ",
                 header_line_, " has ", ColumnSummary(), ", so a ", is_gpu ? "GPU" : "NIC",
                 " row needs ", d + t, is_gpu ? "" : StrCat(" (or ", d, " without affinities)")));
    return;
  }
  Row row;
  row.line = line;
  bool ok = true;
  for (size_t c = 0; c < d; ++c) {
    std::string_view v = f[1 + c];
    std::optional<Entry> e = ParseEntry(v);
    if (!e) {
      Error(line, StrCat("row ", devices_[dev], ", column ", devices_[c], ": unknown entry '", v,
                         "'; expected ", kEntries));
      ok = false;
      continue;
    }
    if (c == dev && e->link != Link::kSelf) {
      Error(line, StrCat("row ", devices_[dev], " must have X in its own column, not '", v, "'"));
      ok = false;
    } else if (c != dev && e->link == Link::kSelf) {
      Error(line,
            StrCat("row ", devices_[dev], ", column ", devices_[c],
                   ": X marks a device's own column; between two devices write one of ", kEntries));
      ok = false;
    } else if (e->link == Link::kNvlink && (!is_gpu || static_cast<int>(c) >= num_gpus_)) {
      Error(line, StrCat("row ", devices_[dev], ", column ", devices_[c], ": ", v,
                         " joins a NIC; NVLink entries are only for GPU pairs"));
      ok = false;
    }
    row.entries.push_back(*e);
  }
  for (size_t j = 0; j < t && values == d + t; ++j) {
    std::string_view v = f[1 + d + j];
    if (EqualsIgnoreCase(v, "N/A")) continue;
    if (affinity_[j] == Affinity::kCpu) {
      StatusOr<std::vector<int32_t>> cpus = core::ParseCpuList(v);
      if (!cpus.ok()) {
        Error(line, StrCat("row ", devices_[dev], ": invalid CPU Affinity '", v,
                           "': ", std::string(cpus.status().message()),
                           "; expected a CPU list such as 0-63,128-191, or N/A"));
        ok = false;
      } else {
        row.cpus = std::move(*cpus);
      }
    } else {
      std::optional<int64_t> n = core::ParseInt(v);
      if (!n || *n < 0 || *n >= kMaxNumaNodes) {
        Error(line,
              StrCat("row ", devices_[dev], ": invalid ", AffinityName(affinity_[j]), " '", v,
                     "': expected a NUMA node number from 0 to ", kMaxNumaNodes - 1, ", or N/A"));
        ok = false;
      } else if (affinity_[j] == Affinity::kNuma) {
        row.numa = static_cast<int32_t>(*n);
      }
    }
  }
  if (ok) rows_[dev] = std::move(row);
}

void MatrixParser::CheckComplete() {
  for (int g = 0; g < num_gpus_; ++g) {
    if (!rows_[g]) {
      Error(header_line_, StrCat(devices_[g],
                                 " has a column in this header but no valid row; every GPU needs "
                                 "one"));
    }
  }
  if (!errors_.empty()) return;
  for (size_t a = 0; a < devices_.size(); ++a) {
    for (size_t b = a + 1; b < devices_.size(); ++b) {
      if (!rows_[a] || !rows_[b]) continue;
      const Entry& ab = rows_[a]->entries[b];
      const Entry& ba = rows_[b]->entries[a];
      if (ab == ba) continue;
      Error(rows_[b]->line,
            StrCat("the matrix is not symmetric: ", devices_[b], " to ", devices_[a], " is ",
                   EntryName(ba), " but ", devices_[a], " to ", devices_[b], " (line ",
                   rows_[a]->line, ") is ", EntryName(ab), "; both must say the same"));
    }
  }
  // NUMA nodes: all numbered, or none (then grouped by CPU affinity).
  int first_numbered = -1, first_na = -1;
  for (int g = 0; g < num_gpus_; ++g) {
    int& first = rows_[g]->numa ? first_numbered : first_na;
    if (first < 0) first = g;
  }
  if (first_numbered >= 0 && first_na >= 0) {
    Error(rows_[first_na]->line,
          StrCat("NUMA Affinity of ", devices_[first_na], " is N/A but that of ",
                 devices_[first_numbered], " (line ", rows_[first_numbered]->line,
                 ") is a number; give every GPU a NUMA node or none"));
  }
}

model::NodeTopology MatrixParser::Derive(std::string_view gpu_type) {
  const int n = num_gpus_;
  const int nics = static_cast<int>(devices_.size()) - n;
  internal::UnionFind domains(n), switches(n);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const Entry& e = rows_[a]->entries[b];
      if (e.link == Link::kNvlink) domains.Union(a, b);
      if (OnSwitch(e)) switches.Union(a, b);
    }
  }
  std::vector<int32_t> nic_of(n, -1);
  for (int k = 0; k < nics; ++k) {
    int first = -1;
    for (int g = 0; g < n; ++g) {
      if (!OnSwitch(rows_[g]->entries[n + k])) continue;
      if (first < 0) first = g;
      switches.Union(first, g);
    }
  }
  for (int g = 0; g < n; ++g) {
    for (Link want : {Link::kPix, Link::kPxb}) {
      for (int k = 0; k < nics && nic_of[g] < 0; ++k) {
        if (rows_[g]->entries[n + k].link == want) nic_of[g] = k;
      }
    }
  }

  // NUMA node of each GPU: the column, or groups of identical CPU affinity.
  std::vector<int32_t> numa(n, 0);
  if (n > 0 && rows_[0]->numa) {
    for (int g = 0; g < n; ++g) numa[g] = *rows_[g]->numa;
  } else {
    std::vector<std::optional<std::vector<int32_t>>> groups;
    for (int g = 0; g < n; ++g) {
      auto it = std::find(groups.begin(), groups.end(), rows_[g]->cpus);
      numa[g] = static_cast<int32_t>(it - groups.begin());
      if (it == groups.end()) groups.push_back(rows_[g]->cpus);
    }
  }
  int32_t num_numa = n == 0 ? 1 : *std::max_element(numa.begin(), numa.end()) + 1;

  model::NodeTopology t;
  t.name = source_;
  t.numa_cpus.assign(num_numa, {});
  std::map<int32_t, int> owner;  // CPU id -> GPU whose affinity named it first
  for (int g = 0; g < n; ++g) {
    if (!rows_[g]->cpus) continue;
    for (int32_t c : *rows_[g]->cpus) {
      auto [it, inserted] = owner.emplace(c, g);
      if (!inserted && numa[it->second] != numa[g]) {
        Error(rows_[g]->line,
              StrCat("CPU ", c, " is in the CPU Affinity of ", devices_[it->second], " (NUMA node ",
                     numa[it->second], ", line ", rows_[it->second]->line, ") and of ", devices_[g],
                     " (NUMA node ", numa[g], "); a CPU belongs to one NUMA node"));
        break;
      }
    }
  }
  for (const auto& [cpu, g] : owner) t.numa_cpus[numa[g]].push_back(cpu);  // map: ascending
  t.sockets = sockets_ ? *sockets_ : num_numa;
  t.nvlink_spans_nodes = spans_nodes_;
  std::vector<int32_t> domain = domains.Groups();
  std::vector<int32_t> pcie = switches.Groups();
  for (int g = 0; g < n; ++g) {
    t.gpus.push_back(model::Gpu{g, std::string(gpu_type), StrCat("/dev/nvidia", g), domain[g],
                                pcie[g], numa[g], nic_of[g]});
  }
  return t;
}

StatusOr<model::NodeTopology> MatrixParser::Parse(std::string_view text,
                                                  std::string_view gpu_type) {
  bool in_legend = false;
  int line_no = 0;
  for (std::string_view physical : core::Split(text, '\n')) {
    ++line_no;
    std::string clean = StripEscapes(physical);
    std::string_view line = core::Trim(clean);
    if (line.empty()) continue;
    if (line.front() == '#') {
      Directive(line_no, line);
      continue;
    }
    if (in_legend) continue;
    std::vector<std::string_view> fields = Fields(line);
    if (header_line_ == 0) {
      if (!GpuNumber(fields[0])) {
        Error(line_no, StrCat("expected the header row of `nvidia-smi topo -m` (GPU0 GPU1 ... CPU "
                              "Affinity NUMA Affinity) but found '",
                              line.substr(0, std::min<size_t>(line.size(), 40)),
                              "'; comments start with #"));
        break;
      }
      Header(line_no, fields);
      continue;
    }
    if (EqualsIgnoreCase(fields[0], "Legend:") || EqualsIgnoreCase(fields[0], "Legend")) {
      in_legend = true;
      continue;
    }
    AddRow(line_no, fields);
  }
  if (header_line_ == 0 && errors_.empty()) {
    Error(0,
          "no topology matrix found: expected the table `nvidia-smi topo -m` prints, "
          "starting with its header row GPU0 GPU1 ...");
  }
  if (errors_.empty()) CheckComplete();
  model::NodeTopology t;
  if (errors_.empty()) t = Derive(gpu_type);
  if (!errors_.empty()) {
    std::string message = JoinDiagnostics(errors_);
    if (errors_.size() >= kMaxErrors) message += "\n(further errors not shown)";
    return absl::InvalidArgumentError(message);
  }
  return t;
}

}  // namespace

StatusOr<model::NodeTopology> ParseTopoMatrix(std::string_view text, std::string_view source_name,
                                              std::string_view gpu_type) {
  return MatrixParser(source_name).Parse(text, gpu_type);
}

StatusOr<model::NodeTopology> LoadTopoMatrix(const std::string& path, std::string_view gpu_type) {
  FileIncludeResolver files;
  StatusOr<std::vector<IncludedFile>> read = files.Resolve(path);
  if (!read.ok()) {
    return absl::Status(read.status().code(), StrCat("cannot read topology matrix '", path,
                                                     "': ", std::string(read.status().message())));
  }
  if (read->size() != 1) {
    return absl::InvalidArgumentError(
        StrCat("topology matrix path '", path, "' must name exactly one file"));
  }
  return ParseTopoMatrix(read->front().text, path, gpu_type);
}

}  // namespace loom::conf
