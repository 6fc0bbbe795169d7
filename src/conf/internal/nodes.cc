#include "conf/internal/nodes.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "conf/internal/key_table.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace loom::conf::internal {
namespace {

using core::StrCat;

constexpr int64_t kMaxU16 = 65535;
constexpr int64_t kMaxU32 = 4294967295;
constexpr int64_t kMaxMb = int64_t{1} << 50;

bool IsGresWord(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}


// Expands a hostlist, refusing (before expanding) more than `max_hosts` names.
StatusOr<std::vector<std::string>> ExpandLimited(std::string_view expr,
                                                 size_t max_hosts = NodeTable::kMaxNodes) {
  StatusOr<core::Hostlist> list =
      core::Hostlist::Parse(expr, static_cast<int64_t>(NodeTable::kMaxNodes));
  if (!list.ok()) return list.status();
  if (static_cast<size_t>(list->size()) > max_hosts) {
    return absl::ResourceExhaustedError(StrCat("it names ", list->size(), " hosts, more than the ",
                                               NodeTable::kMaxNodes,
                                               " nodes a configuration may define in all"));
  }
  return list->Expand();
}

constexpr std::string_view kNodeStates[] = {"UNKNOWN", "CLOUD",   "DOWN",  "DRAIN",
                                            "FAIL",    "FAILING", "FUTURE"};

}  // namespace

// "8", "4K", "2G" -> count; nullopt when not a count.
std::optional<int64_t> ParseGresCount(std::string_view s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) return std::nullopt;
  int64_t mult = 1;
  switch (std::toupper(static_cast<unsigned char>(s.back()))) {
    case 'K':
      mult = int64_t{1} << 10;
      break;
    case 'M':
      mult = int64_t{1} << 20;
      break;
    case 'G':
      mult = int64_t{1} << 30;
      break;
    case 'T':
      mult = int64_t{1} << 40;
      break;
    case 'P':
      mult = int64_t{1} << 50;
      break;
    default:
      break;
  }
  if (mult != 1) s.remove_suffix(1);
  std::optional<int64_t> v = core::ParseInt(s);
  if (!v || *v < 0 || *v > INT64_MAX / mult) return std::nullopt;
  return *v * mult;
}

