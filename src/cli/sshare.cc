// sshare: the fair-share tree with each association's shares, usage and fair-share factor,
// in Slurm 22.05's layout (Fair Tree's columns, or the classic algorithm's with
// PriorityFlags=NO_FAIR_TREE), and its selection rules: every account, and the caller's own
// user associations unless -a or -u says otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/text.h"
#include "cli/slurm_help.h"
#include "core/strings.h"

namespace loom::cli {
namespace {

using core::StrCat;

enum class Opt {
  kAccounts,
  kAll,
  kClusters,
  kFormat,
  kHelp,
  kHelpFormat,
  kJson,
  kLong,
  kNoHeader,
  kParsable,
  kParsable2,
  kPartition,
  kUsage,
  kUsers,
  kUsersOnly,
  kVerbose,
  kVersion,
};

constexpr OptionSpec<Opt> kOptions[] = {
    {"accounts", 'A', kArg, Opt::kAccounts},
    {"all", 'a', kNoArg, Opt::kAll},
    {"clusters", 'M', kArg, Opt::kClusters},
    {"format", 'o', kArg, Opt::kFormat},
    {"help", 0, kNoArg, Opt::kHelp},
    {"helpformat", 0, kNoArg, Opt::kHelpFormat},
    {"json", 0, kNoArg, Opt::kJson},
    {"long", 'l', kNoArg, Opt::kLong},
    {"noheader", 'n', kNoArg, Opt::kNoHeader},
    {"parsable", 'p', kNoArg, Opt::kParsable},
    {"parsable2", 'P', kNoArg, Opt::kParsable2},
    {"partition", 'm', kNoArg, Opt::kPartition},
    {"usage", 0, kNoArg, Opt::kUsage},
    {"users", 'u', kArg, Opt::kUsers},
    {"Users", 'U', kNoArg, Opt::kUsersOnly},
    {"verbose", 'v', kNoArg, Opt::kVerbose},
    {"version", 'V', kNoArg, Opt::kVersion},
};

constexpr CommandText kText{"sshare", kSshareHelp, kSshareUsage};

// The fields -o takes, with Slurm's widths (Account is left-justified, the others right).
struct Field {
  std::string_view name;
  int width;
};
constexpr Field kFields[] = {
    {"Account", 20},   {"Cluster", 10},     {"EffectvUsage", 13},
    {"FairShare", 10}, {"GrpTRESMins", 30}, {"GrpTRESRaw", 30},
    {"ID", 6},         {"LevelFS", 10},     {"NormShares", 11},
    {"NormUsage", 11}, {"Partition", 12},   {"RawShares", 10},
    {"RawUsage", 11},  {"TRESRunMins", 30}, {"User", 10},
};

struct Column {
  std::string_view name;
  int width;
};

StatusOr<std::vector<Column>> ParseFields(std::string_view list) {
  std::vector<Column> out;
  for (std::string_view item : core::Split(list, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    std::optional<int> width;
    if (size_t pct = item.find('%'); pct != std::string_view::npos) {
      auto w = core::ParseInt(item.substr(pct + 1));
      if (!w || *w < 0 || *w > 1000) {
        return absl::InvalidArgumentError(StrCat("bad width in format field '", item, "'"));
      }
      width = static_cast<int>(*w);
      item = item.substr(0, pct);
    }
    const Field* found = nullptr;
    for (const Field& f : kFields) {
      if (core::EqualsIgnoreCase(f.name, item)) found = &f;
    }
    if (found == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("Invalid field requested: \"", item, "\" (sshare --helpformat lists them)"));
    }
    out.push_back({found->name, width.value_or(found->width)});
  }
  if (out.empty()) return absl::InvalidArgumentError("-o names no field");
  return out;
}

std::string Six(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

// One cell of `row`, as sshare prints it.
std::string Cell(std::string_view field, const v1::ShareRow& row, bool root, bool fair_tree,
                 int depth, const std::string& cluster) {
  const bool user = !row.user().empty();
  if (field == "Account") return std::string(static_cast<size_t>(depth), ' ') + row.account();
  if (field == "User") return row.user();
  if (field == "Cluster") return cluster;
  if (field == "RawShares") {
    if (root) return "";
    return row.raw_shares() < 0 ? "parent" : StrCat(row.raw_shares());
  }
  if (field == "NormShares") return Six(row.norm_shares());
  if (field == "RawUsage") return StrCat(static_cast<int64_t>(row.raw_usage()));
  if (field == "NormUsage") return root ? "" : Six(row.norm_usage());
  if (field == "EffectvUsage") return Six(row.effective_usage());
  if (field == "FairShare") return fair_tree && !user ? "" : Six(row.fairshare());
  if (field == "LevelFS") {
    if (root || !fair_tree) return "";
    return std::isinf(row.level_fs()) ? "inf" : Six(row.level_fs());
  }
  if (field == "TRESRunMins") return row.tres_run_mins();
  return "";  // GrpTRESMins, GrpTRESRaw, ID, Partition: nothing set here
}

int HelpFormat() {
  std::string out;
  for (size_t i = 0; i < std::size(kFields); ++i) {
    const bool last_in_line = i % 4 == 3 || i + 1 == std::size(kFields);
    format::AppendColumn(&out, kFields[i].name, 17, false);
    out += last_in_line ? "\n" : " ";
  }
  return PrintText(out);
}

void AppendJson(std::string* out, const std::vector<const v1::ShareRow*>& rows,
                const std::string& cluster, bool fair_tree) {
  format::JsonWriter w(out);
  w.BeginObject();
  w.BeginObject("shares");
  w.BeginArray("shares");
  for (const v1::ShareRow* r : rows) {
    w.BeginObject();
    w.String("cluster", cluster);
    w.String("name", r->user().empty() ? r->account() : r->user());
    w.String("account", r->account());
    w.String("user", r->user());
    w.BeginArray("type");
    w.String(r->user().empty() ? "ASSOCIATION" : "USER");
    w.EndArray();
    w.Int("depth", r->depth());
    if (r->raw_shares() < 0) {
      w.String("shares", "parent");
    } else {
      w.Int("shares", r->raw_shares());
    }
    w.Double("shares_normalized", r->norm_shares());
    w.Double("usage", r->raw_usage());
    w.Double("usage_normalized", r->norm_usage());
    w.Double("effective_usage", r->effective_usage());
    w.BeginObject("fairshare");
    w.Double("factor", r->fairshare());
    if (fair_tree && !std::isinf(r->level_fs())) {
      w.Double("level", r->level_fs());
    } else if (fair_tree) {
      w.String("level", "inf");
    }
    w.EndObject();
    w.String("tres_run_minutes", r->tres_run_mins());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  *out += "\n";
}

}  // namespace

int RunSshare(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  bool all = false, long_form = false, header = true, users_only = false, json = false;
  format::AcctTableStyle style;
  std::set<std::string> accounts, users;
  std::string fields;
  for (const ParsedOption<Opt>& o : scan.options) {
    switch (o.id) {
      case Opt::kAccounts:
        for (std::string_view a : core::Split(*o.value, ',')) accounts.insert(core::ToLower(a));
        break;
      case Opt::kAll:
        all = true;
        break;
      case Opt::kFormat:
        fields = *o.value;
        break;
      case Opt::kHelpFormat:
        return HelpFormat();
      case Opt::kJson:
        json = true;
        break;
      case Opt::kLong:
        long_form = true;
        break;
      case Opt::kNoHeader:
        header = false;
        break;
      case Opt::kParsable:
        style = {'|', true};
        break;
      case Opt::kParsable2:
        style = {'|', false};
        break;
      case Opt::kUsers:
        for (std::string_view u : core::Split(*o.value, ',')) users.insert(std::string(u));
        break;
      case Opt::kUsersOnly:
        users_only = true;
        break;
      case Opt::kVerbose:
        break;
      default:
        return NotSupported("sshare", LongName<Opt>(kOptions, o.id));
    }
  }
  if (!scan.rest.empty()) {
    std::fprintf(stderr, "sshare: error: unexpected argument '%s'\n", scan.rest.front().c_str());
    return 1;
  }
  auto client = Client::Connect("sshare");
  if (!client.ok()) {
    std::fprintf(stderr, "sshare: error: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  v1::SharesReply reply;
  if (Status s = client->Call("Shares", v1::SharesRequest(), &reply); !s.ok()) {
    std::fprintf(stderr, "sshare: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  const bool fair_tree = reply.fair_tree();
  if (fields.empty()) {
    fields = "Account,User,RawShares,NormShares,RawUsage,";
    fields += long_form ? "NormUsage,EffectvUsage,FairShare," : "EffectvUsage,FairShare";
    if (long_form)
      fields += fair_tree ? "LevelFS,GrpTRESMins,TRESRunMins" : "GrpTRESMins,TRESRunMins";
  }
  StatusOr<std::vector<Column>> columns = ParseFields(fields);
  if (!columns.ok()) {
    std::fprintf(stderr, "sshare: error: %s\n", std::string(columns.status().message()).c_str());
    return 1;
  }

  // Which rows: user associations of every user (-a), of those -u names, else the caller's;
  // account lines all of them, or with -u those on the way up to the users shown.
  const std::string me = CurrentUserName();
  const bool by_user = !users.empty() && !all;
  const auto& rows = reply.rows();
  const auto n = static_cast<size_t>(rows.size());
  std::vector<bool> keep(n, false);
  std::vector<int> parent_of(n, -1);
  std::vector<int> open_accounts;  // the account line at each depth above the current row
  for (size_t i = 0; i < n; ++i) {
    const auto depth = static_cast<size_t>(rows[i].depth());
    open_accounts.resize(std::min(open_accounts.size(), depth));
    parent_of[i] = depth > 0 && depth <= open_accounts.size() ? open_accounts[depth - 1] : -1;
    if (rows[i].user().empty()) open_accounts.push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < n; ++i) {
    const v1::ShareRow& r = rows[i];
    if (!accounts.empty() && !accounts.count(r.account())) continue;
    if (r.user().empty()) {
      keep[i] = keep[i] || (!users_only && !by_user);
      continue;
    }
    if (!(all || (by_user ? users.count(r.user()) > 0 : r.user() == me))) continue;
    keep[i] = true;
    if (by_user && !users_only) {
      for (int p = parent_of[i]; p >= 0; p = parent_of[p]) keep[p] = true;
    }
  }
  std::vector<const v1::ShareRow*> shown;
  int base_depth = 1 << 30;
  for (size_t i = 0; i < n; ++i) {
    if (!keep[i] || (!accounts.empty() && !accounts.count(rows[i].account()))) continue;
    shown.push_back(&rows[i]);
    base_depth = std::min(base_depth, rows[i].depth());
  }
  const std::string cluster = client->config().cluster_name;
  std::string out;
  if (json) {
    AppendJson(&out, shown, cluster, fair_tree);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }
  std::vector<format::AcctCell> names;
  for (const Column& c : *columns) names.push_back({c.name, c.width, c.name == "Account"});
  if (header) format::AppendAcctHeader(&out, names, style);
  std::vector<std::string> values(columns->size());
  for (const v1::ShareRow* r : shown) {
    const bool root = r->depth() == 0 && r->user().empty();
    std::vector<format::AcctCell> cells;
    for (size_t c = 0; c < columns->size(); ++c) {
      values[c] = Cell((*columns)[c].name, *r, root, fair_tree, r->depth() - base_depth, cluster);
      cells.push_back({values[c], (*columns)[c].width, (*columns)[c].name == "Account"});
    }
    format::AppendAcctRow(&out, cells, style);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace loom::cli
