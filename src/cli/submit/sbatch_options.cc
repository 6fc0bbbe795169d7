#include "cli/submit/sbatch_options.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <set>

#include "absl/strings/cord.h"
#include "cli/submit/batch_script.h"
#include "cli/submit/begin_time.h"
#include "cli/submit/internal/sbatch_getopt.h"
#include "core/mem_size.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "sched/select/constraint.h"

namespace loom::cli::submit {
namespace {

using core::StrCat;
using internal::LongName;
using internal::Opt;
using internal::ParsedOption;
using model::JobRequest;

constexpr char kExitPayload[] = "loom.cli.submit/exit";
constexpr int kFatalExit = 1;

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

enum class Source { kCommandLine, kEnvironment, kScript };

bool IsMemOption(Opt id) {
  return id == Opt::kMem || id == Opt::kMemPerCpu || id == Opt::kMemPerGpu;
}

// Options Loom accepts and records but does not act on; each earns one warning.
bool IsIgnored(Opt id) {
  switch (id) {
    case Opt::kAcctgFreq:
    case Opt::kBatch:
    case Opt::kBb:
    case Opt::kBbf:
    case Opt::kClusterConstraint:
    case Opt::kClusters:
    case Opt::kContainer:
    case Opt::kContext:
    case Opt::kCoreSpec:
    case Opt::kCoresPerSocket:
    case Opt::kCpuFreq:
    case Opt::kDelayBoot:
    case Opt::kDistribution:
    case Opt::kExtraNodeInfo:
    case Opt::kGpuBind:
    case Opt::kGpuFreq:
    case Opt::kGresFlags:
    case Opt::kHint:
    case Opt::kMailType:
    case Opt::kMailUser:
    case Opt::kMcsLabel:
    case Opt::kMemBind:
    case Opt::kNetwork:
    case Opt::kNodefile:
    case Opt::kNtasksPerTres:
    case Opt::kPower:
    case Opt::kProfile:
    case Opt::kPropagate:
    case Opt::kReboot:
    case Opt::kSocketsPerNode:
    case Opt::kThreadSpec:
    case Opt::kThreadsPerCore:
    case Opt::kWaitAllNodes:
      return true;
    default:
      return false;
  }
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
StatusOr<int32_t> Count(Opt id, std::string_view value, bool allow_zero = false) {
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

std::string BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Everything the sources say, before the request is assembled.
struct State {
  JobRequest r;
  std::optional<std::string> job_name, chdir, output, error, input, export_text;
  std::optional<std::string> gres, gpus, gpus_per_node, gpus_per_task, gpus_per_socket;
  std::optional<std::string> dependency, array;
  std::optional<std::string> wrap;
  SbatchInput::Action action = SbatchInput::Action::kSubmit;
  bool parsable = false, wait = false, quiet = false;
  int verbose = 0;
  std::vector<std::string> warnings;
  std::set<Opt> warned;
};

class Resolver {
 public:
  Resolver(int64_t now, const SbatchSettings& settings) : now_(now), settings_(settings) {}

  // Applies one option from `source` to `st`, validating its value.
  Status Apply(const ParsedOption& o, Source source, State* st) {
    const std::string v = o.value.value_or("");
    JobRequest& r = st->r;
    if (IsIgnored(o.id)) {
      RETURN_IF_ERROR(ValidateIgnored(o));
      r.ignored_options[std::string(LongName(o.id))] = v;
      if (st->warned.insert(o.id).second) {
        if (o.id == Opt::kMailType || o.id == Opt::kMailUser) {
          st->warnings.push_back(
              StrCat("sbatch: warning: ", OptName(o.id), " is ignored: Loom does not send mail"));
        } else {
          st->warnings.push_back(
              StrCat("sbatch: warning: ", OptName(o.id), " is accepted but has no effect in Loom"));
        }
      }
      return absl::OkStatus();
    }
    switch (o.id) {
      case Opt::kAccount:
        r.account = v;
        break;
      case Opt::kArray:
        st->array = v;
        break;
      case Opt::kBegin:
      case Opt::kDeadline: {
        if (v.empty()) return BadSpec(o.id);
        StatusOr<int64_t> t = ParseSlurmDateTime(v, now_, settings_.time_zone);
        if (!t.ok()) {
          return Fail(StrCat(std::string(t.status().message()), "\nsbatch: error: Invalid ",
                             OptName(o.id), " specification"),
                      kOptionErrorExit);
        }
        (o.id == Opt::kBegin ? r.begin_time : r.deadline) = *t;
        break;
      }
      case Opt::kChdir:
        st->chdir = v;
        break;
      case Opt::kComment:
        r.comment = v;
        break;
      case Opt::kContiguous:
        r.contiguous = true;
        break;
      case Opt::kConstraint:
        r.constraint = v;
        break;
      case Opt::kCpusPerGpu: {
        ASSIGN_OR_RETURN(r.cpus_per_gpu, Count(o.id, v));
        break;
      }
      case Opt::kCpusPerTask: {
        ASSIGN_OR_RETURN(r.cpus_per_task, Count(o.id, v));
        break;
      }
      case Opt::kDependency:
        st->dependency = v;
        break;
      case Opt::kError:
        st->error = v;
        break;
      case Opt::kExclude:
        r.exclude = v;
        break;
      case Opt::kExclusive:
        if (!o.value || core::EqualsIgnoreCase(v, "exclusive")) {
          r.sharing = model::SharingMode::kExclusive;
        } else if (core::EqualsIgnoreCase(v, "user")) {
          r.sharing = model::SharingMode::kExclusiveUser;
        } else if (core::EqualsIgnoreCase(v, "mcs")) {
          r.sharing = model::SharingMode::kExclusiveMcs;
        } else {
          return BadSpec(o.id);
        }
        break;
      case Opt::kExport:
        st->export_text = v;
        break;
      case Opt::kExportFile:
        r.export_file = v;
        break;
      case Opt::kGetUserEnv: {
        size_t digits = 0;
        while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits]))) ++digits;
        std::string_view mode = std::string_view(v).substr(digits);
        if (!(mode.empty() || mode == "S" || mode == "L")) return BadSpec(o.id);
        r.get_user_env = true;
        break;
      }
      case Opt::kGid:
      case Opt::kUid: {
        std::optional<int64_t> id = SlurmInt(v);
        if (!id || *id < 0 || *id > UINT32_MAX - 1) return BadSpec(o.id);
        (o.id == Opt::kUid ? r.uid : r.gid) = static_cast<uint32_t>(*id);
        break;
      }
      case Opt::kGpus:
        st->gpus = v;
        break;
      case Opt::kGpusPerNode:
        st->gpus_per_node = v;
        break;
      case Opt::kGpusPerSocket:
        st->gpus_per_socket = v;
        break;
      case Opt::kGpusPerTask:
        st->gpus_per_task = v;
        break;
      case Opt::kGres:
        if (v == "help" && source == Source::kCommandLine) {
          st->action = SbatchInput::Action::kGresHelp;
        }
        st->gres = v;
        break;
      case Opt::kHelp:
      case Opt::kUsage:
      case Opt::kVersion:
        if (source == Source::kCommandLine) {
          st->action = o.id == Opt::kHelp    ? SbatchInput::Action::kHelp
                       : o.id == Opt::kUsage ? SbatchInput::Action::kUsage
                                             : SbatchInput::Action::kVersion;
        }
        break;
      case Opt::kHold:
        r.hold = true;
        break;
      case Opt::kIgnorePbs:
        break;  // Loom reads no #PBS lines anyway
      case Opt::kInput:
        st->input = v;
        break;
      case Opt::kJobName:
        st->job_name = v;
        break;
      case Opt::kKillOnInvalidDep:
        if (IsYes(v)) {
          r.kill_on_invalid_dep = true;
        } else if (core::EqualsIgnoreCase(v, "no")) {
          r.kill_on_invalid_dep = false;
        } else {
          return BadSpec(o.id);
        }
        break;
      case Opt::kLicenses:
        r.licenses = v;
        break;
      case Opt::kMem:
      case Opt::kMemPerCpu:
      case Opt::kMemPerGpu: {
        StatusOr<int64_t> mb = core::ParseMemoryMb(v);
        if (!mb.ok()) return BadSpec(o.id);
        (o.id == Opt::kMem         ? r.mem_per_node_mb
         : o.id == Opt::kMemPerCpu ? r.mem_per_cpu_mb
                                   : r.mem_per_gpu_mb) = *mb;
        break;
      }
      case Opt::kMincpus: {
        ASSIGN_OR_RETURN(r.mincpus, Count(o.id, v));
        break;
      }
      case Opt::kNice: {
        if (!o.value) {
          r.nice = 100;
          break;
        }
        std::optional<int64_t> n = SlurmInt(v);
        if (!n) return Fail("sbatch: error: Invalid --nice value", kOptionErrorExit);
        if (*n > 2147483645 || *n < -2147483645) {
          return Fail("sbatch: error: Invalid --nice value, out of range (+/- 2147483645)",
                      kOptionErrorExit);
        }
        r.nice = static_cast<int32_t>(*n);
        break;
      }
      case Opt::kNoKill:
        if (!o.value) {
          r.no_kill = true;
        } else if (core::EqualsIgnoreCase(v, "off")) {
          r.no_kill = false;
        } else {
          return BadSpec(o.id);
        }
        break;
      case Opt::kNoRequeue:
        r.requeue = false;
        break;
      case Opt::kRequeue:
        r.requeue = true;
        break;
      case Opt::kNodelist:
        r.nodelist = v;
        break;
      case Opt::kNodes:
        RETURN_IF_ERROR(ApplyNodes(v, &r));
        break;
      case Opt::kNtasks: {
        ASSIGN_OR_RETURN(r.ntasks, Count(o.id, v));
        break;
      }
      case Opt::kNtasksPerCore: {
        ASSIGN_OR_RETURN(r.ntasks_per_core, Count(o.id, v));
        break;
      }
      case Opt::kNtasksPerGpu: {
        ASSIGN_OR_RETURN(r.ntasks_per_gpu, Count(o.id, v));
        break;
      }
      case Opt::kNtasksPerNode: {
        ASSIGN_OR_RETURN(r.ntasks_per_node, Count(o.id, v));
        break;
      }
      case Opt::kNtasksPerSocket: {
        ASSIGN_OR_RETURN(r.ntasks_per_socket, Count(o.id, v));
        break;
      }
      case Opt::kOpenMode:
        if (!v.empty() && (v[0] == 'a' || v[0] == 'A')) {
          r.open_mode = model::OpenMode::kAppend;
        } else if (!v.empty() && (v[0] == 't' || v[0] == 'T')) {
          r.open_mode = model::OpenMode::kTruncate;
        } else {
          return BadSpec(o.id);
        }
        break;
      case Opt::kOutput:
        st->output = v;
        break;
      case Opt::kOvercommit:
        r.overcommit = true;
        break;
      case Opt::kOversubscribe:
        r.sharing = model::SharingMode::kOversubscribe;
        break;
      case Opt::kParsable:
        st->parsable = true;
        break;
      case Opt::kPartition: {
        r.partitions.clear();
        for (std::string_view p : core::Split(v, ',')) {
          if (!p.empty()) r.partitions.emplace_back(p);
        }
        break;
      }
      case Opt::kPrefer:
        r.prefer = v;
        break;
      case Opt::kPriority: {
        if (core::EqualsIgnoreCase(v, "TOP")) {
          r.priority = model::kPriorityTop;
          break;
        }
        std::optional<int64_t> p = SlurmInt(v);
        if (!p || *p < 0 || *p >= model::kPriorityTop) {
          return Fail(StrCat("sbatch: error: Invalid --priority value '", v,
                             "': expected a number from 0 to ", model::kPriorityTop - 1, " or TOP"),
                      kOptionErrorExit);
        }
        r.priority = *p;
        break;
      }
      case Opt::kQos:
        r.qos = v;
        break;
      case Opt::kQuiet:
        st->quiet = true;
        break;
      case Opt::kReservation:
        r.reservation = v;
        break;
      case Opt::kSegment: {
        ASSIGN_OR_RETURN(r.segment, Count(o.id, v));
        break;
      }
      case Opt::kSignal:
        if (!ValidSignal(v)) return BadSpec(o.id);
        r.signal = v;
        break;
      case Opt::kSpreadJob:
        r.spread_job = true;
        break;
      case Opt::kSwitches: {
        size_t at = v.find('@');
        ASSIGN_OR_RETURN(r.switches, Count(o.id, std::string_view(v).substr(0, at)));
        if (at != std::string::npos) {
          StatusOr<int64_t> wait = core::ParseDuration(std::string_view(v).substr(at + 1));
          if (!wait.ok() || *wait == core::kUnlimitedSeconds) {
            return Fail(StrCat("sbatch: error: Invalid --switches specification '", v,
                               "': the time after '@' must be a duration such as 10, 1:00:00 "
                               "or 1-0"),
                        kOptionErrorExit);
          }
          r.switches_wait_s = *wait;
        }
        break;
      }
      case Opt::kTestOnly:
        r.test_only = true;
        break;
      case Opt::kTime:
      case Opt::kTimeMin: {
        std::optional<int64_t> t = TimeLimit(v);
        if (!t) return BadSpec(o.id);
        (o.id == Opt::kTime ? r.time_limit_s : r.time_min_s) = *t;
        break;
      }
      case Opt::kTmp: {
        StatusOr<int64_t> mb = core::ParseMemoryMb(v);
        if (!mb.ok()) return BadSpec(o.id);
        r.tmp_mb = *mb;
        break;
      }
      case Opt::kUseMinNodes:
        r.use_min_nodes = true;
        break;
      case Opt::kVerbose:
        ++st->verbose;
        break;
      case Opt::kWait:
        st->wait = true;
        break;
      case Opt::kWckey:
        r.wckey = v;
        break;
      case Opt::kWrap:
        if (source == Source::kCommandLine) {
          st->wrap = v;
        } else if (st->warned.insert(o.id).second) {
          st->warnings.push_back(
              "sbatch: warning: --wrap is ignored in #SBATCH directives; give it on the "
              "command line");
        }
        break;
      default:
        break;  // the ignored options, handled above
    }
    return absl::OkStatus();
  }

