#include "conf/topology_conf.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "conf/include_resolver.h"
#include "conf/internal/conf_file.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

using core::StrCat;
using internal::Diagnostics;
using internal::KeyValue;
using internal::Statement;

// Names one file may list in all, switches and nodes together.
constexpr int64_t kMaxNames = int64_t{1} << 20;
// Slurm's limit on a switch name.
constexpr size_t kMaxSwitchName = 64;
constexpr int64_t kMaxLinkSpeed = 4294967295;
constexpr int64_t kMaxBlockSize = 1000000;

constexpr std::string_view kSwitchKeys[] = {"SwitchName", "Switches", "Nodes", "LinkSpeed"};
constexpr std::string_view kBlockKeys[] = {"BlockName", "Nodes"};
constexpr std::string_view kHeadKeys[] = {"SwitchName", "BlockName", "BlockSizes"};

struct SwitchLine {
  SourceLocation at;
  std::string name;
  std::vector<std::string> switches;
  std::vector<std::string> nodes;
  bool has_switches = false;
  bool has_nodes = false;
  int64_t link_speed = 0;
};

struct BlockLine {
  SourceLocation at;
  std::string name;
  std::vector<std::string> nodes;
  bool has_nodes = false;
};

std::string Names(std::vector<std::string> names) {
  return core::CompressHostlist(std::move(names));
}

std::string Plural(size_t n, std::string_view one, std::string_view many) {
  return std::string(n == 1 ? one : many);
}

class TopologyParser {
 public:
  TopologyParser(std::string file, const std::vector<std::string>& node_names,
                 std::vector<Diagnostic>* warnings)
      : file_(std::move(file)), node_names_(node_names), diag_(warnings) {
    for (size_t i = 0; i < node_names.size(); ++i) {
      node_index_.emplace(node_names[i], static_cast<int32_t>(i));
    }
  }

  StatusOr<model::ClusterTopology> Parse(std::string_view text);

 private:
  void AddSwitch(const Statement& st);
  void AddBlock(const Statement& st);
  void AddBlockSizes(const Statement& st);
  void NoteKind(const SourceLocation& at, std::string_view head, bool block);
  std::optional<std::vector<std::string>> Expand(const SourceLocation& at, const KeyValue& kv);
  // Node indices of `names`, reporting unknown ones; nullopt entries for those.
  std::vector<std::optional<int32_t>> NodeIndices(const SourceLocation& at,
                                                  const std::vector<std::string>& names);
  model::ClusterTopology BuildTree();
  model::ClusterTopology BuildBlocks();
  void WarnUnplaced(const std::vector<int32_t>& leaf_of, std::string_view where);

  std::string file_;
  const std::vector<std::string>& node_names_;
  std::unordered_map<std::string, int32_t> node_index_;
  Diagnostics diag_;
  int64_t names_ = 0;
  std::vector<SwitchLine> switches_;
  std::vector<BlockLine> blocks_;
  std::vector<int32_t> block_sizes_;
  SourceLocation block_sizes_at_;
  std::optional<SourceLocation> first_switch_, first_block_;
};

void TopologyParser::NoteKind(const SourceLocation& at, std::string_view head, bool block) {
  std::optional<SourceLocation>& mine = block ? first_block_ : first_switch_;
  const std::optional<SourceLocation>& other = block ? first_switch_ : first_block_;
  if (!mine) mine = at;
  if (other && *mine == at) {
    diag_.Error(at, head,
                StrCat(head, " cannot be used with ", block ? "SwitchName" : "BlockName",
                       " lines (the first is at line ", other->line,
                       "): a topology.conf describes either a switch tree (topology/tree) or "
                       "blocks (topology/block)"));
  }
}

std::optional<std::vector<std::string>> TopologyParser::Expand(const SourceLocation& at,
                                                               const KeyValue& kv) {
  if (core::Trim(kv.value).empty()) {
    diag_.Error(at, kv.key, StrCat(kv.key, "= is empty; list at least one name"));
    return std::nullopt;
  }
  StatusOr<std::vector<std::string>> names = internal::ExpandNames(kv.value, kMaxNames - names_);
  if (!names.ok()) {
    diag_.Error(at, kv.key,
                StrCat("invalid hostlist '", kv.value, "' for ", kv.key, ": ",
                       std::string(names.status().message())));
    return std::nullopt;
  }
  names_ += static_cast<int64_t>(names->size());
  return std::move(*names);
}

