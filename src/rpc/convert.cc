#include "rpc/convert.h"

#include <sys/wait.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "cli/format/sinfo_format.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "core/time_format.h"
#include "core/tres.h"
#include "model/job_state.h"

namespace loom::rpc {
namespace {

using core::StrCat;
using google::protobuf::RepeatedPtrField;
using model::JobState;
using model::PendingReason;
namespace fmt = cli::format;

// ------------------------------------------------------------------------------ submissions

v1::Dependency::Kind KindOf(model::DependencyType t) {
  switch (t) {
    case model::DependencyType::kAfter:
      return v1::Dependency::AFTER;
    case model::DependencyType::kAfterAny:
      return v1::Dependency::AFTER_ANY;
    case model::DependencyType::kAfterOk:
      return v1::Dependency::AFTER_OK;
    case model::DependencyType::kAfterNotOk:
      return v1::Dependency::AFTER_NOT_OK;
    case model::DependencyType::kAfterCorr:
      return v1::Dependency::AFTER_CORR;
    case model::DependencyType::kAfterBurstBuffer:
      return v1::Dependency::AFTER_BURST_BUFFER;
    case model::DependencyType::kSingleton:
      return v1::Dependency::SINGLETON;
  }
  return v1::Dependency::AFTER_ANY;
}

std::optional<model::DependencyType> TypeOf(v1::Dependency::Kind k) {
  switch (k) {
    case v1::Dependency::AFTER:
      return model::DependencyType::kAfter;
    case v1::Dependency::AFTER_ANY:
      return model::DependencyType::kAfterAny;
    case v1::Dependency::AFTER_OK:
      return model::DependencyType::kAfterOk;
    case v1::Dependency::AFTER_NOT_OK:
      return model::DependencyType::kAfterNotOk;
    case v1::Dependency::AFTER_CORR:
      return model::DependencyType::kAfterCorr;
    case v1::Dependency::AFTER_BURST_BUFFER:
      return model::DependencyType::kAfterBurstBuffer;
    case v1::Dependency::SINGLETON:
      return model::DependencyType::kSingleton;
    default:
      return std::nullopt;
  }
}

void CountsToWire(const std::vector<model::TypedCount>& in, RepeatedPtrField<v1::TypedCount>* out) {
  for (const model::TypedCount& c : in) {
    v1::TypedCount* w = out->Add();
    w->set_name(c.name);
    w->set_type(c.type);
    w->set_count(c.count);
  }
}

std::vector<model::TypedCount> CountsFromWire(const RepeatedPtrField<v1::TypedCount>& in) {
  std::vector<model::TypedCount> out;
  out.reserve(in.size());
  for (const v1::TypedCount& w : in)
    out.push_back(model::TypedCount{w.name(), w.type(), w.count()});
  return out;
}

v1::JobSpec::Sharing SharingToWire(model::SharingMode m) {
  switch (m) {
    case model::SharingMode::kDefault:
      return v1::JobSpec::SHARING_DEFAULT;
    case model::SharingMode::kExclusive:
      return v1::JobSpec::SHARING_EXCLUSIVE;
    case model::SharingMode::kExclusiveUser:
      return v1::JobSpec::SHARING_EXCLUSIVE_USER;
    case model::SharingMode::kExclusiveMcs:
      return v1::JobSpec::SHARING_EXCLUSIVE_MCS;
    case model::SharingMode::kOversubscribe:
      return v1::JobSpec::SHARING_OVERSUBSCRIBE;
  }
  return v1::JobSpec::SHARING_DEFAULT;
}

v1::JobSpec::OpenMode OpenModeToWire(model::OpenMode m) {
  switch (m) {
    case model::OpenMode::kDefault:
      return v1::JobSpec::OPEN_DEFAULT;
    case model::OpenMode::kAppend:
      return v1::JobSpec::OPEN_APPEND;
    case model::OpenMode::kTruncate:
      return v1::JobSpec::OPEN_TRUNCATE;
  }
  return v1::JobSpec::OPEN_DEFAULT;
}

v1::ExportPolicy::Mode ExportModeToWire(model::ExportPolicy::Mode m) {
  switch (m) {
    case model::ExportPolicy::Mode::kAll:
      return v1::ExportPolicy::ALL;
    case model::ExportPolicy::Mode::kNone:
      return v1::ExportPolicy::NONE;
    case model::ExportPolicy::Mode::kList:
      return v1::ExportPolicy::LIST;
  }
  return v1::ExportPolicy::ALL;
}

template <typename T, typename Set>
void SetIf(const std::optional<T>& v, Set set) {
  if (v) set(*v);
}

// The conversion behind ToWire; the script and environment only when asked for.
void FillSpec(const model::JobRequest& r, bool with_script, bool with_environment, v1::JobSpec* s) {
  s->set_name(r.name);
  std::string joined;
  for (const std::string& p : r.partitions) {
    if (!joined.empty()) joined += ',';
    joined += p;
    s->add_partitions(p);
  }
  s->set_partition(joined);
  s->set_account(r.account);
  s->set_qos(r.qos);
  s->set_reservation(r.reservation);
  s->set_wckey(r.wckey);
  s->set_comment(r.comment);
  s->set_licenses(r.licenses);
  SetIf(r.uid, [&](uint32_t v) { s->set_uid(v); });
  SetIf(r.gid, [&](uint32_t v) { s->set_gid(v); });

  SetIf(r.time_limit_s, [&](int64_t v) { s->set_time_limit_s(v); });
  SetIf(r.time_min_s, [&](int64_t v) { s->set_time_min_s(v); });
  s->set_begin_time(r.begin_time);
  s->set_deadline(r.deadline);

  const model::JobShape& sh = r.shape;
  s->set_min_nodes(sh.min_nodes);
  s->set_max_nodes(sh.max_nodes);
  s->set_ntasks(sh.ntasks);
  s->set_ntasks_per_node(sh.ntasks_per_node);
  s->set_cpus_per_task(sh.cpus_per_task);
  s->set_mem_per_node_mb(sh.mem_per_node_mb);
  s->set_mem_per_cpu_mb(sh.mem_per_cpu_mb);
  s->set_mem_per_gpu_mb(sh.mem_per_gpu_mb);
  s->set_gpus_per_node(sh.gpus_per_node);
  s->set_gpus_per_task(sh.gpus_per_task);
  s->set_cpus_per_gpu(sh.cpus_per_gpu);
  s->set_gpu_type(sh.gpu_type);
  s->set_exclusive(sh.exclusive);
  s->set_switches(sh.switches);
  s->set_switches_wait_s(sh.switches_wait_s);
  s->set_segment(sh.segment);
  int64_t gpus_total = 0;
  for (const model::TypedCount& c : r.gpus) gpus_total += c.count;
  s->set_gpus_total(static_cast<int32_t>(gpus_total));

  v1::JobSpec::Given* g = s->mutable_given();
  SetIf(r.min_nodes, [&](int32_t v) { g->set_min_nodes(v); });
  SetIf(r.max_nodes, [&](int32_t v) { g->set_max_nodes(v); });
  SetIf(r.ntasks, [&](int32_t v) { g->set_ntasks(v); });
  SetIf(r.ntasks_per_node, [&](int32_t v) { g->set_ntasks_per_node(v); });
  SetIf(r.cpus_per_task, [&](int32_t v) { g->set_cpus_per_task(v); });
  SetIf(r.cpus_per_gpu, [&](int32_t v) { g->set_cpus_per_gpu(v); });
  SetIf(r.mem_per_node_mb, [&](int64_t v) { g->set_mem_per_node_mb(v); });
  SetIf(r.mem_per_cpu_mb, [&](int64_t v) { g->set_mem_per_cpu_mb(v); });
  SetIf(r.mem_per_gpu_mb, [&](int64_t v) { g->set_mem_per_gpu_mb(v); });
  SetIf(r.ntasks_per_core, [&](int32_t v) { g->set_ntasks_per_core(v); });
  SetIf(r.ntasks_per_socket, [&](int32_t v) { g->set_ntasks_per_socket(v); });
  SetIf(r.ntasks_per_gpu, [&](int32_t v) { g->set_ntasks_per_gpu(v); });
  SetIf(r.mincpus, [&](int32_t v) { g->set_mincpus(v); });
  SetIf(r.tmp_mb, [&](int64_t v) { g->set_tmp_mb(v); });
  g->set_switches(r.switches);
  SetIf(r.switches_wait_s, [&](int64_t v) { g->set_switches_wait_s(v); });
  SetIf(r.segment, [&](int32_t v) { g->set_segment(v); });
  CountsToWire(r.gres, g->mutable_gres());
  CountsToWire(r.gpus, g->mutable_gpus());
  CountsToWire(r.gpus_per_node, g->mutable_gpus_per_node());
  CountsToWire(r.gpus_per_task, g->mutable_gpus_per_task());
  CountsToWire(r.gpus_per_socket, g->mutable_gpus_per_socket());

  s->set_sharing(SharingToWire(r.sharing));
  s->set_constraint(r.constraint);
  s->set_prefer(r.prefer);
  s->set_nodelist(r.nodelist);
  s->set_exclude(r.exclude);
  s->set_contiguous(r.contiguous);
  s->set_overcommit(r.overcommit);
  s->set_spread_job(r.spread_job);
  s->set_use_min_nodes(r.use_min_nodes);

  s->set_hold(r.hold);
  s->set_dependency_any(r.dependency.combine == model::Dependency::Combine::kAny);
  for (const model::DependencyClause& c : r.dependency.clauses) {
    v1::Dependency* d = s->add_dependencies();
    d->set_kind(KindOf(c.type));
    if (!c.jobs.empty()) d->set_delay_s(c.jobs.front().delay_s);
    for (const model::DependencyTarget& t : c.jobs) {
      d->add_job_ids(t.job_id);
      v1::DependencyTarget* w = d->add_targets();
      w->set_job_id(t.job_id);
      if (t.array_task) w->set_array_task(*t.array_task);
      w->set_all_tasks(t.all_tasks);
      w->set_delay_s(t.delay_s);
    }
  }
  SetIf(r.kill_on_invalid_dep, [&](bool v) { s->set_kill_on_invalid_dep(v); });
  if (r.array) {
    v1::ArraySpec* a = s->mutable_array();
    for (const model::ArrayRange& range : r.array->ranges) {
      v1::ArrayRange* w = a->add_ranges();
      w->set_first(range.first);
      w->set_last(range.last);
      w->set_step(range.step);
    }
    a->set_max_running(r.array->max_running);
    s->set_array_spec(r.array->ToString());
    s->set_array_throttle(r.array->max_running);
  }
  s->set_nice(r.nice);
  SetIf(r.priority, [&](int64_t v) { s->set_priority(v); });
  SetIf(r.requeue, [&](bool v) { s->set_requeue(v); });
  s->set_no_kill(r.no_kill);
  s->set_signal(r.signal);
  s->set_test_only(r.test_only);

  s->set_work_dir(r.work_dir);
  s->set_std_out(r.stdout_pattern);
  s->set_std_err(r.stderr_pattern);
  s->set_std_in(r.stdin_pattern);
  s->set_open_mode(OpenModeToWire(r.open_mode));
  v1::ExportPolicy* e = s->mutable_export_policy();
  e->set_mode(ExportModeToWire(r.export_policy.mode));
  e->set_with_all(r.export_policy.with_all);
  for (const auto& [name, value] : r.export_policy.vars) {
    v1::ExportPolicy::Var* v = e->add_vars();
    v->set_name(name);
    if (value) v->set_value(*value);
  }
  s->set_get_user_env(r.get_user_env);
  s->set_export_file(r.export_file);
  if (with_environment)
    s->mutable_environment()->insert(r.environment.begin(), r.environment.end());
  if (with_script) s->set_script(r.script);
  for (const std::string& a : r.script_args) s->add_argv(a);
  s->set_wrap(r.wrap);
  s->mutable_ignored_options()->insert(r.ignored_options.begin(), r.ignored_options.end());
}

Status BadSpec(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("JobSpec.", field, ": ", why));
}

// ---------------------------------------------------------------------- controller -> wire

// Whether the job holds its nodes: running, or ended with its processes still being killed.
bool HoldsNodes(const ctld::JobEntry& e) {
  return e.job.state == JobState::kRunning || e.job.state == JobState::kSuspended ||
         e.job.state == JobState::kCompleting || e.completing;
}

// "0-1,3": the indices of the set bits.
std::string GpuList(model::GpuMask mask) {
  core::CpuSet set;
  for (int i = 0; i < model::kMaxGpusPerNode; ++i) {
    if (mask >> i & 1) set.set(i);
  }
  return set.ToList();
}

// The GRES of `count` GPUs of `type` as Slurm writes them: "gpu:2", "gpu:a100:2".
std::string GpuGres(std::string_view type, int64_t count) {
  return type.empty() ? StrCat("gpu:", count) : StrCat("gpu:", type, ":", count);
}

std::string_view ReasonText(const model::Job& j) {
  if (j.reason != PendingReason::kNone) return model::PendingReasonName(j.reason);
  // Slurm keeps why a job ended in its reason.
  switch (j.state) {
    case JobState::kFailed:
      return "NonZeroExitCode";
    case JobState::kTimeout:
      return "TimeLimit";
    case JobState::kNodeFail:
      return "NodeDown";
    case JobState::kOutOfMemory:
      return "OutOfMemory";
    case JobState::kDeadline:
      return "DeadLine";
    case JobState::kBootFail:
      return "BootFail";
    default:
      return model::PendingReasonName(PendingReason::kNone);
  }
}

// The dependency as Slurm prints it while a job waits: each job waited on with its state,
// "afterok:3(unfulfilled),afterany:4_*(unfulfilled)", "singleton(unfulfilled)".
std::string DependencyText(const model::Dependency& dep, std::string_view state) {
  std::string out;
  const char sep = dep.combine == model::Dependency::Combine::kAll ? ',' : '?';
  auto add = [&](std::string piece) {
    if (!out.empty()) out.push_back(sep);
    out += piece;
  };
  for (const model::DependencyClause& c : dep.clauses) {
    std::string_view name = model::DependencyTypeName(c.type);
    if (c.jobs.empty()) add(StrCat(name, "(", state, ")"));
    for (const model::DependencyTarget& t : c.jobs) {
      std::string piece = StrCat(name, ":", t.job_id);
      if (t.all_tasks) piece += "_*";
      if (t.array_task) piece += StrCat("_", *t.array_task);
      if (t.delay_s > 0) piece += StrCat("+", t.delay_s / 60);
      add(StrCat(piece, "(", state, ")"));
    }
  }
  return out;
}

int64_t ShapeGpus(const model::JobShape& sh) {
  return int64_t{sh.gpus_per_node} * sh.min_nodes + int64_t{sh.gpus_per_task} * sh.ntasks;
}

core::TresVector RequestTres(const model::JobShape& sh) {
  core::TresVector t;
  const int64_t cpus = std::max<int64_t>(1, sh.TotalCpus());
  const int64_t gpus = ShapeGpus(sh);
  int64_t mem = 0;
  if (sh.mem_per_node_mb > 0) {
    mem = sh.mem_per_node_mb * sh.min_nodes;
  } else if (sh.mem_per_cpu_mb > 0) {
    mem = sh.mem_per_cpu_mb * cpus;
  } else if (sh.mem_per_gpu_mb > 0) {
    mem = sh.mem_per_gpu_mb * gpus;
  }
  t.Set(core::kTresCpu, cpus);
  t.Set(core::kTresMem, mem);
  t.Set(core::kTresNode, sh.min_nodes);
  t.Set(core::kTresBilling, cpus);
  t.Set(core::kTresGpu, gpus);
  return t;
}

core::TresVector AllocTres(const sched::Allocation& alloc) {
  core::TresVector t;
  int64_t cpus = 0, mem = 0, gpus = 0;
  for (const sched::NodeAlloc& a : alloc) {
    cpus += a.amount.cpus;
    mem += a.amount.mem_mb;
    gpus += a.amount.gpus;
  }
  t.Set(core::kTresCpu, cpus);
  t.Set(core::kTresMem, mem);
  t.Set(core::kTresNode, static_cast<int64_t>(alloc.size()));
  t.Set(core::kTresBilling, cpus);
  t.Set(core::kTresGpu, gpus);
  return t;
}

// Socket index -> core indices within it, for the CPU ids a job holds on `node`. CPU ids
// count threads of one core first, then cores of one socket.
void SocketsOf(const model::Node& node, const core::CpuSet& cpus, v1::NodeAllocation* out) {
  const int32_t threads = std::max(1, node.threads_per_core);
  const int32_t cores = std::max(1, node.cores_per_socket);
  v1::NodeAllocation::Socket* current = nullptr;
  int32_t last_core = -1;
  for (int32_t cpu : cpus.ToVector()) {
    const int32_t core_id = cpu / threads;
    const int32_t socket = core_id / cores;
    if (current == nullptr || current->socket() != socket) {
      current = nullptr;
      for (v1::NodeAllocation::Socket& s : *out->mutable_sockets()) {
        if (s.socket() == socket) current = &s;
      }
      if (current == nullptr) {
        current = out->add_sockets();
        current->set_socket(socket);
      }
      last_core = -1;
    }
    if (core_id % cores != last_core) {
      last_core = core_id % cores;
      current->add_cores(last_core);
    }
  }
}

// ----------------------------------------------------------------------------- wire -> views

uint32_t NodeFlagBit(std::string_view name) {
  static constexpr std::pair<std::string_view, uint32_t> kFlags[] = {
      {"RESERVED", fmt::kNodeFlagReserved},
      {"CLOUD", fmt::kNodeFlagCloud},
      {"DRAIN", fmt::kNodeFlagDrain},
      {"COMPLETING", fmt::kNodeFlagCompleting},
      {"NOT_RESPONDING", fmt::kNodeFlagNotResponding},
      {"POWERED_DOWN", fmt::kNodeFlagPoweredDown},
      {"FAIL", fmt::kNodeFlagFail},
      {"POWERING_UP", fmt::kNodeFlagPoweringUp},
      {"MAINTENANCE", fmt::kNodeFlagMaintenance},
      {"REBOOT_REQUESTED", fmt::kNodeFlagRebootRequested},
      {"POWERING_DOWN", fmt::kNodeFlagPoweringDown},
      {"REBOOT_ISSUED", fmt::kNodeFlagRebootIssued},
      {"PLANNED", fmt::kNodeFlagPlanned},
      {"INVALID_REG", fmt::kNodeFlagInvalidReg},
      {"POWER_DOWN", fmt::kNodeFlagPowerDown},
  };
  for (const auto& [n, bit] : kFlags) {
    if (core::EqualsIgnoreCase(n, name)) return bit;
  }
  return 0;
}

core::TresVector TresOrEmpty(std::string_view text) {
  StatusOr<core::TresVector> t = core::ParseTres(text);
  return t.ok() ? *std::move(t) : core::TresVector{};
}

// "gres:gpu:2,gres:gpu:a100:1" from a list of typed counts.
std::string TresPer(const std::vector<const RepeatedPtrField<v1::TypedCount>*>& lists) {
  std::string out;
  for (const auto* list : lists) {
    for (const v1::TypedCount& c : *list) {
      if (!out.empty()) out += ',';
      out += StrCat("gres:", c.name().empty() ? "gpu" : c.name(), ":");
      if (!c.type().empty()) out += StrCat(c.type(), ":");
      out += StrCat(c.count());
    }
  }
  return out;
}

std::string_view OversubscribeText(v1::JobSpec::Sharing s) {
  switch (s) {
    case v1::JobSpec::SHARING_EXCLUSIVE:
      return "NO";
    case v1::JobSpec::SHARING_EXCLUSIVE_USER:
      return "USER";
    case v1::JobSpec::SHARING_EXCLUSIVE_MCS:
      return "MCS";
    case v1::JobSpec::SHARING_OVERSUBSCRIBE:
      return "YES";
    default:
      return "OK";
  }
}

std::string IgnoredOption(const v1::JobSpec& s, const std::string& name) {
  auto it = s.ignored_options().find(name);
  return it == s.ignored_options().end() ? std::string() : it->second;
}

// ------------------------------------------------------------------------------------ errors

struct ErrorEntry {
  v1::ErrorCode code;
  absl::StatusCode status;
  std::string_view text;  // Slurm's (slurm_strerror) where Slurm has one
};

constexpr ErrorEntry kErrors[] = {
    {v1::OK, absl::StatusCode::kOk, "No error"},
    {v1::INVALID_ARGUMENT, absl::StatusCode::kInvalidArgument, "Invalid argument"},
    {v1::AUTH_MISSING, absl::StatusCode::kUnauthenticated, "Protocol authentication error"},
    {v1::AUTH_INVALID, absl::StatusCode::kUnauthenticated, "Invalid authentication credential"},
    {v1::AUTH_EXPIRED, absl::StatusCode::kUnauthenticated, "Authentication credential expired"},
    {v1::AUTH_REPLAYED, absl::StatusCode::kUnauthenticated, "Authentication credential replayed"},
    {v1::ACCESS_DENIED, absl::StatusCode::kPermissionDenied, "Access/permission denied"},
    {v1::INVALID_JOB_ID, absl::StatusCode::kNotFound, "Invalid job id specified"},
    {v1::INVALID_PARTITION, absl::StatusCode::kInvalidArgument, "Invalid partition name specified"},
    {v1::INVALID_NODE_NAME, absl::StatusCode::kNotFound, "Invalid node name specified"},
    {v1::REQUESTED_CONFIG_UNAVAILABLE, absl::StatusCode::kInvalidArgument,
     "Requested node configuration is not available"},
    {v1::INVALID_DEPENDENCY, absl::StatusCode::kInvalidArgument, "Job dependency problem"},
    {v1::JOB_ALREADY_COMPLETE, absl::StatusCode::kFailedPrecondition,
     "Job/step already completing or completed"},
    {v1::STORE_FAILED, absl::StatusCode::kAborted, "I/O error writing script/environment to file"},
    {v1::INTERNAL, absl::StatusCode::kInternal, "Unspecified error"},
    {v1::NOT_LEADER, absl::StatusCode::kUnavailable, "Slurm backup controller in standby mode"},
    {v1::NOT_FOUND, absl::StatusCode::kNotFound, "Not found"},
    {v1::JOB_NOT_PENDING, absl::StatusCode::kFailedPrecondition,
     "Job is no longer pending execution"},
    {v1::INVALID_FEATURE, absl::StatusCode::kInvalidArgument, "Invalid feature specification"},
    {v1::INVALID_TIME_LIMIT, absl::StatusCode::kInvalidArgument,
     "Requested time limit is invalid (missing or exceeds some limit)"},
    {v1::NO_DEFAULT_PARTITION, absl::StatusCode::kInvalidArgument,
     "No partition specified or system default partition"},
    {v1::UNAVAILABLE, absl::StatusCode::kUnavailable,
     "Unable to contact slurm controller (connect failure)"},
    {v1::JOB_NOT_HELD, absl::StatusCode::kFailedPrecondition, "Job is not held"},
    {v1::INVALID_ARRAY, absl::StatusCode::kInvalidArgument, "Invalid job array specification"},
    {v1::FAILED_PRECONDITION, absl::StatusCode::kFailedPrecondition, "Failed precondition"},
    {v1::RESOURCE_EXHAUSTED, absl::StatusCode::kResourceExhausted, "Resource exhausted"},
    {v1::ALREADY_EXISTS, absl::StatusCode::kAlreadyExists, "Already exists"},
    {v1::ABORTED, absl::StatusCode::kAborted, "Aborted"},
    {v1::DEADLINE_EXCEEDED, absl::StatusCode::kDeadlineExceeded, "Deadline exceeded"},
    {v1::CANCELLED, absl::StatusCode::kCancelled, "Cancelled"},
    {v1::UNIMPLEMENTED, absl::StatusCode::kUnimplemented,
     "Requested operation not supported on this system"},
    {v1::OUT_OF_RANGE, absl::StatusCode::kOutOfRange, "Out of range"},
    {v1::DATA_LOSS, absl::StatusCode::kDataLoss, "Data loss"},
    {v1::UNKNOWN, absl::StatusCode::kUnknown, "Unknown error"},
};

// The general code of each StatusCode.
v1::ErrorCode GeneralCode(absl::StatusCode c) {
  switch (c) {
    case absl::StatusCode::kOk:
      return v1::OK;
    case absl::StatusCode::kCancelled:
      return v1::CANCELLED;
    case absl::StatusCode::kUnknown:
      return v1::UNKNOWN;
    case absl::StatusCode::kInvalidArgument:
      return v1::INVALID_ARGUMENT;
    case absl::StatusCode::kDeadlineExceeded:
      return v1::DEADLINE_EXCEEDED;
    case absl::StatusCode::kNotFound:
      return v1::NOT_FOUND;
    case absl::StatusCode::kAlreadyExists:
      return v1::ALREADY_EXISTS;
    case absl::StatusCode::kPermissionDenied:
      return v1::ACCESS_DENIED;
    case absl::StatusCode::kResourceExhausted:
      return v1::RESOURCE_EXHAUSTED;
    case absl::StatusCode::kFailedPrecondition:
      return v1::FAILED_PRECONDITION;
    case absl::StatusCode::kAborted:
      return v1::ABORTED;
    case absl::StatusCode::kOutOfRange:
      return v1::OUT_OF_RANGE;
    case absl::StatusCode::kUnimplemented:
      return v1::UNIMPLEMENTED;
    case absl::StatusCode::kInternal:
      return v1::INTERNAL;
    case absl::StatusCode::kUnavailable:
      return v1::UNAVAILABLE;
    case absl::StatusCode::kDataLoss:
      return v1::DATA_LOSS;
    case absl::StatusCode::kUnauthenticated:
      return v1::AUTH_INVALID;
    default:
      return v1::UNKNOWN;
  }
}

constexpr char kErrorCodePayload[] = "type.loom/loom.v1.ErrorCode";

}  // namespace

