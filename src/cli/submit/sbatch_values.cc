#include "cli/submit/internal/sbatch_values.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <set>

#include "absl/strings/cord.h"
#include "cli/submit/sbatch_options.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli::submit {
namespace {

constexpr char kExitPayload[] = "loom.cli.submit/exit";

}  // namespace

namespace internal {

using core::StrCat;

// An error as sbatch prints it (`lines`), ending the command with `exit_code`.
Status Fail(std::string_view lines, int exit_code) {
  Status s = absl::InvalidArgumentError(std::string(lines));
  s.SetPayload(kExitPayload, absl::Cord(std::to_string(exit_code)));
  return s;
}

// Gives a status from a helper (whose message is already sbatch's text) its exit code.
Status WithExit(const Status& s, int exit_code) {
  return Fail(std::string(s.message()), exit_code);
}

std::string OptName(Opt id) { return StrCat("--", LongName(id)); }

Status BadSpec(Opt id) {
  return Fail(StrCat("sbatch: error: Invalid ", OptName(id), " specification"), kOptionErrorExit);
}

// Slurm's "parse_int": a whole base-10 number (an optional sign, leading blanks allowed).
std::optional<int64_t> SlurmInt(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  s = s.substr(i);
  if (!s.empty() && s[0] == '+') s = s.substr(1);
  if (s.empty() || s.size() > 18) return std::nullopt;
  return core::ParseInt(s);
}

// A positive count ("Invalid numeric value" otherwise, exit 1); zero allowed where noted.
StatusOr<int32_t> Count(Opt id, std::string_view value, bool allow_zero) {
  std::optional<int64_t> v = SlurmInt(value);
  if (!v || *v < (allow_zero ? 0 : 1) || *v > INT32_MAX) {
    return Fail(
        StrCat("sbatch: error: Invalid numeric value \"", value, "\" for ", OptName(id), "."),
        kFatalExit);
  }
  return static_cast<int32_t>(*v);
}

// A node count with Slurm's k/m suffixes; nullopt when malformed.
std::optional<int64_t> NodeCount(std::string_view s) {
  int64_t mult = 1;
  if (!s.empty() && (s.back() == 'k' || s.back() == 'K')) mult = 1024;
  if (!s.empty() && (s.back() == 'm' || s.back() == 'M')) mult = 1024 * 1024;
  if (mult != 1) s.remove_suffix(1);
  std::optional<int64_t> v = SlurmInt(s);
  if (!v || *v > INT32_MAX / mult) return std::nullopt;
  return *v * mult;
}

// A duration for --time / --time-min: Slurm's forms, whole minutes (seconds round up);
// 0 means no limit.
std::optional<int64_t> TimeLimit(std::string_view s) {
  if (s.empty() || core::Trim(s).size() != s.size() || s[0] == '+') return std::nullopt;
  StatusOr<int64_t> secs = core::ParseDuration(s);
  if (!secs.ok()) return std::nullopt;
  if (*secs == core::kUnlimitedSeconds || *secs == 0) return core::kUnlimitedSeconds;
  return (*secs + 59) / 60 * 60;
}

bool IsYes(std::string_view v) { return core::EqualsIgnoreCase(v, "yes"); }

std::string BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string Absolute(std::string_view path, std::string_view base) {
  if (path.empty() || path[0] == '/' || base.empty()) return std::string(path);
  return StrCat(base, base.back() == '/' ? "" : "/", path);
}

// Environment flags: set when empty, "yes" or a non-zero number.
bool EnvFlagSet(std::string_view v) {
  if (v.empty() || IsYes(v)) return true;
  std::optional<int64_t> n = SlurmInt(v);
  return n && *n != 0;
}

bool ValidSignal(std::string_view spec) {
  size_t colon = spec.find(':');
  if (colon != std::string_view::npos) {
    std::string_view flags = spec.substr(0, colon);
    if (flags.empty() || !std::all_of(flags.begin(), flags.end(), [](char c) {
          return c == 'R' || c == 'B' || c == 'r' || c == 'b';
        })) {
      return false;
    }
    spec = spec.substr(colon + 1);
  }
  std::string_view sig = spec.substr(0, spec.find('@'));
  if (size_t at = spec.find('@'); at != std::string_view::npos) {
    std::optional<int64_t> t = SlurmInt(spec.substr(at + 1));
    if (!t || *t < 0 || *t > 65535) return false;
  }
  if (std::optional<int64_t> n = SlurmInt(sig)) return *n >= 1 && *n <= 64;
  std::string name = core::ToLower(sig);
  if (name.substr(0, 3) == "sig") name = name.substr(3);
  static const std::set<std::string> kNames = {
      "hup",  "int",  "quit", "ill",    "trap",   "abrt",  "bus",  "fpe",  "kill", "usr1", "segv",
      "usr2", "pipe", "alrm", "term",   "stkflt", "chld",  "cont", "stop", "tstp", "ttin", "ttou",
      "urg",  "xcpu", "xfsz", "vtalrm", "prof",   "winch", "io",   "pwr",  "sys"};
  return kNames.count(name) > 0;
}

bool ValidMailType(std::string_view list) {
  static const std::set<std::string> kTypes = {
      "none",          "begin",          "end",        "fail",       "requeue",
      "all",           "invalid_depend", "stage_out",  "time_limit", "time_limit_90",
      "time_limit_80", "time_limit_50",  "array_tasks"};
  for (std::string_view t : core::Split(list, ',')) {
    if (kTypes.count(core::ToLower(t)) == 0) return false;
  }
  return true;
}

// "[type:]count" items of --gpus*, or "name[[:type]:count]" items of --gres (count with an
// optional k/m/g/t/p multiplier). nullopt when malformed.
std::optional<std::vector<model::TypedCount>> ParseCounts(std::string_view text, bool gres) {
  std::vector<model::TypedCount> out;
  for (std::string_view item : core::Split(text, ',')) {
    std::vector<std::string_view> parts = core::Split(item, ':');
    model::TypedCount c;
    c.count = 1;
    size_t next = 0;
    if (gres) {
      c.name = std::string(parts[0]);
      next = 1;
    }
    if (c.name.empty() || parts.size() - next > 2) return std::nullopt;
    auto parse_count = [](std::string_view s) -> std::optional<int64_t> {
      int64_t mult = 1;
      if (!s.empty()) {
        switch (std::tolower(static_cast<unsigned char>(s.back()))) {
          case 'k':
            mult = int64_t{1} << 10;
            break;
          case 'm':
            mult = int64_t{1} << 20;
            break;
          case 'g':
            mult = int64_t{1} << 30;
            break;
          case 't':
            mult = int64_t{1} << 40;
            break;
          case 'p':
            mult = int64_t{1} << 50;
            break;
          default:
            break;
        }
        if (mult != 1) s.remove_suffix(1);
      }
      if (s.empty() ||
          !std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) ||
          s.size() > 9) {
        return std::nullopt;
      }
      int64_t n = *core::ParseInt(s);
      if (n > INT64_MAX / mult) return std::nullopt;
      return n * mult;
    };
    if (parts.size() - next == 2) {
      c.type = std::string(parts[next]);
      std::optional<int64_t> n = parse_count(parts[next + 1]);
      if (!n || c.type.empty()) return std::nullopt;
      c.count = *n;
    } else if (parts.size() - next == 1) {
      std::string_view one = parts[next];
      if (std::optional<int64_t> n = parse_count(one)) {
        c.count = *n;
      } else if (!one.empty() && std::isalpha(static_cast<unsigned char>(one[0]))) {
        c.type = std::string(one);  // a type alone: one of it
      } else {
        return std::nullopt;
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace internal

int SbatchExitCode(const Status& status) {
  if (status.ok()) return 0;
  auto code = status.GetPayload(kExitPayload);
  if (!code.has_value()) return 1;
  std::optional<int64_t> n = core::ParseInt(std::string(*code));
  return n ? static_cast<int>(*n) : 1;
}

}  // namespace loom::cli::submit