void TopologyParser::AddSwitch(const Statement& st) {
  NoteKind(st.location, "SwitchName", false);
  SwitchLine sw;
  sw.at = st.location;
  sw.name = st.pairs[0].value;
  if (sw.name.empty()) diag_.Error(st.location, "SwitchName", "SwitchName= needs a name");
  if (sw.name.size() > kMaxSwitchName) {
    diag_.Error(st.location, "SwitchName",
                StrCat("switch name '", sw.name.substr(0, 20), "...' is ", sw.name.size(),
                       " characters long; Slurm allows at most ", kMaxSwitchName));
  }
  for (size_t i = 1; i < st.pairs.size(); ++i) {
    const KeyValue& kv = st.pairs[i];
    std::optional<std::string_view> key = internal::MatchKey(kv.key, kSwitchKeys);
    if (!key || *key == "SwitchName") {
      diag_.Error(st.location, kv.key,
                  key ? "SwitchName may appear once per line; put each switch on its own line"
                      : internal::UnknownKeyMessage(kv.key, "a SwitchName", kSwitchKeys));
      continue;
    }
    bool& seen = *key == "Switches" ? sw.has_switches : sw.has_nodes;
    if (*key != "LinkSpeed" && seen) {
      diag_.Error(st.location, kv.key, StrCat(*key, " is given twice on this line"));
      continue;
    }
    if (*key == "LinkSpeed") {
      std::optional<int64_t> v = core::ParseInt(core::Trim(kv.value));
      if (!v || *v < 0 || *v > kMaxLinkSpeed) {
        diag_.Error(st.location, kv.key,
                    StrCat("invalid value '", kv.value,
                           "' for LinkSpeed: expected a whole number from 0 to ", kMaxLinkSpeed));
      } else {
        sw.link_speed = *v;
      }
      continue;
    }
    seen = true;
    if (std::optional<std::vector<std::string>> names = Expand(st.location, kv)) {
      (*key == "Switches" ? sw.switches : sw.nodes) = std::move(*names);
    }
  }
  if (sw.has_switches && sw.has_nodes) {
    diag_.Error(st.location, "SwitchName",
                StrCat("switch ", sw.name,
                       " has both Switches= and Nodes=; a leaf switch lists its nodes, a higher "
                       "switch its child switches: split it into a leaf and its parent"));
  } else if (!sw.has_switches && !sw.has_nodes) {
    diag_.Error(st.location, "SwitchName",
                StrCat("switch ", sw.name,
                       " has neither Nodes= nor Switches=; a leaf switch lists its nodes, a "
                       "higher switch its child switches"));
  }
  switches_.push_back(std::move(sw));
}

void TopologyParser::AddBlock(const Statement& st) {
  NoteKind(st.location, "BlockName", true);
  BlockLine b;
  b.at = st.location;
  b.name = st.pairs[0].value;
  if (b.name.empty()) diag_.Error(st.location, "BlockName", "BlockName= needs a name");
  for (size_t i = 1; i < st.pairs.size(); ++i) {
    const KeyValue& kv = st.pairs[i];
    std::optional<std::string_view> key = internal::MatchKey(kv.key, kBlockKeys);
    if (!key || *key == "BlockName") {
      std::string message =
          key ? "BlockName may appear once per line; put each block on its own line"
          : core::EqualsIgnoreCase(kv.key, "BlockSizes")
              ? "BlockSizes goes on a line of its own: BlockSizes=<n>[,<n>...]"
              : internal::UnknownKeyMessage(kv.key, "a BlockName", kBlockKeys);
      diag_.Error(st.location, kv.key, std::move(message));
      continue;
    }
    if (b.has_nodes) {
      diag_.Error(st.location, kv.key, "Nodes is given twice on this line");
      continue;
    }
    b.has_nodes = true;
    if (std::optional<std::vector<std::string>> names = Expand(st.location, kv)) {
      b.nodes = std::move(*names);
    }
  }
  if (!b.has_nodes) {
    diag_.Error(st.location, "BlockName",
                StrCat("block ", b.name, " has no Nodes=; list the nodes of the block"));
  }
  blocks_.push_back(std::move(b));
}

