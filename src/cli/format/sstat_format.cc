#include "cli/format/sstat_format.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "cli/format/text.h"
#include "core/strings.h"

namespace loom::cli::format {
namespace {

using core::StrCat;

constexpr const char* kFields[] = {
    "JobID",     "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask", "AveVMSize", "MaxRSS",
    "MaxRSSNode", "MaxRSSTask", "AveRSS",      "MaxPages",      "MaxPagesNode", "MaxPagesTask",
    "AvePages",  "MinCPU",    "MinCPUNode",    "MinCPUTask",    "AveCPU",    "NTasks"};

// The column width sacct gives a field: its name's length, at least 10; JobID 12.
size_t Width(const std::string& field) {
  if (field == "JobID") return 12;
  return std::max<size_t>(10, field.size());
}

// The task with the largest (or smallest) `value`, first in report order on ties.
const TaskUsageView* Extreme(const std::vector<const TaskUsageView*>& tasks,
                             const std::function<int64_t(const TaskUsageView&)>& value,
                             bool largest) {
  const TaskUsageView* best = nullptr;
  for (const TaskUsageView* t : tasks) {
    if (best == nullptr || (largest ? value(*t) > value(*best) : value(*t) < value(*best))) {
      best = t;
    }
  }
  return best;
}

std::string Cell(const std::string& field, uint64_t job_id, const std::string& step,
                 const std::vector<const TaskUsageView*>& tasks) {
  if (field == "JobID") return StrCat(job_id, ".", step);
  if (field == "NTasks") return StrCat(tasks.size());
  if (tasks.empty()) return "";
  auto rss = [](const TaskUsageView& t) { return t.rss_bytes; };
  auto vsize = [](const TaskUsageView& t) { return t.vsize_bytes; };
  auto pages = [](const TaskUsageView& t) { return t.pages; };
  auto cpu = [](const TaskUsageView& t) { return t.cpu_usec; };
  auto average = [&](const std::function<int64_t(const TaskUsageView&)>& v) {
    int64_t sum = 0;
    for (const TaskUsageView* t : tasks) sum += v(*t);
    return sum / static_cast<int64_t>(tasks.size());
  };
  struct Measure {
    const char* name;
    std::function<int64_t(const TaskUsageView&)> value;
    bool largest;
    std::function<std::string(int64_t)> print;
  };
  const Measure measures[] = {
      {"MaxVMSize", vsize, true, FormatKib},
      {"MaxRSS", rss, true, FormatKib},
      {"MaxPages", pages, true, [](int64_t v) { return StrCat(v); }},
      {"MinCPU", cpu, false, FormatCpuTime},
  };
  for (const Measure& m : measures) {
    const std::string name = m.name;
    if (field == name || field == name + "Node" || field == name + "Task") {
      const TaskUsageView* t = Extreme(tasks, m.value, m.largest);
      if (field == name) return m.print(m.value(*t));
      return field.ends_with("Node") ? t->node : StrCat(t->task);
    }
  }
  if (field == "AveVMSize") return FormatKib(average(vsize));
  if (field == "AveRSS") return FormatKib(average(rss));
  if (field == "AvePages") return StrCat(average(pages));
  if (field == "AveCPU") return FormatCpuTime(average(cpu));
  return "";
}

}  // namespace

std::vector<std::string> SstatFields() { return {std::begin(kFields), std::end(kFields)}; }

StatusOr<std::vector<std::string>> ParseSstatFormat(const std::string& list) {
  std::vector<std::string> out;
  for (std::string_view word : core::Split(list, ',')) {
    word = core::Trim(word);
    if (word.empty()) continue;
    const char* const* found = std::find_if(std::begin(kFields), std::end(kFields),
                                            [&](const char* f) { return core::EqualsIgnoreCase(word, f); });
    if (found == std::end(kFields)) {
      return absl::InvalidArgumentError(StrCat("Invalid field requested: \"", word, "\""));
    }
    out.emplace_back(*found);
  }
  if (out.empty()) return absl::InvalidArgumentError("No fields requested with --format");
  return out;
}

std::string FormatCpuTime(int64_t usec) {
  const int64_t ms = usec / 1000;
  const int64_t s = ms / 1000;
  char buf[48];
  if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld.%03lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60), static_cast<long long>(ms % 1000));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(s / 86400),
                  static_cast<long long>(s / 3600 % 24), static_cast<long long>(s / 60 % 60),
                  static_cast<long long>(s % 60));
  }
  return buf;
}

std::string FormatKib(int64_t bytes) {
  if (bytes <= 0) return "0";
  return StrCat((bytes + 1023) / 1024, "K");
}

std::string RenderSstat(uint64_t job_id, const std::vector<std::string>& steps,
                        const std::vector<TaskUsageView>& tasks, const SstatOptions& options) {
  const std::vector<std::string> fields =
      options.fields.empty() ? SstatFields() : options.fields;
  std::string out;
  const AcctTableStyle style{options.delimiter, options.trailing_delimiter};
  auto cells_of = [&](const std::vector<std::string>& values) {
    std::vector<AcctCell> cells;
    for (size_t i = 0; i < values.size(); ++i) {
      cells.push_back({values[i], static_cast<int>(Width(fields[i]))});
    }
    return cells;
  };
  auto row = [&](const std::vector<std::string>& values) {
    AppendAcctRow(&out, cells_of(values), style);
  };
  if (options.header) AppendAcctHeader(&out, cells_of(fields), style);
  for (const std::string& step : steps) {
    std::vector<const TaskUsageView*> mine;
    for (const TaskUsageView& t : tasks) {
      if (t.step == step) mine.push_back(&t);
    }
    std::vector<std::string> cells;
    for (const std::string& f : fields) cells.push_back(Cell(f, job_id, step, mine));
    row(cells);
  }
  return out;
}

}  // namespace loom::cli::format