// ------------------------------------------------------------------------------ submissions

v1::JobSpec ToWire(const model::JobRequest& request) {
  v1::JobSpec spec;
  FillSpec(request, /*with_script=*/true, /*with_environment=*/true, &spec);
  return spec;
}

StatusOr<model::JobRequest> FromWire(const v1::JobSpec& s) {
  model::JobRequest r;
  r.name = s.name();
  if (s.partitions_size() > 0) {
    r.partitions.assign(s.partitions().begin(), s.partitions().end());
  } else {
    for (std::string_view p : core::Split(s.partition(), ',')) {
      if (!p.empty()) r.partitions.emplace_back(p);
    }
  }
  r.account = s.account();
  r.qos = s.qos();
  r.reservation = s.reservation();
  r.wckey = s.wckey();
  r.comment = s.comment();
  r.licenses = s.licenses();
  if (s.has_uid()) r.uid = s.uid();
  if (s.has_gid()) r.gid = s.gid();

  if (s.has_time_limit_s() && s.time_limit_s() != -1) r.time_limit_s = s.time_limit_s();
  if (s.has_time_min_s()) r.time_min_s = s.time_min_s();
  r.begin_time = s.begin_time();
  r.deadline = s.deadline();

  model::JobShape& sh = r.shape;
  sh.min_nodes = s.min_nodes();
  sh.max_nodes = s.max_nodes();
  sh.ntasks = s.ntasks();
  sh.ntasks_per_node = s.ntasks_per_node();
  sh.cpus_per_task = s.cpus_per_task();
  sh.mem_per_node_mb = s.mem_per_node_mb();
  sh.mem_per_cpu_mb = s.mem_per_cpu_mb();
  sh.mem_per_gpu_mb = s.mem_per_gpu_mb();
  sh.gpus_per_node = s.gpus_per_node();
  sh.gpus_per_task = s.gpus_per_task();
  sh.cpus_per_gpu = s.cpus_per_gpu();
  sh.gpu_type = s.gpu_type();
  sh.exclusive = s.exclusive();
  sh.switches = s.switches();
  sh.switches_wait_s = s.switches_wait_s();
  sh.segment = s.segment();

  const v1::JobSpec::Given& g = s.given();
  if (g.has_min_nodes()) r.min_nodes = g.min_nodes();
  if (g.has_max_nodes()) r.max_nodes = g.max_nodes();
  if (g.has_ntasks()) r.ntasks = g.ntasks();
  if (g.has_ntasks_per_node()) r.ntasks_per_node = g.ntasks_per_node();
  if (g.has_cpus_per_task()) r.cpus_per_task = g.cpus_per_task();
  if (g.has_cpus_per_gpu()) r.cpus_per_gpu = g.cpus_per_gpu();
  if (g.has_mem_per_node_mb()) r.mem_per_node_mb = g.mem_per_node_mb();
  if (g.has_mem_per_cpu_mb()) r.mem_per_cpu_mb = g.mem_per_cpu_mb();
  if (g.has_mem_per_gpu_mb()) r.mem_per_gpu_mb = g.mem_per_gpu_mb();
  if (g.has_ntasks_per_core()) r.ntasks_per_core = g.ntasks_per_core();
  if (g.has_ntasks_per_socket()) r.ntasks_per_socket = g.ntasks_per_socket();
  if (g.has_ntasks_per_gpu()) r.ntasks_per_gpu = g.ntasks_per_gpu();
  if (g.has_mincpus()) r.mincpus = g.mincpus();
  if (g.has_tmp_mb()) r.tmp_mb = g.tmp_mb();
  r.switches = g.switches();
  if (g.has_switches_wait_s()) r.switches_wait_s = g.switches_wait_s();
  if (g.has_segment()) r.segment = g.segment();
  r.gres = CountsFromWire(g.gres());
  r.gpus = CountsFromWire(g.gpus());
  r.gpus_per_node = CountsFromWire(g.gpus_per_node());
  r.gpus_per_task = CountsFromWire(g.gpus_per_task());
  r.gpus_per_socket = CountsFromWire(g.gpus_per_socket());

  switch (s.sharing()) {
    case v1::JobSpec::SHARING_DEFAULT:
      r.sharing = model::SharingMode::kDefault;
      break;
    case v1::JobSpec::SHARING_EXCLUSIVE:
      r.sharing = model::SharingMode::kExclusive;
      break;
    case v1::JobSpec::SHARING_EXCLUSIVE_USER:
      r.sharing = model::SharingMode::kExclusiveUser;
      break;
    case v1::JobSpec::SHARING_EXCLUSIVE_MCS:
      r.sharing = model::SharingMode::kExclusiveMcs;
      break;
    case v1::JobSpec::SHARING_OVERSUBSCRIBE:
      r.sharing = model::SharingMode::kOversubscribe;
      break;
    default:
      return BadSpec("sharing", StrCat("unknown value ", static_cast<int>(s.sharing())));
  }
  r.constraint = s.constraint();
  r.prefer = s.prefer();
  r.nodelist = s.nodelist();
  r.exclude = s.exclude();
  r.contiguous = s.contiguous();
  r.overcommit = s.overcommit();
  r.spread_job = s.spread_job();
  r.use_min_nodes = s.use_min_nodes();

  r.hold = s.hold();
  r.dependency.combine =
      s.dependency_any() ? model::Dependency::Combine::kAny : model::Dependency::Combine::kAll;
  for (const v1::Dependency& d : s.dependencies()) {
    std::optional<model::DependencyType> type = TypeOf(d.kind());
    if (!type) return BadSpec("dependencies", StrCat("unknown kind ", static_cast<int>(d.kind())));
    model::DependencyClause c;
    c.type = *type;
    if (d.targets_size() > 0) {
      for (const v1::DependencyTarget& t : d.targets()) {
        model::DependencyTarget target;
        target.job_id = t.job_id();
        if (t.has_array_task()) target.array_task = t.array_task();
        target.all_tasks = t.all_tasks();
        target.delay_s = t.delay_s();
        c.jobs.push_back(target);
      }
    } else {
      for (uint64_t id : d.job_ids()) {
        model::DependencyTarget target;
        target.job_id = id;
        target.delay_s = d.delay_s();
        c.jobs.push_back(target);
      }
    }
    r.dependency.clauses.push_back(std::move(c));
  }
  if (s.has_kill_on_invalid_dep()) r.kill_on_invalid_dep = s.kill_on_invalid_dep();
  if (s.has_array()) {
    model::ArraySpec a;
    for (const v1::ArrayRange& w : s.array().ranges()) {
      a.ranges.push_back(model::ArrayRange{w.first(), w.last(), w.step()});
    }
    a.max_running = s.array().max_running();
    r.array = std::move(a);
  } else if (!s.array_spec().empty()) {
    StatusOr<model::ArraySpec> a = model::ParseArraySpec(s.array_spec(), INT64_MAX);
    if (!a.ok()) return BadSpec("array_spec", std::string(a.status().message()));
    r.array = *std::move(a);
  }
  r.nice = static_cast<int32_t>(s.nice());
  if (s.has_priority()) r.priority = s.priority();
  if (s.has_requeue()) r.requeue = s.requeue();
  r.no_kill = s.no_kill();
  r.signal = s.signal();
  r.test_only = s.test_only();

  r.work_dir = s.work_dir();
  r.stdout_pattern = s.std_out();
  r.stderr_pattern = s.std_err();
  r.stdin_pattern = s.std_in();
  switch (s.open_mode()) {
    case v1::JobSpec::OPEN_DEFAULT:
      r.open_mode = model::OpenMode::kDefault;
      break;
    case v1::JobSpec::OPEN_APPEND:
      r.open_mode = model::OpenMode::kAppend;
      break;
    case v1::JobSpec::OPEN_TRUNCATE:
      r.open_mode = model::OpenMode::kTruncate;
      break;
    default:
      return BadSpec("open_mode", StrCat("unknown value ", static_cast<int>(s.open_mode())));
  }
  const v1::ExportPolicy& e = s.export_policy();
  switch (e.mode()) {
    case v1::ExportPolicy::ALL:
      r.export_policy.mode = model::ExportPolicy::Mode::kAll;
      break;
    case v1::ExportPolicy::NONE:
      r.export_policy.mode = model::ExportPolicy::Mode::kNone;
      break;
    case v1::ExportPolicy::LIST:
      r.export_policy.mode = model::ExportPolicy::Mode::kList;
      break;
    default:
      return BadSpec("export_policy.mode", StrCat("unknown value ", static_cast<int>(e.mode())));
  }
  r.export_policy.with_all = e.with_all();
  for (const v1::ExportPolicy::Var& v : e.vars()) {
    r.export_policy.vars.emplace_back(
        v.name(), v.has_value() ? std::optional<std::string>(v.value()) : std::nullopt);
  }
  r.get_user_env = s.get_user_env();
  r.export_file = s.export_file();
  r.environment.insert(s.environment().begin(), s.environment().end());
  r.script = s.script();
  r.script_args.assign(s.argv().begin(), s.argv().end());
  r.wrap = s.wrap();
  r.ignored_options.insert(s.ignored_options().begin(), s.ignored_options().end());
  return r;
}