 private:
  // Values Slurm checks even for options Loom does not act on.
  Status ValidateIgnored(const ParsedOption& o) {
    std::string v = o.value.value_or("");
    switch (o.id) {
      case Opt::kMailType:
        if (!ValidMailType(v)) return BadSpec(o.id);
        break;
      case Opt::kCoresPerSocket:
      case Opt::kSocketsPerNode:
      case Opt::kThreadsPerCore:
      case Opt::kNtasksPerTres:
        RETURN_IF_ERROR(Count(o.id, v).status());
        break;
      case Opt::kCoreSpec:
        RETURN_IF_ERROR(Count(o.id, v, true).status());
        break;
      case Opt::kThreadSpec:
        RETURN_IF_ERROR(Count(o.id, v).status());
        break;
      case Opt::kWaitAllNodes: {
        ASSIGN_OR_RETURN(int32_t n, Count(o.id, v, true));
        if (n > 1) return BadSpec(o.id);
        break;
      }
      default:
        break;
    }
    return absl::OkStatus();
  }

  Status ApplyNodes(std::string_view v, JobRequest* r) {
    size_t dash = v.find('-', 1);
    std::string_view lo = v.substr(0, dash);
    std::optional<int64_t> min = NodeCount(lo);
    if (!min || *min < 1) {
      return Fail(StrCat("sbatch: error: \"", lo, "\" is not a valid node count"),
                  kOptionErrorExit);
    }
    int64_t max = *min;
    if (dash != std::string_view::npos) {
      std::string_view hi = v.substr(dash + 1);
      std::optional<int64_t> m = hi.empty() ? std::optional<int64_t>(-1) : NodeCount(hi);
      if (!m) {
        return Fail(StrCat("sbatch: error: \"", hi, "\" is not a valid node count"),
                    kOptionErrorExit);
      }
      max = *m;
    }
    if (max < *min) {
      return Fail(StrCat("sbatch: error: Maximum node count ", max,
                         " is less than minimum node count ", *min),
                  kOptionErrorExit);
    }
    r->min_nodes = static_cast<int32_t>(*min);
    r->max_nodes = static_cast<int32_t>(max);
    return absl::OkStatus();
  }

