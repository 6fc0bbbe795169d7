// sreport: reports over loomdbd's hourly rollups, in Slurm 22.05's shapes: cluster
// utilization, usage by account and user, top users, and job sizes by account.
//
//   sreport [-nPpt UNIT] [-T TRES,...] cluster utilization|AccountUtilizationByUser|
//           UserUtilizationByAccount [Start=TIME] [End=TIME] [Accounts=] [Users=]
//   sreport user topusage [TopCount=N] [Start=] [End=] ...
//   sreport job sizesbyaccount [Grouping=50,250,500,1000] [Start=] [End=] ...
//
// Times are rounded down to the hour, as the rollups are hourly; the default window is
// yesterday.
#include <pwd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/text.h"
#include "cli/submit/begin_time.h"
#include "core/clock.h"
#include "core/strings.h"

namespace loom::cli {
namespace {

using core::StrCat;

enum class Opt {
  kAll,
  kClusters,
  kHelp,
  kNoHeader,
  kParsable,
  kParsable2,
  kTime,
  kTres,
  kUsage,
  kVersion
};

constexpr OptionSpec<Opt> kOptions[] = {
    {"all_clusters", 'a', kNoArg, Opt::kAll},  {"cluster", 'M', kArg, Opt::kClusters},
    {"help", 'h', kNoArg, Opt::kHelp},         {"noheader", 'n', kNoArg, Opt::kNoHeader},
    {"parsable", 'p', kNoArg, Opt::kParsable}, {"parsable2", 'P', kNoArg, Opt::kParsable2},
    {"time", 't', kArg, Opt::kTime},           {"tres", 'T', kArg, Opt::kTres},
    {"usage", 0, kNoArg, Opt::kUsage},         {"version", 'V', kNoArg, Opt::kVersion},
};

constexpr std::string_view kHelpText =
    "Usage: sreport [OPTIONS] REPORT [KEY=VALUE...]\n"
    "  cluster utilization | AccountUtilizationByUser | UserUtilizationByAccount\n"
    "  user topusage [TopCount=N]\n"
    "  job sizesbyaccount [Grouping=N,N,...]\n"
    "  KEYS: Start=TIME End=TIME (default: yesterday), Accounts=LIST, Users=LIST, Format=LIST\n"
    "  -t minutes|hours|seconds|percent   the unit (default minutes)\n"
    "  -T, --tres=LIST   TRES to report (default cpu), e.g. cpu,gres/gpu\n"
    "  -n, --noheader;  -p/-P, --parsable[2];  -a, --all_clusters;  -M, --cluster=NAME\n";
constexpr std::string_view kUsageText =
    "Usage: sreport [-anpPV] [-t unit] [-T tres] REPORT [options]\n";
constexpr CommandText kText{"sreport", kHelpText, kUsageText};

struct Out {
  bool header = true;
  char delimiter = 0;
  bool trailing = false;
  std::string text;

