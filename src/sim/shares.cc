#include "sim/shares.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/strings.h"

namespace loom::sim {
namespace {

// "Fairshare=40" or "Fairshare=parent".
StatusOr<int64_t> Shares(std::string_view value) {
  if (core::EqualsIgnoreCase(value, "parent")) return model::kFairshareParent;
  const std::optional<int64_t> n = core::ParseInt(value);
  if (!n || *n < 0) {
    return absl::InvalidArgumentError(core::StrCat(
        "Fairshare='", value, "' is not a share: write a whole number of at least 0, or parent"));
  }
  return *n;
}

// The fields of one line, split at the colons outside single quotes.
StatusOr<std::vector<std::string>> Fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '\'') {
      quoted = !quoted;
    } else if (c == ':' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) return absl::InvalidArgumentError("a quote (') is not closed");
  return out;
}

// Settings a dump carries that say nothing about shares or limits.
bool Informational(std::string_view key) {
  for (std::string_view k : {"Description", "Organization", "DefaultAccount", "AdminLevel",
                             "DefaultWCKey", "WCKeys", "Coordinator"}) {
    if (core::EqualsIgnoreCase(key, k)) return true;
  }
  return false;
}

}  // namespace

StatusOr<std::vector<DumpLine>> ParseDumpLines(std::string_view text, std::string_view where) {
  std::vector<DumpLine> out;
  int64_t number = 0;
  for (std::string_view line : core::Split(text, '\n')) {
    ++number;
    line = core::Trim(line);
    if (line.empty() || line.front() == '#') continue;
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(core::StrCat(where, ":", number, ": ", what));
    };
    auto fields = Fields(line);
    if (!fields.ok()) return error(std::string(fields.status().message()));
    // "Kind - 'name'", then the settings.
    const std::string head = (*fields)[0];
    const size_t dash = head.find(" - ");
    if (dash == std::string::npos) {
      return error(core::StrCat("'", head,
                                "' is not a dump line: write Cluster - 'NAME', "
                                "Parent - 'ACCOUNT', Account - 'NAME' or User - 'NAME'"));
    }
    DumpLine d;
    d.number = number;
    d.kind = std::string(core::Trim(std::string_view(head).substr(0, dash)));
    d.name = std::string(core::Trim(std::string_view(head).substr(dash + 3)));
    if (d.name.empty()) return error(core::StrCat(d.kind, " line without a name"));
    for (size_t i = 1; i < fields->size(); ++i) {
      const std::string& field = (*fields)[i];
      const size_t eq = field.find('=');
      if (eq == std::string::npos || eq == 0) {
        return error(core::StrCat("'", field, "' is not a setting: write Key=Value"));
      }
      d.settings.emplace_back(field.substr(0, eq), field.substr(eq + 1));
    }
    out.push_back(std::move(d));
  }
  return out;
}

StatusOr<model::AssociationTable> ParseShareDump(std::string_view text, std::string_view where,
                                                 std::vector<std::string>* notes) {
  model::AssociationTable table;
  std::set<std::string, std::less<>> accounts = {"root"};
  std::set<std::pair<std::string, std::string>> users;
  std::map<std::string, int64_t> ignored;  // settings not simulated, with how many lines
  std::string parent;                      // the last Parent line's account
  ASSIGN_OR_RETURN(std::vector<DumpLine> lines, ParseDumpLines(text, where));
  for (const DumpLine& line : lines) {
    auto error = [&](std::string_view what) {
      return absl::InvalidArgumentError(core::StrCat(where, ":", line.number, ": ", what));
    };
    const std::string& kind = line.kind;
    const std::string& name = line.name;
    int64_t shares = 1;
    for (const auto& [key, value] : line.settings) {
      if (core::EqualsIgnoreCase(key, "Fairshare") || core::EqualsIgnoreCase(key, "Shares")) {
        auto s = Shares(value);
        if (!s.ok()) return error(std::string(s.status().message()));
        shares = *s;
      } else if (!Informational(key)) {
        ++ignored[key];
      }
    }
    if (core::EqualsIgnoreCase(kind, "Cluster")) {
      continue;
    } else if (core::EqualsIgnoreCase(kind, "Parent")) {
      if (!accounts.count(name)) {
        return error(core::StrCat("Parent '", name,
                                  "' is not an account defined above: add its Account line "
                                  "first, under its own Parent"));
      }
      parent = name;
    } else if (core::EqualsIgnoreCase(kind, "Account")) {
      if (parent.empty()) {
        return error("an Account line before any Parent line: add Parent - 'root'");
      }
      if (!accounts.insert(name).second) {
        return error(core::StrCat("account '", name, "' is defined twice"));
      }
      table.accounts.push_back({.name = name, .parent = parent, .shares = shares, .limits = {}});
    } else if (core::EqualsIgnoreCase(kind, "User")) {
      if (parent.empty()) {
        return error("a User line before any Parent line: add Parent - 'ACCOUNT'");
      }
      if (!users.insert({parent, name}).second) {
        return error(
            core::StrCat("user '", name, "' is listed twice under account '", parent, "'"));
      }
      model::UserAssociation u;
      u.account = parent;
      u.user = name;
      u.shares = shares;
      table.associations.push_back(std::move(u));
    } else {
      return error(
          core::StrCat("unknown line kind '", kind, "': write Cluster, Parent, Account or User"));
    }
  }
  if (!ignored.empty()) {
    std::string list;
    for (const auto& [key, n] : ignored) {
      list += core::StrCat(list.empty() ? "" : ", ", key, " (", n, n == 1 ? " line)" : " lines)");
    }
    notes->push_back(core::StrCat("the simulator reads Fairshare only; not simulated: ", list));
  }
  return table;
}

