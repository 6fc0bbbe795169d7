#include "cli/format/sinfo_format.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <string_view>

#include "cli/format/text.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli::format {
namespace {

using core::StrCat;
using model::NodeState;

// ---------------------------------------------------------------------------------------------
// Node states

// Slurm's numeric base states; with the flag bits they give the order sinfo sorts in.
uint32_t BaseValue(NodeState s) {
  switch (s) {
    case NodeState::kUnknown:
      return 0;
    case NodeState::kDown:
      return 1;
    case NodeState::kIdle:
      return 2;
    case NodeState::kAllocated:
      return 3;
    case NodeState::kMixed:
      return 5;
    case NodeState::kFuture:
      return 6;
  }
  return 0;
}

uint32_t StateWord(const NodeView& n) { return BaseValue(n.state) | n.flags; }

struct StateName {
  std::string_view compact;
  std::string_view full;
};

// The name of the state before any suffix, by precedence: what blocks the node first.
StateName BaseName(NodeState s, uint32_t f) {
  bool busy = s == NodeState::kAllocated || s == NodeState::kMixed || (f & kNodeFlagCompleting);
  if (f & kNodeFlagInvalidReg) return {"inval", "inval"};
  if ((f & kNodeFlagMaintenance) && !(f & kNodeFlagDrain) && !busy && s != NodeState::kDown) {
    return {"maint", "maint"};
  }
  if (f & kNodeFlagRebootIssued) return {"boot", "rebooting"};
  if (f & kNodeFlagDrain)
    return busy ? StateName{"drng", "draining"} : StateName{"drain", "drained"};
  if (f & kNodeFlagFail) return busy ? StateName{"failg", "failing"} : StateName{"fail", "fail"};
  if (f & kNodeFlagPoweringUp) return {"pow_up", "powering_up"};
  switch (s) {
    case NodeState::kDown:
      return {"down", "down"};
    case NodeState::kAllocated:
      return {"alloc", "allocated"};
    case NodeState::kMixed:
      return {"mix", "mixed"};
    case NodeState::kFuture:
      return {"futr", "future"};
    case NodeState::kUnknown:
      return {"unk", "unknown"};
    case NodeState::kIdle:
      break;
  }
  if (f & kNodeFlagCompleting) return {"comp", "completing"};
  if (f & kNodeFlagPlanned) return {"plnd", "planned"};
  if (f & kNodeFlagReserved) return {"resv", "reserved"};
  return {"idle", "idle"};
}

// One symbol after the name: '*' not responding, '~' powered down, '#' powering up, '%'
// powering down, '!' to be powered down, '@' reboot requested, '$' maintenance.
std::string_view Suffix(NodeState s, uint32_t f) {
  if (f & kNodeFlagNotResponding) return "*";
  if (f & kNodeFlagPoweredDown) return "~";
  if ((f & kNodeFlagPoweringUp) && s != NodeState::kIdle) return "#";
  if (f & kNodeFlagPoweringDown) return "%";
  if (f & kNodeFlagPowerDown) return "!";
  if (f & kNodeFlagRebootRequested) return "@";
  if ((f & kNodeFlagMaintenance) && (s != NodeState::kIdle || (f & kNodeFlagDrain))) return "$";
  return "";
}

// A node whose CPUs count as "other" in CPUS(A/I/O/T): it takes no new work.
bool Unavailable(const NodeView& n) {
  return n.state == NodeState::kDown || n.state == NodeState::kFuture ||
         (n.flags & (kNodeFlagDrain | kNodeFlagFail | kNodeFlagNotResponding));
}

// ---------------------------------------------------------------------------------------------
// Layout

constexpr std::string_view kPartitionFormat = "%#P %.5a %.10l %.6D %.6t %N";
constexpr std::string_view kPartitionLongFormat =
    "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
constexpr std::string_view kNodeFormat = "%#N %.6D %.#P %6t";
constexpr std::string_view kNodeLongFormat =
    "%#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E";
constexpr std::string_view kReasonFormat = "%20E %9u %19H %N";
constexpr std::string_view kReasonLongFormat = "%20E %12U %19H %6t %N";

constexpr std::string_view kLetters = "aAbBcCdDeEfFgGhHIlLmMnNoOpPrRsStTuUvwXYzZ";

std::string_view Header(char c) {
  switch (c) {
    case 'a':
      return "AVAIL";
    case 'A':
      return "NODES(A/I)";
    case 'b':
      return "ACTIVE_FEATURES";
    case 'B':
      return "MAX_CPUS_PER_NODE";
    case 'c':
      return "CPUS";
    case 'C':
      return "CPUS(A/I/O/T)";
    case 'd':
      return "TMP_DISK";
    case 'D':
      return "NODES";
    case 'e':
      return "FREE_MEM";
    case 'E':
      return "REASON";
    case 'f':
      return "AVAIL_FEATURES";
    case 'F':
      return "NODES(A/I/O/T)";
    case 'g':
      return "GROUPS";
    case 'G':
      return "GRES";
    case 'h':
      return "OVERSUBSCRIBE";
    case 'H':
      return "TIMESTAMP";
    case 'I':
      return "PRIO_JOB_FACTOR";
    case 'l':
      return "TIMELIMIT";
    case 'L':
      return "DEFAULTTIME";
    case 'm':
      return "MEMORY";
    case 'M':
      return "PREEMPT_MODE";
    case 'n':
      return "HOSTNAMES";
    case 'N':
      return "NODELIST";
    case 'o':
      return "NODE_ADDR";
    case 'O':
      return "CPU_LOAD";
    case 'p':
      return "PRIO_TIER";
    case 'P':
      return "PARTITION";
    case 'r':
      return "ROOT";
    case 'R':
      return "PARTITION";
    case 's':
      return "JOB_SIZE";
    case 'S':
      return "ALLOCNODES";
    case 't':
      return "STATE";
    case 'T':
      return "STATE";
    case 'u':
      return "USER";
    case 'U':
      return "USER";
    case 'v':
      return "VERSION";
    case 'w':
      return "WEIGHT";
    case 'X':
      return "SOCKETS";
    case 'Y':
      return "CORES";
    case 'z':
      return "S:C:T";
    case 'Z':
      return "THREADS";
  }
  return "";
}

struct Column {
  char letter = '\0';  // '\0': literal text only
  int width = 0;
  bool right = false;
  bool fit = false;  // '#': as wide as the longest value (at least the header's 9)
  std::string suffix;
};

StatusOr<std::vector<Column>> ParseFormat(std::string_view fmt) {
  std::vector<Column> cols;
  size_t first = fmt.find('%');
  if (first != 0) {
    Column lit;
    lit.suffix = std::string(fmt.substr(0, first));
    cols.push_back(std::move(lit));
    if (first == std::string_view::npos) return cols;
  }
  size_t i = first;
  while (i < fmt.size()) {
    size_t j = i + 1;
    Column col;
    if (j < fmt.size() && fmt[j] == '.') {
      col.right = true;
      ++j;
    }
    if (j < fmt.size() && fmt[j] == '#') {
      col.fit = true;
      ++j;
    }
    while (j < fmt.size() && fmt[j] >= '0' && fmt[j] <= '9') {
      col.width = std::min(col.width * 10 + (fmt[j] - '0'), 100000);
      ++j;
    }
    if (j >= fmt.size() || kLetters.find(fmt[j]) == std::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat("-o: invalid node format specification: ", fmt.substr(i, j + 1 - i),
                 "; expected %[.][size]type with type one of ", kLetters));
    }
    col.letter = fmt[j];
    size_t next = fmt.find('%', j + 1);
    col.suffix =
        std::string(fmt.substr(j + 1, next == std::string_view::npos ? next : next - j - 1));
    cols.push_back(std::move(col));
    i = next == std::string_view::npos ? fmt.size() : next;
  }
  return cols;
}

