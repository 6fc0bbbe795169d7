// SchedulerParameters and SelectTypeParameters: the two comma-list global keys whose items
// are themselves options.
#include <algorithm>

#include "conf/internal/globals.h"
#include "conf/internal/key_table.h"
#include "core/strings.h"

namespace loom::conf::internal {
namespace {

using core::StrCat;

constexpr int64_t kMaxI32 = INT32_MAX;

// A SchedulerParameters option Loom acts on: an integer in [min, max] (and -1 when
// `minus_one_disables`), or a flag without value.
struct SchedOption {
  std::string_view name;
  int32_t SchedulerParams::*field;
  int64_t min, max;
  bool minus_one_disables;
};

constexpr SchedOption kSchedOptions[] = {
    {"bf_interval", &SchedulerParams::bf_interval_s, 1, 10800, true},
    {"bf_window", &SchedulerParams::bf_window_min, 1, 43200, false},
    {"bf_resolution", &SchedulerParams::bf_resolution_s, 1, 3600, false},
    {"bf_max_job_test", &SchedulerParams::bf_max_job_test, 1, 1000000, false},
    {"bf_max_job_start", &SchedulerParams::bf_max_job_start, 0, 10000, false},
    {"bf_max_job_part", &SchedulerParams::bf_max_job_part, 0, 1000000, false},
    {"bf_max_job_user", &SchedulerParams::bf_max_job_user, 0, 1000000, false},
    {"bf_max_time", &SchedulerParams::bf_max_time_s, 1, 3600, false},
    {"bf_min_age_reserve", &SchedulerParams::bf_min_age_reserve_s, 0, 2592000, false},
    {"default_queue_depth", &SchedulerParams::default_queue_depth, 0, kMaxI32, false},
    {"partition_job_depth", &SchedulerParams::partition_job_depth, 0, kMaxI32, false},
    {"sched_interval", &SchedulerParams::sched_interval_s, 0, kMaxI32, true},
    {"sched_max_job_start", &SchedulerParams::sched_max_job_start, 0, kMaxI32, false},
    {"sched_min_interval", &SchedulerParams::sched_min_interval_us, 0, 1000000, false},
};

}  // namespace

void ParseSchedulerParameters(ParseContext* ctx, const SourceLocation& at, const KeyValue& kv,
                              SchedulerParams* params) {
  for (const std::string& item : SplitList(kv.value)) {
    size_t eq = item.find('=');
    std::string name = core::ToLower(core::Trim(std::string_view(item).substr(0, eq)));
    std::string_view value = eq == std::string::npos
                                 ? std::string_view()
                                 : core::Trim(std::string_view(item).substr(eq + 1));
    const bool has_value = eq != std::string::npos;
    auto bad = [&](std::string_view expected) {
      ctx->Error(
          at, kv.key,
          StrCat("invalid SchedulerParameters option '", item, "': ", name, " expects ", expected));
    };
    if (name == "bf_continue" || name == "nohold_on_prolog_fail") {
      if (has_value) {
        bad("no value");
        continue;
      }
      (name == "bf_continue" ? params->bf_continue : params->nohold_on_prolog_fail) = true;
      continue;
    }
    const SchedOption* opt = nullptr;
    for (const SchedOption& o : kSchedOptions) {
      if (o.name == name) opt = &o;
    }
    if (opt != nullptr) {
      std::optional<int64_t> v = has_value ? core::ParseInt(value) : std::nullopt;
      bool ok = v && ((*v >= opt->min && *v <= opt->max) || (opt->minus_one_disables && *v == -1));
      if (!ok) {
        bad(StrCat("a whole number from ", opt->min, " to ", opt->max,
                   opt->minus_one_disables ? " (or -1 to disable)" : ""));
        continue;
      }
      params->*(opt->field) = static_cast<int32_t>(*v);
      continue;
    }
    std::span<const std::string_view> known = KnownSchedulerOptions();
    if (std::find(known.begin(), known.end(), name) != known.end()) {
      params->other_options.emplace_back(name, std::string(value));
      ctx->Warn(
          at, kv.key,
          StrCat("SchedulerParameters option ", name, " is accepted but not acted on by Loom yet"));
      continue;
    }
    if (name == "max_job_bf") {
      ctx->Error(at, kv.key,
                 "SchedulerParameters option max_job_bf is no longer supported; use "
                 "bf_max_job_test");
      continue;
    }
    std::string msg = StrCat("unknown SchedulerParameters option '", name, "'");
    if (std::optional<std::string_view> near = ClosestMatch(name, known)) {
      msg += StrCat("; did you mean '", *near, "'?");
    }
    ctx->Error(at, kv.key, std::move(msg));
  }
  if (params->bf_max_job_part > params->bf_max_job_test ||
      params->bf_max_job_user > params->bf_max_job_test) {
    ctx->Warn(at, kv.key,
              "bf_max_job_part/bf_max_job_user above bf_max_job_test have no effect; set "
              "bf_max_job_test much higher than them");
  }
}

bool ParseSelectTypeParameters(ParseContext* ctx, const SourceLocation& at, const KeyValue& kv,
                               SelectParams* params) {
  struct UnitItem {
    std::string_view name;
    SelectParams::Unit unit;
    bool memory;
  };
  constexpr UnitItem kUnits[] = {
      {"CR_CPU", SelectParams::Unit::kCpu, false},
      {"CR_CPU_Memory", SelectParams::Unit::kCpu, true},
      {"CR_Core", SelectParams::Unit::kCore, false},
      {"CR_Core_Memory", SelectParams::Unit::kCore, true},
      {"CR_Socket", SelectParams::Unit::kSocket, false},
      {"CR_Socket_Memory", SelectParams::Unit::kSocket, true},
      {"CR_Memory", SelectParams::Unit::kMemory, true},
  };
  constexpr std::string_view kModifiers[] = {"CR_LLN", "CR_Pack_Nodes", "CR_ONE_TASK_PER_CORE",
                                             "CR_CORE_DEFAULT_DIST_BLOCK"};
  constexpr std::string_view kOther[] = {
      "OTHER_CONS_RES",
      "OTHER_CONS_TRES",
      "NHC_NO",
      "NHC_NO_STEPS",
      "MULTIPLE_SHARING_GRES_PJ",
      "ENFORCE_BINDING_GRES",
      "ONE_TASK_PER_SHARING_GRES",
  };
  SelectParams out;
  bool unit_given = false;
  const size_t before = ctx->errors().size();
  std::vector<std::string_view> all;
  for (const UnitItem& u : kUnits) all.push_back(u.name);
  for (std::string_view m : kModifiers) all.push_back(m);
  for (std::string_view o : kOther) all.push_back(o);
  std::vector<std::string> items = SplitList(kv.value);
  if (items.empty()) {
    ctx->BadValue(at, kv.key, kv.value, "CR_Core_Memory, CR_CPU, ... (see slurm.conf(5))");
    return false;
  }
  for (const std::string& item : items) {
    bool matched = false;
    for (const UnitItem& u : kUnits) {
      if (!core::EqualsIgnoreCase(u.name, item)) continue;
      matched = true;
      if (unit_given) {
        ctx->Error(at, kv.key,
                   StrCat("SelectTypeParameters names more than one consumable resource "
                          "type ('",
                          item,
                          "'); give one of CR_CPU, CR_Core, CR_Socket "
                          "(optionally _Memory) or CR_Memory"));
      }
      unit_given = true;
      out.unit = u.unit;
      out.memory = u.memory;
    }
    if (core::EqualsIgnoreCase(item, "CR_LLN")) out.lln = matched = true;
    if (core::EqualsIgnoreCase(item, "CR_Pack_Nodes")) out.pack_nodes = matched = true;
    if (core::EqualsIgnoreCase(item, "CR_ONE_TASK_PER_CORE")) {
      out.one_task_per_core = matched = true;
    }
    if (core::EqualsIgnoreCase(item, "CR_CORE_DEFAULT_DIST_BLOCK")) {
      out.core_default_dist_block = matched = true;
    }
    for (std::string_view o : kOther) {
      if (core::EqualsIgnoreCase(o, item)) {
        matched = true;
        out.other_flags.emplace_back(o);
        ctx->Warn(
            at, kv.key,
            StrCat("SelectTypeParameters flag ", o, " is accepted but not acted on by Loom yet"));
      }
    }
    if (!matched) {
      std::string msg = StrCat("unknown SelectTypeParameters item '", item, "'");
      if (std::optional<std::string_view> near = ClosestMatch(item, all)) {
        msg += StrCat("; did you mean '", *near, "'?");
      } else {
        msg +=
            "; expected CR_CPU, CR_Core, CR_Socket (each optionally _Memory) or CR_Memory, "
            "plus modifiers such as CR_LLN or CR_Pack_Nodes";
      }
      ctx->Error(at, kv.key, std::move(msg));
    }
  }
  if (ctx->errors().size() != before) return false;
  if (!unit_given) {  // only modifiers: the consumable type keeps its default
    out.unit = params->unit;
    out.memory = params->memory;
  }
  *params = std::move(out);
  return true;
}

}  // namespace loom::conf::internal