  int64_t now_;
  const SbatchSettings& settings_;
};

// SBATCH_* input variables and the options they stand for.
enum class EnvKind { kValue, kFlag, kOptional };
struct EnvVar {
  std::string_view name;
  Opt id;
  EnvKind kind;
};
constexpr EnvVar kEnvVars[] = {
    {"SBATCH_ACCOUNT", Opt::kAccount, EnvKind::kValue},
    {"SBATCH_ACCTG_FREQ", Opt::kAcctgFreq, EnvKind::kValue},
    {"SBATCH_ARRAY_INX", Opt::kArray, EnvKind::kValue},
    {"SBATCH_BATCH", Opt::kBatch, EnvKind::kValue},
    {"SBATCH_CLUSTERS", Opt::kClusters, EnvKind::kValue},
    {"SLURM_CLUSTERS", Opt::kClusters, EnvKind::kValue},
    {"SBATCH_CONSTRAINT", Opt::kConstraint, EnvKind::kValue},
    {"SBATCH_CONTAINER", Opt::kContainer, EnvKind::kValue},
    {"SBATCH_CORE_SPEC", Opt::kCoreSpec, EnvKind::kValue},
    {"SBATCH_CPUS_PER_GPU", Opt::kCpusPerGpu, EnvKind::kValue},
    {"SBATCH_DELAY_BOOT", Opt::kDelayBoot, EnvKind::kValue},
    {"SBATCH_DISTRIBUTION", Opt::kDistribution, EnvKind::kValue},
    {"SBATCH_ERROR", Opt::kError, EnvKind::kValue},
    {"SBATCH_EXCLUSIVE", Opt::kExclusive, EnvKind::kOptional},
    {"SBATCH_EXPORT", Opt::kExport, EnvKind::kValue},
    {"SBATCH_GET_USER_ENV", Opt::kGetUserEnv, EnvKind::kOptional},
    {"SBATCH_GPU_BIND", Opt::kGpuBind, EnvKind::kValue},
    {"SBATCH_GPU_FREQ", Opt::kGpuFreq, EnvKind::kValue},
    {"SBATCH_GPUS", Opt::kGpus, EnvKind::kValue},
    {"SBATCH_GPUS_PER_NODE", Opt::kGpusPerNode, EnvKind::kValue},
    {"SBATCH_GPUS_PER_TASK", Opt::kGpusPerTask, EnvKind::kValue},
    {"SBATCH_GRES", Opt::kGres, EnvKind::kValue},
    {"SBATCH_GRES_FLAGS", Opt::kGresFlags, EnvKind::kValue},
    {"SBATCH_HINT", Opt::kHint, EnvKind::kValue},
    {"SLURM_HINT", Opt::kHint, EnvKind::kValue},
    {"SBATCH_IGNORE_PBS", Opt::kIgnorePbs, EnvKind::kFlag},
    {"SBATCH_INPUT", Opt::kInput, EnvKind::kValue},
    {"SBATCH_JOB_NAME", Opt::kJobName, EnvKind::kValue},
    {"SBATCH_MEM_BIND", Opt::kMemBind, EnvKind::kValue},
    {"SBATCH_MEM_PER_CPU", Opt::kMemPerCpu, EnvKind::kValue},
    {"SBATCH_MEM_PER_GPU", Opt::kMemPerGpu, EnvKind::kValue},
    {"SBATCH_MEM_PER_NODE", Opt::kMem, EnvKind::kValue},
    {"SBATCH_NETWORK", Opt::kNetwork, EnvKind::kValue},
    {"SBATCH_NO_KILL", Opt::kNoKill, EnvKind::kFlag},
    {"SBATCH_NO_REQUEUE", Opt::kNoRequeue, EnvKind::kFlag},
    {"SBATCH_OPEN_MODE", Opt::kOpenMode, EnvKind::kValue},
    {"SBATCH_OUTPUT", Opt::kOutput, EnvKind::kValue},
    {"SBATCH_OVERCOMMIT", Opt::kOvercommit, EnvKind::kFlag},
    {"SBATCH_PARTITION", Opt::kPartition, EnvKind::kValue},
    {"SBATCH_POWER", Opt::kPower, EnvKind::kValue},
    {"SBATCH_PROFILE", Opt::kProfile, EnvKind::kValue},
    {"SBATCH_QOS", Opt::kQos, EnvKind::kValue},
    {"SBATCH_REQUEUE", Opt::kRequeue, EnvKind::kFlag},
    {"SBATCH_RESERVATION", Opt::kReservation, EnvKind::kValue},
    {"SBATCH_SIGNAL", Opt::kSignal, EnvKind::kValue},
    {"SBATCH_SPREAD_JOB", Opt::kSpreadJob, EnvKind::kFlag},
    {"SBATCH_THREAD_SPEC", Opt::kThreadSpec, EnvKind::kValue},
    {"SBATCH_THREADS_PER_CORE", Opt::kThreadsPerCore, EnvKind::kValue},
    {"SBATCH_TIMELIMIT", Opt::kTime, EnvKind::kValue},
    {"SBATCH_USE_MIN_NODES", Opt::kUseMinNodes, EnvKind::kFlag},
    {"SBATCH_WAIT", Opt::kWait, EnvKind::kFlag},
    {"SBATCH_WAIT_ALL_NODES", Opt::kWaitAllNodes, EnvKind::kValue},
    {"SBATCH_WCKEY", Opt::kWckey, EnvKind::kValue},
};

