#include "conf/gres_conf.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "conf/gpu_topo_matrix.h"
#include "conf/internal/conf_file.h"
#include "core/cpu_list.h"
#include "conf/internal/key_table.h"
#include "conf/internal/nodes.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

using core::StrCat;
using internal::Diagnostics;
using internal::KeyValue;
using internal::Statement;

// Bounds far above real nodes, against hostlist typos.
constexpr int64_t kMaxNodeNames = 200000;
constexpr int64_t kMaxFilesPerLine = 1024;
constexpr size_t kMaxLinks = 1024;
constexpr int64_t kMaxLinkCount = 1000000;

constexpr std::string_view kKeys[] = {"NodeName",      "Name",  "Type",       "File",
                                      "MultipleFiles", "Cores", "CPUs",       "Links",
                                      "Count",         "Flags", "AutoDetect", "Topology"};
constexpr std::string_view kFlags[] = {"CountOnly",   "explicit",      "nvidia_gpu_env",
                                       "amd_gpu_env", "intel_gpu_env", "opencl_env",
                                       "no_gpu_env",  "one_sharing",   "all_sharing"};
constexpr std::string_view kAutoDetect[] = {"off", "nvml", "rsmi", "oneapi", "nrt", "nvidia"};

bool IsWord(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

// MPS and shards count shares of GPUs, not devices: their Count= need not match File=.
bool IsSharing(std::string_view name) { return name == "mps" || name == "shard"; }

class GresParser {
 public:
  GresParser(std::string file, const IncludeResolver& resolver, std::vector<Diagnostic>* warnings)
      : file_(std::move(file)), resolver_(resolver), diag_(warnings) {}

  StatusOr<GresConf> Parse(std::string_view text);

 private:
  void AddLine(const Statement& st);
  bool SetValue(const SourceLocation& at, std::string_view key, const KeyValue& kv,
                GresConfLine* line);
  std::optional<std::vector<std::string>> Files(const SourceLocation& at, const KeyValue& kv);
  void ReadTopology(GresConfLine* line);
  void WarnAutoDetect(const SourceLocation& at, GresAutoDetect a, std::string_view where);

  std::string file_;
  const IncludeResolver& resolver_;
  Diagnostics diag_;
  GresConf conf_;
  // Matrices read so far, by resolved name; null for one that failed.
  std::map<std::string, std::shared_ptr<const model::NodeTopology>> matrices_;
};

std::optional<std::vector<std::string>> GresParser::Files(const SourceLocation& at,
                                                          const KeyValue& kv) {
  StatusOr<std::vector<std::string>> files = internal::ExpandNames(kv.value, kMaxFilesPerLine);
  if (!files.ok() || files->empty()) {
    diag_.Error(at, kv.key,
                StrCat("invalid value '", kv.value, "' for ", kv.key, ": ",
                       files.ok() ? "no device named" : std::string(files.status().message()),
                       "; expected device paths such as /dev/nvidia[0-7]"));
    return std::nullopt;
  }
  for (const std::string& f : *files) {
    if (f.empty() || f.front() != '/') {
      diag_.Error(at, kv.key,
                  StrCat(kv.key, "= names '", f,
                         "', which is not an absolute path; device files are written in full, "
                         "e.g. /dev/nvidia0"));
      return std::nullopt;
    }
  }
  return std::move(*files);
}

// Sets one key of a line; false after reporting a bad value.
bool GresParser::SetValue(const SourceLocation& at, std::string_view key, const KeyValue& kv,
                          GresConfLine* line) {
  std::string_view v = core::Trim(kv.value);
  auto bad = [&](std::string_view expected) {
    diag_.Error(at, kv.key,
                StrCat("invalid value '", kv.value, "' for ", kv.key, ": expected ", expected));
    return false;
  };
  if (key == "NodeName") {
    StatusOr<std::vector<std::string>> nodes = internal::ExpandNames(v, kMaxNodeNames);
    if (!nodes.ok() || nodes->empty()) {
      return bad(
          StrCat("node names as a hostlist, such as gpu-[01-64]",
                 nodes.ok() ? "" : StrCat(" (", std::string(nodes.status().message()), ")")));
    }
    line->node_expr = std::string(v);
    line->nodes = std::move(*nodes);
  } else if (key == "Name") {
    if (!IsWord(v)) return bad("a GRES name such as gpu, mps or shard");
    line->name = core::ToLower(v);
  } else if (key == "Type") {
    if (!IsWord(v)) return bad("a type name such as a100 (letters, digits, _ - .)");
    line->type = std::string(v);
  } else if (key == "File" || key == "MultipleFiles") {
    std::optional<std::vector<std::string>> files = Files(at, kv);
    if (!files) return false;
    line->files = std::move(*files);
    line->multiple_files = key == "MultipleFiles";
  } else if (key == "Cores" || key == "CPUs") {
    StatusOr<std::vector<int32_t>> cores = core::ParseCpuList(v);
    if (!cores.ok()) {
      return bad(
          StrCat("core ids such as 0-31,64-95 (", std::string(cores.status().message()), ")"));
    }
    line->cores = std::move(*cores);
    if (key == "CPUs") {
      diag_.Warn(at, kv.key, "CPUs= is the old name of Cores=; Loom reads it as Cores=");
    }
  } else if (key == "Links") {
    std::vector<std::string_view> items = core::Split(v, ',');
    if (items.size() > kMaxLinks) return bad(StrCat("at most ", kMaxLinks, " entries"));
    for (std::string_view item : items) {
      std::optional<int64_t> n = core::ParseInt(core::Trim(item));
      if (!n || *n < -1 || *n > kMaxLinkCount) {
        return bad(
            "one entry per GPU of the node: -1 for the GPU itself, else its number of links to "
            "that GPU (0 for none), e.g. -1,12,12,12");
      }
      line->links.push_back(static_cast<int32_t>(*n));
    }
  } else if (key == "Count") {
    std::optional<int64_t> n = internal::ParseGresCount(core::Trim(v));
    if (!n) return bad("a whole number, optionally with a K, M, G, T or P suffix");
    line->count = *n;
  } else if (key == "Flags") {
    for (std::string_view item : core::Split(v, ',')) {
      item = core::Trim(item);
      std::optional<std::string_view> flag = internal::MatchKey(item, kFlags);
      if (!flag) {
        std::optional<std::string_view> near = internal::ClosestMatch(item, kFlags);
        std::string list;
        for (std::string_view f : kFlags) list += StrCat(list.empty() ? "" : ", ", f);
        diag_.Error(at, kv.key,
                    StrCat("unknown flag '", item, "' in Flags=",
                           near ? StrCat("; did you mean '", *near, "'?")
                                : StrCat("; expected any of ", list)));
        return false;
      }
      line->flags.push_back(std::string(*flag));
    }
  } else if (key == "AutoDetect") {
    std::optional<std::string_view> a = internal::MatchKey(v, kAutoDetect);
    if (!a) return bad("off, nvml, rsmi, oneapi, nrt or nvidia");
    line->autodetect = static_cast<GresAutoDetect>(
        1 +
        (std::find(std::begin(kAutoDetect), std::end(kAutoDetect), *a) - std::begin(kAutoDetect)));
  } else if (key == "Topology") {
    if (v.empty()) return bad("the path of a topology matrix file");
    line->topology = std::string(v);
  }
  return true;
}

void GresParser::WarnAutoDetect(const SourceLocation& at, GresAutoDetect a,
                                std::string_view where) {
  if (a == GresAutoDetect::kNotSet || a == GresAutoDetect::kOff) return;
  diag_.Warn(at, "AutoDetect",
             StrCat("AutoDetect=", GresAutoDetectName(a), where,
                    " is honoured only on the node, at run time: its daemon checks the GPUs it "
                    "finds against this file. The scheduler places jobs by the configuration, "
                    "so describe the GPUs here too (File=, Cores=, Links=, or Topology=)"));
}

void GresParser::ReadTopology(GresConfLine* line) {
  const SourceLocation& at = line->location;
  std::string path = internal::JoinPath(internal::DirName(file_), line->topology);
  if (IsGlobPattern(path)) {
    diag_.Error(at, "Topology",
                StrCat("Topology= names one file; '", line->topology, "' is a pattern"));
    return;
  }
  StatusOr<std::vector<IncludedFile>> read = resolver_.Resolve(path);
  if (!read.ok() || read->size() != 1) {
    diag_.Error(at, "Topology",
                StrCat("cannot read topology matrix '", line->topology, "' (looked for ", path,
                       read.ok() ? ")" : StrCat("): ", std::string(read.status().message())),
                       "; save `nvidia-smi topo -m` from such a node there"));
    return;
  }
  const IncludedFile& file = read->front();
  auto [it, inserted] = matrices_.emplace(file.name, nullptr);
  if (inserted) {
    conf_.source_files.push_back(file.name);
    StatusOr<model::NodeTopology> t = ParseTopoMatrix(file.text, file.name, "");
    if (t.ok()) {
      it->second = std::make_shared<const model::NodeTopology>(std::move(*t));
    } else {
      diag_.Error(at, "Topology",
                  StrCat("topology matrix '", line->topology, "' has errors:\n",
                         std::string(t.status().message())));
    }
  }
  line->topology_matrix = it->second;
}

void GresParser::AddLine(const Statement& st) {
  GresConfLine line;
  line.location = st.location;
  std::set<std::string_view> seen;
  bool ok = true;
  for (const KeyValue& kv : st.pairs) {
    std::optional<std::string_view> key = internal::MatchKey(kv.key, kKeys);
    if (!key) {
      diag_.Error(st.location, kv.key, internal::UnknownKeyMessage(kv.key, "a gres.conf", kKeys));
      ok = false;
      continue;
    }
    std::string_view slot = *key == "CPUs" ? "Cores" : *key == "MultipleFiles" ? "File" : *key;
    if (!seen.insert(slot).second) {
      diag_.Error(st.location, kv.key,
                  slot == *key ? StrCat(*key, " is given twice on this line")
                               : StrCat(*key, " cannot be combined with ", slot,
                                        slot == "File" ? "= (give one or the other)"
                                                       : "= (the same setting)"));
      ok = false;
      continue;
    }
    ok = SetValue(st.location, *key, kv, &line) && ok;
  }
  const bool has_name = seen.count("Name") > 0;
  if (!has_name) {
    for (std::string_view k : {"Type", "File", "Cores", "Links", "Count", "Flags"}) {
      if (seen.count(k) == 0) continue;
      diag_.Error(st.location, k,
                  StrCat(k, "= describes a GRES; this line needs Name= (e.g. Name=gpu)"));
      ok = false;
      break;
    }
  }
  if (!line.topology.empty() && line.node_expr.empty() && seen.count("NodeName") == 0) {
    diag_.Error(st.location, "Topology",
                "Topology= goes on a NodeName line: NodeName=<nodes> Topology=<matrix file>");
    ok = false;
  }
  if (seen.size() == 1 && seen.count("NodeName") > 0) {
    diag_.Error(st.location, "NodeName",
                "this NodeName line says nothing about its nodes; add Name=, AutoDetect= or "
                "Topology=");
    ok = false;
  }
  if (!line.links.empty() && line.Count() != 1) {
    diag_.Error(st.location, "Links",
                StrCat("Links= describes one GPU, but this line has ", line.Count(),
                       "; write one line per GPU (File=/dev/nvidia<i>) to give Links="));
    ok = false;
  }
  if (line.count && !line.files.empty() && !line.multiple_files && !IsSharing(line.name) &&
      *line.count != static_cast<int64_t>(line.files.size())) {
    diag_.Error(st.location, "Count",
                StrCat("Count=", *line.count, " but File= names ", line.files.size(),
                       line.files.size() == 1 ? " device" : " devices",
                       "; leave Count= out or make it ", line.files.size()));
    ok = false;
  }
  if (!ok) return;
  if (line.autodetect != GresAutoDetect::kNotSet && line.node_expr.empty()) {
    // AutoDetect without NodeName is the file's global setting.
    if (conf_.autodetect != GresAutoDetect::kNotSet) {
      diag_.Error(st.location, "AutoDetect",
                  StrCat("AutoDetect is already set for all nodes at line ",
                         conf_.autodetect_at.line, "; give it once"));
      return;
    }
    conf_.autodetect = line.autodetect;
    conf_.autodetect_at = st.location;
    WarnAutoDetect(st.location, line.autodetect, "");
    line.autodetect = GresAutoDetect::kNotSet;
  } else {
    WarnAutoDetect(st.location, line.autodetect, StrCat(" for ", line.node_expr));
  }
  if (!line.topology.empty()) ReadTopology(&line);
  conf_.lines.push_back(std::move(line));
}

StatusOr<GresConf> GresParser::Parse(std::string_view text) {
  conf_.source_files.push_back(file_);
  for (const Statement& st : internal::ReadStatements(text, file_, &diag_)) AddLine(st);
  RETURN_IF_ERROR(diag_.ToStatus());
  return std::move(conf_);
}

}  // namespace