void TopologyParser::AddBlockSizes(const Statement& st) {
  NoteKind(st.location, "BlockSizes", true);
  const KeyValue& kv = st.pairs[0];
  if (st.pairs.size() > 1) {
    diag_.Error(st.location, st.pairs[1].key,
                "BlockSizes goes on a line of its own: BlockSizes=<n>[,<n>...]");
  }
  if (!block_sizes_.empty()) {
    diag_.Error(
        st.location, kv.key,
        StrCat("BlockSizes is already set at line ", block_sizes_at_.line, "; give it once"));
    return;
  }
  std::vector<int32_t> sizes;
  for (std::string_view item : core::Split(kv.value, ',')) {
    std::optional<int64_t> v = core::ParseInt(core::Trim(item));
    if (!v || *v < 1 || *v > kMaxBlockSize) {
      diag_.Error(st.location, kv.key,
                  StrCat("invalid value '", kv.value, "' for BlockSizes: '", core::Trim(item),
                         "' is not a whole number from 1 to ", kMaxBlockSize,
                         "; expected sizes in nodes such as 18,36,72"));
      return;
    }
    sizes.push_back(static_cast<int32_t>(*v));
  }
  for (size_t i = 1; i < sizes.size(); ++i) {
    const int32_t prev = sizes[i - 1], cur = sizes[i];
    const int32_t ratio = cur / prev;
    if (cur <= prev || cur % prev != 0 || (ratio & (ratio - 1)) != 0) {
      diag_.Error(st.location, kv.key,
                  StrCat("BlockSizes=", kv.value, ": ", cur, " is not ", prev,
                         " times a power of two; each size must be the one before it times 2, "
                         "4, 8, ... (e.g. ",
                         prev, ",", int64_t{prev} * 2, ",", int64_t{prev} * 4, ")"));
      return;
    }
  }
  block_sizes_ = std::move(sizes);
  block_sizes_at_ = st.location;
}

std::vector<std::optional<int32_t>> TopologyParser::NodeIndices(
    const SourceLocation& at, const std::vector<std::string>& names) {
  std::vector<std::optional<int32_t>> out;
  std::vector<std::string> unknown;
  for (const std::string& n : names) {
    auto it = node_index_.find(n);
    if (it == node_index_.end()) {
      unknown.push_back(n);
      out.push_back(std::nullopt);
    } else {
      out.push_back(it->second);
    }
  }
  if (const size_t n = unknown.size(); n > 0) {
    diag_.Error(at, "Nodes",
                StrCat("Nodes= names ", n, Plural(n, " node", " nodes"),
                       " slurm.conf does not define: ", Names(std::move(unknown)), "; define ",
                       Plural(n, "it", "them"), " in slurm.conf or remove ",
                       Plural(n, "it", "them"), " here"));
  }
  return out;
}

void TopologyParser::WarnUnplaced(const std::vector<int32_t>& leaf_of, std::string_view where) {
  std::vector<std::string> missing;
  for (size_t i = 0; i < leaf_of.size(); ++i) {
    if (leaf_of[i] < 0) missing.push_back(node_names_[i]);
  }
  const size_t n = missing.size();
  if (n == 0) return;
  diag_.Warn({file_, 0}, "Nodes",
             StrCat(n, Plural(n, " node", " nodes"), " of slurm.conf ", Plural(n, "is", "are"),
                    " in no ", where, ": ", Names(std::move(missing)),
                    "; placement cannot tell how near other nodes they are. Add them to a ",
                    where == "block" ? "BlockName line" : "leaf switch's Nodes="));
}