// --------------------------------------------------------------------- controller -> wire

v1::JobInfo FromEntry(const ctld::JobEntry& e, const sched::Cluster& cluster,
                      const JobInfoOptions& options) {
  const model::Job& j = e.job;
  static const model::JobRequest kNoRequest;
  const model::JobRequest& r = e.request ? *e.request : kNoRequest;
  v1::JobInfo info;

  info.set_job_id(j.id);
  info.set_array_job_id(e.array_job_id);
  info.set_array_task_id(e.array_task_id ? static_cast<int32_t>(*e.array_task_id) : -1);
  if (r.array) info.set_array_max_tasks(static_cast<uint32_t>(r.array->max_running));
  info.set_name(j.name);
  info.set_uid(j.uid);
  info.set_gid(j.gid);
  info.set_user(j.user);
  if (options.group_name) info.set_group_name(options.group_name(j.gid));
  info.set_cluster_name(options.cluster_name);

  // A job that ended while its processes are still being killed is COMPLETING, as Slurm
  // prints a job with its COMPLETING flag.
  info.set_state(std::string(model::JobStateName(e.completing ? JobState::kCompleting : j.state)));
  info.set_reason(std::string(ReasonText(j)));
  info.set_priority(j.priority);
  info.set_submit_time(j.submit_time);
  info.set_start_time(j.start_time);
  info.set_end_time(j.end_time);
  info.set_time_limit_s(e.time_limit_s);
  info.set_partition(j.partition);
  // Slurm reports no eligible time while a job is held or waits on others, and age accrues
  // only once it is eligible.
  int64_t eligible = j.eligible_time;
  int64_t accrue = j.eligible_time;
  if (j.state == JobState::kPending) {
    switch (j.reason) {
      case PendingReason::kJobHeldUser:
      case PendingReason::kJobHeldAdmin:
      case PendingReason::kDependency:
      case PendingReason::kDependencyNeverSatisfied:
        eligible = 0;
        accrue = 0;
        break;
      case PendingReason::kBeginTime:
        accrue = 0;
        break;
      case PendingReason::kJobArrayTaskLimit:
        eligible = 0;
        break;
      default:
        break;
    }
  }
  info.set_eligible_time(eligible);
  info.set_accrue_time(accrue);

  if (j.state == JobState::kPending && !r.dependency.empty()) {
    if (j.reason == PendingReason::kDependency) {
      info.set_dependency(DependencyText(r.dependency, "unfulfilled"));
    } else if (j.reason == PendingReason::kDependencyNeverSatisfied) {
      info.set_dependency(DependencyText(r.dependency, "failed"));
    }
  }

  // Where it runs.
  std::vector<std::string> names;
  std::string gpu_ids;
  for (const sched::NodeAlloc& a : e.alloc) {
    if (a.node < 0 || static_cast<size_t>(a.node) >= cluster.nodes.size()) continue;
    const model::Node& node = cluster.nodes[a.node];
    names.push_back(node.name);
    v1::NodeAllocation* na = info.add_allocation();
    na->set_node(node.name);
    na->set_cpus(a.amount.cpus);
    na->set_mem_mb(a.amount.mem_mb);
    na->set_gpus(a.amount.gpus);
    if (a.amount.gpus > 0) na->set_gpu_type(node.gpu_type);
    na->set_gpu_ids(GpuList(a.gpu_ids));
    na->set_cpu_ids(a.cpu_ids.ToList());
    SocketsOf(node, a.cpu_ids, na);
    if (a.gpu_ids != 0) {
      if (!gpu_ids.empty()) gpu_ids += ';';
      gpu_ids += StrCat(node.name, ":", na->gpu_ids());
    }
  }
  info.set_node_list(core::CompressHostlist(names));
  if (!names.empty()) info.set_batch_host(names.front());
  info.set_gpu_ids(gpu_ids);

  // Sizes: what it holds once it holds anything, what it asked for before.
  const model::JobShape& sh = j.shape;
  const core::TresVector req = RequestTres(sh);
  info.set_tres_req(core::FormatTres(req));
  if (!e.alloc.empty()) {
    const core::TresVector alloc = AllocTres(e.alloc);
    info.set_tres_alloc(core::FormatTres(alloc));
    info.set_num_nodes(static_cast<int32_t>(e.alloc.size()));
    info.set_num_cpus(static_cast<int32_t>(alloc.Get(core::kTresCpu)));
  } else {
    info.set_num_nodes(sh.min_nodes);
    info.set_num_cpus(static_cast<int32_t>(req.Get(core::kTresCpu)));
  }
  info.set_num_tasks(sh.ntasks);
  info.set_max_nodes(r.max_nodes.value_or(0));
  info.set_min_cpus_node(r.mincpus.value_or(sh.cpus_per_task * std::max(1, sh.ntasks_per_node)));
  if (sh.mem_per_cpu_mb > 0) {
    info.set_min_memory_mb(sh.mem_per_cpu_mb);
    info.set_memory_per_cpu(true);
  } else if (sh.mem_per_node_mb > 0) {
    info.set_min_memory_mb(sh.mem_per_node_mb);
  } else if (!e.alloc.empty() && sh.mem_per_gpu_mb == 0) {
    info.set_min_memory_mb(e.alloc.front().amount.mem_mb);
  }
  info.set_requeue(r.requeue.value_or(options.requeue_by_default));

  // How it ended: the wait() status word.
  if (model::IsFinal(j.state)) {
    const int status = j.exit_code;
    if (WIFSIGNALED(status)) {
      info.set_exit_signal(WTERMSIG(status));
    } else {
      info.set_exit_code(WEXITSTATUS(status));
    }
  }

  FillSpec(r, options.with_script, options.with_environment, info.mutable_spec());
  return info;
}

