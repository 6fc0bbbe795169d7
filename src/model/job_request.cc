#include "model/job_request.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <set>

#include "core/strings.h"

namespace loom::model {
namespace {

using core::StrCat;

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A non-negative decimal number made of digits only (no sign, no spaces), below 10^15.
std::optional<int64_t> Digits(std::string_view s) {
  if (!AllDigits(s) || s.size() > 15) return std::nullopt;
  return core::ParseInt(s);
}

Status BadArray(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("invalid array specification '", text, "': ", why));
}

// The total of the counts, saturating at 2^62.
int64_t SumCounts(const std::vector<TypedCount>& v) {
  constexpr int64_t kCap = int64_t{1} << 62;
  int64_t n = 0;
  for (const TypedCount& c : v) n = c.count >= kCap - n ? kCap : n + c.count;
  return n;
}

int32_t Clamp32(int64_t n) { return static_cast<int32_t>(std::min<int64_t>(n, INT32_MAX)); }

}  // namespace

// ---------------------------------------------------------------------------------------
// --array

namespace {

int64_t StepOf(const ArrayRange& r) { return std::max<int64_t>(1, r.step); }
// The last index a range lists (below `last` when the step does not land on it).
int64_t LastOf(const ArrayRange& r) { return r.first + (r.last - r.first) / StepOf(r) * StepOf(r); }

// Whether the ranges list their indices in ascending order, none twice: then counting and
// printing them need not list every index (an array's spec is read for each of its tasks).
bool Ascending(const std::vector<ArrayRange>& ranges) {
  int64_t after = -1;
  for (const ArrayRange& r : ranges) {
    if (r.last < r.first || r.first <= after) return false;
    after = LastOf(r);
  }
  return true;
}

}  // namespace

std::vector<int64_t> ArraySpec::Indices() const {
  std::vector<int64_t> all;
  for (const ArrayRange& r : ranges) {
    for (int64_t i = r.first; i <= r.last; i += StepOf(r)) all.push_back(i);
  }
  if (!Ascending(ranges)) {
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
  }
  return all;
}

int64_t ArraySpec::Count() const {
  if (!Ascending(ranges)) return static_cast<int64_t>(Indices().size());
  int64_t n = 0;
  for (const ArrayRange& r : ranges) n += (r.last - r.first) / StepOf(r) + 1;
  return n;
}

int64_t ArraySpec::MaxIndex() const {
  if (ranges.empty()) return -1;
  if (Ascending(ranges)) return LastOf(ranges.back());
  std::vector<int64_t> all = Indices();
  return all.empty() ? -1 : all.back();
}

std::string ArraySpec::ToString() const {
  std::string out;
  auto add = [&out](int64_t first, int64_t last) {
    if (!out.empty()) out += ',';
    out += std::to_string(first);
    if (last > first) out += StrCat("-", last);
  };
  // Ranges of consecutive indices print as they are; any other spec index by index, runs of
  // consecutive indices merged.
  const bool runs =
      Ascending(ranges) && std::all_of(ranges.begin(), ranges.end(), [](const ArrayRange& r) {
        return StepOf(r) == 1 || r.first == r.last;
      });
  if (runs) {
    for (size_t i = 0; i < ranges.size();) {
      size_t j = i;
      while (j + 1 < ranges.size() && ranges[j + 1].first == ranges[j].last + 1) ++j;
      add(ranges[i].first, ranges[j].last);
      i = j + 1;
    }
  } else {
    std::vector<int64_t> all = Indices();
    for (size_t i = 0; i < all.size();) {
      size_t j = i;
      while (j + 1 < all.size() && all[j + 1] == all[j] + 1) ++j;
      add(all[i], all[j]);
      i = j + 1;
    }
  }
  if (max_running > 0) out += StrCat("%", max_running);
  return out;
}

