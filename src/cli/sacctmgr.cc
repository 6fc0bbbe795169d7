// sacctmgr: the clusters, accounts, users, associations and QOS loomdbd keeps, shown in
// Slurm 22.05's layout and changed with its grammar (add|modify|delete ENTITY NAMES
// [where COND...] [set KEY=VALUE...]); loomdbd checks every change and who may make it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "auth/identity.h"
#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/text.h"
#include "cli/sacctmgr_archive.h"
#include "cli/sacctmgr_dump.h"
#include "cli/submit/begin_time.h"
#include "core/clock.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli {
namespace {

using core::StrCat;

enum class Opt {
  kHelp,
  kImmediate,
  kNoHeader,
  kParsable,
  kParsable2,
  kQuiet,
  kReadonly,
  kUsage,
  kVerbose,
  kVersion
};

constexpr OptionSpec<Opt> kOptions[] = {
    {"help", 'h', kNoArg, Opt::kHelp},           {"immediate", 'i', kNoArg, Opt::kImmediate},
    {"noheader", 'n', kNoArg, Opt::kNoHeader},   {"parsable", 'p', kNoArg, Opt::kParsable},
    {"parsable2", 'P', kNoArg, Opt::kParsable2}, {"quiet", 'Q', kNoArg, Opt::kQuiet},
    {"readonly", 'r', kNoArg, Opt::kReadonly},   {"usage", 0, kNoArg, Opt::kUsage},
    {"verbose", 'v', kNoArg, Opt::kVerbose},     {"version", 'V', kNoArg, Opt::kVersion},
};

constexpr std::string_view kHelpText =
    "Usage: sacctmgr [-hinpPQrvV] COMMAND\n"
    "  show|list  cluster|account|user|qos|association|event [format=F,...] [where] "
    "[NAME=VALUE...]\n"
    "  add        cluster|account|user|qos NAME[,NAME] [KEY=VALUE...]\n"
    "  modify     account|user|qos [where] NAME|Name=NAME [set] KEY=VALUE...\n"
    "  delete     cluster|account|user|qos NAME[,NAME] [where Account=...]\n"
    "  archive load File=PATH [Cluster=NAME]   job records, as sacct -P lists them\n"
    "  dump       [CLUSTER] [File=PATH]   the cluster's accounts and users, as Slurm dumps them\n"
    "  load       File=PATH [Cluster=NAME]   add and set the accounts and users of a dump\n"
    "  -i, --immediate   commit without asking;  -n, --noheader;  -p/-P, --parsable[2]\n"
    "  -Q, --quiet       no messages but errors;  -r, --readonly: refuse changes\n";
constexpr std::string_view kUsageText = "Usage: sacctmgr [-hinpPQrvV] COMMAND [ENTITY] [OPTIONS]\n";
constexpr CommandText kText{"sacctmgr", kHelpText, kUsageText};

struct Col {
  std::string_view name;
  std::vector<std::string_view> aliases;
  int width;
};

std::string Joined(const google::protobuf::RepeatedPtrField<std::string>& items) {
  return core::Join(std::vector<std::string>(items.begin(), items.end()), ",");
}

std::string Limit(int64_t v) { return v < 0 ? "" : StrCat(v); }
std::string Wall(int64_t minutes) { return minutes < 0 ? "" : core::FormatDuration(minutes * 60); }

// Each entity's columns (Slurm's names and widths) and how a row fills them.
template <typename Row>
struct Table {
  std::vector<Col> cols;
  std::function<std::string(const Row&, std::string_view col)> value;
  std::string defaults;
};

Table<v1::AcctCluster> ClusterTable() {
  return {{{"Cluster", {"name"}, 10},
           {"ControlHost", {}, 15},
           {"ControlPort", {}, 12},
           {"RPC", {}, 5},
           {"Share", {"fairshare"}, 9},
           {"GrpJobs", {}, 7},
           {"GrpTRES", {}, 13},
           {"GrpSubmit", {"grpsubmitjobs"}, 9},
           {"MaxJobs", {}, 7},
           {"MaxTRES", {}, 13},
           {"MaxSubmit", {"maxsubmitjobs"}, 9},
           {"MaxWall", {}, 11},
           {"QOS", {}, 20},
           {"Def QOS", {"defaultqos", "defqos"}, 9}},
          [](const v1::AcctCluster& c, std::string_view col) -> std::string {
            if (col == "Cluster") return c.name();
            if (col == "ControlHost") return c.control_host();
            if (col == "ControlPort") return c.control_port() > 0 ? StrCat(c.control_port()) : "0";
            if (col == "RPC") return StrCat(c.rpc_version());
            if (col == "Share") return "1";
            if (col == "QOS") return "normal";
            return "";
          },
          "Cluster,ControlHost,ControlPort,RPC,Share,GrpJobs,GrpTRES,GrpSubmit,MaxJobs,MaxTRES,"
          "MaxSubmit,MaxWall,QOS,Def QOS"};
}

Table<v1::AcctAssoc> AssocTable() {
  return {{{"Cluster", {}, 10},
           {"Account", {}, 10},
           {"User", {}, 10},
           {"Partition", {}, 10},
           {"Share", {"fairshare", "shares"}, 9},
           {"Priority", {}, 10},
           {"GrpJobs", {}, 7},
           {"GrpTRES", {}, 13},
           {"GrpSubmit", {"grpsubmitjobs"}, 9},
           {"GrpWall", {}, 11},
           {"GrpTRESMins", {}, 13},
           {"MaxJobs", {}, 7},
           {"MaxTRES", {"maxtresperjob"}, 13},
           {"MaxTRESPerNode", {}, 15},
           {"MaxSubmit", {"maxsubmitjobs"}, 9},
           {"MaxWall", {}, 11},
           {"MaxTRESMins", {}, 13},
           {"QOS", {}, 20},
           {"Def QOS", {"defaultqos", "defqos"}, 9},
           {"GrpTRESRunMins", {}, 13},
           {"ParentName", {"parent"}, 10},
           {"ID", {}, 6}},
          [](const v1::AcctAssoc& a, std::string_view col) -> std::string {
            if (col == "Cluster") return a.cluster();
            if (col == "Account") return a.account();
            if (col == "User") return a.user();
            if (col == "Partition") return a.partition();
            if (col == "Share") return a.shares() < 0 ? "parent" : StrCat(a.shares());
            if (col == "Priority") return a.priority() > 0 ? StrCat(a.priority()) : "";
            if (col == "GrpJobs") return Limit(a.grp_jobs());
            if (col == "GrpTRES") return a.grp_tres();
            if (col == "GrpSubmit") return Limit(a.grp_submit_jobs());
            if (col == "GrpTRESMins") return a.grp_tres_mins();
            if (col == "MaxJobs") return Limit(a.max_jobs());
            if (col == "MaxTRES") return a.max_tres_per_job();
            if (col == "MaxSubmit") return Limit(a.max_submit_jobs());
            if (col == "MaxWall") return Wall(a.max_wall_min());
            if (col == "QOS") return Joined(a.qos());
            if (col == "Def QOS") return a.default_qos();
            if (col == "ParentName") {
              return a.user().empty() && a.account() != "root" ? a.parent() : "";
            }
            if (col == "ID") return StrCat(a.id());
            return "";
          },
          "Cluster,Account,User,Partition,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,"
          "GrpTRESMins,MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,Def QOS,"
          "GrpTRESRunMins"};
}

Table<v1::AcctAccount> AccountTable() {
  return {
      {{"Account", {"name"}, 10}, {"Descr", {"description"}, 20}, {"Org", {"organization"}, 20}},
      [](const v1::AcctAccount& a, std::string_view col) -> std::string {
        if (col == "Account") return a.name();
        if (col == "Descr") return a.description();
        return a.organization();
      },
      "Account,Descr,Org"};
}

Table<v1::AcctUser> UserTable() {
  return {{{"User", {"name"}, 10},
           {"Def Acct", {"defaultaccount", "defacct"}, 10},
           {"Admin", {"adminlevel"}, 9},
           {"Coord Accounts", {"coordinators", "coord"}, 20}},
          [](const v1::AcctUser& u, std::string_view col) -> std::string {
            if (col == "User") return u.name();
            if (col == "Def Acct") return u.default_account();
            if (col == "Coord Accounts") return Joined(u.coordinates());
            return u.admin_level();
          },
          "User,Def Acct,Admin"};
}

Table<v1::AcctQos> QosTable() {
  return {{{"Name", {}, 10},
           {"Priority", {}, 10},
           {"GraceTime", {}, 10},
           {"Preempt", {}, 10},
           {"PreemptExemptTime", {}, 19},
           {"PreemptMode", {}, 11},
           {"Flags", {}, 10},
           {"UsageThres", {}, 10},
           {"UsageFactor", {}, 11},
           {"GrpTRES", {}, 13},
           {"GrpTRESMins", {}, 13},
           {"GrpTRESRunMins", {}, 13},
           {"GrpJobs", {}, 7},
           {"GrpSubmit", {"grpsubmitjobs"}, 9},
           {"GrpWall", {}, 11},
           {"MaxTRES", {"maxtresperjob"}, 13},
           {"MaxTRESPerNode", {}, 15},
           {"MaxTRESMins", {}, 13},
           {"MaxWall", {"maxwalldurationperjob"}, 11},
           {"MaxTRESPU", {"maxtresperuser"}, 13},
           {"MaxJobsPU", {"maxjobsperuser"}, 9},
           {"MaxSubmitPU", {"maxsubmitjobsperuser"}, 11},
           {"MaxTRESPA", {}, 13},
           {"MaxJobsPA", {}, 9},
           {"MaxSubmitPA", {}, 11},
           {"MinTRES", {}, 13},
           {"ID", {}, 6}},
          [](const v1::AcctQos& q, std::string_view col) -> std::string {
            if (col == "Name") return q.name();
            if (col == "Priority") return StrCat(q.priority());
            if (col == "GraceTime") return core::FormatDuration(q.grace_time_s());
            if (col == "Preempt") return Joined(q.preempt());
            if (col == "PreemptMode") {
              return q.preempt_mode().empty() ? "cluster" : q.preempt_mode();
            }
            if (col == "Flags") return Joined(q.flags());
            if (col == "UsageFactor") {
              char buf[32];
              std::snprintf(buf, sizeof buf, "%.6f", q.usage_factor());
              return buf;
            }
            if (col == "GrpTRES") return q.grp_tres();
            if (col == "GrpJobs") return Limit(q.grp_jobs());
            if (col == "GrpSubmit") return Limit(q.grp_submit_jobs());
            if (col == "MaxTRES") return q.max_tres_per_job();
            if (col == "MaxWall") return Wall(q.max_wall_min());
            if (col == "MaxTRESPU") return q.max_tres_per_user();
            if (col == "MaxJobsPU") return Limit(q.max_jobs_per_user());
            if (col == "MaxSubmitPU") return Limit(q.max_submit_jobs_per_user());
            if (col == "MinTRES") return q.min_tres_per_job();
            if (col == "GrpTRESMins") return q.grp_tres_mins();
            if (col == "ID") return StrCat(q.id());
            return "";
          },
          "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags,UsageThres,"
          "UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpSubmit,GrpWall,MaxTRES,"
          "MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,"
          "MaxJobsPA,MaxSubmitPA,MinTRES"};
}

Table<v1::AcctEvent> EventTable() {
  return {{{"Cluster", {}, 10},
           {"ClusterNodes", {}, 20},
           {"NodeName", {}, 15},
           {"TimeStart", {"start"}, 19},
           {"TimeEnd", {"end"}, 19},
           {"Duration", {}, 13},
           {"State", {}, 6},
           {"Reason", {}, 30},
           {"User", {}, 10},
           {"TRES", {}, 20},
           {"Event", {}, 7}},
          [](const v1::AcctEvent& e, std::string_view col) -> std::string {
            if (col == "Cluster") return e.cluster();
            if (col == "NodeName") return e.node();
            if (col == "TimeStart") return LocalAcctTime(e.time_start());
            if (col == "TimeEnd") return LocalAcctTime(e.time_end());
            if (col == "Duration") {
              const int64_t end = e.time_end() > 0 ? e.time_end() : core::RealClock().UnixSeconds();
              return core::FormatDuration(std::max<int64_t>(0, end - e.time_start()));
            }
            if (col == "State") return e.state();
            if (col == "Reason") return e.reason();
            if (col == "User") {
              auto u = auth::LookupUserById(e.reason_uid());
              return u.ok() ? u->name : StrCat(e.reason_uid());
            }
            if (col == "TRES") return e.tres();
            if (col == "Event") return "Node";
            return "";
          },
          "Cluster,NodeName,TimeStart,TimeEnd,State,Reason,User"};
}

struct Output {
  bool header = true;
  char delimiter = 0;
  bool trailing = false;
};

// Prints `rows` of `table` with the columns `format` names (the table's defaults when empty),
// keeping the rows every `where` condition (KEY=VALUE[,VALUE]) matches.
template <typename Row, typename Rows>
int Show(const Table<Row>& table, const Rows& rows, const std::string& format,
         const std::vector<std::pair<std::string, std::string>>& where, const Output& o) {
  auto find = [&](std::string_view name) -> const Col* {
    for (const Col& c : table.cols) {
      std::string squeezed;
      for (char ch : c.name) {
        if (ch != ' ') squeezed += ch;
      }
      if (core::EqualsIgnoreCase(c.name, name) || core::EqualsIgnoreCase(squeezed, name)) return &c;
      for (std::string_view a : c.aliases) {
        if (core::EqualsIgnoreCase(a, name)) return &c;
      }
    }
    return nullptr;
  };
  std::vector<std::pair<const Col*, int>> cols;
  for (std::string_view item : core::Split(format.empty() ? table.defaults : format, ',')) {
    if (item.empty()) continue;
    std::string_view name = item;
    std::optional<int> width;
    if (size_t pct = item.find('%'); pct != std::string_view::npos) {
      name = item.substr(0, pct);
      if (auto w = core::ParseInt(item.substr(pct + 1))) width = static_cast<int>(*w);
    }
    const Col* c = find(name);
    if (c == nullptr) {
      std::fprintf(stderr, " Unknown field '%.*s'\n", static_cast<int>(name.size()), name.data());
      return 1;
    }
    cols.push_back({c, width.value_or(c->width)});
  }
  std::vector<std::pair<const Col*, std::vector<std::string>>> conds;
  for (const auto& [k, v] : where) {
    const Col* c = find(k);
    if (c == nullptr) {
      std::fprintf(stderr, " Unknown condition: %s=%s\n", k.c_str(), v.c_str());
      return 1;
    }
    std::vector<std::string> values;
    for (std::string_view x : core::Split(v, ',')) values.emplace_back(x);
    conds.push_back({c, values});
  }
  std::string out;
  const format::AcctTableStyle style{o.delimiter, o.trailing};
  auto cells_of = [&](const std::vector<std::string>& values) {
    std::vector<format::AcctCell> cells;
    for (size_t i = 0; i < values.size(); ++i) cells.push_back({values[i], cols[i].second});
    return cells;
  };
  auto line = [&](const std::vector<std::string>& values) {
    format::AppendAcctRow(&out, cells_of(values), style);
  };
  if (o.header) {
    std::vector<std::string> names;
    for (const auto& [c, w] : cols) names.emplace_back(c->name);
    format::AppendAcctHeader(&out, cells_of(names), style);
  }
  for (const Row& r : rows) {
    bool keep = true;
    for (const auto& [c, values] : conds) {
      const std::string v = table.value(r, c->name);
      bool any = false;
      for (const std::string& want : values) any = any || core::EqualsIgnoreCase(v, want);
      keep = keep && any;
    }
    if (!keep) continue;
    std::vector<std::string> cells;
    for (const auto& [c, w] : cols) cells.push_back(table.value(r, c->name));
    line(cells);
  }
  return PrintText(out);
}

std::string Lower(const std::string& s) { return core::ToLower(s); }

// sacctmgr show event: the events of the window (Start=, default midnight yesterday; End=,
// default now; with States= and no Start=, those in the states now), of Nodes= (a hostlist)
// and States= (DOWN, DRAIN: an event in DOWN+DRAIN is in both).
int ShowEvents(Client& client, const std::string& format,
               std::vector<std::pair<std::string, std::string>> where, const Output& o) {
  const int64_t now = core::RealClock().UnixSeconds();
  const absl::TimeZone zone = absl::LocalTimeZone();
  std::optional<int64_t> start, end;
  std::set<std::string> nodes, states;
  bool all_time = false;
  for (auto it = where.begin(); it != where.end();) {
    const std::string key = Lower(it->first);
    const std::string& value = it->second;
    if (key == "start" || key == "starttime" || key == "end" || key == "endtime") {
      auto t = submit::ParseSlurmDateTime(value, now, zone);
      if (!t.ok()) {
        std::fprintf(stderr, " Invalid time specification: %s\n", value.c_str());
        return 1;
      }
      (key.starts_with("start") ? start : end) = *t;
    } else if (key == "nodes" || key == "node" || key == "nodename") {
      auto names = core::ExpandHostlist(value);
      if (!names.ok()) {
        std::fprintf(stderr, " Invalid node list: %s\n", value.c_str());
        return 1;
      }
      nodes.insert(names->begin(), names->end());
    } else if (key == "states" || key == "state") {
      for (std::string_view s : core::Split(value, ',')) {
        states.insert(absl::AsciiStrToUpper(std::string(s)));
      }
    } else if (key == "all_time" || key == "alltime") {
      all_time = true;
    } else if (key == "event" && core::EqualsIgnoreCase(value, "cluster")) {
      return Show(EventTable(), std::vector<v1::AcctEvent>{}, format, {}, o);  // none are kept
    } else if (key == "event" || key == "all_clusters") {
      // Node events are the only kind kept; every cluster's are listed.
    } else {
      ++it;
      continue;
    }
    it = where.erase(it);
  }
  v1::AcctShowRequest req;
  req.set_kind("event");
  if (!all_time) {
    if (start) {
      req.set_start(*start);
    } else if (!states.empty()) {
      req.set_start(now);  // those in the states now
    } else {
      const absl::CivilDay yesterday = absl::ToCivilDay(absl::FromUnixSeconds(now), zone) - 1;
      req.set_start(absl::ToUnixSeconds(absl::FromCivil(yesterday, zone)));
    }
    req.set_end(end.value_or(now));
  }
  v1::AcctShowReply reply;
  if (Status s = client.CallDbd("AcctShow", req, &reply); !s.ok()) {
    std::fprintf(stderr, "sacctmgr: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::vector<v1::AcctEvent> rows;
  for (const v1::AcctEvent& e : reply.events()) {
    if (!nodes.empty() && !nodes.count(e.node())) continue;
    if (!states.empty()) {
      bool any = false;
      for (std::string_view part : core::Split(e.state(), '+')) {
        any = any || states.count(std::string(part));
      }
      if (!any) continue;
    }
    rows.push_back(e);
  }
  return Show(EventTable(), rows, format, where, o);
}

}  // namespace

int RunSacctmgr(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  Output out;
  bool immediate = false, quiet = false, readonly = false;
  for (const ParsedOption<Opt>& o : scan.options) {
    switch (o.id) {
      case Opt::kImmediate:
        immediate = true;
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
      case Opt::kQuiet:
        quiet = true;
        break;
      case Opt::kReadonly:
        readonly = true;
        break;
      default:
        break;
    }
  }
  std::vector<std::string>& words = scan.rest;
  if (words.empty()) {
    std::fprintf(stderr,
                 "sacctmgr: no command given (show, add, modify or delete); see sacctmgr --help\n");
    return 1;
  }
  std::string verb = Lower(words[0]);
  if (verb == "list") verb = "show";
  if (verb == "create") verb = "add";
  if (verb == "update") verb = "modify";
  if (verb == "remove") verb = "delete";
  // The file commands: the tree out (dump) or in (load), job records in (archive load).
  if (verb == "dump" || verb == "load" || verb == "archive") {
    if (verb == "archive" && (words.size() < 2 || Lower(words[1]) != "load")) {
      std::fprintf(stderr,
                   " archive takes 'load File=PATH': records as `loom sim --accounting-out` or "
                   "`sacct -a -P -o ...` writes them (sacct itself is the dump)\n");
      return 1;
    }
    if (readonly && verb != "dump") {
      std::fprintf(stderr, " sacctmgr is read-only (-r): no %s\n", verb.c_str());
      return 1;
    }
    auto client = Client::Connect("sacctmgr");
    if (!client.ok()) {
      std::fprintf(stderr, "sacctmgr: error: %s\n", std::string(client.status().message()).c_str());
      return 1;
    }
    const std::vector<std::string> args(words.begin() + (verb == "archive" ? 2 : 1), words.end());
    if (verb == "dump") return RunDump(*client, args, quiet);
    if (verb == "load") return RunLoad(*client, args, !immediate && ::isatty(STDIN_FILENO), quiet);
    return RunArchiveLoad(*client, args, quiet);
  }
  if (verb != "show" && verb != "add" && verb != "modify" && verb != "delete") {
    std::fprintf(stderr,
                 " Unknown command '%s': use show, add, modify, delete, dump, load or archive\n",
                 words[0].c_str());
    return 1;
  }
  if (words.size() < 2) {
    std::fprintf(stderr, " No entity given: e.g. sacctmgr %s account\n", verb.c_str());
    return 1;
  }
  std::string entity = Lower(words[1]);
  if (entity == "association" || entity == "associations" || entity == "assoc") entity = "assoc";
  if (entity.size() > 1 && entity.back() == 's' && entity != "qos") entity.pop_back();
  auto client = Client::Connect("sacctmgr");
  if (!client.ok()) {
    std::fprintf(stderr, "sacctmgr: error: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  const std::vector<std::string> rest(words.begin() + 2, words.end());

  if (verb == "show") {
    std::string format;
    bool with_coord = false;
    std::vector<std::pair<std::string, std::string>> where;
    for (const std::string& w : rest) {
      if (core::EqualsIgnoreCase(w, "withcoord") || core::EqualsIgnoreCase(w, "withcoordinators")) {
        with_coord = true;
        continue;
      }
      if (core::EqualsIgnoreCase(w, "where") || core::EqualsIgnoreCase(w, "tree") ||
          core::EqualsIgnoreCase(w, "withassoc")) {
        continue;
      }
      const size_t eq = w.find('=');
      if (eq == std::string::npos) {
        where.push_back({"name", w});
      } else if (core::EqualsIgnoreCase(w.substr(0, eq), "format")) {
        format = w.substr(eq + 1);
      } else {
        where.push_back({w.substr(0, eq), w.substr(eq + 1)});
      }
    }
    if (entity == "event") return ShowEvents(*client, format, where, out);
    v1::AcctShowRequest req;
    req.set_kind(entity);
    v1::AcctShowReply reply;
    if (Status s = client->CallDbd("AcctShow", req, &reply); !s.ok()) {
      std::fprintf(stderr, "sacctmgr: error: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    if (entity == "cluster") return Show(ClusterTable(), reply.clusters(), format, where, out);
    if (entity == "account") return Show(AccountTable(), reply.accounts(), format, where, out);
    if (entity == "user") {
      // withcoord: the accounts each user coordinates, after the usual columns.
      if (with_coord && format.empty()) format = UserTable().defaults + ",Coord Accounts";
      return Show(UserTable(), reply.users(), format, where, out);
    }
    if (entity == "qos") return Show(QosTable(), reply.qos(), format, where, out);
    if (entity == "assoc") return Show(AssocTable(), reply.assocs(), format, where, out);
    std::fprintf(stderr,
                 " Unknown entity '%s': use cluster, account, user, qos, association or event\n",
                 words[1].c_str());
    return 1;
  }

  if (readonly) {
    std::fprintf(stderr, " sacctmgr is read-only (-r): no %s\n", verb.c_str());
    return 1;
  }
  v1::AcctChangeRequest req;
  req.set_verb(verb);
  req.set_entity(entity);
  req.set_cluster(client->config().cluster_name);
  for (const std::string& w : rest) req.add_words(w);
  // Asked first on a terminal, as Slurm's sacctmgr does, unless -i.
  const bool ask = !immediate && ::isatty(STDIN_FILENO);
  req.set_dry_run(ask);
  v1::AcctChangeReply reply;
  if (Status s = client->CallDbd("AcctChange", req, &reply); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  if (!quiet) std::fputs(reply.message().c_str(), stdout);
  if (!reply.changed()) return 1;
  if (ask) {
    if (!AskToCommit()) return 0;
    req.set_dry_run(false);
    if (Status s = client->CallDbd("AcctChange", req, &reply); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace loom::cli