  // Cells as (value, width); with `left_first` the second column is left-justified.
  static std::vector<format::AcctCell> Cells(const std::vector<std::pair<std::string, int>>& cells,
                                             bool left_first) {
    std::vector<format::AcctCell> out;
    for (size_t i = 0; i < cells.size(); ++i) {
      out.push_back({cells[i].first, cells[i].second, left_first && i == 1});
    }
    return out;
  }
  void Row(const std::vector<std::pair<std::string, int>>& cells, bool left_first = false) {
    format::AppendAcctRow(&text, Cells(cells, left_first), {delimiter, trailing});
  }
  void Header(const std::vector<std::pair<std::string, int>>& cols) {
    if (header) format::AppendAcctHeader(&text, Cells(cols, false), {delimiter, trailing});
  }
};

std::string Iso(int64_t t) {
  const time_t tt = static_cast<time_t>(t);
  struct tm tm;
  localtime_r(&tt, &tm);
  return format::FormatIsoTime(t, static_cast<int32_t>(tm.tm_gmtoff));
}

std::string ProperName(const std::string& user) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwnam_r(user.c_str(), &pw, buf, sizeof buf, &found) != 0 || found == nullptr) return "";
  std::string gecos = pw.pw_gecos != nullptr ? pw.pw_gecos : "";
  return gecos.substr(0, gecos.find(','));
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "sreport: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int RunSreport(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  Out out;
  std::string unit = "minutes";
  std::vector<std::string> tres = {"cpu"};
  bool tres_given = false, all_clusters = false;
  std::string cluster_opt;
  for (const ParsedOption<Opt>& o : scan.options) {
    switch (o.id) {
      case Opt::kAll:
        all_clusters = true;
        break;
      case Opt::kClusters:
        cluster_opt = *o.value;
        break;
      case Opt::kNoHeader:
        out.header = false;
        break;
      case Opt::kParsable:
        out.delimiter = '|';
        out.trailing = true;
        break;
      case Opt::kParsable2:
        out.delimiter = '|';
        out.trailing = false;
        break;
      case Opt::kTime:
        unit = core::ToLower(*o.value);
        break;
      case Opt::kTres:
        tres.clear();
        for (std::string_view t : core::Split(*o.value, ',')) {
          if (!t.empty()) tres.push_back(core::ToLower(t));
        }
        tres_given = true;
        break;
      default:
        break;
    }
  }
  double divisor = 60;
  std::string unit_name = "Minutes";
  if (unit.starts_with("h")) {
    divisor = 3600;
    unit_name = "Hours";
  } else if (unit.starts_with("s")) {
    divisor = 1;
    unit_name = "Seconds";
  } else if (unit.starts_with("p")) {
    unit_name = "Percentage of Total";
  } else if (!unit.starts_with("m")) {
    return Fail(StrCat("unknown time format '", unit, "': use minutes, hours, seconds or percent"));
  }
  const bool percent = unit.starts_with("p");
  std::vector<std::string>& words = scan.rest;
  if (words.size() < 2) {
    std::fputs(std::string(kHelpText).c_str(), stderr);
    return 1;
  }
  const std::string area = core::ToLower(words[0]);
  const std::string report = core::ToLower(words[1]);
  const int64_t now = core::RealClock().UnixSeconds();
  const absl::TimeZone zone = absl::LocalTimeZone();
  const absl::CivilDay today = absl::ToCivilDay(absl::FromUnixSeconds(now), zone);
  int64_t start = absl::ToUnixSeconds(absl::FromCivil(today - 1, zone));
  int64_t end = absl::ToUnixSeconds(absl::FromCivil(today, zone));
  std::set<std::string> accounts, users;
  int top = 10;
  std::vector<int32_t> grouping;
  for (size_t i = 2; i < words.size(); ++i) {
    const std::string& w = words[i];
    const size_t eq = w.find('=');
    if (eq == std::string::npos) return Fail(StrCat("Unknown condition: ", w));
    const std::string key = core::ToLower(w.substr(0, eq));
    const std::string value = w.substr(eq + 1);
    auto when = [&](int64_t* into) -> bool {
      auto t = submit::ParseSlurmDateTime(value, now, zone);
      if (!t.ok()) return false;
      *into = *t;
      return true;
    };
    if (key == "start" || key == "starttime") {
      if (!when(&start)) return Fail(StrCat("Invalid time specification: ", value));
    } else if (key == "end" || key == "endtime") {
      if (!when(&end)) return Fail(StrCat("Invalid time specification: ", value));
    } else if (key == "accounts" || key == "account" || key == "acct") {
      for (std::string_view a : core::Split(value, ',')) accounts.insert(core::ToLower(a));
    } else if (key == "users" || key == "user") {
      for (std::string_view u : core::Split(value, ',')) users.insert(std::string(u));
    } else if (key == "topcount") {
      top = static_cast<int>(core::ParseInt(value).value_or(10));
    } else if (key == "grouping") {
      for (std::string_view g : core::Split(value, ',')) {
        if (auto n = core::ParseInt(g)) grouping.push_back(static_cast<int32_t>(*n));
      }
    } else if (key == "cluster" || key == "clusters") {
      if (value.find(',') != std::string::npos) {
        return Fail(StrCat("one cluster per report: ", w, " names several"));
      }
      cluster_opt = value;
    } else if (key == "format" || key == "tree") {
      // The default columns only: accepted and not acted on.
    } else {
      return Fail(StrCat("Unknown condition: ", w));
    }
  }
  auto client = Client::Connect("sreport");
  if (!client.ok()) return Fail(std::string(client.status().message()));
  v1::AcctReportRequest req;
  req.set_cluster(all_clusters          ? ""
                  : cluster_opt.empty() ? client->config().cluster_name
                                        : cluster_opt);
  req.set_start(start);
  req.set_end(end);
  const bool sizes = area == "job" && report == "sizesbyaccount";
  req.set_kind(sizes ? "sizes" : "usage");
  for (int32_t g : grouping) req.add_grouping(g);
  const bool known =
      (area == "cluster" && (report == "utilization" || report == "accountutilizationbyuser" ||
                             report == "userutilizationbyaccount")) ||
      (area == "user" && report == "topusage") || sizes;
  if (!known) return Fail(StrCat("Not valid report: ", words[0], " ", words[1]));
  v1::AcctReportReply reply;
  if (Status s = client->CallDbd("AcctReport", req, &reply); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  const int64_t from = start - start % 3600, to = end - end % 3600;
  const std::string units = percent ? unit_name : StrCat(tres_given ? "TRES " : "CPU ", unit_name);
  auto banner = [&](const std::string& title) {
    if (!out.header) return;
    const std::string rule(80, '-');
    out.text += StrCat(rule, "\n", title, " ", Iso(from), " - ", Iso(to - 1), "\n");
    if (!sizes) out.text += StrCat("Usage reported in ", units, "\n");
    out.text += rule + "\n";
  };
  auto amount = [&](double seconds, double total) -> std::string {
    if (percent) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f%%", total > 0 ? 100.0 * seconds / total : 0.0);
      return buf;
    }
    return StrCat(static_cast<int64_t>(std::llround(seconds / divisor)));
  };
  auto value = [](const google::protobuf::Map<std::string, double>& m, const std::string& t) {
    auto it = m.find(t);
    return it == m.end() ? 0.0 : it->second;
  };