StatusOr<ArraySpec> ParseArraySpec(std::string_view text, int64_t max_array_size) {
  ArraySpec spec;
  std::string_view list = text;
  if (size_t pct = text.find('%'); pct != std::string_view::npos) {
    list = text.substr(0, pct);
    std::optional<int64_t> limit = Digits(text.substr(pct + 1));
    if (!limit || *limit < 1 || *limit > INT32_MAX) {
      return BadArray(text,
                      "the number after '%' (tasks allowed to run at once) must be a "
                      "positive integer");
    }
    spec.max_running = static_cast<int32_t>(*limit);
  }
  if (list.empty()) return BadArray(text, "no indices before '%'; write e.g. 0-99%5");
  for (std::string_view element : core::Split(list, ',')) {
    ArrayRange r;
    std::string_view range = element;
    if (size_t colon = element.find(':'); colon != std::string_view::npos) {
      range = element.substr(0, colon);
      std::optional<int64_t> step = Digits(element.substr(colon + 1));
      if (!step || *step < 1) {
        return BadArray(text, StrCat("'", element,
                                     "': the step after ':' must be a positive "
                                     "integer"));
      }
      r.step = *step;
    }
    size_t dash = range.find('-');
    std::optional<int64_t> first = Digits(range.substr(0, dash));
    std::optional<int64_t> last =
        dash == std::string_view::npos ? first : Digits(range.substr(dash + 1));
    if (!first || !last) {
      return BadArray(text, StrCat("'", element,
                                   "' is not an index, a range N-M or N-M:STEP "
                                   "of non-negative integers"));
    }
    if (dash == std::string_view::npos && r.step != 1) {
      return BadArray(text, StrCat("'", element, "': a step needs a range, e.g. 0-15:4"));
    }
    if (*last < *first) {
      return BadArray(text, StrCat("'", element, "': the range ends before it starts"));
    }
    if (*last >= max_array_size) {
      return BadArray(text, StrCat("index ", *last,
                                   " is too large: indices must be below "
                                   "MaxArraySize (",
                                   max_array_size, ")"));
    }
    r.first = *first;
    r.last = *last;
    spec.ranges.push_back(r);
  }
  return spec;
}

// ---------------------------------------------------------------------------------------
// --dependency

namespace {

struct TypeName {
  DependencyType type;
  std::string_view name;
};
constexpr TypeName kTypeNames[] = {
    {DependencyType::kAfter, "after"},
    {DependencyType::kAfterAny, "afterany"},
    {DependencyType::kAfterOk, "afterok"},
    {DependencyType::kAfterNotOk, "afternotok"},
    {DependencyType::kAfterCorr, "aftercorr"},
    {DependencyType::kAfterBurstBuffer, "afterburstbuffer"},
    {DependencyType::kSingleton, "singleton"},
};

Status BadDependency(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("invalid dependency '", text, "': ", why));
}

StatusOr<DependencyTarget> ParseTarget(std::string_view text, std::string_view item,
                                       DependencyType type) {
  DependencyTarget t;
  std::string_view id = item;
  if (size_t plus = item.find('+'); plus != std::string_view::npos) {
    if (type != DependencyType::kAfter) {
      return BadDependency(text, StrCat("'", item,
                                        "': a +minutes delay is allowed only "
                                        "with 'after'"));
    }
    std::optional<int64_t> minutes = Digits(item.substr(plus + 1));
    if (!minutes) {
      return BadDependency(text, StrCat("'", item,
                                        "': the delay after '+' must be a whole "
                                        "number of minutes"));
    }
    t.delay_s = *minutes * 60;
    id = item.substr(0, plus);
  }
  if (size_t us = id.find('_'); us != std::string_view::npos) {
    std::string_view task = id.substr(us + 1);
    id = id.substr(0, us);
    if (task == "*") {
      t.all_tasks = true;
    } else if (std::optional<int64_t> n = Digits(task)) {
      t.array_task = *n;
    } else {
      return BadDependency(text, StrCat("'", item,
                                        "': an array task is written JOBID_TASK "
                                        "or JOBID_*"));
    }
  }
  std::optional<int64_t> job = Digits(id);
  if (!job || *job == 0 || *job > UINT32_MAX) {
    return BadDependency(text, StrCat("'", item, "' is not a job id"));
  }
  t.job_id = static_cast<JobId>(*job);
  return t;
}

}  // namespace

