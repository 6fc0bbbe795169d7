#include "conf/cluster_config.h"

#include <algorithm>

#include "core/strings.h"

namespace loom::conf {

std::string_view NodeStateName(NodeState s) {
  switch (s) {
    case NodeState::kUnknown:
      return "UNKNOWN";
    case NodeState::kCloud:
      return "CLOUD";
    case NodeState::kDown:
      return "DOWN";
    case NodeState::kDrain:
      return "DRAIN";
    case NodeState::kFail:
      return "FAIL";
    case NodeState::kFailing:
      return "FAILING";
    case NodeState::kFuture:
      return "FUTURE";
  }
  return "UNKNOWN";
}

std::string_view PartitionStateName(PartitionState s) {
  switch (s) {
    case PartitionState::kUp:
      return "UP";
    case PartitionState::kDown:
      return "DOWN";
    case PartitionState::kDrain:
      return "DRAIN";
    case PartitionState::kInactive:
      return "INACTIVE";
  }
  return "UP";
}

std::string_view OverSubscribeName(OverSubscribe o) {
  switch (o) {
    case OverSubscribe::kNo:
      return "NO";
    case OverSubscribe::kYes:
      return "YES";
    case OverSubscribe::kExclusive:
      return "EXCLUSIVE";
    case OverSubscribe::kForce:
      return "FORCE";
  }
  return "NO";
}

std::string_view SchedulerTypeName(SchedulerType t) {
  return t == SchedulerType::kBackfill ? "sched/backfill" : "sched/builtin";
}

std::string_view SelectTypeName(SelectType t) {
  switch (t) {
    case SelectType::kConsTres:
      return "select/cons_tres";
    case SelectType::kConsRes:
      return "select/cons_res";
    case SelectType::kLinear:
      return "select/linear";
  }
  return "select/linear";
}

std::string_view PriorityTypeName(PriorityType t) {
  return t == PriorityType::kBasic ? "priority/basic" : "priority/multifactor";
}

std::string_view UsageResetName(UsageReset r) {
  switch (r) {
    case UsageReset::kNone:
      return "NONE";
    case UsageReset::kNow:
      return "NOW";
    case UsageReset::kDaily:
      return "DAILY";
    case UsageReset::kWeekly:
      return "WEEKLY";
    case UsageReset::kMonthly:
      return "MONTHLY";
    case UsageReset::kQuarterly:
      return "QUARTERLY";
    case UsageReset::kYearly:
      return "YEARLY";
  }
  return "NONE";
}

std::string PriorityParams::FlagsString() const {
  std::vector<std::string> flags;
  if (max_tres) flags.push_back("MAX_TRES");
  if (no_fair_tree) flags.push_back("NO_FAIR_TREE");
  flags.insert(flags.end(), other_flags.begin(), other_flags.end());
  return core::Join(flags, ",");
}

std::string_view PreemptTypeName(PreemptType t) {
  switch (t) {
    case PreemptType::kNone:
      return "preempt/none";
    case PreemptType::kPartitionPrio:
      return "preempt/partition_prio";
    case PreemptType::kQos:
      return "preempt/qos";
  }
  return "preempt/none";
}

std::string PreemptMode::ToString() const {
  std::string out;
  switch (base) {
    case Base::kOff:
      out = (gang || within) ? "" : "OFF";
      break;
    case Base::kCancel:
      out = "CANCEL";
      break;
    case Base::kRequeue:
      out = "REQUEUE";
      break;
    case Base::kSuspend:
      out = "SUSPEND";
      break;
  }
  if (gang) out += out.empty() ? "GANG" : ",GANG";
  if (within) out += out.empty() ? "WITHIN" : ",WITHIN";
  return out;
}

std::string ClusterConfig::PrologFlags::ToString() const {
  std::vector<std::string> out;
  if (alloc && !contain) out.push_back("Alloc");
  if (contain) out.push_back("Alloc,Contain");
  if (nohold) out.push_back("NoHold");
  if (serial) out.push_back("Serial");
  out.insert(out.end(), other.begin(), other.end());
  return core::Join(out, ",");
}

std::string SelectParams::ToString() const {
  std::string out;
  switch (unit) {
    case Unit::kCpu:
      out = memory ? "CR_CPU_Memory" : "CR_CPU";
      break;
    case Unit::kCore:
      out = memory ? "CR_Core_Memory" : "CR_Core";
      break;
    case Unit::kSocket:
      out = memory ? "CR_Socket_Memory" : "CR_Socket";
      break;
    case Unit::kMemory:
      out = "CR_Memory";
      break;
  }
  if (lln) out += ",CR_LLN";
  if (pack_nodes) out += ",CR_Pack_Nodes";
  if (one_task_per_core) out += ",CR_ONE_TASK_PER_CORE";
  if (core_default_dist_block) out += ",CR_CORE_DEFAULT_DIST_BLOCK";
  for (const std::string& f : other_flags) out += core::StrCat(",", f);
  return out;
}

int64_t NodeConfig::GresCount(std::string_view name) const {
  int64_t n = 0;
  for (const GresSpec& g : gres) {
    if (core::EqualsIgnoreCase(g.name, name)) n += g.count;
  }
  return n;
}

int64_t NodeConfig::GresCount(std::string_view name, std::string_view type) const {
  int64_t n = 0;
  for (const GresSpec& g : gres) {
    if (core::EqualsIgnoreCase(g.name, name) && core::EqualsIgnoreCase(g.type, type)) {
      n += g.count;
    }
  }
  return n;
}

std::vector<std::pair<std::string, int64_t>> NodeConfig::GpusByType() const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const GresSpec& g : gres) {
    if (g.name == "gpu") out.emplace_back(g.type, g.count);
  }
  return out;
}

bool NodeConfig::HasFeature(std::string_view feature) const {
  for (const std::string& f : features) {
    if (f == feature) return true;
  }
  return false;
}

bool PartitionConfig::HasNode(std::string_view node) const {
  for (const std::string& n : nodes) {
    if (n == node) return true;
  }
  return false;
}

const NodeConfig* ClusterConfig::FindNode(std::string_view name) const {
  for (const NodeConfig& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

const PartitionConfig* ClusterConfig::FindPartition(std::string_view name) const {
  for (const PartitionConfig& p : partitions) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const PartitionConfig* ClusterConfig::DefaultPartition() const {
  for (const PartitionConfig& p : partitions) {
    if (p.is_default) return &p;
  }
  return nullptr;
}

const core::TresBillingWeights& ClusterConfig::BillingWeightsFor(
    const PartitionConfig& partition) const {
  return partition.billing_weights.empty() ? billing_weights : partition.billing_weights;
}

bool ClusterConfig::Enforces(std::string_view flag) const {
  for (const std::string& f : accounting_storage_enforce) {
    // "all" holds every flag but nojobs and nosteps; "safe" and "limits" hold "associations".
    if (f == flag || (f == "all" && flag != "nojobs" && flag != "nosteps")) return true;
    if (flag == "associations" && (f == "limits" || f == "safe" || f == "qos")) return true;
  }
  return false;
}

bool ClusterConfig::Private(std::string_view kind) const {
  for (const std::string& k : private_data) {
    if (k == kind || k == "all") return true;
  }
  return false;
}

bool ClusterConfig::ConfigOverrides() const {
  return std::find(slurmd_parameters.begin(), slurmd_parameters.end(), "config_overrides") !=
         slurmd_parameters.end();
}

}  // namespace loom::conf