  if (sizes) {
    if (grouping.empty()) grouping = {50, 250, 500, 1000};
    banner("Job Sizes");
    std::vector<std::pair<std::string, int>> cols = {{"Cluster", 9}, {"Account", 20}};
    cols.push_back({StrCat("0-", grouping[0] - 1, " CPUs"), 13});
    for (size_t i = 1; i < grouping.size(); ++i) {
      cols.push_back({StrCat(grouping[i - 1], "-", grouping[i] - 1, " CPUs"), 13});
    }
    cols.push_back({StrCat(">= ", grouping.back(), " CPUs"), 13});
    cols.push_back({"% of cluster", 12});
    out.Header(cols);
    double total = 0;
    for (const v1::AcctSizes& s : reply.sizes()) {
      for (double v : s.cpu_seconds()) total += v;
    }
    for (const v1::AcctSizes& s : reply.sizes()) {
      if (!accounts.empty() && !accounts.count(s.account())) continue;
      std::vector<std::pair<std::string, int>> row = {{s.cluster(), 9}, {s.account(), 20}};
      double sum = 0;
      for (size_t i = 0; i < static_cast<size_t>(s.cpu_seconds_size()); ++i) {
        row.push_back({amount(s.cpu_seconds(static_cast<int>(i)), total), cols[i + 2].second});
        sum += s.cpu_seconds(static_cast<int>(i));
      }
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.2f%%", total > 0 ? 100.0 * sum / total : 0.0);
      row.push_back({pct, 12});
      out.Row(row, true);
    }
    return PrintText(out.text);
  }

  // Accounts in tree order (parents before children), each with its depth.
  std::map<std::string, std::string> parent;
  for (const v1::AcctAssoc& a : reply.assocs()) {
    if (a.user().empty() && a.account() != "root") parent[a.account()] = a.parent();
  }
  auto depth = [&](std::string a) {
    int d = 0;
    while (parent.count(a) && d < 64) {
      a = parent[a];
      ++d;
    }
    return d;
  };
  auto within = [&](const std::string& account, const std::string& ancestor) {
    std::string a = account;
    for (int d = 0; d < 64; ++d) {
      if (a == ancestor) return true;
      auto it = parent.find(a);
      if (it == parent.end()) return false;
      a = it->second;
    }
    return false;
  };