std::string_view DependencyTypeName(DependencyType type) {
  for (const TypeName& t : kTypeNames) {
    if (t.type == type) return t.name;
  }
  return "unknown";
}

std::string Dependency::ToString() const {
  std::string out;
  for (const DependencyClause& c : clauses) {
    if (!out.empty()) out += combine == Combine::kAll ? ',' : '?';
    out += DependencyTypeName(c.type);
    for (const DependencyTarget& t : c.jobs) {
      out += StrCat(":", t.job_id);
      if (t.all_tasks) out += "_*";
      if (t.array_task) out += StrCat("_", *t.array_task);
      if (t.delay_s > 0) out += StrCat("+", t.delay_s / 60);
    }
  }
  return out;
}

StatusOr<Dependency> ParseDependency(std::string_view text) {
  Dependency dep;
  if (text.empty()) return BadDependency(text, "empty; write e.g. afterok:123");
  bool commas = text.find(',') != std::string_view::npos;
  bool questions = text.find('?') != std::string_view::npos;
  if (commas && questions) {
    return BadDependency(text, "use either ',' (all must hold) or '?' (any may hold), not both");
  }
  dep.combine = questions ? Dependency::Combine::kAny : Dependency::Combine::kAll;
  for (std::string_view clause_text : core::Split(text, questions ? '?' : ',')) {
    if (clause_text.empty()) return BadDependency(text, "an empty clause");
    DependencyClause clause;
    std::vector<std::string_view> parts = core::Split(clause_text, ':');
    size_t first_job = 1;
    if (AllDigits(parts[0]) || parts[0].find('_') != std::string_view::npos) {
      clause.type = DependencyType::kAfterAny;  // the old form: bare job ids
      first_job = 0;
    } else {
      bool known = false;
      for (const TypeName& t : kTypeNames) {
        if (core::EqualsIgnoreCase(parts[0], t.name)) {
          clause.type = t.type;
          known = true;
        }
      }
      if (!known) {
        return BadDependency(text, StrCat("unknown type '", parts[0],
                                          "'; expected after, "
                                          "afterany, afterok, afternotok, aftercorr, "
                                          "afterburstbuffer or singleton"));
      }
    }
    if (clause.type == DependencyType::kSingleton) {
      if (parts.size() > 1) return BadDependency(text, "singleton takes no job ids");
    } else {
      if (parts.size() <= first_job) {
        return BadDependency(text, StrCat("'", clause_text, "' names no job; write ",
                                          DependencyTypeName(clause.type), ":JOBID"));
      }
      for (size_t i = first_job; i < parts.size(); ++i) {
        ASSIGN_OR_RETURN(DependencyTarget t, ParseTarget(text, parts[i], clause.type));
        clause.jobs.push_back(t);
      }
    }
    dep.clauses.push_back(std::move(clause));
  }
  return dep;
}

// ---------------------------------------------------------------------------------------
// Output file patterns

namespace {

// Slurm's NO_VAL, which it prints for %a outside job arrays.
constexpr int64_t kNoArrayTask = 4294967294;
constexpr int kMaxPadWidth = 10;

void AppendPadded(std::string* out, int64_t value, int width) {
  std::string digits = std::to_string(value);
  if (static_cast<int>(digits.size()) < width) out->append(width - digits.size(), '0');
  out->append(digits);
}

}  // namespace

