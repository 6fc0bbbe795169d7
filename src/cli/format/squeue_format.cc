#include "cli/format/squeue_format.h"

#include <algorithm>
#include <optional>

#include "cli/format/internal/squeue_fields.h"
#include "cli/format/job_fields.h"
#include "cli/format/text.h"
#include "core/strings.h"

namespace loom::cli::format {
namespace {

using core::StrCat;
using internal::AppendRow;
using internal::Column;
using internal::ParseFormat;
using internal::ParseLongFormat;
using internal::PassesExplicitFilters;
using model::JobState;

constexpr std::string_view kDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
constexpr std::string_view kLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
constexpr std::string_view kStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

StatusOr<std::vector<Column>> LayoutFor(const SqueueOptions& o) {
  if (!o.format.empty()) return ParseFormat(o.format);
  if (!o.long_format.empty()) return ParseLongFormat(o.long_format);
  if (o.start) return ParseFormat(kStartFormat);
  return ParseFormat(o.long_listing ? kLongFormat : kDefaultFormat);
}

// ---------------------------------------------------------------------------------------------
// Sorting

struct SortKey {
  char letter;
  bool descending;
};

// The sort keys squeue accepts, by the -o letter they name.
constexpr std::string_view kSortLetters = "aAbBcCdDeEfFgGhHiIjJkKlLmMnNpPqQrRSTtuUvVwxyYzZ";

StatusOr<std::vector<SortKey>> ParseSort(std::string_view text) {
  std::vector<SortKey> keys;
  for (std::string_view item : core::Split(text, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    SortKey k{'\0', false};
    if (item.front() == '-' || item.front() == '+') {
      k.descending = item.front() == '-';
      item.remove_prefix(1);
    }
    if (item.size() != 1 || kSortLetters.find(item.front()) == std::string_view::npos) {
      return absl::InvalidArgumentError(
          StrCat("-S: invalid sort specification '", item,
                 "'; expected a comma separated list of field letters such as P,t,-p"));
    }
    k.letter = item.front();
    keys.push_back(k);
  }
  return keys;
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// An array's records sort together: by the array's id, then task id, the record of the pending
// tasks last.
std::pair<uint32_t, uint32_t> ArrayOrder(const JobView& j) {
  return {j.array_job_id != 0 ? j.array_job_id : j.job_id, j.array_task_id.value_or(UINT32_MAX)};
}

int Compare(char letter, const JobView& a, const JobView& b, const RenderContext& ctx) {
  switch (letter) {
    case 'i':
    case 'F':
    case 'K':
      return Cmp(ArrayOrder(a), ArrayOrder(b));
    case 'A':
      return Cmp(a.job_id, b.job_id);
    case 'j':
      return Cmp(a.name, b.name);
    case 'u':
      return Cmp(a.user_name, b.user_name);
    case 'U':
      return Cmp(a.user_id, b.user_id);
    case 'g':
      return Cmp(a.group_name, b.group_name);
    case 'G':
      return Cmp(a.group_id, b.group_id);
    case 'a':
      return Cmp(a.account, b.account);
    case 'q':
      return Cmp(a.qos, b.qos);
    case 'P':
      return Cmp(a.partition, b.partition);
    case 't':
    case 'T':
      return Cmp(model::JobStateName(a.state), model::JobStateName(b.state));
    case 'p':
    case 'Q':
      return Cmp(a.priority, b.priority);
    case 'S':
      return Cmp(a.start_time, b.start_time);
    case 'e':
      return Cmp(a.end_time, b.end_time);
    case 'V':
      return Cmp(a.submit_time, b.submit_time);
    case 'M':
      return Cmp(JobTimeUsed(a, ctx.now), JobTimeUsed(b, ctx.now));
    case 'l':
      return Cmp(a.time_limit_s, b.time_limit_s);
    case 'L':
      return Cmp(a.time_limit_s - JobTimeUsed(a, ctx.now),
                 b.time_limit_s - JobTimeUsed(b, ctx.now));
    case 'D':
      return Cmp(a.num_nodes, b.num_nodes);
    case 'C':
      return Cmp(a.num_cpus, b.num_cpus);
    case 'c':
      return Cmp(a.min_cpus_node, b.min_cpus_node);
    case 'm':
      return Cmp(a.min_memory_mb, b.min_memory_mb);
    case 'd':
      return Cmp(a.min_tmp_disk_mb, b.min_tmp_disk_mb);
    case 'N':
      return Cmp(a.nodes, b.nodes);
    case 'B':
      return Cmp(a.batch_host, b.batch_host);
    case 'r':
    case 'R':
      return Cmp(JobReasonText(a), JobReasonText(b));
    case 'E':
      return Cmp(a.dependency, b.dependency);
    case 'f':
      return Cmp(a.features, b.features);
    case 'k':
      return Cmp(a.comment, b.comment);
    case 'n':
      return Cmp(a.req_nodes, b.req_nodes);
    case 'v':
      return Cmp(a.reservation, b.reservation);
    case 'w':
      return Cmp(a.wckey, b.wckey);
    case 'x':
      return Cmp(a.exc_nodes, b.exc_nodes);
    case 'y':
      return Cmp(a.nice, b.nice);
    case 'Y':
      return Cmp(a.sched_nodes, b.sched_nodes);
    case 'Z':
      return Cmp(a.work_dir, b.work_dir);
    case 'b':
      return Cmp(a.tres_per_node, b.tres_per_node);
    case 'h':
      return Cmp(a.oversubscribe, b.oversubscribe);
    default:
      return 0;  // H, I, J, z, ...: per-node request shapes, rarely sorted on
  }
}

// ---------------------------------------------------------------------------------------------
// Filters

bool Contains(const std::vector<std::string>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Task ids of an array's pending record: "3-10%2", "1,4-6", "0-15:4".
std::vector<uint32_t> ExpandTaskString(std::string_view s) {
  std::vector<uint32_t> ids;
  size_t pct = s.find('%');
  if (pct != std::string_view::npos) s = s.substr(0, pct);
  for (std::string_view part : core::Split(s, ',')) {
    size_t colon = part.find(':');
    int64_t step = 1;
    if (colon != std::string_view::npos) {
      step = core::ParseInt(part.substr(colon + 1)).value_or(1);
      part = part.substr(0, colon);
    }
    if (step < 1) step = 1;
    size_t dash = part.find('-');
    std::optional<int64_t> lo = core::ParseInt(part.substr(0, dash));
    std::optional<int64_t> hi =
        dash == std::string_view::npos ? lo : core::ParseInt(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi - *lo > 10'000'000) continue;
    for (int64_t t = *lo; t <= *hi; t += step) ids.push_back(static_cast<uint32_t>(t));
  }
  return ids;
}

}  // namespace

namespace internal {

bool PassesExplicitFilters(const JobView& j, const SqueueOptions& o) {
  if (!o.job_ids.empty()) {
    bool hit = false;
    for (uint32_t id : o.job_ids) {
      if (j.job_id == id || (j.array_job_id != 0 && j.array_job_id == id)) hit = true;
    }
    if (!hit) return false;
  }
  if (!o.users.empty() && !Contains(o.users, j.user_name) &&
      !Contains(o.users, StrCat(j.user_id))) {
    return false;
  }
  if (!o.partitions.empty() && !Contains(o.partitions, j.partition)) return false;
  if (!o.names.empty() && !Contains(o.names, j.name)) return false;
  if (!o.reservations.empty() && !Contains(o.reservations, j.reservation)) return false;
  return true;
}

}  // namespace internal

// ---------------------------------------------------------------------------------------------

bool JobStateFilter::Matches(JobState s) const {
  if (all) return true;
  if (!given) return !model::IsFinal(s);
  return std::find(states.begin(), states.end(), s) != states.end();
}

StatusOr<JobStateFilter> ParseJobStateFilter(std::string_view text) {
  // States Slurm names that Loom's jobs never enter.
  static constexpr std::string_view kOtherStates[] = {
      "CONFIGURING",  "CF", "RESV_DEL_HOLD", "RD", "REQUEUE_FED", "RF", "REQUEUE_HOLD", "RH",
      "REQUEUED",     "RQ", "RESIZING",      "RS", "REVOKED",     "RV", "SIGNALING",    "SI",
      "SPECIAL_EXIT", "SE", "STAGE_OUT",     "SO", "STOPPED",     "ST"};
  JobStateFilter filter;
  filter.given = true;
  for (std::string_view item : core::Split(text, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    if (core::EqualsIgnoreCase(item, "all")) {
      filter.all = true;
      continue;
    }
    if (std::optional<JobState> s = model::ParseJobState(item)) {
      filter.states.push_back(*s);
      continue;
    }
    bool known = false;
    for (std::string_view o : kOtherStates) known = known || core::EqualsIgnoreCase(item, o);
    if (known) continue;
    return absl::InvalidArgumentError(
        StrCat("-t: invalid job state '", item,
               "'; valid states are PENDING (PD), RUNNING (R), SUSPENDED (S), COMPLETING (CG), "
               "COMPLETED (CD), CANCELLED (CA), FAILED (F), TIMEOUT (TO), NODE_FAIL (NF), "
               "PREEMPTED (PR), BOOT_FAIL (BF), DEADLINE (DL), OUT_OF_MEMORY (OOM) and all"));
  }
  return filter;
}

Status ValidateSqueueOptions(const SqueueOptions& options) {
  RETURN_IF_ERROR(LayoutFor(options).status());
  return ParseSort(options.sort).status();
}

StatusOr<std::string> RenderSqueue(const std::vector<JobView>& jobs, const SqueueOptions& options,
                                   const RenderContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Column> cols, LayoutFor(options));
  std::string_view sort_text = options.sort;
  if (sort_text.empty()) sort_text = options.start ? "S" : "P,t,-p";
  ASSIGN_OR_RETURN(std::vector<SortKey> keys, ParseSort(sort_text));

  // Select, then expand arrays (-r) so each pending task is its own row.
  std::vector<const JobView*> rows;
  std::vector<JobView> expanded;                       // owns the per-task copies
  std::vector<std::pair<size_t, size_t>> expanded_at;  // (position in rows, index in expanded)
  for (const JobView& j : jobs) {
    bool state_ok = options.start ? j.state == JobState::kPending : options.states.Matches(j.state);
    if (!state_ok || !PassesExplicitFilters(j, options)) continue;
    if (options.expand_arrays && !j.array_task_string.empty() && !j.array_task_id.has_value()) {
      for (uint32_t task : ExpandTaskString(j.array_task_string)) {
        JobView t = j;
        t.array_job_id = j.array_job_id != 0 ? j.array_job_id : j.job_id;
        t.array_task_id = task;
        t.array_task_string.clear();
        expanded_at.emplace_back(rows.size(), expanded.size());
        expanded.push_back(std::move(t));
        rows.push_back(nullptr);
      }
      continue;
    }
    rows.push_back(&j);
  }
  for (auto [row, index] : expanded_at) rows[row] = &expanded[index];

  std::stable_sort(rows.begin(), rows.end(), [&](const JobView* a, const JobView* b) {
    for (const SortKey& k : keys) {
      int c = Compare(k.letter, *a, *b, ctx);
      if (c != 0) return k.descending ? c > 0 : c < 0;
    }
    return false;
  });

  std::string out;
  std::string buf;
  if (options.long_listing && options.format.empty() && options.long_format.empty()) {
    out += FormatCtime(ctx.now, ctx.utc_offset_s);
    out.push_back('\n');
  }
  if (!options.no_header) AppendRow(&out, cols, nullptr, ctx, &buf);
  for (const JobView* j : rows) AppendRow(&out, cols, j, ctx, &buf);
  return out;
}

}  // namespace loom::cli::format