// One SBATCH_* variable as an option. A flag variable set to anything but "", "yes" or a
// non-zero number resets the option instead (`reset`), undoing an #SBATCH line.
struct EnvOption {
  ParsedOption option;
  bool reset = false;
};

// The options the SBATCH_* variables of `env` stand for, in a fixed order.
std::vector<EnvOption> EnvironmentOptions(const std::map<std::string, std::string>& env) {
  std::vector<EnvOption> out;
  for (const EnvVar& e : kEnvVars) {
    auto it = env.find(std::string(e.name));
    if (it == env.end()) continue;
    const std::string& v = it->second;
    switch (e.kind) {
      case EnvKind::kValue:
        out.push_back({{e.id, v}});
        break;
      case EnvKind::kFlag:
        out.push_back({{e.id, std::nullopt}, !EnvFlagSet(v)});
        break;
      case EnvKind::kOptional:
        out.push_back({{e.id, v.empty() ? std::nullopt : std::optional<std::string>(v)}});
        break;
    }
  }
  // SBATCH_DEBUG=1 is -v.
  auto debug = env.find("SBATCH_DEBUG");
  if (debug != env.end() && debug->second == "1") out.push_back({{Opt::kVerbose, std::nullopt}});
  // SBATCH_REQ_SWITCH and SBATCH_WAIT4SWITCH together make one --switches value.
  auto sw = env.find("SBATCH_REQ_SWITCH");
  if (sw != env.end()) {
    std::string value = sw->second;
    auto wait = env.find("SBATCH_WAIT4SWITCH");
    if (wait != env.end()) value += StrCat("@", wait->second);
    out.push_back({{Opt::kSwitches, value}});
  }
  return out;
}