  for (const std::string& t : tres) {
    for (const v1::AcctUsageHour& c : reply.hours()) {
      const std::string cluster = req.cluster().empty() ? "" : req.cluster();
      const double capacity = value(c.capacity(), t);
      const double alloc = value(c.alloc(), t);
      const double down = value(c.down(), t);
      if (area == "cluster" && report == "utilization") {
        if (&t == &tres.front()) banner("Cluster Utilization");
        std::vector<std::pair<std::string, int>> cols = {{"Cluster", 9}};
        if (tres_given) cols.push_back({"TRES Name", 14});
        for (const char* n : {"Allocated", "Down", "PLND Down", "Idle", "Reserved", "Reported"}) {
          cols.push_back({n, 13});
        }
        if (&t == &tres.front()) out.Header(cols);
        std::vector<std::pair<std::string, int>> row = {{cluster, 9}};
        if (tres_given) row.push_back({t, 14});
        const double idle = std::max(0.0, capacity - alloc - down);
        for (double v : {alloc, down, 0.0, idle, 0.0, capacity})
          row.push_back({amount(v, capacity), 13});
        out.Row(row);
        continue;
      }
      // Per association lines.
      struct Line {
        std::string account, user;
        double used = 0;
      };
      std::vector<Line> lines;
      for (const v1::AcctUsage& u : c.assocs()) {
        const double v = value(u.alloc(), t);
        if (!users.empty() && !users.count(u.user())) continue;
        lines.push_back({u.account(), u.user(), v});
      }
      if (area == "user" || report == "userutilizationbyaccount") {
        const bool topusage = area == "user";
        if (&t == &tres.front()) {
          banner(topusage ? StrCat("Top ", top, " Users") : "Cluster/User/Account Utilization");
        }
        std::vector<std::pair<std::string, int>> cols = {
            {"Cluster", 9}, {"Login", 9}, {"Proper Name", 15}, {"Account", 15}};
        if (tres_given) cols.push_back({"TRES Name", 14});
        cols.push_back({"Used", 11});
        cols.push_back({"Energy", 9});
        if (&t == &tres.front()) out.Header(cols);
        if (topusage) {
          // One line per user: their usage summed over accounts, named by the first.
          std::map<std::string, Line> per_user;
          for (const Line& l : lines) {
            Line& p = per_user[l.user];
            if (p.user.empty()) p = {l.account, l.user, 0};
            p.used += l.used;
          }
          lines.clear();
          for (auto& [u, l] : per_user) lines.push_back(l);
        }
        std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
          return a.used != b.used ? a.used > b.used : a.user < b.user;
        });
        int shown = 0;
        for (const Line& l : lines) {
          if (!accounts.empty() && !accounts.count(l.account)) continue;
          if (topusage && shown++ >= top) break;
          std::vector<std::pair<std::string, int>> row = {
              {cluster, 9}, {l.user, 9}, {ProperName(l.user), 15}, {l.account, 15}};
          if (tres_given) row.push_back({t, 14});
          row.push_back({amount(l.used, capacity), 11});
          row.push_back({"0", 9});
          out.Row(row);
        }
        continue;
      }
      // AccountUtilizationByUser: each account (its subtree's usage), then its users.
      if (&t == &tres.front()) banner("Cluster/Account/User Utilization");
      std::vector<std::pair<std::string, int>> cols = {
          {"Cluster", 9}, {"Account", 15}, {"Login", 9}, {"Proper Name", 15}};
      if (tres_given) cols.push_back({"TRES Name", 14});
      cols.push_back({"Used", 11});
      cols.push_back({"Energy", 9});
      if (&t == &tres.front()) out.Header(cols);
      std::vector<std::string> order = {"root"};
      for (size_t i = 0; i < order.size(); ++i) {
        std::vector<std::string> children;
        for (const auto& [child, p] : parent) {
          if (p == order[i]) children.push_back(child);
        }
        order.insert(order.begin() + static_cast<long>(i) + 1, children.begin(), children.end());
      }
      for (const std::string& account : order) {
        if (!accounts.empty() && !accounts.count(account)) continue;
        double sum = 0;
        for (const Line& l : lines) sum += within(l.account, account) ? l.used : 0;
        std::vector<std::pair<std::string, int>> row = {
            {cluster, 9},
            {std::string(static_cast<size_t>(depth(account)), ' ') + account, 15},
            {"", 9},
            {"", 15}};
        if (tres_given) row.push_back({t, 14});
        row.push_back({amount(sum, capacity), 11});
        row.push_back({"0", 9});
        out.Row(row);
        std::vector<Line> mine;
        for (const Line& l : lines) {
          if (l.account == account) mine.push_back(l);
        }
        std::sort(mine.begin(), mine.end(),
                  [](const Line& a, const Line& b) { return a.used > b.used; });
        for (const Line& l : mine) {
          std::vector<std::pair<std::string, int>> u = {
              {cluster, 9},
              {std::string(static_cast<size_t>(depth(account) + 1), ' ') + account, 15},
              {l.user, 9},
              {ProperName(l.user), 15}};
          if (tres_given) u.push_back({t, 14});
          u.push_back({amount(l.used, capacity), 11});
          u.push_back({"0", 9});
          out.Row(u);
        }
      }
    }
  }
  return PrintText(out.text);
}

}  // namespace loom::cli