std::string ExpandOutputPattern(std::string_view pattern, const OutputPatternContext& c) {
  std::string out;
  if (pattern.find('\\') != std::string_view::npos) {
    // Escaped: no symbol is replaced; "\\" stands for one backslash, lone ones are dropped.
    for (size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] != '\\') {
        out += pattern[i];
      } else if (i + 1 < pattern.size() && pattern[i + 1] == '\\') {
        out += '\\';
        ++i;
      }
    }
    return out;
  }
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    int width = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = std::min(kMaxPadWidth, width * 10 + (pattern[j] - '0'));
      ++j;
    }
    if (j >= pattern.size()) {  // a trailing '%' or '%N': kept as written
      out.append(pattern.substr(i));
      break;
    }
    switch (pattern[j]) {
      case 'j':
        AppendPadded(&out, static_cast<int64_t>(c.job_id), width);
        break;
      case 'J':
        AppendPadded(&out, static_cast<int64_t>(c.job_id), width);
        out += c.step_id ? StrCat(".", *c.step_id) : std::string(".batch");
        break;
      case 'A':
        AppendPadded(&out, static_cast<int64_t>(c.array_job_id.value_or(c.job_id)), width);
        break;
      case 'a':
        AppendPadded(&out, c.array_task_id.value_or(kNoArrayTask), width);
        break;
      case 's':
        if (c.step_id) {
          AppendPadded(&out, *c.step_id, width);
        } else {
          out += "batch";
        }
        break;
      case 'n':
        AppendPadded(&out, c.node_index, width);
        break;
      case 't':
        AppendPadded(&out, c.task_id, width);
        break;
      case 'N':
        out += c.node_name;
        break;
      case 'u':
        out += c.user;
        break;
      case 'x':
        out += c.job_name;
        break;
      default:  // not a symbol: kept as written
        out.append(pattern.substr(i, j + 1 - i));
        break;
    }
    i = j;
  }
  return out;
}

std::string_view DefaultOutputPattern(bool is_array) {
  return is_array ? "slurm-%A_%a.out" : "slurm-%j.out";
}

std::string JobRequest::EffectiveStdout() const {
  return stdout_pattern.empty() ? std::string(DefaultOutputPattern(array.has_value()))
                                : stdout_pattern;
}

std::string JobRequest::EffectiveStderr() const {
  return stderr_pattern.empty() ? EffectiveStdout() : stderr_pattern;
}

// ---------------------------------------------------------------------------------------
// --export

namespace {

bool IsEnvName(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
  });
}

bool IsSlurmVariable(std::string_view name) { return name.substr(0, 6) == "SLURM_"; }

}  // namespace

std::string ExportPolicy::ToString() const {
  switch (mode) {
    case Mode::kAll:
      return "ALL";
    case Mode::kNone:
      return "NONE";
    case Mode::kList:
      break;
  }
  std::string out = with_all ? "ALL" : "";
  for (const auto& [name, value] : vars) {
    if (!out.empty()) out += ',';
    out += name;
    if (value) out += StrCat("=", *value);
  }
  return out;
}

StatusOr<ExportPolicy> ParseExportPolicy(std::string_view text) {
  ExportPolicy p;
  if (core::EqualsIgnoreCase(text, "ALL")) return p;
  if (core::EqualsIgnoreCase(text, "NONE")) {
    p.mode = ExportPolicy::Mode::kNone;
    return p;
  }
  p.mode = ExportPolicy::Mode::kList;
  for (std::string_view token : core::Split(text, ',')) {
    if (core::EqualsIgnoreCase(token, "ALL")) {
      p.with_all = true;
      continue;
    }
    if (core::EqualsIgnoreCase(token, "NONE")) continue;  // NONE,VAR: the list alone
    size_t eq = token.find('=');
    std::string_view name = token.substr(0, eq);
    if (!IsEnvName(name)) {
      // "A=x,y": a piece that is not a variable continues the previous value.
      if (!p.vars.empty() && p.vars.back().second && eq == std::string_view::npos) {
        *p.vars.back().second += StrCat(",", token);
        continue;
      }
      return absl::InvalidArgumentError(StrCat("invalid --export entry '", token, "' in '", text,
                                               "': expected ALL, NONE, NAME or NAME=value"));
    }
    if (eq == std::string_view::npos) {
      p.vars.emplace_back(std::string(name), std::nullopt);
    } else {
      p.vars.emplace_back(std::string(name), std::string(token.substr(eq + 1)));
    }
  }
  if (p.vars.empty()) p.mode = p.with_all ? ExportPolicy::Mode::kAll : ExportPolicy::Mode::kNone;
  return p;
}

