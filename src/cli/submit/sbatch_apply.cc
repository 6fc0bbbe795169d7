#include "cli/submit/internal/sbatch_apply.h"

#include <cctype>
#include <climits>

#include "cli/submit/begin_time.h"
#include "cli/submit/internal/sbatch_values.h"
#include "core/mem_size.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "model/binding.h"

namespace loom::cli::submit::internal {
namespace {

using core::StrCat;
using model::JobRequest;

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
    case Opt::kGpuFreq:
    case Opt::kGresFlags:
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
    case Opt::kWaitAllNodes:
      return true;
    default:
      return false;
  }
}

}  // namespace

Status Resolver::Apply(const ParsedOption& o, Source source, State* st) {
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
    case Opt::kGpuBind:
      // The default of the job's steps; the nodes parse it with the same function.
      if (Status s = model::ParseGpuBind(v).status(); !s.ok()) {
        return Fail(StrCat("sbatch: error: ", std::string(s.message())), kOptionErrorExit);
      }
      r.gpu_bind = v;
      break;
    case Opt::kHint:
      if (Status s = model::ValidateHint(v); !s.ok()) {
        return Fail(StrCat("sbatch: error: ", std::string(s.message())), kOptionErrorExit);
      }
      r.hint = v;
      break;
    case Opt::kThreadsPerCore: {
      ASSIGN_OR_RETURN(int32_t n, Count(o.id, v));
      r.threads_per_core = n;
      break;
    }
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

Status Resolver::ValidateIgnored(const ParsedOption& o) {
  std::string v = o.value.value_or("");
  switch (o.id) {
    case Opt::kMailType:
      if (!ValidMailType(v)) return BadSpec(o.id);
      break;
    case Opt::kCoresPerSocket:
    case Opt::kSocketsPerNode:
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

Status Resolver::ApplyNodes(std::string_view v, JobRequest* r) {
  size_t dash = v.find('-', 1);
  std::string_view lo = v.substr(0, dash);
  std::optional<int64_t> min = NodeCount(lo);
  if (!min || *min < 1) {
    return Fail(StrCat("sbatch: error: \"", lo, "\" is not a valid node count"), kOptionErrorExit);
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

}  // namespace loom::cli::submit::internal
