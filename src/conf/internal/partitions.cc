#include "conf/internal/partitions.h"

#include <set>

#include "conf/internal/key_table.h"
#include "core/strings.h"

namespace loom::conf::internal {
namespace {

using core::StrCat;

constexpr int64_t kMaxU16Prio = 65533;
constexpr int64_t kMaxMb = int64_t{1} << 50;

// "YES:4" -> {kYes, 4}; nullopt when malformed.
std::optional<std::pair<OverSubscribe, int32_t>> ParseOverSubscribe(std::string_view value) {
  std::string_view v = core::Trim(value);
  std::string_view word = v, count;
  if (size_t colon = v.find(':'); colon != std::string_view::npos) {
    word = v.substr(0, colon);
    count = v.substr(colon + 1);
  }
  OverSubscribe mode;
  if (core::EqualsIgnoreCase(word, "NO")) {
    mode = OverSubscribe::kNo;
  } else if (core::EqualsIgnoreCase(word, "EXCLUSIVE")) {
    mode = OverSubscribe::kExclusive;
  } else if (core::EqualsIgnoreCase(word, "YES")) {
    mode = OverSubscribe::kYes;
  } else if (core::EqualsIgnoreCase(word, "FORCE")) {
    mode = OverSubscribe::kForce;
  } else {
    return std::nullopt;
  }
  const bool takes_count = mode == OverSubscribe::kYes || mode == OverSubscribe::kForce;
  if (word.size() != v.size()) {
    if (!takes_count) return std::nullopt;
    std::optional<int64_t> n = core::ParseInt(count);
    if (!n || *n < 1 || *n > 65533) return std::nullopt;
    return std::make_pair(mode, static_cast<int32_t>(*n));
  }
  return std::make_pair(mode, takes_count ? 4 : 1);
}

}  // namespace

std::optional<PreemptMode> ParsePreemptMode(std::string_view value) {
  PreemptMode m;
  bool base_set = false;
  std::vector<std::string> items = SplitList(value);
  if (items.empty()) return std::nullopt;
  for (const std::string& item : items) {
    std::string w = core::ToLower(item);
    PreemptMode::Base base;
    if (w == "gang") {
      if (m.gang) return std::nullopt;
      m.gang = true;
      continue;
    }
    if (w == "within") {
      if (m.within) return std::nullopt;
      m.within = true;
      continue;
    }
    if (w == "off") {
      base = PreemptMode::Base::kOff;
    } else if (w == "cancel") {
      base = PreemptMode::Base::kCancel;
    } else if (w == "requeue") {
      base = PreemptMode::Base::kRequeue;
    } else if (w == "suspend") {
      base = PreemptMode::Base::kSuspend;
    } else {
      return std::nullopt;
    }
    if (base_set) return std::nullopt;
    base_set = true;
    m.base = base;
  }
  return m;
}

void PartitionTable::Apply(const SourceLocation& at, const std::string& key, const KeyValue& kv,
                           Pending* p) {
  PartitionConfig& part = p->partition;
  auto list = [](std::string_view v) {
    std::vector<std::string> items = SplitList(v);
    if (items.size() == 1 && core::EqualsIgnoreCase(items[0], "ALL")) items.clear();
    return items;
  };
  if (key == "Nodes") {
    p->nodes_expr = kv.value;
    p->nodes_at = at;
  } else if (key == "Default") {
    if (auto b = ctx_->Bool(at, kv)) part.is_default = *b;
  } else if (key == "MaxTime") {
    if (auto d = ctx_->Duration(at, kv)) part.max_time_s = *d;
  } else if (key == "DefaultTime") {
    if (auto d = ctx_->Duration(at, kv)) part.default_time_s = *d;
  } else if (key == "MaxNodes") {
    if (auto n = ctx_->IntOrUnlimited(at, kv, 0, kUnlimitedNodes - 1, kUnlimitedNodes)) {
      part.max_nodes = static_cast<int32_t>(*n);
    }
  } else if (key == "MinNodes") {
    if (auto n = ctx_->Int(at, kv, 0, kUnlimitedNodes - 1))
      part.min_nodes = static_cast<int32_t>(*n);
  } else if (key == "Priority") {  // the pre-16.05 name: sets both
    if (auto n = ctx_->Int(at, kv, 0, kMaxU16Prio)) {
      part.priority_tier = part.priority_job_factor = static_cast<int32_t>(*n);
    }
  } else if (key == "PriorityTier") {
    if (auto n = ctx_->Int(at, kv, 0, kMaxU16Prio)) part.priority_tier = static_cast<int32_t>(*n);
  } else if (key == "PriorityJobFactor") {
    if (auto n = ctx_->Int(at, kv, 0, kMaxU16Prio)) {
      part.priority_job_factor = static_cast<int32_t>(*n);
    }
  } else if (key == "State") {
    if (auto c = ctx_->Choice(at, kv, {"UP", "DOWN", "DRAIN", "INACTIVE"})) {
      part.state = static_cast<PartitionState>(*c);
    }
  } else if (key == "OverSubscribe") {
    if (auto o = ParseOverSubscribe(kv.value)) {
      part.oversubscribe = o->first;
      part.oversubscribe_count = o->second;
    } else {
      ctx_->BadValue(at, kv.key, kv.value, "NO, EXCLUSIVE, YES[:N] or FORCE[:N] (N from 1)");
    }
  } else if (key == "QOS") {
    part.qos = std::string(core::Trim(kv.value));
  } else if (key == "AllowAccounts") {
    part.allow_accounts = list(kv.value);
  } else if (key == "DenyAccounts") {
    part.deny_accounts = SplitList(kv.value);
  } else if (key == "AllowQos") {
    part.allow_qos = list(kv.value);
  } else if (key == "DenyQos") {
    part.deny_qos = SplitList(kv.value);
  } else if (key == "AllowGroups") {
    part.allow_groups = list(kv.value);
  } else if (key == "ExclusiveUser") {
    if (auto b = ctx_->Bool(at, kv)) part.exclusive_user = *b;
  } else if (key == "TRESBillingWeights") {
    if (auto w = ctx_->TresWeights(at, kv)) {
      part.billing_weights = std::move(*w);
      part.billing_weights_text = kv.value;
    }
  } else if (key == "PreemptMode") {
    if (auto m = ParsePreemptMode(kv.value)) {
      part.preempt_mode = *m;
    } else {
      ctx_->BadValue(at, kv.key, kv.value,
                     "OFF, CANCEL, REQUEUE or SUSPEND, optionally with GANG and/or WITHIN "
                     "(e.g. SUSPEND,GANG)");
    }
  } else if (key == "GraceTime") {
    if (auto n = ctx_->Int(at, kv, 0, 4294967295)) part.grace_time_s = *n;
  } else if (key == "DefMemPerCPU") {
    if (auto n = ctx_->Int(at, kv, 0, kMaxMb)) part.def_mem_per_cpu_mb = *n;
  } else if (key == "DefMemPerNode") {
    if (auto n = ctx_->Int(at, kv, 0, kMaxMb)) part.def_mem_per_node_mb = *n;
  } else if (key == "MaxMemPerCPU") {
    if (auto n = ctx_->IntOrUnlimited(at, kv, 0, kMaxMb, 0)) part.max_mem_per_cpu_mb = *n;
  } else if (key == "MaxMemPerNode") {
    if (auto n = ctx_->IntOrUnlimited(at, kv, 0, kMaxMb, 0)) part.max_mem_per_node_mb = *n;
  } else if (key == "DefMemPerGPU") {
    if (auto n = ctx_->Int(at, kv, 0, kMaxMb)) part.def_mem_per_gpu_mb = *n;
  } else {
    part.other_keys[key] = kv.value;
  }
}

void PartitionTable::AddLine(const Statement& st) {
  const SourceLocation& at = st.location;
  const KeyValue& head = st.pairs[0];
  const std::string name(core::Trim(head.value));
  const bool is_default_line = core::EqualsIgnoreCase(name, "DEFAULT");
  if (name.empty()) {
    ctx_->BadValue(at, head.key, head.value, "a partition name");
    return;
  }
  // Collect this line's values by canonical key.
  std::map<std::string, KeyValue> line;
  for (size_t i = 1; i < st.pairs.size(); ++i) {
    const KeyValue& kv = st.pairs[i];
    std::optional<std::string_view> key = CanonicalKey(Scope::kPartition, kv.key);
    if (!key || *key == "PartitionName") {
      ctx_->Error(at, kv.key,
                  key ? "PartitionName appears twice on one line; start a new line for each "
                        "partition"
                      : UnknownKeyMessage(Scope::kPartition, kv.key));
      continue;
    }
    std::string k(*key == "Shared" ? "OverSubscribe" : *key);
    if (!line.emplace(k, kv).second) {
      ctx_->Error(at, kv.key, StrCat(k, " is given twice on this PartitionName line"));
    }
  }
  // Check this line's values once, and warn about the ones Loom does not act on.
  Pending scratch;
  for (const auto& [key, kv] : line) {
    const size_t before = ctx_->errors().size();
    Apply(at, key, kv, &scratch);
    if (ctx_->errors().size() != before) continue;
    if (scratch.partition.other_keys.count(key) > 0) {
      ctx_->WarnNotActedOn(at, kv.key, "on PartitionName lines");
    }
    if (is_default_line) defaults_[key] = kv;
  }
  if (is_default_line) return;
  for (const Pending& p : pending_) {
    if (p.partition.name == name) {
      ctx_->Error(
          at, "PartitionName",
          StrCat("partition ", name, " is already defined at ", p.partition.defined_at.ToString()));
      return;
    }
  }
  // Values of this line over the DEFAULT ones; both were checked above.
  std::map<std::string, KeyValue> merged = defaults_;
  for (const auto& [key, kv] : line) merged[key] = kv;
  Pending p;
  p.partition.name = name;
  p.partition.defined_at = at;
  for (const auto& [key, kv] : merged) {  // "Priority" sorts before PriorityTier/JobFactor
    Apply(at, key, kv, &p);
  }
  pending_.push_back(std::move(p));
}

void PartitionTable::Finish(const NodeTable& nodes) {
  ClusterConfig& cfg = ctx_->config();
  const PartitionConfig* first_default = nullptr;
  size_t memberships = 0;
  for (Pending& p : pending_) {
    PartitionConfig& part = p.partition;
    const SourceLocation& at = part.defined_at;
    if (p.nodes_expr && !core::Trim(*p.nodes_expr).empty()) {
      if (std::optional<std::vector<size_t>> idx =
              nodes.Resolve(p.nodes_at, "Nodes", *p.nodes_expr)) {
        memberships += idx->size();
        if (memberships > kMaxMemberships) {
          ctx_->Error(p.nodes_at, "Nodes",
                      StrCat("partitions list more than ", kMaxMemberships,
                             " nodes in total; is a Nodes= hostlist mistyped?"));
          break;
        }
        for (size_t i : *idx) part.nodes.push_back(cfg.nodes[i].name);
      }
    }
    if (part.is_default) {
      if (first_default != nullptr) {
        ctx_->Error(at, "Default",
                    StrCat("partitions ", first_default->name, " (",
                           first_default->defined_at.ToString(), ") and ", part.name,
                           " are both Default=YES; only one partition can be the default"));
      } else {
        first_default = &part;
      }
    }
    if (part.default_time_s != kTimeNotSet && part.default_time_s > part.max_time_s) {
      ctx_->Error(at, "DefaultTime",
                  StrCat("partition ", part.name, ": DefaultTime ",
                         core::FormatDuration(part.default_time_s), " exceeds MaxTime ",
                         core::FormatDuration(part.max_time_s)));
    }
    if (part.max_nodes != kUnlimitedNodes && part.min_nodes > part.max_nodes) {
      ctx_->Error(at, "MinNodes",
                  StrCat("partition ", part.name, ": MinNodes=", part.min_nodes,
                         " exceeds MaxNodes=", part.max_nodes));
    }
    if (part.def_mem_per_cpu_mb > 0 && part.def_mem_per_node_mb > 0) {
      ctx_->Error(at, "DefMemPerCPU",
                  StrCat("partition ", part.name,
                         ": DefMemPerCPU and DefMemPerNode are mutually exclusive"));
    }
    if (part.max_mem_per_cpu_mb > 0 && part.max_mem_per_node_mb > 0) {
      ctx_->Error(at, "MaxMemPerCPU",
                  StrCat("partition ", part.name,
                         ": MaxMemPerCPU and MaxMemPerNode are mutually exclusive"));
    }
  }
  for (Pending& p : pending_) cfg.partitions.push_back(std::move(p.partition));
  pending_.clear();
}

}  // namespace loom::conf::internal