std::map<std::string, std::string> ResolveExport(const ExportPolicy& policy,
                                                 const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  if (policy.mode == ExportPolicy::Mode::kAll ||
      (policy.mode == ExportPolicy::Mode::kList && policy.with_all)) {
    out = env;
  } else {
    for (const auto& [name, value] : env) {
      if (IsSlurmVariable(name)) out[name] = value;
    }
  }
  for (const auto& [name, value] : policy.vars) {
    auto it = env.find(name);
    if (!value) {
      if (it != env.end()) out[name] = it->second;
    } else if (!policy.with_all || it == env.end()) {
      out[name] = *value;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The shape

void DeriveShape(JobRequest* r, std::string_view command, std::vector<std::string>* warnings) {
  JobShape& s = r->shape;
  int64_t gpus_total = SumCounts(r->gpus);
  bool nodes_given = r->min_nodes.has_value();
  s.cpus_per_task = r->cpus_per_task.value_or(1);
  s.ntasks_per_node = r->ntasks_per_node.value_or(0);
  s.min_nodes = r->min_nodes.value_or(1);
  if (r->ntasks) {
    s.ntasks = *r->ntasks;
  } else if (r->ntasks_per_node && nodes_given) {
    s.ntasks = Clamp32(int64_t{*r->ntasks_per_node} * s.min_nodes);
  } else if (gpus_total > 0 && r->gpus_per_task.empty()) {
    s.ntasks = Clamp32(gpus_total);
  } else {
    s.ntasks = s.min_nodes;
  }
  if (nodes_given) {
    s.max_nodes = r->max_nodes.value_or(s.min_nodes);
  } else {
    if (r->ntasks_per_node && s.ntasks > *r->ntasks_per_node) {
      s.min_nodes = Clamp32((int64_t{s.ntasks} + *r->ntasks_per_node - 1) / *r->ntasks_per_node);
    }
    s.max_nodes = std::max(s.min_nodes, s.ntasks);
  }
  s.mem_per_node_mb = r->mem_per_node_mb.value_or(0);
  s.mem_per_cpu_mb = r->mem_per_cpu_mb.value_or(0);
  s.mem_per_gpu_mb = r->mem_per_gpu_mb.value_or(0);
  s.cpus_per_gpu = r->cpus_per_gpu.value_or(0);
  s.segment = r->segment.value_or(0);

  // GPUs: per node from --gpus-per-node (or --gres=gpu), per task from --gpus-per-task or
  // --gpus spread over the tasks.
  std::set<std::string> types;
  auto note_types = [&types](const std::vector<TypedCount>& v) {
    for (const TypedCount& c : v) {
      if (c.name == "gpu") types.insert(c.type);
    }
  };
  std::vector<TypedCount> gres_gpus;
  for (const TypedCount& c : r->gres) {
    if (c.name == "gpu") gres_gpus.push_back(c);
  }
  note_types(gres_gpus);
  note_types(r->gpus);
  note_types(r->gpus_per_node);
  note_types(r->gpus_per_task);
  if (!r->gpus_per_node.empty()) {
    s.gpus_per_node = Clamp32(SumCounts(r->gpus_per_node));
  } else if (!gres_gpus.empty()) {
    s.gpus_per_node = Clamp32(SumCounts(gres_gpus));
  }
  if (!r->gpus_per_task.empty()) {
    s.gpus_per_task = Clamp32(SumCounts(r->gpus_per_task));
  } else if (gpus_total > 0) {
    int64_t per_task = (gpus_total + s.ntasks - 1) / s.ntasks;
    if (per_task * s.ntasks != gpus_total) {
      warnings->push_back(StrCat(command, ": warning: --gpus=", gpus_total,
                                 " does not divide among ", s.ntasks, " tasks; each task gets ",
                                 per_task, " GPUs"));
    }
    s.gpus_per_task = Clamp32(per_task);
  }
  types.erase("");
  if (types.size() == 1) {
    s.gpu_type = *types.begin();
  } else if (types.size() > 1) {
    warnings->push_back(StrCat(command,
                               ": warning: several GPU types requested; Loom schedules the "
                               "total count on nodes of any type"));
  }
  s.exclusive = r->sharing == SharingMode::kExclusive;
  s.switches = r->switches;
  s.switches_wait_s = r->switches_wait_s.value_or(0);
}

}  // namespace loom::model