StatusOr<model::AssociationTable> ParseShareList(std::string_view list) {
  model::AssociationTable table;
  std::set<std::string, std::less<>> seen;
  for (std::string_view item : core::Split(list, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name(core::Trim(item.substr(0, eq)));
    if (eq == std::string_view::npos || name.empty()) {
      return absl::InvalidArgumentError(core::StrCat(
          "--shares: '", item, "' is neither a file nor ACCOUNT=SHARES (e.g. physics=40,chem=60)"));
    }
    auto shares = Shares(core::Trim(item.substr(eq + 1)));
    if (!shares.ok()) {
      return absl::InvalidArgumentError(
          core::StrCat("--shares: account '", name, "': ", std::string(shares.status().message())));
    }
    if (name == "root" || !seen.insert(name).second) {
      return absl::InvalidArgumentError(
          core::StrCat("--shares: account '", name, "' ",
                       name == "root" ? "is the tree's root" : "is given twice"));
    }
    table.accounts.push_back({.name = name, .parent = "root", .shares = *shares, .limits = {}});
  }
  if (table.accounts.empty()) {
    return absl::InvalidArgumentError("--shares names no account (e.g. physics=40,chem=60)");
  }
  return table;
}

StatusOr<model::AssociationTable> ReadShares(const std::string& spec,
                                             std::vector<std::string>* notes) {
  struct stat st;
  if (::stat(spec.c_str(), &st) != 0) return ParseShareList(spec);
  std::ifstream in(spec);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return absl::NotFoundError(core::StrCat("cannot read shares file '", spec, "'"));
  return ParseShareDump(text.str(), spec, notes);
}

void AddWorkloadAssociations(std::span<const SimJob> jobs, model::AssociationTable* table,
                             std::vector<std::string>* notes) {
  std::set<std::string, std::less<>> accounts = {"root"};
  for (const model::AccountAssociation& a : table->accounts) accounts.insert(a.name);
  std::set<std::pair<std::string, std::string>> users;
  for (const model::UserAssociation& u : table->associations) users.insert({u.account, u.user});
  int64_t new_accounts = 0, new_users = 0, no_account = 0;
  for (const SimJob& j : jobs) {
    if (j.account.empty()) {
      ++no_account;
      continue;
    }
    if (accounts.insert(j.account).second) {
      table->accounts.push_back({.name = j.account, .parent = "root", .shares = 1, .limits = {}});
      ++new_accounts;
    }
    if (users.insert({j.account, j.user}).second) {
      model::UserAssociation u;
      u.account = j.account;
      u.user = j.user;
      table->associations.push_back(std::move(u));
      ++new_users;
    }
  }
  if (new_accounts > 0 && table->accounts.size() > static_cast<size_t>(new_accounts)) {
    notes->push_back(core::StrCat(new_accounts,
                                  " accounts of the workload are not in the "
                                  "shares: added under root with Fairshare=1"));
  } else if (new_accounts > 0) {
    notes->push_back(core::StrCat("no shares given: each of the workload's ", new_accounts,
                                  " accounts has Fairshare=1"));
  }
  if (no_account > 0) {
    notes->push_back(
        core::StrCat(no_account, " jobs name no account: their fair-share factor is 0"));
  }
  if (new_users > 0) {
    notes->push_back(core::StrCat(new_users, " users added under their accounts with Fairshare=1"));
  }
}

}  // namespace loom::sim