model::ClusterTopology TopologyParser::BuildTree() {
  model::ClusterTopology t;
  t.kind = model::ClusterTopology::Kind::kTree;
  t.leaf_of.assign(node_names_.size(), -1);
  std::unordered_map<std::string, int32_t> index;
  for (const SwitchLine& sw : switches_) {
    auto [it, inserted] = index.emplace(sw.name, static_cast<int32_t>(t.switches.size()));
    if (!inserted) {
      diag_.Error(sw.at, "SwitchName",
                  StrCat("switch ", sw.name, " is already defined at line ",
                         switches_[it->second].at.line, "; switch names must be unique"));
    }
    model::Switch s;
    s.name = sw.name;
    s.link_speed = sw.link_speed;
    t.switches.push_back(std::move(s));
  }
  if (diag_.has_errors()) return t;
  for (size_t si = 0; si < switches_.size(); ++si) {
    const SwitchLine& sw = switches_[si];
    model::Switch& s = t.switches[si];
    // Nodes already under another leaf, grouped by that leaf.
    std::map<int32_t, std::vector<std::string>> taken;
    std::vector<std::optional<int32_t>> nodes = NodeIndices(sw.at, sw.nodes);
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (!nodes[k]) continue;
      int32_t& leaf = t.leaf_of[*nodes[k]];
      if (leaf >= 0) {
        taken[leaf].push_back(sw.nodes[k]);
        continue;
      }
      leaf = static_cast<int32_t>(si);
      s.nodes.push_back(*nodes[k]);
    }
    for (auto& [leaf, names] : taken) {
      diag_.Error(
          sw.at, "Nodes",
          StrCat(Plural(names.size(), "node ", "nodes "), Names(names), " ",
                 Plural(names.size(), "is", "are"), " already under switch ", t.switches[leaf].name,
                 " (line ", switches_[leaf].at.line, "); a node hangs under one leaf switch"));
    }
    std::vector<std::string> unknown;
    for (const std::string& child_name : sw.switches) {
      auto it = index.find(child_name);
      if (it == index.end()) {
        unknown.push_back(child_name);
        continue;
      }
      model::Switch& child = t.switches[it->second];
      if (child.parent >= 0) {
        diag_.Error(
            sw.at, "Switches",
            StrCat("switch ", child_name, " is already below switch ",
                   t.switches[child.parent].name, " (line ", switches_[child.parent].at.line,
                   "); Loom needs a tree, where each switch has one parent: list it "
                   "under one switch only"));
        continue;
      }
      child.parent = static_cast<int32_t>(si);
      s.children.push_back(it->second);
    }
    if (const size_t u = unknown.size(); u > 0) {
      diag_.Error(sw.at, "Switches",
                  StrCat("Switches= names ", Plural(u, "a switch", "switches"),
                         " this file does not define: ", Names(std::move(unknown)),
                         "; each needs its own SwitchName line"));
    }
  }
  if (diag_.has_errors()) return t;

  // Cycles: with one parent per switch, a cycle is a parent chain that comes back.
  const size_t n = t.switches.size();
  std::vector<int> state(n, 0);  // 0 unvisited, 1 on the current chain, 2 done
  for (size_t start = 0; start < n; ++start) {
    std::vector<int32_t> chain;
    int32_t s = static_cast<int32_t>(start);
    while (s >= 0 && state[s] == 0) {
      state[s] = 1;
      chain.push_back(s);
      s = t.switches[s].parent;
    }
    if (s >= 0 && state[s] == 1) {
      auto first = std::find(chain.begin(), chain.end(), s);
      std::string path;
      int32_t lowest = s;
      for (auto it = first; it != chain.end(); ++it) {
        path += StrCat(t.switches[*it].name, " -> ");
        lowest = std::min(lowest, *it);
      }
      path += t.switches[s].name;
      diag_.Error(switches_[lowest].at, "Switches",
                  StrCat("switches form a cycle (each is below the next): ", path,
                         "; a switch cannot be below itself"));
    }
    for (int32_t c : chain) state[c] = 2;
  }
  if (diag_.has_errors()) return t;

  // Levels, from the leaves up.
  std::vector<size_t> pending(n);
  std::vector<int32_t> ready;
  for (size_t i = 0; i < n; ++i) {
    pending[i] = t.switches[i].children.size();
    if (pending[i] == 0) ready.push_back(static_cast<int32_t>(i));
  }
  while (!ready.empty()) {
    int32_t s = ready.back();
    ready.pop_back();
    int32_t p = t.switches[s].parent;
    if (p < 0) continue;
    t.switches[p].level = std::max(t.switches[p].level, t.switches[s].level + 1);
    if (--pending[p] == 0) ready.push_back(p);
  }
  WarnUnplaced(t.leaf_of, "leaf switch");
  return t;
}