std::vector<v1::JobInfo> FromEntries(const std::map<uint64_t, ctld::JobEntry>& jobs,
                                     const sched::Cluster& cluster, const JobInfoOptions& options) {
  std::vector<v1::JobInfo> out;
  out.reserve(jobs.size());
  // Array id -> (record index, the pending task indices).
  std::map<model::JobId, std::pair<size_t, model::ArraySpec>> folded;
  for (const auto& [key, e] : jobs) {
    const bool unstarted = e.array_job_id != 0 && e.array_task_id &&
                           e.job.state == JobState::kPending && e.job.start_time == 0;
    if (unstarted) {
      auto it = folded.find(e.array_job_id);
      if (it == folded.end()) {
        out.push_back(FromEntry(e, cluster, options));
        it = folded.emplace(e.array_job_id, std::make_pair(out.size() - 1, model::ArraySpec{}))
                 .first;
        if (e.request && e.request->array)
          it->second.second.max_running = e.request->array->max_running;
      }
      const int64_t task = *e.array_task_id;
      it->second.second.ranges.push_back(model::ArrayRange{task, task, 1});
      continue;
    }
    out.push_back(FromEntry(e, cluster, options));
  }
  for (const auto& [array_id, record] : folded) {
    v1::JobInfo& info = out[record.first];
    info.set_job_id(array_id);
    info.set_array_task_id(-1);
    info.set_array_task_string(record.second.ToString());
  }
  return out;
}

