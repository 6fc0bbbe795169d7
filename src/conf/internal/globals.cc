#include "conf/internal/globals.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "conf/internal/key_table.h"
#include "conf/internal/nodes.h"
#include "conf/internal/partitions.h"
#include "core/strings.h"

namespace loom::conf::internal {
namespace {

using core::StrCat;

constexpr int64_t kMaxU32 = 4294967295;
constexpr int64_t kMaxI32 = INT32_MAX;
constexpr int64_t kMaxMb = int64_t{1} << 50;

bool IsRepeatable(std::string_view key) { return key == "SlurmctldHost"; }

bool IsLegacyController(std::string_view key) {
  return key == "ControlMachine" || key == "ControlAddr" || key == "BackupController" ||
         key == "BackupAddr";
}

// PriorityFlags: Slurm's flags, comma-separated, in any case. FAIR_TREE is the default
// since Slurm 19.05 and is accepted as such.
void ParsePriorityFlags(ParseContext* ctx, const SourceLocation& at, const KeyValue& kv,
                        PriorityParams* p) {
  static constexpr std::string_view kOthers[] = {
      "ACCRUE_ALWAYS",  "CALCULATE_RUNNING",     "DEPTH_OBLIVIOUS", "INCR_ONLY",
      "NO_NORMAL_ALL",  "NO_NORMAL_ASSOC",       "NO_NORMAL_PART",  "NO_NORMAL_QOS",
      "NO_NORMAL_TRES", "SMALL_RELATIVE_TO_TIME"};
  PriorityParams parsed = *p;
  parsed.no_fair_tree = parsed.max_tres = false;
  parsed.other_flags.clear();
  for (std::string_view flag : core::Split(kv.value, ',')) {
    flag = core::Trim(flag);
    if (flag.empty()) continue;
    if (core::EqualsIgnoreCase(flag, "NO_FAIR_TREE")) {
      parsed.no_fair_tree = true;
    } else if (core::EqualsIgnoreCase(flag, "MAX_TRES")) {
      parsed.max_tres = true;
    } else if (core::EqualsIgnoreCase(flag, "FAIR_TREE")) {
      // the default
    } else if (auto it = std::find_if(
                   std::begin(kOthers), std::end(kOthers),
                   [&](std::string_view o) { return core::EqualsIgnoreCase(o, flag); });
               it != std::end(kOthers)) {
      parsed.other_flags.emplace_back(*it);
    } else {
      ctx->BadValue(at, kv.key, kv.value,
                    StrCat("Slurm's priority flags (", std::string(flag),
                           " is not one): MAX_TRES, NO_FAIR_TREE, ACCRUE_ALWAYS, "
                           "CALCULATE_RUNNING, DEPTH_OBLIVIOUS, INCR_ONLY, NO_NORMAL_*, "
                           "SMALL_RELATIVE_TO_TIME"));
      return;
    }
  }
  *p = std::move(parsed);
}

// PrologFlags: Slurm's flags, comma-separated, in any case. Contain implies Alloc, as in Slurm.
void ParsePrologFlags(ParseContext* ctx, const SourceLocation& at, const KeyValue& kv,
                      ClusterConfig::PrologFlags* p) {
  static constexpr std::string_view kOthers[] = {"DeferBatch", "ForceRequeueOnFail", "RunInJob",
                                                 "X11"};
  ClusterConfig::PrologFlags parsed;
  for (std::string_view flag : core::Split(kv.value, ',')) {
    flag = core::Trim(flag);
    if (flag.empty()) continue;
    if (core::EqualsIgnoreCase(flag, "Alloc")) {
      parsed.alloc = true;
    } else if (core::EqualsIgnoreCase(flag, "Contain")) {
      parsed.contain = parsed.alloc = true;
    } else if (core::EqualsIgnoreCase(flag, "NoHold")) {
      parsed.nohold = true;
    } else if (core::EqualsIgnoreCase(flag, "Serial")) {
      parsed.serial = true;
    } else if (auto it = std::find_if(
                   std::begin(kOthers), std::end(kOthers),
                   [&](std::string_view o) { return core::EqualsIgnoreCase(o, flag); });
               it != std::end(kOthers)) {
      parsed.other.emplace_back(*it);
      ctx->Warn(at, kv.key,
                StrCat("PrologFlags ", *it, " is accepted but not acted on by Loom yet"));
    } else {
      ctx->BadValue(at, kv.key, kv.value,
                    StrCat("Slurm's prolog flags (", std::string(flag),
                           " is not one): Alloc, Contain, NoHold, Serial, DeferBatch, "
                           "ForceRequeueOnFail, RunInJob, X11"));
      return;
    }
  }
  *p = std::move(parsed);
}

// MpiParams: ports=LOW-HIGH is acted on; Slurm's other options are kept with a warning.
void ParseMpiParams(ParseContext* ctx, const SourceLocation& at, const KeyValue& kv,
                    ClusterConfig* cfg) {
  cfg->mpi_ports_low = cfg->mpi_ports_high = 0;
  for (std::string_view item : core::Split(kv.value, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    if (item.size() < 6 || !core::EqualsIgnoreCase(item.substr(0, 6), "ports=")) {
      ctx->Warn(at, kv.key,
                StrCat("MpiParams option ", std::string(item),
                       " is accepted but not acted on by Loom yet"));
      continue;
    }
    const std::string_view range = item.substr(6);
    const size_t dash = range.find('-');
    std::optional<int64_t> low = core::ParseInt(range.substr(0, dash));
    std::optional<int64_t> high =
        dash == std::string_view::npos ? std::nullopt : core::ParseInt(range.substr(dash + 1));
    if (!low || !high || *low < 1 || *high > 65535 || *low > *high) {
      ctx->BadValue(at, kv.key, kv.value, "ports=LOW-HIGH, such as ports=12000-12999");
      return;
    }
    cfg->mpi_ports_low = static_cast<int32_t>(*low);
    cfg->mpi_ports_high = static_cast<int32_t>(*high);
  }
}

// Prolog, Epilog and the other programs run around jobs: an absolute path (a glob pattern
// may name several programs). Whether it exists is checked where it runs.
void ParseProgramPath(ParseContext* ctx, const SourceLocation& at, const KeyValue& kv,
                      std::string_view key, ClusterConfig& cfg) {
  std::string* field = key == "Prolog"            ? &cfg.prolog
                       : key == "Epilog"          ? &cfg.epilog
                       : key == "PrologSlurmctld" ? &cfg.prolog_slurmctld
                       : key == "EpilogSlurmctld" ? &cfg.epilog_slurmctld
                       : key == "TaskProlog"      ? &cfg.task_prolog
                       : key == "TaskEpilog"      ? &cfg.task_epilog
                       : key == "SrunProlog"      ? &cfg.srun_prolog
                                                  : &cfg.srun_epilog;
  const std::string path(core::Trim(kv.value));
  if (!path.empty() && path.front() != '/') {
    ctx->BadValue(at, kv.key, kv.value, "an absolute path, such as /etc/slurm/prolog.sh");
    return;
  }
  *field = path;
}

}  // namespace

bool GlobalKeys::LuaPluginListed(const SourceLocation& at, const KeyValue& kv,
                                 std::string_view prefix) {
  bool lua = false;
  std::vector<std::string> others;
  for (const std::string& f : SplitList(core::Trim(kv.value))) {
    std::string name = core::ToLower(f);
    if (name.starts_with(prefix)) name = name.substr(prefix.size());
    if (name == "lua") {
      lua = true;
    } else {
      others.push_back(f);
    }
  }
  if (!others.empty()) {
    ctx_->Warn(at, kv.key,
               StrCat(kv.key, " ", core::Join(others, ","),
                      " is accepted but not acted on by Loom yet (lua is)"));
  }
  return lua;
}

void GlobalKeys::Add(const SourceLocation& at, const KeyValue& kv) {
  std::optional<std::string_view> canonical = CanonicalKey(Scope::kGlobal, kv.key);
  if (!canonical) {
    ctx_->Error(at, kv.key, UnknownKeyMessage(Scope::kGlobal, kv.key));
    return;
  }
  std::string key(*canonical);
  if (!IsRepeatable(key)) {
    auto [it, inserted] = seen_.emplace(key, at);
    if (!inserted) {
      ctx_->Warn(at, kv.key,
                 StrCat(key, " is set more than once (also at ", it->second.ToString(),
                        "); the last value wins"));
    }
  }
  Apply(at, key, kv);
}

void GlobalKeys::Apply(const SourceLocation& at, std::string_view key, const KeyValue& kv) {
  ClusterConfig& cfg = ctx_->config();
  std::string_view value = core::Trim(kv.value);
  auto set_i32 = [&](int32_t* field, int64_t min, int64_t max) {
    if (auto v = ctx_->Int(at, kv, min, max)) *field = static_cast<int32_t>(*v);
  };
  auto set_i64 = [&](int64_t* field, int64_t min, int64_t max) {
    if (auto v = ctx_->Int(at, kv, min, max)) *field = *v;
  };
  auto non_empty = [&](std::string* field, std::string_view what) {
    if (value.empty()) {
      ctx_->BadValue(at, kv.key, kv.value, what);
    } else {
      *field = std::string(value);
    }
  };

  if (key == "ClusterName") {
    std::string lower = core::ToLower(value);
    if (value.empty() || lower.find_first_of(" \t,()") != std::string::npos) {
      ctx_->BadValue(at, kv.key, kv.value, "a cluster name");
      return;
    }
    if (lower != value) {
      ctx_->Warn(
          at, kv.key,
          StrCat("ClusterName ", value, " is used in lower case (", lower, "), as Slurm does"));
    }
    cfg.cluster_name = lower;
  } else if (key == "SlurmctldHost") {
    StatusOr<ControllerHost> h = ParseControllerHost(value);
    if (!h.ok()) {
      ctx_->BadValue(at, kv.key, kv.value, "host or host(address), e.g. ctl1(10.0.0.1)");
      return;
    }
    for (const ControllerHost& prev : cfg.controllers) {
      if (prev.name == h->name) {
        ctx_->Error(at, kv.key, StrCat("SlurmctldHost ", h->name, " is listed twice"));
        return;
      }
    }
    cfg.controllers.push_back(std::move(*h));
  } else if (IsLegacyController(key)) {
    legacy_controller_[std::string(key)] = {at, std::string(value)};
  } else if (key == "SlurmctldPort") {
    size_t dash = value.find('-');
    std::optional<int64_t> lo = core::ParseInt(value.substr(0, dash));
    std::optional<int64_t> hi =
        dash == std::string_view::npos ? lo : core::ParseInt(value.substr(dash + 1));
    if (!lo || !hi || *lo < 1 || *hi > 65535 || *lo > *hi) {
      ctx_->BadValue(at, kv.key, kv.value, "a port (1-65535) or a range such as 6817-6818");
      return;
    }
    cfg.slurmctld_port = static_cast<int32_t>(*lo);
    cfg.slurmctld_port_count = static_cast<int32_t>(*hi - *lo + 1);
  } else if (key == "SlurmdPort") {
    set_i32(&cfg.slurmd_port, 1, 65535);
  } else if (key == "SlurmUser") {
    non_empty(&cfg.slurm_user, "a user name");
  } else if (key == "StateSaveLocation") {
    non_empty(&cfg.state_save_location, "a directory");
  } else if (key == "GresTypes") {
    std::vector<std::string> types;
    for (const std::string& t : SplitList(value)) {
      std::string lower = core::ToLower(t);
      bool ok = true;
      for (char c : lower) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
      if (!ok) {
        ctx_->BadValue(at, kv.key, kv.value, "a comma list of GRES names, e.g. gpu,mps");
        return;
      }
      types.push_back(std::move(lower));
    }
    cfg.gres_types = std::move(types);
  } else if (key == "SchedulerType") {
    if (auto c = ctx_->Choice(at, kv, {"sched/backfill", "sched/builtin"})) {
      cfg.scheduler_type = static_cast<SchedulerType>(*c);
    }
  } else if (key == "SchedulerParameters") {
    SchedulerParams params;  // a later SchedulerParameters line replaces the earlier one
    ParseSchedulerParameters(ctx_, at, kv, &params);
    cfg.scheduler = std::move(params);
  } else if (key == "SelectType") {
    if (auto c = ctx_->Choice(at, kv, {"select/cons_tres", "select/cons_res", "select/linear"})) {
      cfg.select_type = static_cast<SelectType>(*c);
    }
  } else if (key == "SelectTypeParameters") {
    SelectParams params;
    if (ParseSelectTypeParameters(ctx_, at, kv, &params)) {
      cfg.select = std::move(params);
      select_params_given_ = true;
    }
  } else if (key == "PriorityType") {
    if (auto c = ctx_->Choice(at, kv, {"priority/basic", "priority/multifactor"})) {
      cfg.priority.type = static_cast<PriorityType>(*c);
    }
  } else if (key == "PriorityWeightAge") {
    set_i64(&cfg.priority.weight_age, 0, kMaxU32);
  } else if (key == "PriorityWeightAssoc") {
    set_i64(&cfg.priority.weight_assoc, 0, kMaxU32);
  } else if (key == "PriorityWeightFairshare") {
    set_i64(&cfg.priority.weight_fairshare, 0, kMaxU32);
  } else if (key == "PriorityWeightJobSize") {
    set_i64(&cfg.priority.weight_job_size, 0, kMaxU32);
  } else if (key == "PriorityWeightPartition") {
    set_i64(&cfg.priority.weight_partition, 0, kMaxU32);
  } else if (key == "PriorityWeightQOS") {
    set_i64(&cfg.priority.weight_qos, 0, kMaxU32);
  } else if (key == "PriorityWeightTRES") {
    if (auto w = ctx_->TresWeights(at, kv)) {
      cfg.priority.weight_tres = std::move(*w);
      cfg.priority.weight_tres_text = kv.value;
    }
  } else if (key == "PriorityMaxAge") {
    if (auto d = ctx_->Duration(at, kv)) cfg.priority.max_age_s = *d;
  } else if (key == "PriorityDecayHalfLife") {
    if (auto d = ctx_->Duration(at, kv)) cfg.priority.decay_half_life_s = *d;
  } else if (key == "PriorityFavorSmall") {
    if (auto b = ctx_->Bool(at, kv)) cfg.priority.favor_small = *b;
  } else if (key == "PriorityCalcPeriod") {
    if (auto d = ctx_->Duration(at, kv)) {
      if (*d <= 0 || *d >= core::kUnlimitedSeconds) {
        ctx_->BadValue(at, kv.key, kv.value, "a period of at least one minute, e.g. 5 (minutes)");
      } else {
        cfg.priority.calc_period_s = *d;
      }
    }
  } else if (key == "PriorityUsageResetPeriod") {
    if (auto c = ctx_->Choice(
            at, kv, {"NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"})) {
      cfg.priority.usage_reset = static_cast<UsageReset>(*c);
    }
  } else if (key == "PriorityFlags") {
    ParsePriorityFlags(ctx_, at, kv, &cfg.priority);
  } else if (key == "PreemptType") {
    if (auto c = ctx_->Choice(at, kv, {"preempt/none", "preempt/partition_prio", "preempt/qos"})) {
      cfg.preempt_type = static_cast<PreemptType>(*c);
    }
  } else if (key == "PreemptMode") {
    if (auto m = ParsePreemptMode(value)) {
      cfg.preempt_mode = *m;
    } else {
      ctx_->BadValue(at, kv.key, kv.value,
                     "OFF, CANCEL, REQUEUE or SUSPEND, optionally with GANG and/or WITHIN "
                     "(e.g. SUSPEND,GANG)");
    }
  } else if (key == "TopologyPlugin") {
    if (auto c = ctx_->Choice(at, kv,
                              {"topology/none", "topology/tree", "topology/block",
                               "topology/3d_torus", "topology/hypercube", "topology/default"})) {
      cfg.topology_plugin = core::ToLower(value);
    }
  } else if (key == "AccountingStorageType") {
    if (auto c = ctx_->Choice(at, kv, {"accounting_storage/none", "accounting_storage/slurmdbd"})) {
      cfg.accounting_storage_type = core::ToLower(value);
    }
  } else if (key == "AccountingStorageHost") {
    non_empty(&cfg.accounting_storage_host, "a host name or address");
  } else if (key == "AccountingStoragePort") {
    set_i32(&cfg.accounting_storage_port, 1, 65535);
  } else if (key == "AccountingStorageEnforce") {
    std::vector<std::string> flags;
    for (const std::string& f : SplitList(value)) {
      const std::string lower = core::ToLower(f);
      if (lower == "none") continue;
      static constexpr std::string_view kKnown[] = {"associations", "limits", "nojobs", "nosteps",
                                                    "qos",          "safe",   "wckeys", "all"};
      if (std::find(std::begin(kKnown), std::end(kKnown), lower) == std::end(kKnown)) {
        ctx_->BadValue(at, kv.key, kv.value,
                       "a comma list of associations, limits, nojobs, nosteps, qos, safe, "
                       "wckeys, all or none");
        return;
      }
      flags.push_back(lower);
    }
    cfg.accounting_storage_enforce = std::move(flags);
  } else if (key == "PrivateData") {
    std::vector<std::string> kinds;
    for (const std::string& f : SplitList(value)) kinds.push_back(core::ToLower(f));
    cfg.private_data = std::move(kinds);
  } else if (key == "AccountingStorageTRES") {
    std::vector<std::string> tres;
    for (const std::string& t : SplitList(value)) {
      std::optional<std::string> name = ctx_->TresName(at, kv, t);
      if (!name) return;
      tres.push_back(std::move(*name));
    }
    cfg.accounting_storage_tres = std::move(tres);
  } else if (key == "TRESBillingWeights") {
    if (auto w = ctx_->TresWeights(at, kv)) {
      cfg.billing_weights = std::move(*w);
      cfg.billing_weights_text = kv.value;
      ctx_->Warn(at, kv.key,
                 "TRESBillingWeights as a global key is a Loom extension (it applies to "
                 "partitions that set none); Slurm only accepts it on PartitionName lines");
    }
  } else if (key == "JobSubmitPlugins") {
    cfg.job_submit_lua = LuaPluginListed(at, kv, "job_submit/");
  } else if (key == "CliFilterPlugins") {
    cfg.cli_filter_lua = LuaPluginListed(at, kv, "cli_filter/");
  } else if (key == "LoomJobSubmitHelpers") {
    set_i32(&cfg.job_submit_helpers, 1, 64);
  } else if (key == "LoomJobSubmitTimeout") {
    // Seconds, with a fraction if wanted ("0.5").
    char* end = nullptr;
    const std::string text(value);
    const double s = std::strtod(text.c_str(), &end);
    if (text.empty() || end == nullptr || *end != '\0' || !(s >= 0.01 && s <= 60)) {
      ctx_->BadValue(at, kv.key, kv.value, "seconds from 0.01 to 60, such as 1 or 0.5");
    } else {
      cfg.job_submit_timeout_ms = static_cast<int64_t>(s * 1000 + 0.5);
    }
  } else if (key == "MaxJobCount") {
    set_i32(&cfg.max_job_count, 1, kMaxI32);
  } else if (key == "MaxArraySize") {
    set_i32(&cfg.max_array_size, 0, 4000001);
  } else if (key == "DefMemPerCPU") {
    set_i64(&cfg.def_mem_per_cpu_mb, 0, kMaxMb);
  } else if (key == "DefMemPerNode") {
    set_i64(&cfg.def_mem_per_node_mb, 0, kMaxMb);
  } else if (key == "DefMemPerGPU") {
    set_i64(&cfg.def_mem_per_gpu_mb, 0, kMaxMb);
  } else if (key == "MaxMemPerCPU") {
    if (auto v = ctx_->IntOrUnlimited(at, kv, 0, kMaxMb, 0)) cfg.max_mem_per_cpu_mb = *v;
  } else if (key == "MaxMemPerNode") {
    if (auto v = ctx_->IntOrUnlimited(at, kv, 0, kMaxMb, 0)) cfg.max_mem_per_node_mb = *v;
  } else if (key == "SlurmdTimeout") {
    set_i32(&cfg.slurmd_timeout_s, 0, 65533);
  } else if (key == "KillWait") {
    set_i32(&cfg.kill_wait_s, 0, 65533);
  } else if (key == "TreeWidth") {
    set_i32(&cfg.tree_width, 1, 65533);
  } else if (key == "MpiDefault") {
    if (auto c = ctx_->Choice(at, kv, {kMpiTypes[0], kMpiTypes[1], kMpiTypes[2], kMpiTypes[3]})) {
      cfg.mpi_default = std::string(kMpiTypes[*c]);
    }
  } else if (key == "Prolog" || key == "Epilog" || key == "PrologSlurmctld" ||
             key == "EpilogSlurmctld" || key == "TaskProlog" || key == "TaskEpilog" ||
             key == "SrunProlog" || key == "SrunEpilog") {
    ParseProgramPath(ctx_, at, kv, key, cfg);
  } else if (key == "PrologFlags") {
    ParsePrologFlags(ctx_, at, kv, &cfg.prolog_flags);
  } else if (key == "PrologEpilogTimeout") {
    set_i32(&cfg.prolog_epilog_timeout_s, 1, ClusterConfig::kNoPrologEpilogTimeout);
  } else if (key == "MpiParams") {
    ParseMpiParams(ctx_, at, kv, &cfg);
  } else if (key == "TaskPlugin") {
    cfg.task_plugins.clear();
    for (std::string_view p : core::Split(kv.value, ',')) {
      p = core::Trim(p);
      if (!p.empty()) cfg.task_plugins.emplace_back(p);
    }
  } else if (key == "TaskPluginParam") {
    cfg.task_plugin_param = kv.value;
  } else if (key == "JobAcctGatherFrequency") {
    // "30" or "task=30[,energy=0,network=0,filesystem=0]": only the task interval acts.
    cfg.other_keys[std::string(key)] = kv.value;
    for (std::string_view item : core::Split(kv.value, ',')) {
      item = core::Trim(item);
      const size_t eq = item.find('=');
      const std::string_view type = eq == std::string_view::npos ? "task" : item.substr(0, eq);
      const std::optional<int64_t> seconds =
          core::ParseInt(eq == std::string_view::npos ? item : item.substr(eq + 1));
      const bool known = core::EqualsIgnoreCase(type, "task") ||
                         core::EqualsIgnoreCase(type, "energy") ||
                         core::EqualsIgnoreCase(type, "network") ||
                         core::EqualsIgnoreCase(type, "filesystem");
      if (!known || !seconds || *seconds < 0 || *seconds > 65533) {
        ctx_->BadValue(at, kv.key, kv.value,
                       "seconds, or TYPE=seconds for task, energy, network and filesystem "
                       "(e.g. task=30,energy=0)");
        return;
      }
      if (core::EqualsIgnoreCase(type, "task")) cfg.acct_gather_task_s = static_cast<int32_t>(*seconds);
    }
  } else if (key == "MinJobAge") {
    set_i32(&cfg.min_job_age_s, 0, kMaxI32);
  } else if (key == "ResvOverRun") {
    if (auto v = ctx_->IntOrUnlimited(at, kv, 0, 65533, -1)) {
      cfg.resv_over_run_s = *v < 0 ? core::kUnlimitedSeconds : *v * 60;
    }
  } else if (key == "ReturnToService") {
    set_i32(&cfg.return_to_service, 0, 2);
  } else if (key == "SlurmctldParameters") {
    cfg.other_keys[std::string(key)] = kv.value;
    for (std::string_view p : core::Split(kv.value, ',')) {
      p = core::Trim(p);
      if (p.empty()) continue;
      const size_t eq = p.find('=');
      const std::string name = core::ToLower(p.substr(0, eq));
      const std::string_view arg = eq == std::string_view::npos ? "" : p.substr(eq + 1);
      int32_t* target = name == "max_unauthenticated_connections" ? &cfg.max_unauthenticated_connections
                        : name == "unauthenticated_deadline"       ? &cfg.unauthenticated_deadline_s
                                                                   : nullptr;
      if (target == nullptr) {
        ctx_->Warn(at, kv.key, StrCat("SlurmctldParameters option ", p,
                                      " is accepted but not acted on by Loom yet"));
        continue;
      }
      const std::optional<int64_t> n = core::ParseInt(arg);
      const int64_t lo = 1, hi = target == &cfg.unauthenticated_deadline_s ? 3600 : 1000000;
      if (!n || *n < lo || *n > hi) {
        ctx_->BadValue(at, kv.key, kv.value,
                       StrCat(name, "= takes a whole number from ", lo, " to ", hi));
        continue;
      }
      *target = static_cast<int32_t>(*n);
    }
  } else if (key == "SlurmdParameters") {
    cfg.other_keys[std::string(key)] = kv.value;
    cfg.slurmd_parameters.clear();
    for (std::string_view p : core::Split(kv.value, ',')) {
      p = core::Trim(p);
      if (p.empty()) continue;
      cfg.slurmd_parameters.emplace_back(core::ToLower(p));
      if (cfg.slurmd_parameters.back() != "config_overrides") {
        ctx_->Warn(at, kv.key, StrCat("SlurmdParameters option ", p,
                                      " is accepted but not acted on by Loom yet"));
      }
    }
  } else if (key == "SlurmctldDebug" || key == "SlurmdDebug" || key == "SlurmctldSyslogDebug" ||
             key == "SlurmdSyslogDebug") {
    std::optional<core::LogLevel> level = core::ParseLogLevel(value);
    if (!level) {
      ctx_->BadValue(at, kv.key, kv.value,
                     "quiet, fatal, error, info, verbose, debug, debug2 .. debug5 (or 0-9)");
      return;
    }
    if (key == "SlurmctldDebug") cfg.slurmctld_debug = *level;
    if (key == "SlurmdDebug") cfg.slurmd_debug = *level;
    if (key == "SlurmctldSyslogDebug") cfg.slurmctld_syslog_debug = *level;
    if (key == "SlurmdSyslogDebug") cfg.slurmd_syslog_debug = *level;
  } else if (key == "SlurmctldLogFile") {
    cfg.slurmctld_log_file = std::string(value);
  } else if (key == "SlurmdLogFile") {
    cfg.slurmd_log_file = std::string(value);
  } else if (key == "SlurmctldPidFile") {
    cfg.slurmctld_pid_file = std::string(value);
  } else if (key == "SlurmdPidFile") {
    cfg.slurmd_pid_file = std::string(value);
  } else if (key == "DebugFlags") {
    StatusOr<uint32_t> flags = core::ParseDebugFlags(value);
    if (!flags.ok()) {
      ctx_->BadValue(at, kv.key, kv.value,
                     StrCat("a comma list of debug flags; ", std::string(flags.status().message())));
      return;
    }
    cfg.debug_flags = *flags;
  } else if (key == "AuthType") {
    cfg.other_keys[std::string(key)] = kv.value;
    if (core::Trim(kv.value) != "auth/munge") {
      ctx_->BadValue(at, kv.key, kv.value, "auth/munge (Loom authenticates with MUNGE)");
    }
  } else if (key == "AuthInfo") {
    // socket= (munged's socket) and ttl= are read where credentials are made and checked.
    cfg.other_keys[std::string(key)] = kv.value;
  } else if (key == "SchedulerAuth") {
    cfg.other_keys[std::string(key)] = kv.value;
    ctx_->Warn(at, kv.key, "SchedulerAuth is defunct in Slurm and ignored");
  } else {
    cfg.other_keys[std::string(key)] = kv.value;
    ctx_->WarnNotActedOn(at, kv.key);
  }
}

void GlobalKeys::Finish() {
  ClusterConfig& cfg = ctx_->config();
  if (!legacy_controller_.empty()) {
    const auto& any = *legacy_controller_.begin();
    if (!cfg.controllers.empty()) {
      ctx_->Error(any.second.first, any.first,
                  StrCat(any.first,
                         " cannot be combined with SlurmctldHost; list each controller as "
                         "SlurmctldHost=name(addr), primary first"));
    } else {
      auto get = [&](const char* k) -> std::string {
        auto it = legacy_controller_.find(k);
        return it == legacy_controller_.end() ? "" : it->second.second;
      };
      std::string primary = get("ControlMachine"), backup = get("BackupController");
      if (primary.empty()) {
        ctx_->Error(any.second.first, any.first,
                    StrCat(any.first, " needs ControlMachine; better, use SlurmctldHost"));
      } else {
        std::string addr = get("ControlAddr");
        cfg.controllers.push_back({primary, addr.empty() ? primary : addr});
        if (!backup.empty()) {
          std::string baddr = get("BackupAddr");
          cfg.controllers.push_back({backup, baddr.empty() ? backup : baddr});
        }
        ctx_->Warn(any.second.first, any.first,
                   "ControlMachine/ControlAddr/BackupController/BackupAddr are deprecated; "
                   "use SlurmctldHost=name(addr), once per controller");
      }
    }
  }
  if (!select_params_given_ && cfg.select_type == SelectType::kLinear) {
    cfg.select.unit = SelectParams::Unit::kCpu;  // whole nodes; memory not consumable
    cfg.select.memory = false;
  }
  auto where = [&](const char* k) { return seen_.find(k); };
  for (auto [a, b] :
       {std::pair{"DefMemPerCPU", "DefMemPerNode"}, std::pair{"MaxMemPerCPU", "MaxMemPerNode"}}) {
    auto ia = where(a), ib = where(b);
    if (ia != seen_.end() && ib != seen_.end()) {
      const SourceLocation& later = ia->second.line > ib->second.line ? ia->second : ib->second;
      ctx_->Error(later, b,
                  StrCat(a, " (", ia->second.ToString(), ") and ", b, " (", ib->second.ToString(),
                         ") are mutually exclusive; set one"));
    }
  }
  if (cfg.priority.type == PriorityType::kBasic) {
    for (const auto& [k, at] : seen_) {
      if (k.rfind("PriorityWeight", 0) == 0 || k == "PriorityDecayHalfLife" ||
          k == "PriorityMaxAge" || k == "PriorityFavorSmall" || k == "PriorityCalcPeriod" ||
          k == "PriorityUsageResetPeriod" || k == "PriorityFlags") {
        ctx_->Warn(at, k,
                   StrCat(k,
                          " has no effect with PriorityType=priority/basic; set "
                          "PriorityType=priority/multifactor"));
      }
    }
  }
  for (const std::string& t : cfg.accounting_storage_tres) {
    if (t.rfind("gres/", 0) != 0) continue;
    std::string name =
        t.substr(5, t.find(':') == std::string::npos ? std::string::npos : t.find(':') - 5);
    bool listed = false;
    for (const std::string& g : cfg.gres_types) listed = listed || g == name;
    if (!listed) {
      auto it = where("AccountingStorageTRES");
      ctx_->Warn(it == seen_.end() ? SourceLocation{} : it->second, "AccountingStorageTRES",
                 StrCat("AccountingStorageTRES tracks ", t, " but GresTypes does not list ", name));
    }
  }
}

}  // namespace loom::conf::internal
