#include "conf/dbd_conf.h"

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/strings.h"

namespace loom::conf {
namespace {

using core::StrCat;

// Keys of Slurm 22.05's slurmdbd.conf that Loom accepts without acting on.
constexpr std::string_view kKnownKeys[] = {"ArchiveDir",         "ArchiveEvents",
                                           "ArchiveJobs",        "ArchiveResvs",
                                           "ArchiveScript",      "ArchiveSteps",
                                           "ArchiveSuspend",     "ArchiveTXN",
                                           "ArchiveUsage",       "AuthAltTypes",
                                           "AuthAltParameters",  "AuthType",
                                           "CommitDelay",        "CommunicationParameters",
                                           "DbdBackupHost",      "DebugFlags",
                                           "DefaultQOS",         "LogTimeFormat",
                                           "MaxQueryTimeRange",  "MessageTimeout",
                                           "Parameters",         "PluginDir",
                                           "PurgeEventAfter",    "PurgeResvAfter",
                                           "PurgeStepAfter",     "PurgeSuspendAfter",
                                           "PurgeTXNAfter",      "PurgeUsageAfter",
                                           "StorageParameters",  "TCPTimeout",
                                           "TrackSlurmctldDown", "TrackWCKey"};

// Slurm's purge periods: a number and hours, days or months ("12month", "30days").
std::optional<int64_t> ParsePurgePeriod(std::string_view v) {
  int64_t n = 0;
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, n);
  if (ec != std::errc() || n < 0) return std::nullopt;
  const std::string unit = core::ToLower(std::string_view(p, end - p));
  if (unit.starts_with("hour")) return n * 3600;
  if (unit.starts_with("day")) return n * 86400;
  if (unit.empty() || unit.starts_with("month")) return n * 30 * 86400;
  return std::nullopt;
}

}  // namespace

StatusOr<DbdConfig> ParseDbdConf(std::string_view text, std::string_view file_name,
                                 std::vector<Diagnostic>* warnings) {
  DbdConfig c;
  std::vector<std::string> errors;
  int line_no = 0;
  for (std::string_view raw : core::Split(text, '\n')) {
    ++line_no;
    std::string_view line = raw;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = core::Trim(line);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    const std::string where = StrCat(file_name, ":", line_no, ": ");
    if (eq == std::string_view::npos) {
      errors.push_back(StrCat(where, "error: '", line, "' is not Key=Value"));
      continue;
    }
    const std::string_view key = core::Trim(line.substr(0, eq));
    const std::string_view value = core::Trim(line.substr(eq + 1));
    auto bad = [&](std::string_view expected) {
      errors.push_back(
          StrCat(where, "error: invalid value '", value, "' for ", key, ": expected ", expected));
    };
    auto port = [&](int32_t* out) {
      int v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || p != value.data() + value.size() || v < 1 || v > 65535) {
        bad("a port number from 1 to 65535");
      } else {
        *out = v;
      }
    };
    auto is = [&](std::string_view k) { return core::EqualsIgnoreCase(key, k); };
    if (is("DbdHost")) {
      c.dbd_host = std::string(value);
    } else if (is("DbdAddr")) {
      c.dbd_addr = std::string(value);
    } else if (is("DbdPort")) {
      port(&c.dbd_port);
    } else if (is("StorageType")) {
      const std::string v = core::ToLower(value);
      if (v == "accounting_storage/sqlite") {
        c.storage_type = AcctStorageType::kSqlite;
      } else if (v == "accounting_storage/pgsql") {
        c.storage_type = AcctStorageType::kPgsql;
      } else if (v == "accounting_storage/mysql") {
        errors.push_back(StrCat(where,
                                "error: StorageType=accounting_storage/mysql is not "
                                "supported by Loom: use accounting_storage/pgsql "
                                "(PostgreSQL) or accounting_storage/sqlite (embedded)"));
      } else {
        bad("accounting_storage/sqlite or accounting_storage/pgsql");
      }
    } else if (is("StorageHost")) {
      c.storage_host = std::string(value);
    } else if (is("StoragePort")) {
      port(&c.storage_port);
    } else if (is("StorageUser")) {
      c.storage_user = std::string(value);
    } else if (is("StoragePass")) {
      c.storage_pass = std::string(value);
    } else if (is("StorageLoc")) {
      c.storage_loc = std::string(value);
    } else if (is("SlurmUser")) {
      if (value.empty()) {
        bad("a user name");
      } else {
        c.slurm_user = std::string(value);
      }
    } else if (is("LogFile")) {
      c.log_file = std::string(value);
    } else if (is("PidFile")) {
      c.pid_file = std::string(value);
    } else if (is("DebugLevel")) {
      if (auto l = core::ParseLogLevel(value)) {
        c.debug_level = *l;
      } else {
        bad("quiet, fatal, error, info, verbose or debug..debug5");
      }
    } else if (is("AuthInfo")) {
      for (std::string_view part : core::Split(value, ',')) {
        part = core::Trim(part);
        if (part.starts_with("socket=")) c.munge_socket = std::string(part.substr(7));
      }
    } else if (is("PrivateData")) {
      c.private_data.clear();
      for (std::string_view k : core::Split(value, ',')) {
        if (!core::Trim(k).empty()) c.private_data.push_back(core::ToLower(core::Trim(k)));
      }
    } else if (is("PurgeJobAfter")) {
      if (auto s = ParsePurgePeriod(value)) {
        c.purge_job_after_s = *s;
      } else {
        bad("a period such as 12month, 30days or 48hours");
      }
    } else {
      bool known = false;
      for (std::string_view k : kKnownKeys) known = known || core::EqualsIgnoreCase(key, k);
      if (!known) {
        errors.push_back(StrCat(where, "error: unknown slurmdbd.conf key '", key, "'"));
      } else if (warnings) {
        warnings->push_back({Diagnostic::Severity::kWarning,
                             SourceLocation{std::string(file_name), line_no}, std::string(key),
                             StrCat(key, " is accepted but not acted on by Loom yet")});
      }
    }
  }
  if (!errors.empty()) return absl::InvalidArgumentError(core::Join(errors, "\n"));
  return c;
}

bool DbdConfig::Private(std::string_view kind) const {
  for (const std::string& k : private_data) {
    if (k == kind || k == "all") return true;
  }
  return false;
}

StatusOr<DbdConfig> LoadDbdConf(const std::string& path, std::vector<Diagnostic>* warnings) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseDbdConf(text.str(), path, warnings);
}

}  // namespace loom::conf