std::vector<NodeUsage> NodeUsageOf(const std::map<uint64_t, ctld::JobEntry>& jobs,
                                   size_t node_count) {
  std::vector<NodeUsage> usage(node_count);
  for (const auto& [key, e] : jobs) {
    if (!HoldsNodes(e)) continue;
    for (const sched::NodeAlloc& a : e.alloc) {
      if (a.node < 0 || static_cast<size_t>(a.node) >= node_count) continue;
      NodeUsage& u = usage[a.node];
      u.alloc += a.amount;
      u.gpu_ids |= a.gpu_ids;
      u.cpu_ids |= a.cpu_ids;
      ++u.jobs;
    }
  }
  return usage;
}

v1::NodeInfo FromNode(const sched::Cluster& cluster, int32_t index, const NodeUsage& usage,
                      const NodeStatus& status) {
  v1::NodeInfo info;
  if (index < 0 || static_cast<size_t>(index) >= cluster.nodes.size()) return info;
  const model::Node& n = cluster.nodes[index];

  model::NodeState base = n.state;
  if (base != model::NodeState::kDown && base != model::NodeState::kFuture &&
      base != model::NodeState::kUnknown) {
    const bool busy = usage.alloc.cpus > 0 || usage.alloc.gpus > 0 || usage.alloc.mem_mb > 0;
    if (!busy) {
      base = model::NodeState::kIdle;
    } else if (usage.alloc.cpus >= n.capacity.cpus) {
      base = model::NodeState::kAllocated;
    } else {
      base = model::NodeState::kMixed;
    }
  }
  uint32_t flags = 0;
  if (n.drain) flags |= fmt::kNodeFlagDrain;
  if (!status.alive && base != model::NodeState::kFuture) flags |= fmt::kNodeFlagNotResponding;
  info.set_name(n.name);
  info.set_state(fmt::NodeStateComplete(base, flags));
  info.set_state_flags(flags);
  info.set_reason(n.reason);
  info.set_cpus(n.capacity.cpus);
  info.set_alloc_cpus(usage.alloc.cpus);
  info.set_real_memory_mb(n.capacity.mem_mb);
  info.set_alloc_memory_mb(usage.alloc.mem_mb);
  info.set_gpus(n.capacity.gpus);
  info.set_alloc_gpus(usage.alloc.gpus);
  info.set_gpu_type(n.gpu_type);
  info.set_alloc_gpu_ids(GpuList(usage.gpu_ids));
  for (const std::string& f : n.features) info.add_features(f);
  for (const model::Partition& p : cluster.partitions) {
    if (std::find(p.nodes.begin(), p.nodes.end(), index) != p.nodes.end()) {
      info.add_partitions(p.name);
    }
  }
  info.set_last_heartbeat(status.last_heartbeat);
  info.set_sockets(n.sockets);
  info.set_cores_per_socket(n.cores_per_socket);
  info.set_threads_per_core(n.threads_per_core);
  info.set_weight(n.weight);

  core::TresVector cfg;
  cfg.Set(core::kTresCpu, n.capacity.cpus);
  cfg.Set(core::kTresMem, n.capacity.mem_mb);
  cfg.Set(core::kTresBilling, n.capacity.cpus);
  cfg.Set(core::kTresGpu, n.capacity.gpus);
  info.set_cfg_tres(core::FormatTres(cfg));
  core::TresVector alloc;
  alloc.Set(core::kTresCpu, usage.alloc.cpus);
  alloc.Set(core::kTresMem, usage.alloc.mem_mb);
  alloc.Set(core::kTresGpu, usage.alloc.gpus);
  info.set_alloc_tres(core::FormatTres(alloc));
  return info;
}