// Undoes a flag option (see EnvOption).
void ResetFlag(Opt id, State* st) {
  switch (id) {
    case Opt::kRequeue:
    case Opt::kNoRequeue:
      st->r.requeue.reset();
      break;
    case Opt::kNoKill:
      st->r.no_kill = false;
      break;
    case Opt::kOvercommit:
      st->r.overcommit = false;
      break;
    case Opt::kSpreadJob:
      st->r.spread_job = false;
      break;
    case Opt::kUseMinNodes:
      st->r.use_min_nodes = false;
      break;
    case Opt::kWait:
      st->wait = false;
      break;
    default:
      break;
  }
}

std::string Absolute(std::string_view path, std::string_view base) {
  if (path.empty() || path[0] == '/' || base.empty()) return std::string(path);
  return StrCat(base, base.back() == '/' ? "" : "/", path);
}

std::string IoPath(std::string_view path, std::string_view base) {
  if (path == "none") return "/dev/null";
  return Absolute(path, base);
}

std::string GresError() { return "sbatch: error: Invalid generic resource (gres) specification"; }

// The total of the counts, saturating at 2^62.
int64_t Sum(const std::vector<model::TypedCount>& v) {
  constexpr int64_t kCap = int64_t{1} << 62;
  int64_t n = 0;
  for (const model::TypedCount& c : v) n = c.count >= kCap - n ? kCap : n + c.count;
  return n;
}

int32_t Clamp(int64_t n) { return static_cast<int32_t>(std::min<int64_t>(n, INT32_MAX)); }

