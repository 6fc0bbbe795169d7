#include "dbd/usage.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/strings.h"

namespace loom::dbd {
namespace {

// How long `job` held its allocation within [from, to), up to `now` while it runs.
int64_t Overlap(const v1::JobInfo& j, int64_t from, int64_t to, int64_t now) {
  if (j.start_time() <= 0) return 0;
  const int64_t end = j.end_time() > 0 ? j.end_time() : now;
  return std::max<int64_t>(0, std::min(end, to) - std::max(j.start_time(), from));
}

void Add(google::protobuf::Map<std::string, double>* into,
         const std::map<std::string, double>& tres, double seconds) {
  for (const auto& [name, count] : tres) (*into)[name] += count * seconds;
}

}  // namespace

std::map<std::string, double> ParseTres(const std::string& tres) {
  std::map<std::string, double> out;
  for (std::string_view part : core::Split(tres, ',')) {
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(part.substr(0, eq));
    std::string value(part.substr(eq + 1));
    double scale = 1;
    if (!value.empty() && name == "mem") {
      switch (value.back()) {
        case 'K':
          scale = 1.0 / 1024;
          value.pop_back();
          break;
        case 'M':
          value.pop_back();
          break;
        case 'G':
          scale = 1024;
          value.pop_back();
          break;
        case 'T':
          scale = 1024.0 * 1024;
          value.pop_back();
          break;
        default:
          break;
      }
    }
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str()) continue;
    out[name] += v * scale;
  }
  return out;
}

std::string UsageName(const std::string& cluster, int64_t hour) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%012lld", static_cast<long long>(hour));
  return core::StrCat(cluster, "/", buf);
}

std::string EventName(const std::string& cluster, const std::string& node, int64_t start) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%012lld", static_cast<long long>(start));
  return core::StrCat(cluster, "/", node, "/", buf);
}

std::vector<v1::AcctUsageHour> RollUp(const std::vector<v1::AcctJob>& jobs,
                                      const std::vector<v1::AcctEvent>& events,
                                      const std::map<std::string, double>& capacity, int64_t from,
                                      int64_t to, int64_t now) {
  std::vector<v1::AcctUsageHour> hours;
  for (int64_t h = FloorHour(from); h < to; h += kHour) {
    v1::AcctUsageHour& u = hours.emplace_back();
    u.set_hour(h);
    Add(u.mutable_capacity(), capacity, kHour);
  }
  if (hours.empty()) return hours;
  const int64_t first = hours.front().hour();
  // Per hour: the association lines by account and user.
  std::vector<std::map<std::pair<std::string, std::string>, v1::AcctUsage>> by_assoc(hours.size());
  for (const v1::AcctJob& a : jobs) {
    const v1::JobInfo& j = a.job();
    if (j.start_time() <= 0) continue;
    const std::map<std::string, double> tres = ParseTres(j.tres_alloc());
    if (tres.empty()) continue;
    const int64_t end = j.end_time() > 0 ? j.end_time() : now;
    for (int64_t h = std::max(first, FloorHour(j.start_time())); h < std::min(end, to);
         h += kHour) {
      const double seconds = static_cast<double>(Overlap(j, h, h + kHour, now));
      if (seconds <= 0) continue;
      const size_t i = static_cast<size_t>((h - first) / kHour);
      Add(hours[i].mutable_alloc(), tres, seconds);
      v1::AcctUsage& line = by_assoc[i][{j.spec().account(), j.user()}];
      line.set_account(j.spec().account());
      line.set_user(j.user());
      Add(line.mutable_alloc(), tres, seconds);
    }
  }
  std::vector<std::map<std::string, double>> down(hours.size());
  for (const v1::AcctEvent& e : events) {
    const int64_t end = e.time_end() > 0 ? e.time_end() : now;
    const std::map<std::string, double> tres = ParseTres(e.tres());
    for (int64_t h = std::max(first, FloorHour(e.time_start())); h < std::min(end, to);
         h += kHour) {
      const int64_t seconds = std::min(end, h + kHour) - std::max(e.time_start(), h);
      if (seconds <= 0) continue;
      std::map<std::string, double>& d = down[static_cast<size_t>((h - first) / kHour)];
      for (const auto& [name, count] : tres) d[name] += count * static_cast<double>(seconds);
    }
  }
  for (size_t i = 0; i < hours.size(); ++i) {
    for (auto& [key, line] : by_assoc[i]) *hours[i].add_assocs() = std::move(line);
    for (const auto& [name, seconds] : down[i]) {
      const double cap = hours[i].capacity().count(name) ? hours[i].capacity().at(name) : 0;
      const double alloc = hours[i].alloc().count(name) ? hours[i].alloc().at(name) : 0;
      const double d = std::min(seconds, std::max(0.0, cap - alloc));
      if (d > 0) (*hours[i].mutable_down())[name] = d;
    }
  }
  return hours;
}

std::vector<v1::AcctSizes> JobSizes(const std::vector<v1::AcctJob>& jobs,
                                    const std::vector<int32_t>& grouping, int64_t from, int64_t to,
                                    int64_t now) {
  std::map<std::pair<std::string, std::string>, v1::AcctSizes> out;
  for (const v1::AcctJob& a : jobs) {
    const v1::JobInfo& j = a.job();
    const double seconds = static_cast<double>(Overlap(j, from, to, now));
    if (seconds <= 0) continue;
    size_t bin = 0;
    while (bin < grouping.size() && j.num_cpus() >= grouping[bin]) ++bin;
    v1::AcctSizes& s = out[{a.cluster(), j.spec().account()}];
    if (s.cpu_seconds_size() == 0) {
      s.set_cluster(a.cluster());
      s.set_account(j.spec().account());
      for (size_t i = 0; i <= grouping.size(); ++i) s.add_cpu_seconds(0);
    }
    s.set_cpu_seconds(static_cast<int>(bin),
                      s.cpu_seconds(static_cast<int>(bin)) + seconds * j.num_cpus());
  }
  std::vector<v1::AcctSizes> v;
  for (auto& [key, s] : out) v.push_back(std::move(s));
  return v;
}

}  // namespace loom::dbd