model::ClusterTopology TopologyParser::BuildBlocks() {
  model::ClusterTopology t;
  t.kind = model::ClusterTopology::Kind::kBlock;
  t.leaf_of.assign(node_names_.size(), -1);
  if (blocks_.empty()) {
    diag_.Error(block_sizes_at_, "BlockSizes",
                "BlockSizes is set but no BlockName line defines a block; add BlockName=<name> "
                "Nodes=<nodes> lines");
    return t;
  }
  std::unordered_map<std::string, int32_t> index;
  for (size_t bi = 0; bi < blocks_.size(); ++bi) {
    const BlockLine& bl = blocks_[bi];
    auto [it, inserted] = index.emplace(bl.name, static_cast<int32_t>(bi));
    if (!inserted) {
      diag_.Error(bl.at, "BlockName",
                  StrCat("block ", bl.name, " is already defined at line ",
                         blocks_[it->second].at.line, "; block names must be unique"));
    }
    model::Block b;
    b.name = bl.name;
    std::map<int32_t, std::vector<std::string>> taken;
    std::vector<std::optional<int32_t>> nodes = NodeIndices(bl.at, bl.nodes);
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (!nodes[k]) continue;
      int32_t& owner = t.leaf_of[*nodes[k]];
      if (owner >= 0) {
        taken[owner].push_back(bl.nodes[k]);
        continue;
      }
      owner = static_cast<int32_t>(bi);
      b.nodes.push_back(*nodes[k]);
    }
    for (auto& [owner, names] : taken) {
      diag_.Error(
          bl.at, "Nodes",
          StrCat(Plural(names.size(), "node ", "nodes "), Names(names), " ",
                 Plural(names.size(), "is", "are"), " already in block ", blocks_[owner].name,
                 " (line ", blocks_[owner].at.line, "); a node belongs to one block"));
    }
    t.blocks.push_back(std::move(b));
  }
  if (diag_.has_errors()) return t;

  size_t smallest = t.blocks[0].nodes.size(), total = 0;
  for (const model::Block& b : t.blocks) {
    smallest = std::min(smallest, b.nodes.size());
    total += b.nodes.size();
  }
  if (block_sizes_.empty()) {
    t.block_sizes = {static_cast<int32_t>(smallest)};
  } else {
    t.block_sizes = block_sizes_;
    for (size_t bi = 0; bi < t.blocks.size(); ++bi) {
      if (t.blocks[bi].nodes.size() >= static_cast<size_t>(block_sizes_[0])) continue;
      diag_.Error(blocks_[bi].at, "Nodes",
                  StrCat("block ", t.blocks[bi].name, " has ", t.blocks[bi].nodes.size(),
                         " nodes, fewer than the base block size ", block_sizes_[0],
                         " (BlockSizes at line ", block_sizes_at_.line,
                         "); every block needs at least that many"));
    }
    for (int32_t size : block_sizes_) {
      if (static_cast<size_t>(size) <= total) continue;
      diag_.Warn(block_sizes_at_, "BlockSizes",
                 StrCat("block size ", size, " is larger than all blocks together (", total,
                        " nodes); no job can be placed at that size"));
    }
  }
  WarnUnplaced(t.leaf_of, "block");
  return t;
}

StatusOr<model::ClusterTopology> TopologyParser::Parse(std::string_view text) {
  for (const Statement& st : internal::ReadStatements(text, file_, &diag_)) {
    const KeyValue& head = st.pairs[0];
    std::optional<std::string_view> key = internal::MatchKey(head.key, kHeadKeys);
    if (key == "SwitchName") {
      AddSwitch(st);
    } else if (key == "BlockName") {
      AddBlock(st);
    } else if (key == "BlockSizes") {
      AddBlockSizes(st);
    } else if (core::EqualsIgnoreCase(head.key, "RingName")) {
      diag_.Error(st.location, head.key,
                  "topology/ring (RingName lines) is not supported by Loom; describe the "
                  "network with SwitchName or BlockName lines");
    } else {
      diag_.Error(st.location, head.key,
                  StrCat("a topology.conf line starts with SwitchName=, BlockName= or "
                         "BlockSizes=, not '",
                         head.key, "='"));
    }
  }
  model::ClusterTopology t;
  if (!diag_.has_errors()) {
    if (!switches_.empty()) {
      t = BuildTree();
    } else if (!blocks_.empty() || !block_sizes_.empty()) {
      t = BuildBlocks();
    } else {
      diag_.Warn({file_, 0}, "", "the file defines no switches and no blocks");
    }
  }
  RETURN_IF_ERROR(diag_.ToStatus());
  return t;
}

}  // namespace

StatusOr<model::ClusterTopology> ParseTopologyConf(std::string_view text,
                                                   std::string_view file_name,
                                                   const std::vector<std::string>& node_names,
                                                   std::vector<Diagnostic>* warnings) {
  return TopologyParser(std::string(file_name), node_names, warnings).Parse(text);
}

StatusOr<model::ClusterTopology> LoadTopologyConf(const std::string& path,
                                                  const std::vector<std::string>& node_names,
                                                  std::vector<Diagnostic>* warnings) {
  FileIncludeResolver files;
  StatusOr<std::vector<IncludedFile>> read = files.Resolve(path);
  if (!read.ok()) {
    return absl::Status(read.status().code(), StrCat("cannot read topology.conf '", path,
                                                     "': ", std::string(read.status().message())));
  }
  if (read->size() != 1) {
    return absl::InvalidArgumentError(
        StrCat("topology.conf path '", path, "' must name exactly one file"));
  }
  return ParseTopologyConf(read->front().text, path, node_names, warnings);
}

}  // namespace loom::conf