// Derives the scheduler's JobShape from the options as given (see docs/user/sbatch.md).
void DeriveShape(JobRequest* r, std::vector<std::string>* warnings) {
  model::JobShape& s = r->shape;
  int64_t gpus_total = Sum(r->gpus);
  bool nodes_given = r->min_nodes.has_value();
  s.cpus_per_task = r->cpus_per_task.value_or(1);
  s.ntasks_per_node = r->ntasks_per_node.value_or(0);
  s.min_nodes = r->min_nodes.value_or(1);
  if (r->ntasks) {
    s.ntasks = *r->ntasks;
  } else if (r->ntasks_per_node && nodes_given) {
    s.ntasks = Clamp(int64_t{*r->ntasks_per_node} * s.min_nodes);
  } else if (gpus_total > 0 && r->gpus_per_task.empty()) {
    s.ntasks = Clamp(gpus_total);
  } else {
    s.ntasks = s.min_nodes;
  }
  if (nodes_given) {
    s.max_nodes = r->max_nodes.value_or(s.min_nodes);
  } else {
    if (r->ntasks_per_node && s.ntasks > *r->ntasks_per_node) {
      s.min_nodes = Clamp((int64_t{s.ntasks} + *r->ntasks_per_node - 1) / *r->ntasks_per_node);
    }
    s.max_nodes = std::max(s.min_nodes, s.ntasks);
  }
  s.mem_per_node_mb = r->mem_per_node_mb.value_or(0);
  s.mem_per_cpu_mb = r->mem_per_cpu_mb.value_or(0);
  s.mem_per_gpu_mb = r->mem_per_gpu_mb.value_or(0);
  s.cpus_per_gpu = r->cpus_per_gpu.value_or(0);
  s.segment = r->segment.value_or(0);

  // GPUs: per node from --gpus-per-node (or --gres=gpu), per task from --gpus-per-task or
  // --gpus spread over the tasks.
  std::set<std::string> types;
  auto note_types = [&types](const std::vector<model::TypedCount>& v) {
    for (const model::TypedCount& c : v) {
      if (c.name == "gpu") types.insert(c.type);
    }
  };
  std::vector<model::TypedCount> gres_gpus;
  for (const model::TypedCount& c : r->gres) {
    if (c.name == "gpu") gres_gpus.push_back(c);
  }
  note_types(gres_gpus);
  note_types(r->gpus);
  note_types(r->gpus_per_node);
  note_types(r->gpus_per_task);
  if (!r->gpus_per_node.empty()) {
    s.gpus_per_node = Clamp(Sum(r->gpus_per_node));
  } else if (!gres_gpus.empty()) {
    s.gpus_per_node = Clamp(Sum(gres_gpus));
  }
  if (!r->gpus_per_task.empty()) {
    s.gpus_per_task = Clamp(Sum(r->gpus_per_task));
  } else if (gpus_total > 0) {
    int64_t per_task = (gpus_total + s.ntasks - 1) / s.ntasks;
    if (per_task * s.ntasks != gpus_total) {
      warnings->push_back(StrCat("sbatch: warning: --gpus=", gpus_total, " does not divide among ",
                                 s.ntasks, " tasks; each task gets ", per_task, " GPUs"));
    }
    s.gpus_per_task = Clamp(per_task);
  }
  types.erase("");
  if (types.size() == 1) {
    s.gpu_type = *types.begin();
  } else if (types.size() > 1) {
    warnings->push_back(
        "sbatch: warning: several GPU types requested; Loom schedules the total count on "
        "nodes of any type");
  }
  s.exclusive = r->sharing == model::SharingMode::kExclusive;
  s.switches = r->switches;
  s.switches_wait_s = r->switches_wait_s.value_or(0);
}

}  // namespace

SbatchCommandLine ScanSbatchCommandLine(std::span<const std::string> argv) {
  SbatchCommandLine out;
  if (argv.empty()) return out;
  internal::ScanResult scan = internal::ScanOptions(argv.subspan(1));
  for (const ParsedOption& o : scan.options) {
    if (o.id == Opt::kWrap) out.wrap = true;
  }
  if (!scan.rest.empty()) {
    out.script_path = scan.rest[0];
    out.script_args.assign(scan.rest.begin() + 1, scan.rest.end());
  }
  return out;
}