std::string_view LayoutText(const SinfoOptions& o) {
  if (!o.format.empty()) return o.format;
  if (o.list_reasons) return o.long_listing ? kReasonLongFormat : kReasonFormat;
  if (o.node_oriented) return o.long_listing ? kNodeLongFormat : kNodeFormat;
  return o.long_listing ? kPartitionLongFormat : kPartitionFormat;
}

// ---------------------------------------------------------------------------------------------
// Records: the lines sinfo prints, each a partition (or none) and the nodes it groups.

struct Record {
  const PartitionView* part = nullptr;
  std::vector<const NodeView*> nodes;
  size_t first_node = 0;  // index of the first node in the node table
  size_t part_index = 0;
  std::string key;
};

// What two nodes must share to be printed on one line, given the printed columns.
std::string GroupKey(const NodeView& n, const std::vector<Column>& cols, bool exact) {
  std::string key;
  for (const Column& c : cols) {
    switch (c.letter) {
      case 't':
        key += NodeStateCompact(n.state, n.flags);
        break;
      case 'T':
        key += NodeStateLong(n.state, n.flags);
        break;
      case 'c':
        if (exact) key += StrCat(n.cpus);
        break;
      case 'm':
        if (exact) key += StrCat(n.real_memory_mb);
        break;
      case 'd':
        if (exact) key += StrCat(n.tmp_disk_mb);
        break;
      case 'z':
      case 'X':
      case 'Y':
      case 'Z':
        key += StrCat(n.sockets, ":", n.cores_per_socket, ":", n.threads_per_core);
        break;
      case 'f':
        key += n.features_available;
        break;
      case 'b':
        key += n.features_active;
        break;
      case 'G':
        key += n.gres;
        break;
      case 'w':
        key += StrCat(n.weight);
        break;
      case 'E':
      case 'H':
      case 'u':
      case 'U':
        key += StrCat(n.reason, "\x1f", n.reason_user, "\x1f", n.reason_time);
        break;
      case 'O':
        key += n.cpu_load ? StrCat(*n.cpu_load) : std::string("-");
        break;
      case 'e':
        key += n.free_memory_mb ? StrCat(*n.free_memory_mb) : std::string("-");
        break;
      case 'v':
        key += n.version;
        break;
      default:
        continue;
    }
    key.push_back('\x1e');
  }
  return key;
}