std::vector<v1::NodeInfo> FromNodes(const sched::Cluster& cluster,
                                    const std::map<uint64_t, ctld::JobEntry>& jobs,
                                    const std::vector<NodeStatus>& status) {
  std::vector<NodeUsage> usage = NodeUsageOf(jobs, cluster.nodes.size());
  std::vector<v1::NodeInfo> out;
  out.reserve(cluster.nodes.size());
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    out.push_back(FromNode(cluster, static_cast<int32_t>(i), usage[i],
                           i < status.size() ? status[i] : NodeStatus{}));
  }
  return out;
}

v1::PartitionInfo FromPartition(const sched::Cluster& cluster, int32_t index) {
  v1::PartitionInfo info;
  if (index < 0 || static_cast<size_t>(index) >= cluster.partitions.size()) return info;
  const model::Partition& p = cluster.partitions[index];
  info.set_name(p.name);
  info.set_is_default(p.is_default);
  switch (p.state) {
    case model::PartitionState::kUp:
      info.set_state("UP");
      break;
    case model::PartitionState::kDown:
      info.set_state("DOWN");
      break;
    case model::PartitionState::kDrain:
      info.set_state("DRAIN");
      break;
    case model::PartitionState::kInactive:
      info.set_state("INACTIVE");
      break;
  }
  std::vector<std::string> names;
  int64_t cpus = 0, mem = 0, gpus = 0;
  for (int32_t n : p.nodes) {
    if (n < 0 || static_cast<size_t>(n) >= cluster.nodes.size()) continue;
    const model::Node& node = cluster.nodes[n];
    names.push_back(node.name);
    cpus += node.capacity.cpus;
    mem += node.capacity.mem_mb;
    gpus += node.capacity.gpus;
  }
  info.set_nodes(core::CompressHostlist(names));
  info.set_max_time_s(p.max_time_s);
  info.set_default_time_s(p.default_time_s);
  info.set_total_nodes(static_cast<int32_t>(names.size()));
  info.set_total_cpus(static_cast<int32_t>(cpus));
  info.set_min_nodes(p.min_nodes);
  info.set_max_nodes(p.max_nodes == INT32_MAX ? -1 : p.max_nodes);
  info.set_priority_tier(p.priority_tier);
  info.set_priority_job_factor(p.priority_job_factor);
  info.set_oversubscribe(p.exclusive ? "EXCLUSIVE" : "NO");
  core::TresVector tres;
  tres.Set(core::kTresCpu, cpus);
  tres.Set(core::kTresMem, mem);
  tres.Set(core::kTresNode, static_cast<int64_t>(names.size()));
  tres.Set(core::kTresBilling, cpus);
  tres.Set(core::kTresGpu, gpus);
  info.set_tres(core::FormatTres(tres));
  return info;
}

