#include "cli/sacctmgr_dump.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "cli/sacctmgr_archive.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "sim/shares.h"

namespace loom::cli {
namespace {

using core::StrCat;

// ":Key='value'" for a text setting, nothing when it is empty.
void Text(std::string* out, std::string_view key, const std::string& value) {
  if (!value.empty()) *out += StrCat(":", key, "='", value, "'");
}

void Number(std::string* out, std::string_view key, int64_t value) {
  if (value >= 0) *out += StrCat(":", key, "=", value);
}

// An association's own settings: its share, limits and QOS.
std::string Settings(const v1::AcctAssoc& a) {
  std::string out =
      StrCat(":Fairshare=", a.shares() < 0 ? std::string("parent") : StrCat(a.shares()));
  Text(&out, "GrpTRES", a.grp_tres());
  Text(&out, "GrpTRESMins", a.grp_tres_mins());
  Number(&out, "GrpJobs", a.grp_jobs());
  Number(&out, "GrpSubmitJobs", a.grp_submit_jobs());
  Number(&out, "MaxJobs", a.max_jobs());
  Number(&out, "MaxSubmitJobs", a.max_submit_jobs());
  Text(&out, "MaxTRESPerJob", a.max_tres_per_job());
  if (a.max_wall_min() >= 0) {
    out += StrCat(":MaxWallDurationPerJob=", core::FormatDuration(a.max_wall_min() * 60));
  }
  if (a.priority() > 0) out += StrCat(":Priority=", a.priority());
  if (a.qos_size() > 0) {
    Text(&out, "QOS", core::Join(std::vector<std::string>(a.qos().begin(), a.qos().end()), ","));
  }
  Text(&out, "DefaultQOS", a.default_qos());
  return out;
}

}  // namespace

StatusOr<std::string> DumpCluster(const v1::AcctShowReply& tree, const std::string& cluster) {
  bool known = false;
  for (const v1::AcctCluster& c : tree.clusters()) known = known || c.name() == cluster;
  if (!known) {
    return absl::NotFoundError(
        StrCat("Cluster ", cluster, " doesn't exist: see sacctmgr show cluster"));
  }
  std::map<std::string, const v1::AcctAccount*> accounts;
  for (const v1::AcctAccount& a : tree.accounts()) accounts[a.name()] = &a;
  std::map<std::string, const v1::AcctUser*> users;
  for (const v1::AcctUser& u : tree.users()) users[u.name()] = &u;
  // Under each account: its sub-accounts' associations and its users', by name.
  std::map<std::string, std::vector<const v1::AcctAssoc*>> sub_accounts, account_users;
  const v1::AcctAssoc* root = nullptr;
  for (const v1::AcctAssoc& a : tree.assocs()) {
    if (a.cluster() != cluster) continue;
    if (!a.user().empty()) {
      account_users[a.account()].push_back(&a);
    } else if (a.account() == "root") {
      root = &a;
    } else {
      sub_accounts[a.parent().empty() ? "root" : a.parent()].push_back(&a);
    }
  }
  auto by_name = [](const v1::AcctAssoc* x, const v1::AcctAssoc* y) {
    return std::tie(x->account(), x->user(), x->partition()) <
           std::tie(y->account(), y->user(), y->partition());
  };
  for (auto& [k, v] : sub_accounts) std::sort(v.begin(), v.end(), by_name);
  for (auto& [k, v] : account_users) std::sort(v.begin(), v.end(), by_name);

  std::string out = StrCat(
      "# The associations of cluster ", cluster, ", as sacctmgr dump writes them.\n",
      "# Each Parent line names the account that the User and Account lines after it belong\n",
      "# to; an Account line comes before the Parent line that opens it. Load it with\n",
      "# sacctmgr load, or replay fair share with it: loom sim --shares FILE.\n");
  out += StrCat("Cluster - '", cluster, "'");
  if (root != nullptr) out += Settings(*root);
  out += "\n";
  std::set<std::string> done;  // accounts opened, so that a cycle cannot loop
  std::function<void(const std::string&)> open = [&](const std::string& parent) {
    if (!done.insert(parent).second) return;
    const auto& us = account_users[parent];
    const auto& as = sub_accounts[parent];
    if (us.empty() && as.empty()) return;
    out += StrCat("Parent - '", parent, "'\n");
    for (const v1::AcctAssoc* a : us) {
      out += StrCat("User - '", a->user(), "'");
      if (auto it = users.find(a->user()); it != users.end()) {
        Text(&out, "DefaultAccount", it->second->default_account());
        if (it->second->admin_level() != "None") {
          Text(&out, "AdminLevel", it->second->admin_level());
        }
      }
      Text(&out, "Partition", a->partition());
      out += Settings(*a) + "\n";
    }
    for (const v1::AcctAssoc* a : as) {
      out += StrCat("Account - '", a->account(), "'");
      if (auto it = accounts.find(a->account()); it != accounts.end()) {
        Text(&out, "Description", it->second->description());
        Text(&out, "Organization", it->second->organization());
      }
      out += Settings(*a) + "\n";
    }
    for (const v1::AcctAssoc* a : as) open(a->account());
  };
  open("root");
  return out;
}

int RunDump(Client& client, const std::vector<std::string>& words, bool quiet) {
  std::string cluster = client.config().cluster_name, path;
  for (const std::string& w : words) {
    const auto [key, value] = OptionWord(w);
    if (core::EqualsIgnoreCase(key, "file")) {
      path = value;
    } else if (key.empty() || core::EqualsIgnoreCase(key, "cluster") ||
               core::EqualsIgnoreCase(key, "clusters")) {
      cluster = value;
    } else {
      std::fprintf(stderr, " Unknown option: %s (dump takes CLUSTER [File=PATH])\n", w.c_str());
      return 1;
    }
  }
  v1::AcctShowReply tree;
  if (Status s = client.CallDbd("AcctShow", v1::AcctShowRequest(), &tree); !s.ok()) {
    std::fprintf(stderr, "sacctmgr: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  auto text = DumpCluster(tree, cluster);
  if (!text.ok()) {
    std::fprintf(stderr, " %s\n", std::string(text.status().message()).c_str());
    return 1;
  }
  if (path.empty()) {
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  std::ofstream file(path);
  file << *text;
  file.close();
  if (!file) {
    std::fprintf(stderr, " Cannot write '%s'\n", path.c_str());
    return 1;
  }
  if (!quiet) std::printf(" Dumped cluster %s to %s\n", cluster.c_str(), path.c_str());
  return 0;
}

namespace {

// The settings of a dump line an association, account or user keeps; the rest is skipped.
bool Loaded(std::string_view kind, const std::string& key) {
  for (std::string_view k : {"Fairshare", "Shares", "Priority", "QOS", "DefaultQOS", "GrpTRES",
                             "GrpTRESMins", "GrpJobs", "GrpSubmitJobs", "MaxJobs", "MaxSubmitJobs",
                             "MaxTRESPerJob", "MaxTRES", "MaxWall", "MaxWallDurationPerJob"}) {
    if (core::EqualsIgnoreCase(key, k)) return true;
  }
  if (core::EqualsIgnoreCase(kind, "Account")) {
    return core::EqualsIgnoreCase(key, "Description") ||
           core::EqualsIgnoreCase(key, "Organization");
  }
  if (core::EqualsIgnoreCase(kind, "User")) {
    return core::EqualsIgnoreCase(key, "DefaultAccount") ||
           core::EqualsIgnoreCase(key, "AdminLevel");
  }
  return false;
}

struct Change {
  int64_t line = 0;
  v1::AcctChangeRequest req;
};

}  // namespace

int RunLoad(Client& client, const std::vector<std::string>& words, bool ask, bool quiet) {
  std::string path, cluster;
  if (Status s = FileAndCluster(words, "load", &path, &cluster); !s.ok()) {
    std::fprintf(stderr, " %s: a file as sacctmgr dump writes it\n",
                 std::string(s.message()).c_str());
    return 1;
  }
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, " Cannot read '%s'\n", path.c_str());
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto lines = sim::ParseDumpLines(text.str(), path);
  if (!lines.ok()) {
    std::fprintf(stderr, " %s\n", std::string(lines.status().message()).c_str());
    return 1;
  }
  if (lines->empty() || !core::EqualsIgnoreCase(lines->front().kind, "Cluster")) {
    std::fprintf(stderr, " %s: the first line must be Cluster - 'NAME'\n", path.c_str());
    return 1;
  }
  if (cluster.empty()) cluster = lines->front().name;
  v1::AcctShowReply tree;
  if (Status s = client.CallDbd("AcctShow", v1::AcctShowRequest(), &tree); !s.ok()) {
    std::fprintf(stderr, "sacctmgr: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  bool cluster_known = false;
  for (const v1::AcctCluster& c : tree.clusters()) {
    cluster_known = cluster_known || c.name() == cluster;
  }
  std::set<std::string> accounts = {"root"};
  for (const v1::AcctAccount& a : tree.accounts()) accounts.insert(a.name());
  std::set<std::tuple<std::string, std::string, std::string>> user_assocs;
  for (const v1::AcctAssoc& a : tree.assocs()) {
    if (a.cluster() == cluster && !a.user().empty()) {
      user_assocs.insert({a.account(), a.user(), a.partition()});
    }
  }
  // What to change, in file order.
  std::vector<Change> plan;
  std::map<std::string, int> skipped;
  auto change = [&](int64_t line, std::string verb, std::string entity,
                    std::vector<std::string> words) {
    Change c;
    c.line = line;
    c.req.set_verb(std::move(verb));
    c.req.set_entity(std::move(entity));
    c.req.set_cluster(cluster);
    for (std::string& w : words) c.req.add_words(std::move(w));
    plan.push_back(std::move(c));
  };
  if (!cluster_known) change(lines->front().number, "add", "cluster", {cluster});
  std::string parent;
  for (const sim::DumpLine& l : *lines) {
    std::vector<std::string> set;
    std::string partition;
    for (const auto& [k, v] : l.settings) {
      if (core::EqualsIgnoreCase(l.kind, "User") && core::EqualsIgnoreCase(k, "Partition")) {
        partition = v;
      } else if (Loaded(l.kind, k)) {
        set.push_back(StrCat(k, "=", v));
      } else {
        ++skipped[k];
      }
    }
    auto error = [&](std::string_view what) {
      std::fprintf(stderr, " %s:%lld: %.*s\n", path.c_str(), static_cast<long long>(l.number),
                   static_cast<int>(what.size()), what.data());
      return 1;
    };
    if (core::EqualsIgnoreCase(l.kind, "Cluster")) {
      if (&l != &lines->front()) return error("a second Cluster line: load one cluster at a time");
      // The Cluster line's settings are its root association's.
      if (!set.empty()) {
        std::vector<std::string> w = {"where", "name=root", "set"};
        w.insert(w.end(), set.begin(), set.end());
        change(l.number, "modify", "account", w);
      }
    } else if (core::EqualsIgnoreCase(l.kind, "Parent")) {
      if (!accounts.count(core::ToLower(l.name))) {
        return error(StrCat("Parent '", l.name, "' is not an account defined above"));
      }
      parent = core::ToLower(l.name);
    } else if (core::EqualsIgnoreCase(l.kind, "Account")) {
      if (parent.empty()) return error("an Account line before any Parent line");
      const std::string name = core::ToLower(l.name);
      std::vector<std::string> w;
      if (accounts.count(name)) {
        w = {"where", StrCat("name=", name), "set", StrCat("Parent=", parent)};
        w.insert(w.end(), set.begin(), set.end());
        change(l.number, "modify", "account", w);
      } else {
        w = {name, StrCat("Parent=", parent)};
        w.insert(w.end(), set.begin(), set.end());
        change(l.number, "add", "account", w);
        accounts.insert(name);
      }
    } else if (core::EqualsIgnoreCase(l.kind, "User")) {
      if (parent.empty()) return error("a User line before any Parent line");
      std::vector<std::string> w;
      if (user_assocs.count({parent, l.name, partition})) {
        if (set.empty()) continue;
        w = {"where", StrCat("name=", l.name), StrCat("account=", parent), "set"};
        w.insert(w.end(), set.begin(), set.end());
        change(l.number, "modify", "user", w);
      } else {
        w = {l.name, StrCat("Account=", parent)};
        if (!partition.empty()) w.push_back(StrCat("Partition=", partition));
        w.insert(w.end(), set.begin(), set.end());
        change(l.number, "add", "user", w);
        user_assocs.insert({parent, l.name, partition});
      }
    } else {
      return error(
          StrCat("unknown line kind '", l.kind, "': write Cluster, Parent, Account or User"));
    }
  }
  if (!quiet && !skipped.empty()) {
    std::string list;
    for (const auto& [k, n] : skipped) list += StrCat(list.empty() ? "" : ", ", k, " (", n, ")");
    std::printf(" Not loaded (loomdbd does not keep them): %s\n", list.c_str());
  }
  if (ask) {
    for (const Change& c : plan) {
      const std::vector<std::string> w(c.req.words().begin(), c.req.words().end());
      std::printf(" %s %s %s\n", c.req.verb().c_str(), c.req.entity().c_str(),
                  core::Join(w, " ").c_str());
    }
    if (!AskToCommit()) return 0;
  }
  int done = 0;
  for (const Change& c : plan) {
    v1::AcctChangeReply reply;
    if (Status s = client.CallDbd("AcctChange", c.req, &reply); !s.ok()) {
      std::fprintf(stderr, " %s:%lld: %s\n (%d of %zu changes were made before this line)\n",
                   path.c_str(), static_cast<long long>(c.line),
                   std::string(core::Trim(std::string(s.message()))).c_str(), done, plan.size());
      return 1;
    }
    ++done;
  }
  if (!quiet) std::printf(" Loaded %s: %d changes\n", path.c_str(), done);
  return 0;
}

}  // namespace loom::cli