std::string_view GresAutoDetectName(GresAutoDetect a) {
  if (a == GresAutoDetect::kNotSet) return "";
  return kAutoDetect[static_cast<size_t>(a) - 1];
}

int64_t GresConfLine::Count() const {
  if (count) return *count;
  if (multiple_files) return 1;
  if (!files.empty()) return static_cast<int64_t>(files.size());
  return 1;
}

StatusOr<GresConf> ParseGresConf(std::string_view text, std::string_view file_name,
                                 const IncludeResolver& resolver,
                                 std::vector<Diagnostic>* warnings) {
  return GresParser(std::string(file_name), resolver, warnings).Parse(text);
}

StatusOr<GresConf> LoadGresConf(const std::string& path, std::vector<Diagnostic>* warnings) {
  FileIncludeResolver files;
  StatusOr<std::vector<IncludedFile>> read = files.Resolve(path);
  if (!read.ok()) {
    return absl::Status(read.status().code(), StrCat("cannot read gres.conf '", path,
                                                     "': ", std::string(read.status().message())));
  }
  if (read->size() != 1) {
    return absl::InvalidArgumentError(
        StrCat("gres.conf path '", path, "' must name exactly one file"));
  }
  return ParseGresConf(read->front().text, read->front().name, files, warnings);
}

GresAutoDetect AutoDetectFor(const GresConf& conf, std::string_view node) {
  GresAutoDetect found = conf.autodetect;
  for (const GresConfLine& line : conf.lines) {
    if (line.autodetect == GresAutoDetect::kNotSet) continue;
    if (std::find(line.nodes.begin(), line.nodes.end(), node) != line.nodes.end()) {
      found = line.autodetect;
    }
  }
  return found;
}

}  // namespace loom::conf