std::vector<v1::PartitionInfo> FromPartitions(const sched::Cluster& cluster) {
  std::vector<v1::PartitionInfo> out;
  for (size_t i = 0; i < cluster.partitions.size(); ++i) {
    out.push_back(FromPartition(cluster, static_cast<int32_t>(i)));
  }
  return out;
}

std::vector<v1::JobInfo> JobsOf(const ctld::ControllerCore& core, const JobInfoOptions& options) {
  return FromEntries(core.jobs(), core.cluster(), options);
}

std::vector<v1::NodeInfo> NodesOf(const ctld::ControllerCore& core) {
  std::vector<NodeStatus> status(core.cluster().nodes.size());
  for (size_t i = 0; i < status.size(); ++i) status[i].alive = core.NodeUp(static_cast<int32_t>(i));
  return FromNodes(core.cluster(), core.jobs(), status);
}

std::vector<v1::PartitionInfo> PartitionsOf(const ctld::ControllerCore& core) {
  return FromPartitions(core.cluster());
}

// --------------------------------------------------------------------------- wire -> views

fmt::JobView ToJobView(const v1::JobInfo& j) {
  fmt::JobView v;
  const v1::JobSpec& s = j.spec();
  v.job_id = static_cast<uint32_t>(j.job_id());
  v.array_job_id = static_cast<uint32_t>(j.array_job_id());
  if (j.array_task_id() >= 0 && j.array_job_id() != 0) {
    v.array_task_id = static_cast<uint32_t>(j.array_task_id());
  }
  v.array_task_string = j.array_task_string();
  v.array_max_tasks = j.array_max_tasks();
  v.name = j.name();

  v.user_name = j.user();
  v.user_id = j.uid();
  v.group_name = j.group_name().empty() ? StrCat(j.gid()) : j.group_name();
  v.group_id = j.gid();
  v.account = s.account();
  v.qos = s.qos();
  v.wckey = s.wckey();
  v.cluster = j.cluster_name();

  v.priority = j.priority();
  v.nice = static_cast<int32_t>(s.nice());

  v.state = model::ParseJobState(j.state()).value_or(JobState::kPending);
  v.reason = j.reason().empty() ? std::string("None") : j.reason();
  v.dependency = j.dependency();
  v.requeue = j.requeue();
  v.exit_status = j.exit_code();
  v.exit_signal = j.exit_signal();

  v.time_limit_s = j.time_limit_s();
  if (s.has_time_min_s()) v.time_min_s = s.time_min_s();
  v.submit_time = j.submit_time();
  v.eligible_time = j.eligible_time();
  v.accrue_time = j.accrue_time();
  v.start_time = j.start_time();
  v.end_time = j.end_time();
  v.deadline = s.deadline();

  v.partition = j.partition();
  v.reservation = s.reservation();
  v.req_nodes = s.nodelist();
  v.exc_nodes = s.exclude();
  v.nodes = j.node_list();
  v.batch_host = j.batch_host();

  v.num_nodes = j.num_nodes();
  v.max_nodes = j.max_nodes();
  v.num_cpus = j.num_cpus();
  v.num_tasks = j.num_tasks();
  v.cpus_per_task = std::max(1, s.cpus_per_task());
  const v1::JobSpec::Given& g = s.given();
  if (g.has_ntasks_per_node()) v.ntasks_per_node = g.ntasks_per_node();
  if (g.has_ntasks_per_socket()) v.ntasks_per_socket = g.ntasks_per_socket();
  if (g.has_ntasks_per_core()) v.ntasks_per_core = g.ntasks_per_core();

  v.tres_req = TresOrEmpty(j.tres_req());
  v.tres_alloc = TresOrEmpty(j.tres_alloc());
  if (!v.tres_alloc.empty()) {
    v.billable_tres = static_cast<double>(v.tres_alloc.Get(core::kTresBilling));
  }

  v.min_cpus_node = std::max(1, j.min_cpus_node());
  v.min_memory_mb = j.min_memory_mb();
  v.memory_per_cpu = j.memory_per_cpu();
  if (g.has_tmp_mb()) v.min_tmp_disk_mb = g.tmp_mb();
  v.features = s.constraint();
  v.prefer = s.prefer();
  v.oversubscribe = std::string(OversubscribeText(s.sharing()));
  v.contiguous = s.contiguous();
  v.licenses = s.licenses();
  v.network = IgnoredOption(s, "network");
  v.command = s.command();
  v.work_dir = s.work_dir();
  v.comment = s.comment();
  v.std_err = s.std_err();
  v.std_in = s.std_in();
  v.std_out = s.std_out();

  v.tres_per_node = TresPer({&g.gres(), &g.gpus_per_node()});
  v.tres_per_job = TresPer({&g.gpus()});
  v.tres_per_socket = TresPer({&g.gpus_per_socket()});
  v.tres_per_task = TresPer({&g.gpus_per_task()});
  if (g.has_cpus_per_gpu()) v.cpus_per_tres = StrCat("gres:gpu:", g.cpus_per_gpu());
  if (g.has_mem_per_gpu_mb()) v.mem_per_tres = StrCat("gres:gpu:", g.mem_per_gpu_mb());
  v.mail_user = IgnoredOption(s, "mail-user");
  v.mail_type = IgnoredOption(s, "mail-type");

  // The allocation, node by node, and grouped the way scontrol -d prints it.
  int64_t gpus = 0;
  std::string gpu_type;
  std::vector<std::string> group;
  auto flush = [&](const fmt::JobNodeDetail& d) {
    fmt::JobNodeDetail out = d;
    out.nodes = core::CompressHostlist(group);
    v.node_details.push_back(std::move(out));
    group.clear();
  };
  fmt::JobNodeDetail current;
  for (const v1::NodeAllocation& a : j.allocation()) {
    gpus += a.gpus();
    if (gpu_type.empty()) gpu_type = a.gpu_type();
    fmt::JobNodeDetail d;
    d.cpu_ids = a.cpu_ids();
    d.mem_mb = a.mem_mb();
    if (a.gpus() > 0) {
      d.gres = StrCat(GpuGres(a.gpu_type(), a.gpus()),
                      "(IDX:", a.gpu_ids().empty() ? std::string("N/A") : a.gpu_ids(), ")");
    }
    if (!group.empty() &&
        (d.cpu_ids != current.cpu_ids || d.mem_mb != current.mem_mb || d.gres != current.gres)) {
      flush(current);
    }
    current = d;
    group.push_back(a.node());

    fmt::JobNodeAllocation na;
    na.node_name = a.node();
    for (const v1::NodeAllocation::Socket& sock : a.sockets()) {
      na.sockets.emplace_back(sock.socket(),
                              std::vector<int32_t>(sock.cores().begin(), sock.cores().end()));
    }
    na.memory_allocated_mb = a.mem_mb();
    v.allocation.push_back(std::move(na));
  }
  if (!group.empty()) flush(current);
  if (gpus > 0) v.job_gres = GpuGres(gpu_type, gpus);

  if (s.given().has_cpus_per_task()) v.json_flags.push_back("JOB_CPUS_SET");
  if (v.state == JobState::kRunning || v.state == JobState::kCompleting ||
      v.state == JobState::kSuspended) {
    v.json_flags.push_back("JOB_WAS_RUNNING");
  }
  if (s.given().has_mem_per_node_mb()) v.json_flags.push_back("JOB_MEM_SET");
  return v;
}