std::string MinPlus(int64_t lo, int64_t hi) { return lo == hi ? StrCat(lo) : StrCat(lo, "+"); }

std::string PartitionName(const Record& r) {
  if (r.part == nullptr) return "n/a";
  return r.part->is_default ? StrCat(r.part->name, "*") : r.part->name;
}

std::string Value(char c, const Record& r, const RenderContext& ctx) {
  const NodeView& n0 = *r.nodes.front();
  const PartitionView* p = r.part;
  auto range = [&](auto field) {
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (const NodeView* n : r.nodes) {
      lo = std::min<int64_t>(lo, field(*n));
      hi = std::max<int64_t>(hi, field(*n));
    }
    return MinPlus(lo, hi);
  };
  auto names = [&](auto field) {
    std::vector<std::string> v;
    v.reserve(r.nodes.size());
    for (const NodeView* n : r.nodes) v.push_back(field(*n));
    return core::CompressHostlist(v);
  };
  switch (c) {
    case 'a':
      if (p == nullptr) return "n/a";
      switch (p->state) {
        case PartitionState::kUp:
          return "up";
        case PartitionState::kDown:
          return "down";
        case PartitionState::kDrain:
          return "drain";
        case PartitionState::kInactive:
          return "inact";
      }
      return "";
    case 'A': {
      int64_t alloc = 0, idle = 0;
      for (const NodeView* n : r.nodes) {
        if (Unavailable(*n)) continue;
        if (n->cpus_alloc > 0) {
          ++alloc;
        } else {
          ++idle;
        }
      }
      return StrCat(alloc, "/", idle);
    }
    case 'F': {
      int64_t alloc = 0, idle = 0, other = 0;
      for (const NodeView* n : r.nodes) {
        if (Unavailable(*n)) {
          ++other;
        } else if (n->cpus_alloc > 0) {
          ++alloc;
        } else {
          ++idle;
        }
      }
      return StrCat(alloc, "/", idle, "/", other, "/", r.nodes.size());
    }
    case 'C': {
      int64_t alloc = 0, idle = 0, other = 0, total = 0;
      for (const NodeView* n : r.nodes) {
        alloc += n->cpus_alloc;
        total += n->cpus;
        if (Unavailable(*n)) {
          other += n->cpus - n->cpus_alloc;
        } else {
          idle += n->cpus - n->cpus_alloc;
        }
      }
      return StrCat(alloc, "/", idle, "/", other, "/", total);
    }
    case 'b':
      return n0.features_active.empty() ? "(null)" : n0.features_active;
    case 'B':
      if (p == nullptr || p->max_cpus_per_node < 0) return "UNLIMITED";
      return StrCat(p->max_cpus_per_node);
    case 'c':
      return range([](const NodeView& n) { return n.cpus; });
    case 'd':
      return range([](const NodeView& n) { return n.tmp_disk_mb; });
    case 'D':
      return StrCat(r.nodes.size());
    case 'e':
      return n0.free_memory_mb ? StrCat(*n0.free_memory_mb) : std::string("N/A");
    case 'E':
      return n0.reason.empty() ? "none" : n0.reason;
    case 'f':
      return n0.features_available.empty() ? "(null)" : n0.features_available;
    case 'g':
      if (p == nullptr) return "n/a";
      return p->allow_groups == "ALL" ? std::string("all") : p->allow_groups;
    case 'G':
      return n0.gres.empty() ? "(null)" : n0.gres;
    case 'h':
      return p == nullptr ? std::string("n/a") : p->oversubscribe;
    case 'H':
      return n0.reason_time == 0 ? std::string("Unknown")
                                 : FormatIsoTime(n0.reason_time, ctx.utc_offset_s);
    case 'I':
      return p == nullptr ? std::string("n/a") : StrCat(p->priority_job_factor);
    case 'l':
      if (p == nullptr) return "n/a";
      return p->max_time_s == core::kUnlimitedSeconds ? std::string("infinite")
                                                      : core::FormatElapsed(p->max_time_s);
    case 'L':
      if (p == nullptr || p->default_time_s < 0) return "n/a";
      return p->default_time_s == core::kUnlimitedSeconds ? std::string("infinite")
                                                          : core::FormatElapsed(p->default_time_s);
    case 'm':
      return range([](const NodeView& n) { return n.real_memory_mb; });
    case 'M':
      return p == nullptr ? std::string("n/a") : core::ToLower(p->preempt_mode);
    case 'n':
      return names([](const NodeView& n) { return n.node_hostname; });
    case 'N':
      return names([](const NodeView& n) { return n.name; });
    case 'o':
      return names([](const NodeView& n) { return n.node_addr; });
    case 'O': {
      if (!n0.cpu_load) return "N/A";
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", *n0.cpu_load);
      return buf;
    }
    case 'p':
      return p == nullptr ? std::string("n/a") : StrCat(p->priority_tier);
    case 'P':
      return PartitionName(r);
    case 'r':
      return p == nullptr ? std::string("n/a") : std::string(p->root_only ? "yes" : "no");
    case 'R':
      return p == nullptr ? std::string("n/a") : p->name;
    case 's': {
      if (p == nullptr) return "n/a";
      // sinfo shows a job size of at least one node where the partition allows any.
      const int64_t min = p->min_nodes < 1 && p->max_nodes != 0 ? 1 : p->min_nodes;
      if (p->max_nodes < 0) return StrCat(min, "-infinite");
      if (p->max_nodes == min) return StrCat(min);
      return StrCat(min, "-", p->max_nodes);
    }
    case 'S':
      if (p == nullptr) return "n/a";
      return p->alloc_nodes == "ALL" ? std::string("all") : p->alloc_nodes;
    case 't':
      return NodeStateCompact(n0.state, n0.flags);
    case 'T':
      return NodeStateLong(n0.state, n0.flags);
    case 'u':
      return n0.reason_user.empty() ? "Unknown" : n0.reason_user;
    case 'U':
      return n0.reason_user.empty() ? std::string("Unknown")
                                    : StrCat(n0.reason_user, "(", n0.reason_uid, ")");
    case 'v':
      return n0.version.empty() ? "N/A" : n0.version;
    case 'w':
      return range([](const NodeView& n) { return static_cast<int64_t>(n.weight); });
    case 'X':
      return StrCat(n0.sockets);
    case 'Y':
      return StrCat(n0.cores_per_socket);
    case 'z':
      return StrCat(n0.sockets, ":", n0.cores_per_socket, ":", n0.threads_per_core);
    case 'Z':
      return StrCat(n0.threads_per_core);
  }
  return "";
}