StatusOr<std::vector<GresSpec>> ParseGres(std::string_view value) {
  std::vector<GresSpec> out;
  for (const std::string& item : SplitList(value)) {
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(StrCat("'", item, "' ", why));
    };
    std::vector<std::string_view> parts = core::Split(item, ':');
    GresSpec g;
    g.name = core::ToLower(parts[0]);
    if (!IsGresWord(g.name)) return bad("does not start with a GRES name");
    size_t i = 1;
    std::optional<int64_t> count;
    for (; i < parts.size(); ++i) {
      std::string_view p = parts[i];
      if (core::EqualsIgnoreCase(p, "no_consume")) {
        if (g.no_consume) return bad("says no_consume twice");
        g.no_consume = true;
        continue;
      }
      if (i + 1 == parts.size()) {
        if ((count = ParseGresCount(p))) break;
        if (!p.empty() && p.find_first_not_of("0123456789") == std::string_view::npos) {
          return bad("has a count out of range");
        }
      }
      if (i != 1 || g.no_consume) return bad("is not name[:type][:no_consume]:count");
      if (!IsGresWord(p)) return bad("has an invalid type");
      g.type = std::string(p);
    }
    if (parts.size() > 4) return bad("has too many ':' fields");
    g.count = count.value_or(1);
    for (const GresSpec& prev : out) {
      if (prev.name != g.name) continue;
      if (core::EqualsIgnoreCase(prev.type, g.type)) return bad("is listed twice");
      if (prev.type.empty() != g.type.empty()) {
        return bad(StrCat("mixes a typed and an untyped '", g.name,
                          "'; give every entry of that GRES a type, or none"));
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

StatusOr<std::vector<int32_t>> ParsePortList(std::string_view value) {
  std::vector<int32_t> out;
  auto bad = [&] {
    return absl::InvalidArgumentError(
        StrCat("'", value, "' is not a port (1-65535), a range like 17001-17016, or a list"));
  };
  std::string_view v = core::Trim(value);
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
  for (const std::string& item : SplitList(v)) {
    size_t dash = item.find('-');
    std::optional<int64_t> lo = core::ParseInt(std::string_view(item).substr(0, dash));
    std::optional<int64_t> hi =
        dash == std::string::npos ? lo : core::ParseInt(std::string_view(item).substr(dash + 1));
    if (!lo || !hi || *lo < 1 || *hi > 65535 || *lo > *hi) return bad();
    for (int64_t p = *lo; p <= *hi; ++p) out.push_back(static_cast<int32_t>(p));
  }
  if (out.empty()) return bad();
  return out;
}

StatusOr<ControllerHost> ParseControllerHost(std::string_view value) {
  std::string_view v = core::Trim(value);
  ControllerHost h;
  size_t open = v.find('(');
  if (open == std::string_view::npos) {
    h.name = std::string(v);
    h.addr = h.name;
  } else {
    if (v.back() != ')' || v.find('(', open + 1) != std::string_view::npos) {
      return absl::InvalidArgumentError("expected host or host(address)");
    }
    h.name = std::string(core::Trim(v.substr(0, open)));
    h.addr = std::string(core::Trim(v.substr(open + 1, v.size() - open - 2)));
  }
  auto ok_word = [](std::string_view s) {
    if (s.empty()) return false;
    for (char c : s) {
      if (std::isspace(static_cast<unsigned char>(c)) || c == '(' || c == ')' || c == ',') {
        return false;
      }
    }
    return true;
  };
  if (!ok_word(h.name) || !ok_word(h.addr)) {
    return absl::InvalidArgumentError("expected host or host(address)");
  }
  return h;
}

void NodeTable::Spec::MergeFrom(const Spec& o) {
  auto take = [](auto& dst, const auto& src) {
    if (src) dst = src;
  };
  take(cpus, o.cpus);
  take(boards, o.boards);
  take(sockets, o.sockets);
  take(sockets_per_board, o.sockets_per_board);
  take(cores, o.cores);
  take(threads, o.threads);
  take(real_memory, o.real_memory);
  take(tmp_disk, o.tmp_disk);
  take(weight, o.weight);
  take(gres, o.gres);
  take(features, o.features);
  take(state, o.state);
  take(reason, o.reason);
  take(hostname, o.hostname);
  take(addr, o.addr);
  take(ports, o.ports);
  for (const auto& [k, v] : o.other) other[k] = v;
}

std::optional<NodeState> NodeTable::ParseState(const SourceLocation& at, const KeyValue& kv) {
  std::string_view v = core::Trim(kv.value);
  for (size_t i = 0; i < std::size(kNodeStates); ++i) {
    if (core::EqualsIgnoreCase(v, kNodeStates[i])) return static_cast<NodeState>(i);
  }
  if (core::EqualsIgnoreCase(v, "IDLE")) {
    ctx_->Warn(at, kv.key,
               StrCat(kv.key, "=", v,
                      " should not be configured; it is treated as UNKNOWN "
                      "(the node's daemon reports the real state)"));
    return NodeState::kUnknown;
  }
  ctx_->BadValue(at, kv.key, kv.value, "UNKNOWN, CLOUD, DOWN, DRAIN, FAIL, FAILING or FUTURE");
  return std::nullopt;
}

void NodeTable::ParseSpec(const Statement& st, Spec* spec) {
  const SourceLocation& at = st.location;
  std::set<std::string> seen;
  for (size_t i = 1; i < st.pairs.size(); ++i) {
    const KeyValue& kv = st.pairs[i];
    std::optional<std::string_view> key = CanonicalKey(Scope::kNode, kv.key);
    if (!key || *key == "NodeName") {
      ctx_->Error(at, kv.key,
                  key ? "NodeName appears twice on one line; start a new line for each "
                        "NodeName"
                      : UnknownKeyMessage(Scope::kNode, kv.key));
      continue;
    }
    std::string k(*key == "Procs" ? "CPUs" : (*key == "Features" ? "Feature" : *key));
    if (!seen.insert(k).second) {
      ctx_->Error(at, kv.key, StrCat(k, " is given twice on this NodeName line"));
      continue;
    }
    auto set_int = [&](std::optional<int64_t>* field, int64_t min, int64_t max) {
      if (std::optional<int64_t> v = ctx_->Int(at, kv, min, max)) *field = v;
    };
    if (k == "CPUs") {
      set_int(&spec->cpus, 1, kMaxU16);
    } else if (k == "Boards") {
      set_int(&spec->boards, 1, kMaxU16);
    } else if (k == "Sockets") {
      set_int(&spec->sockets, 1, kMaxU16);
    } else if (k == "SocketsPerBoard") {
      set_int(&spec->sockets_per_board, 1, kMaxU16);
    } else if (k == "CoresPerSocket") {
      set_int(&spec->cores, 1, kMaxU16);
    } else if (k == "ThreadsPerCore") {
      set_int(&spec->threads, 1, kMaxU16);
    } else if (k == "RealMemory") {
      set_int(&spec->real_memory, 1, kMaxMb);
    } else if (k == "TmpDisk") {
      set_int(&spec->tmp_disk, 0, kMaxU32);
    } else if (k == "Weight") {
      if (auto v = ctx_->IntOrUnlimited(at, kv, 0, kMaxU32 - 1, kMaxU32)) spec->weight = v;
    } else if (k == "Gres") {
      StatusOr<std::vector<GresSpec>> g = ParseGres(kv.value);
      if (g.ok()) {
        spec->gres = std::move(*g);
      } else {
        ctx_->Error(at, kv.key,
                    StrCat("invalid value '", kv.value, "' for ", kv.key, ": ",
                           std::string(g.status().message()),
                           "; expected a comma list of name[:type][:no_consume]:count, e.g. "
                           "gpu:a100:8"));
      }
    } else if (k == "Feature") {
      spec->features = SplitList(kv.value);
    } else if (k == "State") {
      if (std::optional<NodeState> s = ParseState(at, kv)) spec->state = s;
    } else if (k == "Reason") {
      spec->reason = kv.value;
    } else if (k == "NodeHostname") {
      spec->hostname = kv.value;
    } else if (k == "NodeAddr") {
      spec->addr = kv.value;
    } else if (k == "Port") {
      StatusOr<std::vector<int32_t>> p = ParsePortList(kv.value);
      if (p.ok()) {
        spec->ports = std::move(*p);
      } else {
        ctx_->BadValue(at, kv.key, kv.value,
                       "a port (1-65535), or a range like 17001-17016 with one port per node");
      }
    } else {
      spec->other[k] = kv.value;
      ctx_->WarnNotActedOn(at, kv.key, "on NodeName lines");
    }
  }
}

std::optional<NodeTable::Topology> NodeTable::DeriveTopology(const SourceLocation& at,
                                                             const Spec& s) {
  if (s.sockets && s.sockets_per_board) {
    ctx_->Error(at, "Sockets",
                "Sockets and SocketsPerBoard are mutually exclusive; give one of them");
    return std::nullopt;
  }
  Topology t;
  t.boards = static_cast<int32_t>(s.boards.value_or(1));
  t.cores = static_cast<int32_t>(s.cores.value_or(1));
  t.threads = static_cast<int32_t>(s.threads.value_or(1));
  // With Boards, Sockets counts sockets per board, as in Slurm.
  std::optional<int64_t> spb = s.sockets_per_board ? s.sockets_per_board : s.sockets;
  if (!spb) {
    int64_t per_board = int64_t{t.boards} * t.cores * t.threads;
    spb = s.cpus ? std::max<int64_t>(1, *s.cpus / per_board) : 1;
  }
  t.sockets_per_board = static_cast<int32_t>(*spb);
  const int64_t total_cores = int64_t{t.boards} * t.sockets_per_board * t.cores;
  const int64_t total_threads = total_cores * t.threads;
  if (total_threads > kMaxU16) {
    ctx_->Error(at, "CPUs",
                StrCat("Boards x Sockets x CoresPerSocket x ThreadsPerCore = ", total_threads,
                       " is more than the 65535 CPUs a node can have"));
    return std::nullopt;
  }
  const bool topology_given = s.sockets || s.sockets_per_board || s.cores || s.threads;
  if (s.cpus && topology_given && *s.cpus != total_threads && *s.cpus != total_cores) {
    ctx_->Error(at, "CPUs",
                StrCat("CPUs=", *s.cpus, " does not match Boards(", t.boards, ") x Sockets(",
                       t.sockets_per_board, ") x CoresPerSocket(", t.cores, ") x ThreadsPerCore(",
                       t.threads, ") = ", total_threads,
                       "; fix the counts, or leave CPUs out to have it derived"));
    return std::nullopt;
  }
  t.cpus = static_cast<int32_t>(s.cpus.value_or(total_threads));
  return t;
}

std::optional<std::vector<std::string>> NodeTable::Expand(const SourceLocation& at,
                                                          std::string_view key,
                                                          std::string_view value,
                                                          size_t max_hosts) {
  StatusOr<std::vector<std::string>> names = ExpandLimited(value, max_hosts);
  if (!names.ok()) {
    ctx_->Error(at, key,
                StrCat("invalid value '", value, "' for ", key, ": ",
                       std::string(names.status().message())));
    return std::nullopt;
  }
  if (names->empty()) {
    ctx_->BadValue(at, key, value, "a host name or hostlist such as gpu-[01-64]");
    return std::nullopt;
  }
  return std::move(*names);
}

void NodeTable::AddNodeLine(const Statement& st) {
  const SourceLocation& at = st.location;
  const KeyValue& head = st.pairs[0];
  Spec spec;
  ParseSpec(st, &spec);
  if (core::EqualsIgnoreCase(core::Trim(head.value), "DEFAULT")) {
    for (std::string_view k : {"NodeHostname", "NodeAddr", "BcastAddr"}) {
      bool given = (k == "NodeHostname" && spec.hostname) || (k == "NodeAddr" && spec.addr) ||
                   spec.other.count(std::string(k)) > 0;
      if (given) {
        ctx_->Error(at, k, StrCat(k, " is not allowed with NodeName=DEFAULT; it names one host"));
      }
    }
    defaults_.MergeFrom(spec);
    return;
  }
  Spec merged = defaults_;
  merged.MergeFrom(spec);
  std::optional<std::vector<std::string>> names =
      Expand(at, head.key, head.value, kMaxNodes - nodes_.size());
  if (!names) return;
  const size_t n = names->size();
  auto per_node =
      [&](std::string_view key,
          const std::optional<std::string>& value) -> std::optional<std::vector<std::string>> {
    if (!value) return std::vector<std::string>{};
    std::optional<std::vector<std::string>> list = Expand(at, key, *value);
    if (list && list->size() != 1 && list->size() != n) {
      ctx_->Error(at, key,
                  StrCat(key, "=", *value, " names ", list->size(), " hosts for ", n,
                         " nodes; give one per node, or one for all"));
      return std::nullopt;
    }
    return list;
  };
  std::optional<std::vector<std::string>> hostnames = per_node("NodeHostname", merged.hostname);
  std::optional<std::vector<std::string>> addrs = per_node("NodeAddr", merged.addr);
  std::vector<int32_t> ports = merged.ports.value_or(std::vector<int32_t>{});
  if (ports.size() > 1 && ports.size() != n) {
    ctx_->Error(at, "Port",
                StrCat("Port lists ", ports.size(), " ports for ", n,
                       " nodes; give one port for all or one per node"));
    ports.clear();
  }
  std::optional<Topology> topo = DeriveTopology(at, merged);
  if (!topo) topo = Topology{static_cast<int32_t>(merged.cpus.value_or(1)), 1, 1, 1, 1};
  if (!hostnames) hostnames.emplace();
  if (!addrs) addrs.emplace();
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = (*names)[i];
    if (auto it = index_.find(name); it != index_.end()) {
      ctx_->Error(at, "NodeName",
                  StrCat("node ", name, " is already defined at ",
                         nodes_[it->second].defined_at.ToString()));
      continue;
    }
    if (nodes_.size() >= kMaxNodes) {
      ctx_->Error(at, "NodeName", StrCat("more than ", kMaxNodes, " nodes are defined"));
      return;
    }
    NodeConfig node;
    node.name = name;
    node.hostname = hostnames->empty() ? name : (*hostnames)[hostnames->size() == 1 ? 0 : i];
    node.addr = addrs->empty() ? node.hostname : (*addrs)[addrs->size() == 1 ? 0 : i];
    node.port = ports.empty() ? 0 : ports[ports.size() == 1 ? 0 : i];
    node.cpus = topo->cpus;
    node.boards = topo->boards;
    node.sockets_per_board = topo->sockets_per_board;
    node.sockets = topo->boards * topo->sockets_per_board;
    node.cores_per_socket = topo->cores;
    node.threads_per_core = topo->threads;
    node.real_memory_mb = merged.real_memory.value_or(1);
    node.tmp_disk_mb = merged.tmp_disk.value_or(0);
    node.gres = merged.gres.value_or(std::vector<GresSpec>{});
    node.features = merged.features.value_or(std::vector<std::string>{});
    node.weight = static_cast<uint32_t>(merged.weight.value_or(1));
    node.state = merged.state.value_or(NodeState::kUnknown);
    node.reason = merged.reason.value_or("");
    node.other_keys = merged.other;
    node.defined_at = at;
    index_.emplace(name, nodes_.size());
    nodes_.push_back(std::move(node));
  }
}

void NodeTable::AddDownNodes(const Statement& st) {
  DownNodes d{st.location, st.pairs[0].key, st.pairs[0].value, NodeState::kDown, ""};
  for (size_t i = 1; i < st.pairs.size(); ++i) {
    const KeyValue& kv = st.pairs[i];
    std::optional<std::string_view> key = CanonicalKey(Scope::kDownNodes, kv.key);
    if (!key || *key == "DownNodes") {
      ctx_->Error(st.location, kv.key, UnknownKeyMessage(Scope::kDownNodes, kv.key));
    } else if (*key == "Reason") {
      d.reason = kv.value;
    } else if (std::optional<size_t> c =
                   ctx_->Choice(st.location, kv, {"DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE"})) {
      constexpr NodeState kStates[] = {NodeState::kDown, NodeState::kDrain, NodeState::kFail,
                                       NodeState::kFailing, NodeState::kFuture};
      d.state = kStates[*c];
    }
  }
  down_nodes_.push_back(std::move(d));
}

void NodeTable::AddNodeSet(const Statement& st) {
  const std::string name(core::Trim(st.pairs[0].value));
  if (name.empty()) {
    ctx_->BadValue(st.location, st.pairs[0].key, st.pairs[0].value, "a node set name");
    return;
  }
  if (auto it = node_sets_.find(name); it != node_sets_.end()) {
    ctx_->Error(st.location, "NodeSet",
                StrCat("NodeSet ", name, " is already defined at ", it->second.at.ToString()));
    return;
  }
  NodeSet set{st.location, "", "", {}};
  for (size_t i = 1; i < st.pairs.size(); ++i) {
    const KeyValue& kv = st.pairs[i];
    std::optional<std::string_view> key = CanonicalKey(Scope::kNodeSet, kv.key);
    if (!key || *key == "NodeSet") {
      ctx_->Error(st.location, kv.key, UnknownKeyMessage(Scope::kNodeSet, kv.key));
    } else if (*key == "Nodes") {
      set.nodes_expr = kv.value;
    } else {
      set.feature = std::string(core::Trim(kv.value));
    }
  }
  if (set.nodes_expr.empty() && set.feature.empty()) {
    ctx_->Error(st.location, "NodeSet", StrCat("NodeSet ", name, " needs Nodes= or Feature="));
  }
  node_sets_.emplace(name, std::move(set));
}

void NodeTable::Finish() {
  ClusterConfig& cfg = ctx_->config();
  for (NodeConfig& node : nodes_) {
    if (node.port == 0) node.port = cfg.slurmd_port;
  }
  for (const DownNodes& d : down_nodes_) {
    std::optional<std::vector<std::string>> names = Expand(d.at, d.key, d.value);
    if (!names) continue;
    for (const std::string& name : *names) {
      auto it = index_.find(name);
      if (it == index_.end()) {
        ctx_->Error(d.at, d.key, StrCat("DownNodes names ", name, ", which no NodeName defines"));
        continue;
      }
      nodes_[it->second].state = d.state;
      if (!d.reason.empty()) nodes_[it->second].reason = d.reason;
    }
  }
  cfg.nodes = std::move(nodes_);
  nodes_.clear();
  for (auto& [name, set] : node_sets_) {
    if (index_.count(name) > 0) {
      ctx_->Error(set.at, "NodeSet",
                  StrCat("NodeSet ", name,
                         " has the name of a node; NodeSet names must differ "
                         "from node names"));
    }
    std::vector<size_t> members;
    if (!set.feature.empty()) {
      for (size_t i = 0; i < cfg.nodes.size(); ++i) {
        if (cfg.nodes[i].HasFeature(set.feature)) members.push_back(i);
      }
    }
    if (!set.nodes_expr.empty()) {
      std::optional<std::vector<size_t>> listed = Resolve(set.at, "Nodes", set.nodes_expr);
      if (listed) members.insert(members.end(), listed->begin(), listed->end());
    }
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    set.members = std::move(members);
  }
}

std::optional<std::vector<size_t>> NodeTable::Resolve(const SourceLocation& at,
                                                      std::string_view key,
                                                      std::string_view value) const {
  const std::vector<NodeConfig>& nodes = ctx_->config().nodes;
  std::vector<size_t> out;
  std::vector<std::string> missing;
  bool ok = true;
  for (const std::string& item : SplitTopLevelCommas(value)) {
    if (core::EqualsIgnoreCase(item, "ALL")) {
      for (size_t i = 0; i < nodes.size(); ++i) out.push_back(i);
      continue;
    }
    if (auto set = node_sets_.find(item); set != node_sets_.end()) {
      out.insert(out.end(), set->second.members.begin(), set->second.members.end());
      continue;
    }
    StatusOr<std::vector<std::string>> names = ExpandLimited(item);
    if (!names.ok()) {
      ctx_->Error(at, key,
                  StrCat("invalid value '", value, "' for ", key, ": ",
                         std::string(names.status().message())));
      ok = false;
      continue;
    }
    for (const std::string& name : *names) {
      auto it = index_.find(name);
      if (it == index_.end()) {
        missing.push_back(name);
      } else {
        out.push_back(it->second);
      }
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 5; ++i) {
      list += StrCat(i ? ", " : "", missing[i]);
    }
    if (missing.size() > 5) list += StrCat(" and ", missing.size() - 5, " more");
    ctx_->Error(at, key,
                StrCat(key, "=", value, " names ", missing.size() == 1 ? "node " : "nodes ", list,
                       " that no NodeName line defines"));
    ok = false;
  }
  if (!ok) return std::nullopt;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace loom::conf::internal