fmt::NodeView ToNodeView(const v1::NodeInfo& n) {
  fmt::NodeView v;
  v.name = n.name();
  std::vector<std::string_view> parts = core::Split(n.state(), '+');
  v.state = model::ParseNodeState(parts.front()).value_or(model::NodeState::kUnknown);
  v.flags = n.state_flags();
  for (size_t i = 1; i < parts.size(); ++i) v.flags |= NodeFlagBit(parts[i]);

  v.cpus = n.cpus();
  v.cpus_effective = n.cpus();
  v.cpus_alloc = n.alloc_cpus();
  if (n.has_cpu_load()) v.cpu_load = n.cpu_load();
  v.sockets = std::max(1, n.sockets());
  v.cores_per_socket = std::max(1, n.cores_per_socket());
  v.threads_per_core = std::max(1, n.threads_per_core());
  v.real_memory_mb = n.real_memory_mb();
  v.alloc_memory_mb = n.alloc_memory_mb();
  if (n.has_free_memory_mb()) v.free_memory_mb = n.free_memory_mb();
  v.tmp_disk_mb = n.tmp_disk_mb();
  v.weight = n.weight() == 0 ? 1 : n.weight();
  std::string features;
  for (const std::string& f : n.features()) {
    if (!features.empty()) features += ',';
    features += f;
  }
  v.features_available = features;
  v.features_active = features;
  if (n.gpus() > 0) {
    v.gres = GpuGres(n.gpu_type(), n.gpus());
    v.gres_used =
        StrCat(GpuGres(n.gpu_type(), n.alloc_gpus()),
               "(IDX:", n.alloc_gpu_ids().empty() ? std::string("N/A") : n.alloc_gpu_ids(), ")");
  }
  v.node_addr = n.address().empty() ? n.name() : n.address();
  v.node_hostname = n.hostname().empty() ? n.name() : n.hostname();
  v.port = static_cast<uint32_t>(n.port());
  v.version = n.version();
  v.arch = n.arch();
  v.os = n.os();
  v.partitions.assign(n.partitions().begin(), n.partitions().end());
  v.boot_time = n.boot_time();
  v.slurmd_start_time = n.slurmd_start_time();
  v.last_busy_time = n.last_busy_time();
  v.cfg_tres = TresOrEmpty(n.cfg_tres());
  v.alloc_tres = TresOrEmpty(n.alloc_tres());
  v.reason = n.reason();
  v.reason_user = n.reason_user();
  v.reason_uid = n.reason_uid();
  v.reason_time = n.reason_time();
  return v;
}

fmt::PartitionView ToPartitionView(const v1::PartitionInfo& p) {
  fmt::PartitionView v;
  v.name = p.name();
  v.is_default = p.is_default();
  if (p.state() == "DOWN") {
    v.state = fmt::PartitionState::kDown;
  } else if (p.state() == "DRAIN") {
    v.state = fmt::PartitionState::kDrain;
  } else if (p.state() == "INACTIVE") {
    v.state = fmt::PartitionState::kInactive;
  }
  if (!p.nodes().empty()) {
    StatusOr<std::vector<std::string>> names = core::ExpandHostlist(p.nodes());
    if (names.ok()) v.node_names = *std::move(names);
  }
  v.default_time_s = p.default_time_s();
  v.max_nodes = p.max_nodes();
  v.max_time_s = p.max_time_s();
  v.min_nodes = p.min_nodes();
  v.priority_job_factor = p.priority_job_factor();
  v.priority_tier = p.priority_tier();
  if (!p.oversubscribe().empty()) v.oversubscribe = p.oversubscribe();
  v.total_cpus = p.total_cpus();
  v.total_nodes = p.total_nodes();
  v.tres = TresOrEmpty(p.tres());
  return v;
}

// ---------------------------------------------------------------------------------- errors

absl::StatusCode StatusCodeFor(v1::ErrorCode code) {
  for (const ErrorEntry& e : kErrors) {
    if (e.code == code) return e.status;
  }
  return absl::StatusCode::kUnknown;
}

std::string_view SlurmErrorText(v1::ErrorCode code) {
  for (const ErrorEntry& e : kErrors) {
    if (e.code == code) return e.text;
  }
  return "Unknown error";
}

v1::ErrorCode ErrorCodeFor(const Status& status) {
  if (status.ok()) return v1::OK;
  if (absl::optional<absl::Cord> p = status.GetPayload(kErrorCodePayload)) {
    std::optional<int64_t> n = core::ParseInt(std::string(*p));
    if (n && v1::ErrorCode_IsValid(static_cast<int>(*n))) {
      auto code = static_cast<v1::ErrorCode>(*n);
      if (StatusCodeFor(code) == status.code()) return code;
    }
  }
  const std::string message(status.message());
  for (const ErrorEntry& e : kErrors) {
    if (e.status == status.code() && e.code != v1::OK &&
        std::string_view(message).substr(0, e.text.size()) == e.text) {
      return e.code;
    }
  }
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    const std::string lower = core::ToLower(message);
    if (lower.find("no munge credential") != std::string::npos ||
        lower.find("missing") != std::string::npos) {
      return v1::AUTH_MISSING;
    }
    if (lower.find("expired") != std::string::npos) return v1::AUTH_EXPIRED;
    if (lower.find("replayed") != std::string::npos) return v1::AUTH_REPLAYED;
    return v1::AUTH_INVALID;
  }
  return GeneralCode(status.code());
}

Status FromWire(const v1::Error& error) {
  if (error.code() == v1::OK) return absl::OkStatus();
  const absl::StatusCode code = StatusCodeFor(error.code());
  Status s(code,
           error.message().empty() ? std::string(SlurmErrorText(error.code())) : error.message());
  s.SetPayload(kErrorCodePayload, absl::Cord(StrCat(static_cast<int>(error.code()))));
  return s;
}

v1::Error ToWire(const Status& status) {
  v1::Error e;
  e.set_code(ErrorCodeFor(status));
  e.set_message(std::string(status.message()));
  return e;
}

}  // namespace loom::rpc