bool Listed(const std::vector<std::string>& filter, std::string_view name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

// Down, drained, draining, failing: the nodes `sinfo -R` explains.
bool HasReasonState(const NodeView& n) {
  return n.state == NodeState::kDown || (n.flags & (kNodeFlagDrain | kNodeFlagFail));
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string NodeStateCompact(NodeState state, uint32_t flags) {
  return StrCat(BaseName(state, flags).compact, Suffix(state, flags));
}

std::string NodeStateLong(NodeState state, uint32_t flags) {
  return StrCat(BaseName(state, flags).full, Suffix(state, flags));
}

void ToNodeTableOrder(std::vector<NodeView>* nodes, std::vector<PartitionView>* partitions) {
  auto before = [](std::string_view a, std::string_view b) {
    return core::NaturalCompare(a, b) < 0;
  };
  if (nodes != nullptr) {
    std::stable_sort(nodes->begin(), nodes->end(),
                     [&](const NodeView& a, const NodeView& b) { return before(a.name, b.name); });
  }
  if (partitions != nullptr) {
    for (PartitionView& p : *partitions) {
      std::stable_sort(p.node_names.begin(), p.node_names.end(), before);
    }
  }
}

Status ValidateSinfoOptions(const SinfoOptions& options) {
  return ParseFormat(LayoutText(options)).status();
}

StatusOr<std::string> RenderSinfo(const std::vector<PartitionView>& partitions,
                                  const std::vector<NodeView>& nodes, const SinfoOptions& options,
                                  const RenderContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Column> cols, ParseFormat(LayoutText(options)));

  std::map<std::string_view, size_t> node_index;
  for (size_t i = 0; i < nodes.size(); ++i) node_index.emplace(nodes[i].name, i);

  std::vector<Record> records;
  auto add = [&](const PartitionView* part, size_t part_index, size_t ni, bool group) {
    const NodeView& n = nodes[ni];
    std::string key = group ? GroupKey(n, cols, options.exact) : std::string();
    if (group) {
      for (Record& r : records) {
        if (r.part == part && r.key == key) {
          r.nodes.push_back(&n);
          return;
        }
      }
    }
    Record r;
    r.part = part;
    r.part_index = part_index;
    r.first_node = ni;
    r.nodes.push_back(&n);
    r.key = std::move(key);
    records.push_back(std::move(r));
  };

  if (options.list_reasons) {
    for (size_t ni = 0; ni < nodes.size(); ++ni) {
      const NodeView& n = nodes[ni];
      if (!HasReasonState(n) || !Listed(options.nodes, n.name)) continue;
      if (!options.partitions.empty()) {
        bool in = false;
        for (const std::string& p : n.partitions) in = in || Listed(options.partitions, p);
        if (!in) continue;
      }
      add(nullptr, 0, ni, /*group=*/true);
    }
  } else {
    std::vector<bool> in_partition(nodes.size(), false);
    for (size_t pi = 0; pi < partitions.size(); ++pi) {
      const PartitionView& p = partitions[pi];
      for (const std::string& name : p.node_names) {
        auto it = node_index.find(name);
        if (it != node_index.end()) in_partition[it->second] = true;
      }
      if (!Listed(options.partitions, p.name)) continue;
      for (const std::string& name : p.node_names) {
        auto it = node_index.find(name);
        if (it == node_index.end() || !Listed(options.nodes, name)) continue;
        add(&p, pi, it->second, !options.node_oriented);
      }
    }
    if (options.partitions.empty()) {
      for (size_t ni = 0; ni < nodes.size(); ++ni) {
        if (!in_partition[ni] && Listed(options.nodes, nodes[ni].name)) {
          add(nullptr, partitions.size(), ni, !options.node_oriented);
        }
      }
    }
  }

  if (options.node_oriented && !options.list_reasons) {
    std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
      return a.first_node != b.first_node ? a.first_node < b.first_node
                                          : a.part_index < b.part_index;
    });
  } else {
    // Partitions in configuration order; within one, the larger state word first.
    std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
      if (a.part_index != b.part_index) return a.part_index < b.part_index;
      return StateWord(*a.nodes.front()) > StateWord(*b.nodes.front());
    });
  }

  // Values first: '#' columns are as wide as their longest value.
  std::vector<std::vector<std::string>> values(records.size());
  for (size_t ri = 0; ri < records.size(); ++ri) {
    for (const Column& c : cols) {
      values[ri].push_back(c.letter == '\0' ? std::string() : Value(c.letter, records[ri], ctx));
    }
  }
  for (size_t ci = 0; ci < cols.size(); ++ci) {
    if (!cols[ci].fit) continue;
    size_t w = 9;
    for (const auto& row : values) w = std::max(w, row[ci].size());
    cols[ci].width = static_cast<int>(w);
  }

  std::string out;
  if (options.long_listing && options.format.empty()) {
    out += FormatCtime(ctx.now, ctx.utc_offset_s);
    out.push_back('\n');
  }
  if (!options.no_header) {
    for (const Column& c : cols) {
      if (c.letter != '\0') AppendColumn(&out, Header(c.letter), c.width, c.right);
      out += c.suffix;
    }
    out.push_back('\n');
  }
  for (const auto& row : values) {
    for (size_t ci = 0; ci < cols.size(); ++ci) {
      if (cols[ci].letter != '\0') AppendColumn(&out, row[ci], cols[ci].width, cols[ci].right);
      out += cols[ci].suffix;
    }
    out.push_back('\n');
  }
  return out;
}

}  // namespace loom::cli::format