StatusOr<SbatchInput> ParseSbatch(std::span<const std::string> argv, std::string_view script,
                                  const std::map<std::string, std::string>& env, int64_t now,
                                  const SbatchSettings& settings) {
  SbatchInput in;
  std::vector<std::string> early_warnings;
  if (auto it = env.find("SLURM_EXIT_ERROR"); it != env.end()) {
    std::optional<int64_t> code = SlurmInt(it->second);
    if (code && *code != 0) {
      in.error_exit = static_cast<int>(*code);
    } else {
      early_warnings.push_back("sbatch: error: SLURM_EXIT_ERROR has zero value");
    }
  }
  const int error_exit = in.error_exit;
  Resolver resolver(now, settings);

  // 1. The command line, in order, as sbatch's first pass reads it.
  internal::ScanResult cli = internal::ScanOptions(argv.empty() ? argv : argv.subspan(1));
  {
    State scratch;
    for (const ParsedOption& o : cli.options) {
      RETURN_IF_ERROR(resolver.Apply(o, Source::kCommandLine, &scratch));
      if (scratch.action != SbatchInput::Action::kSubmit &&
          scratch.action != SbatchInput::Action::kGresHelp) {
        in.action = scratch.action;
        return in;
      }
    }
    if (!cli.error.ok()) {
      return Fail(
          StrCat(std::string(cli.error.message()), "\nTry \"sbatch --help\" for more information"),
          kOptionErrorExit);
    }
    if (scratch.action == SbatchInput::Action::kGresHelp) {
      in.action = scratch.action;
      return in;
    }
  }
  {
    // -v (or SBATCH_DEBUG=1) with -Q on the command line is refused at once.
    auto env_debug = env.find("SBATCH_DEBUG");
    bool verbose = (env_debug != env.end() && env_debug->second == "1") ||
                   std::any_of(cli.options.begin(), cli.options.end(),
                               [](const ParsedOption& o) { return o.id == Opt::kVerbose; });
    bool quiet = std::any_of(cli.options.begin(), cli.options.end(),
                             [](const ParsedOption& o) { return o.id == Opt::kQuiet; });
    if (verbose && quiet) {
      return Fail("sbatch: error: don't specify both --verbose (-v) and --quiet (-Q)", error_exit);
    }
  }
  bool wrap = std::any_of(cli.options.begin(), cli.options.end(),
                          [](const ParsedOption& o) { return o.id == Opt::kWrap; });
  if (!cli.rest.empty() && cli.rest[0] == ":") {
    return Fail(
        "sbatch: error: heterogeneous jobs (option groups separated by ':') are not "
        "supported by Loom; submit the components as separate jobs",
        error_exit);
  }
  if (wrap && !cli.rest.empty()) {
    return Fail("sbatch: error: Script arguments not permitted with --wrap option", error_exit);
  }

  // 2. The script and its #SBATCH directives.
  State st;
  st.warnings = early_warnings;
  std::string script_text;
  std::string script_name = cli.rest.empty() ? "stdin" : cli.rest[0];
  if (!wrap) {
    if (Status s = CheckBatchScript(script); !s.ok()) return WithExit(s, error_exit);
    StatusOr<std::vector<Directive>> directives = ExtractDirectives(script, script_name);
    if (!directives.ok()) return WithExit(directives.status(), kFatalExit);
    for (const Directive& d : *directives) {
      internal::ScanResult line = internal::ScanOptions(d.words);
      for (const ParsedOption& o : line.options) {
        RETURN_IF_ERROR(resolver.Apply(o, Source::kScript, &st));
      }
      if (!line.error.ok()) {
        return Fail(StrCat(std::string(line.error.message()),
                           "\nTry \"sbatch --help\" for more information"),
                    kOptionErrorExit);
      }
      if (!line.rest.empty()) {
        return Fail(
            StrCat("sbatch: error: Invalid directive found in batch script: ", line.rest[0]),
            kOptionErrorExit);
      }
    }
    script_text = std::string(script);
  }

  // 3. SBATCH_* variables: above the script, below the command line. A memory option from
  // the environment gives way to a different one set by the script or the command line.
  std::vector<EnvOption> env_options = EnvironmentOptions(env);
  std::set<Opt> env_mem;
  for (const EnvOption& e : env_options) {
    if (IsMemOption(e.option.id)) env_mem.insert(e.option.id);
  }
  if (env_mem.size() > 1) {
    return Fail(
        "sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE "
        "are mutually exclusive.",
        kFatalExit);
  }
  bool cli_mem = std::any_of(cli.options.begin(), cli.options.end(),
                             [](const ParsedOption& o) { return IsMemOption(o.id); });
  for (const EnvOption& e : env_options) {
    const ParsedOption& o = e.option;
    if (e.reset) {
      ResetFlag(o.id, &st);
      continue;
    }
    if (IsMemOption(o.id)) {
      bool other_set = (o.id != Opt::kMem && st.r.mem_per_node_mb) ||
                       (o.id != Opt::kMemPerCpu && st.r.mem_per_cpu_mb) ||
                       (o.id != Opt::kMemPerGpu && st.r.mem_per_gpu_mb);
      if (cli_mem || other_set) continue;
    }
    RETURN_IF_ERROR(resolver.Apply(o, Source::kEnvironment, &st));
  }

  // 4. The command line again, over everything.
  for (const ParsedOption& o : cli.options) {
    RETURN_IF_ERROR(resolver.Apply(o, Source::kCommandLine, &st));
  }

  // 5. The checks sbatch makes once every source is in.
  JobRequest& r = st.r;
  int mem_options =
      (r.mem_per_node_mb ? 1 : 0) + (r.mem_per_cpu_mb ? 1 : 0) + (r.mem_per_gpu_mb ? 1 : 0);
  if (mem_options > 1) {
    return Fail("sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.",
                kFatalExit);
  }
  if (r.ignored_options.count("core-spec") > 0 && r.ignored_options.count("thread-spec") > 0) {
    return Fail("sbatch: fatal: -S/--core-spec and --thred-spec options are mutually exclusive",
                kFatalExit);
  }
  if (r.ntasks_per_gpu) {
    if (st.gpus_per_task) {
      return Fail(
          "sbatch: fatal: --gpus-per-task is mutually exclusive with --ntasks-per-gpu "
          "and SLURM_NTASKS_PER_GPU",
          kFatalExit);
    }
    if (st.gpus_per_socket) {
      return Fail(
          "sbatch: fatal: --gpus-per-socket is mutually exclusive with --ntasks-per-gpu "
          "and SLURM_NTASKS_PER_GPU",
          kFatalExit);
    }
    if (r.ntasks_per_node) {
      return Fail(
          "sbatch: fatal: --ntasks-per-node is mutually exclusive with --ntasks-per-gpu "
          "and SLURM_NTASKS_PER_GPU",
          kFatalExit);
    }
  }
  if (r.ntasks && r.min_nodes && *r.ntasks < *r.min_nodes) {
    st.warnings.push_back(StrCat("sbatch: Warning: can't run ", *r.ntasks, " processes on ",
                                 *r.min_nodes, " nodes, setting nnodes to ", *r.ntasks));
    r.min_nodes = r.max_nodes = *r.ntasks;
  }
  if (r.cpus_per_gpu && r.cpus_per_task) {
    return Fail(StrCat("sbatch: error: --cpus-per-gpu is mutually exclusive with "
                       "--cpus-per-task\n",
                       GresError()),
                error_exit);
  }
  auto counts = [&](const std::optional<std::string>& text, bool gres,
                    std::vector<model::TypedCount>* out) -> Status {
    if (!text) return absl::OkStatus();
    std::optional<std::vector<model::TypedCount>> parsed = ParseCounts(*text, gres);
    if (!parsed) return Fail(GresError(), error_exit);
    for (const model::TypedCount& c : *parsed) {
      if (std::find(settings.gres_types.begin(), settings.gres_types.end(), c.name) ==
          settings.gres_types.end()) {
        return Fail(GresError(), error_exit);
      }
    }
    *out = std::move(*parsed);
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(counts(st.gres, true, &r.gres));
  RETURN_IF_ERROR(counts(st.gpus, false, &r.gpus));
  RETURN_IF_ERROR(counts(st.gpus_per_node, false, &r.gpus_per_node));
  RETURN_IF_ERROR(counts(st.gpus_per_task, false, &r.gpus_per_task));
  RETURN_IF_ERROR(counts(st.gpus_per_socket, false, &r.gpus_per_socket));
  if (!r.gpus_per_task.empty() && r.gpus.empty() && !r.ntasks && !r.min_nodes) {
    return Fail(StrCat("sbatch: error: Failed to validate job spec. --gpus-per-task used "
                       "without either --gpus or -n/--ntasks is not allowed.\n",
                       GresError()),
                error_exit);
  }
  if (st.export_text) {
    StatusOr<model::ExportPolicy> policy = model::ParseExportPolicy(*st.export_text);
    if (!policy.ok())
      return Fail(StrCat("sbatch: error: ", std::string(policy.status().message())),
                  kOptionErrorExit);
    r.export_policy = *policy;
  }

  // 6. What the controller would reject: reported as sbatch reports a refused submission.
  auto refused = [&](std::string_view why) {
    return Fail(StrCat("sbatch: error: Batch job submission failed: ", why), error_exit);
  };
  if (!r.constraint.empty()) {
    StatusOr<sched::FeatureExpr> features = sched::FeatureExpr::Parse(r.constraint);
    if (!features.ok()) {
      std::string why(features.status().message());
      // Valid for Slurm, but beyond Loom's feature expressions: say so rather than "invalid".
      if (why.find("not supported") != std::string::npos) {
        return Fail(StrCat("sbatch: error: ", why), error_exit);
      }
      return refused("Invalid feature specification");
    }
  }
  if (st.dependency && !st.dependency->empty()) {
    StatusOr<model::Dependency> dep = model::ParseDependency(*st.dependency);
    if (!dep.ok()) return refused("Job dependency problem");
    r.dependency = *std::move(dep);
  }
  if (st.array) {
    StatusOr<model::ArraySpec> array = model::ParseArraySpec(*st.array, settings.max_array_size);
    if (!array.ok()) return refused("Invalid job array specification");
    r.array = *std::move(array);
  }

  // 7. Assemble the request.
  std::string submit_dir = settings.submit_dir;
  if (submit_dir.empty()) {
    if (auto it = env.find("PWD"); it != env.end()) submit_dir = it->second;
  }
  r.work_dir = st.chdir ? Absolute(*st.chdir, submit_dir) : submit_dir;
  if (st.output) r.stdout_pattern = IoPath(*st.output, r.work_dir);
  if (st.error) r.stderr_pattern = IoPath(*st.error, r.work_dir);
  if (st.input) r.stdin_pattern = IoPath(*st.input, r.work_dir);
  if (st.wrap) {
    r.wrap = *st.wrap;
    r.script = WrapCommand(*st.wrap);
  } else {
    r.script = std::move(script_text);
    if (!cli.rest.empty()) r.script_args.assign(cli.rest.begin() + 1, cli.rest.end());
  }
  if (st.job_name) {
    r.name = *st.job_name;
  } else if (st.wrap) {
    r.name = "wrap";
  } else {
    r.name = cli.rest.empty() ? "sbatch" : BaseName(cli.rest[0]);
  }
  r.environment = model::ResolveExport(r.export_policy, env);
  DeriveShape(&r, &st.warnings);

  in.request = std::move(r);
  in.parsable = st.parsable;
  in.wait = st.wait;
  in.quiet = st.quiet;
  in.verbose = st.verbose;
  in.warnings = std::move(st.warnings);
  return in;
}

int SbatchExitCode(const Status& status) {
  if (status.ok()) return 0;
  auto code = status.GetPayload(kExitPayload);
  if (!code.has_value()) return 1;
  std::optional<int64_t> n = core::ParseInt(std::string(*code));
  return n ? static_cast<int>(*n) : 1;
}

std::string GresHelpText(std::span<const std::string> gres_types) {
  std::string out = "Valid gres options are:\n";
  for (const std::string& t : gres_types) out += StrCat(t, "[[:type]:count]\n");
  return out;
}

}  // namespace loom::cli::submit
