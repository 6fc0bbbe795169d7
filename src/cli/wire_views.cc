// Wire records to the views `squeue`, `sinfo` and `scontrol show` render (cli/format/views.h).
#include "cli/wire_views.h"

#include <algorithm>
#include <utility>

#include "absl/time/time.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "core/tres.h"
#include "model/job_state.h"
#include "rpc/convert.h"

namespace loom::cli {
namespace {

using core::StrCat;
using google::protobuf::RepeatedPtrField;
using model::JobState;
namespace fmt = format;

// The GRES of `count` GPUs of `type` as Slurm writes them: "gpu:2", "gpu:a100:2".
std::string GpuGres(std::string_view type, int64_t count) {
  return type.empty() ? StrCat("gpu:", count) : StrCat("gpu:", type, ":", count);
}

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

}  // namespace

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
  v.last_sched_eval = j.last_sched_eval();
  v.restarts = j.restarts();
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
  v.alloc_node = s.alloc_node();
  v.alloc_sid = s.alloc_sid();
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
  if (!p.allow_groups().empty()) v.allow_groups = p.allow_groups();
  if (!p.allow_accounts().empty()) v.allow_accounts = p.allow_accounts();
  v.deny_accounts = p.deny_accounts();
  if (!p.allow_qos().empty()) v.allow_qos = p.allow_qos();
  v.deny_qos = p.deny_qos();
  v.qos = p.qos();
  return v;
}

format::ReservationView ToReservationView(const v1::ReservationInfo& resv) {
  format::ReservationView v;
  v.name = resv.name();
  v.start = resv.start_time();
  v.end = resv.end_time();
  v.nodes = resv.nodes();
  v.node_count = resv.node_count();
  v.core_count = resv.core_count();
  v.features = resv.features();
  v.partition = resv.partition();
  v.flags = resv.flags();
  v.users = resv.users();
  v.accounts = resv.accounts();
  v.active = resv.state() == "ACTIVE";
  return v;
}

int32_t LocalUtcOffset(int64_t t) {
  return absl::LocalTimeZone().At(absl::FromUnixSeconds(t)).offset;
}

StatusOr<std::vector<format::ReservationView>> FetchReservations(Client& client,
                                                                 std::string_view name,
                                                                 format::RenderContext* ctx) {
  v1::QueryReservationsRequest req;
  req.set_name(std::string(name));
  v1::QueryReservationsReply reply;
  RETURN_IF_ERROR(client.Call("QueryReservations", req, &reply));
  std::vector<format::ReservationView> out;
  for (const v1::ReservationInfo& r : reply.reservations()) out.push_back(ToReservationView(r));
  ctx->now = reply.server_time();
  ctx->utc_offset_s = LocalUtcOffset(ctx->now);
  return out;
}

}  // namespace loom::cli
