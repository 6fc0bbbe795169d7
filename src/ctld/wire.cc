// The controller's records (JobEntry, sched::Cluster nodes and partitions) to the
// v1::JobInfo / v1::NodeInfo / v1::PartitionInfo that queries answer with.
#include "ctld/wire.h"

#include <sys/wait.h>

#include <algorithm>
#include <utility>

#include "core/cpu_list.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "core/tres.h"
#include "model/job_state.h"
#include "rpc/convert.h"

namespace loom::ctld {
namespace {

using core::StrCat;
using rpc::FillSpec;
using model::JobState;
using model::PendingReason;

// Whether the job holds its nodes: running, or ended with its processes still being killed.
bool HoldsNodes(const JobEntry& e) {
  return e.job.state == JobState::kRunning || e.job.state == JobState::kSuspended ||
         e.completing;
}

// "0-1,3": the indices of the set bits.
std::string GpuList(model::GpuMask mask) {
  core::CpuSet set;
  for (int i = 0; i < model::kMaxGpusPerNode; ++i) {
    if (mask >> i & 1) set.set(i);
  }
  return set.ToList();
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

core::TresVector RequestTres(const model::JobShape& sh, bool gpu_tres) {
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
  if (gpu_tres) t.Set(core::kTresGpu, gpus);
  return t;
}

core::TresVector AllocTres(const sched::Allocation& alloc, bool gpu_tres) {
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
  if (gpu_tres) t.Set(core::kTresGpu, gpus);
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

// An entry's request; an empty one for an entry that has none.
const model::JobRequest& RequestOf(const JobEntry& e) {
  static const model::JobRequest kNoRequest;
  return e.request ? *e.request : kNoRequest;
}

}  // namespace

v1::JobInfo FromEntry(const JobEntry& e, const sched::Cluster& cluster,
                      const JobInfoOptions& options) {
  v1::JobInfo info = JobFieldsOf(e, cluster, options);
  AddSharedFields(e, options, &info);
  return info;
}

void AddSharedFields(const JobEntry& e, const JobInfoOptions& options, v1::JobInfo* info) {
  const model::Job& j = e.job;
  const model::JobRequest& r = RequestOf(e);
  // -1 (no task) takes eleven bytes on the wire: shared by every job that is no array task.
  if (e.array_place == 0) info->set_array_task_id(-1);
  if (r.array) info->set_array_max_tasks(static_cast<uint32_t>(r.array->max_running));
  info->set_name(r.name);
  info->set_uid(j.uid);
  info->set_gid(j.gid);
  info->set_user(j.user);
  if (options.group_name) info->set_group_name(options.group_name(j.gid));
  info->set_cluster_name(options.cluster_name);
  info->set_partition(j.partition);
  info->set_state(std::string(model::JobStateName(e.shown_state())));
  info->set_reason(std::string(ReasonText(j)));
  const model::JobShape& sh = r.shape;
  info->set_tres_req(core::FormatTres(RequestTres(sh, options.gpu_tres)));
  info->set_num_tasks(sh.ntasks);
  info->set_max_nodes(r.max_nodes.value_or(0));
  info->set_min_cpus_node(r.mincpus.value_or(sh.cpus_per_task * std::max(1, sh.ntasks_per_node)));
  info->set_requeue(r.requeue.value_or(options.requeue_by_default));
  FillSpec(r, options.with_script, options.with_environment, info->mutable_spec());
}

v1::JobInfo JobFieldsOf(const JobEntry& e, const sched::Cluster& cluster,
                        const JobInfoOptions& options) {
  const model::Job& j = e.job;
  const model::JobRequest& r = RequestOf(e);
  v1::JobInfo info;

  info.set_job_id(j.id);
  info.set_array_job_id(e.array_job_id());
  if (e.array_place != 0) info.set_array_task_id(e.array_task);  // else a shared field

  info.set_priority(j.priority);
  info.set_submit_time(j.submit_time);
  info.set_start_time(j.start_time);
  info.set_end_time(j.end_time);
  info.set_time_limit_s(e.job.time_limit_s);
  // Slurm reports no eligible time while a job is held or waits on others, and age accrues
  // only once it is eligible.
  int64_t eligible = j.eligible_time;
  int64_t accrue = j.eligible_time;
  if (j.state == JobState::kPending) {
    switch (j.reason) {
      case PendingReason::kJobHeldUser:
      case PendingReason::kJobHeldAdmin:
      case PendingReason::kLaunchFailedRequeuedHeld:
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
  info.set_last_sched_eval(e.last_sched_eval);
  info.set_restarts(e.history().restarts);
  info.set_launch_error(e.history().launch_error);

  if (j.state == JobState::kPending && !r.dependency.empty()) {
    if (j.reason == PendingReason::kDependency) {
      info.set_dependency(DependencyText(r.dependency, "unfulfilled"));
    } else if (j.reason == PendingReason::kDependencyNeverSatisfied) {
      info.set_dependency(DependencyText(r.dependency, "failed"));
    }
  }

  // Where it runs, or where it ran once it ended, as Slurm's records keep it.
  const sched::Allocation& held = e.placement();
  std::vector<std::string> names;
  std::string gpu_ids;
  for (const sched::NodeAlloc& a : held) {
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
  if (!names.empty()) info.set_batch_host(names.front());
  // In Slurm's node-table order: sorted as hostlists sort.
  info.set_node_list(core::CompressHostlistSorted(names));
  info.set_gpu_ids(gpu_ids);

  // Sizes: what it holds (or held) once it holds anything, what it asked for before.
  const model::JobShape& sh = r.shape;
  if (!held.empty()) {
    const core::TresVector alloc = AllocTres(held, options.gpu_tres);
    info.set_tres_alloc(core::FormatTres(alloc));
    info.set_num_nodes(static_cast<int32_t>(held.size()));
    info.set_num_cpus(static_cast<int32_t>(alloc.Get(core::kTresCpu)));
  } else {
    info.set_num_nodes(sh.min_nodes);
    info.set_num_cpus(static_cast<int32_t>(RequestTres(sh, options.gpu_tres).Get(core::kTresCpu)));
  }
  if (sh.mem_per_cpu_mb > 0) {
    info.set_min_memory_mb(sh.mem_per_cpu_mb);
    info.set_memory_per_cpu(true);
  } else if (sh.mem_per_node_mb > 0) {
    info.set_min_memory_mb(sh.mem_per_node_mb);
  } else if (!held.empty() && sh.mem_per_gpu_mb == 0) {
    info.set_min_memory_mb(held.front().amount.mem_mb);
  }

  // How it ended: the wait() status word.
  if (model::IsFinal(j.state)) {
    const int status = j.exit_code;
    if (WIFSIGNALED(status)) {
      info.set_exit_signal(WTERMSIG(status));
    } else {
      info.set_exit_code(WEXITSTATUS(status));
    }
  }
  return info;
}

std::vector<v1::JobInfo> FromEntries(const JobTable& jobs, const sched::Cluster& cluster,
                                     const JobInfoOptions& options) {
  std::vector<v1::JobInfo> out;
  out.reserve(jobs.size());
  // Array id -> (record index, the pending task indices).
  std::map<model::JobId, std::pair<size_t, model::ArraySpec>> folded;
  for (const auto& [id, e] : jobs) {
    const bool unstarted =
        e.array_place != 0 && e.job.state == JobState::kPending && e.job.start_time == 0;
    if (unstarted) {
      auto it = folded.find(e.array_job_id());
      if (it == folded.end()) {
        out.push_back(FromEntry(e, cluster, options));
        it = folded.emplace(e.array_job_id(), std::make_pair(out.size() - 1, model::ArraySpec{}))
                 .first;
        if (e.request && e.request->array)
          it->second.second.max_running = e.request->array->max_running;
      }
      const int64_t task = e.array_task;
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

std::vector<NodeUsage> NodeUsageOf(const std::vector<const JobEntry*>& jobs, size_t node_count) {
  std::vector<NodeUsage> usage(node_count);
  for (const JobEntry* e : jobs) {
    if (!HoldsNodes(*e)) continue;
    for (const sched::NodeAlloc& a : e->alloc()) {
      if (a.node < 0 || static_cast<size_t>(a.node) >= node_count) continue;
      NodeUsage& u = usage[a.node];
      u.alloc += a.amount;
      u.gpu_ids |= a.gpu_ids;
      u.cpu_ids |= a.cpu_ids;
      ++u.jobs;
      if (e->completing) ++u.completing;
    }
  }
  return usage;
}

void MarkReservations(const sched::Cluster& cluster, Time now, std::vector<NodeUsage>* usage) {
  for (const sched::AdvanceReservation& r : cluster.reservations) {
    if (r.start > now || now >= r.end) continue;
    const uint32_t flag = r.maint ? model::kNodeFlagMaintenance : model::kNodeFlagReserved;
    for (int32_t n : r.nodes) {
      if (static_cast<size_t>(n) < usage->size()) (*usage)[n].resv_flags |= flag;
    }
  }
}

v1::NodeInfo FromNode(const sched::Cluster& cluster, int32_t index, const NodeUsage& usage,
                      const NodeStatus& status, bool gpu_tres) {
  v1::NodeInfo info;
  if (index < 0 || static_cast<size_t>(index) >= cluster.nodes.size()) return info;
  const model::Node& n = cluster.nodes[index];

  model::NodeState base = n.state;
  if (base != model::NodeState::kDown && base != model::NodeState::kFuture &&
      base != model::NodeState::kUnknown) {
    // A node whose jobs have all ended (their processes or epilogs still going) is idle
    // with the COMPLETING flag, as Slurm shows it.
    const bool busy = (usage.alloc.cpus > 0 || usage.alloc.gpus > 0 || usage.alloc.mem_mb > 0) &&
                      usage.completing < usage.jobs;
    if (!busy) {
      base = model::NodeState::kIdle;
    } else if (usage.alloc.cpus >= n.capacity.cpus) {
      base = model::NodeState::kAllocated;
    } else {
      base = model::NodeState::kMixed;
    }
  }
  uint32_t flags = 0;
  if (n.drain) flags |= model::kNodeFlagDrain;
  if (usage.completing > 0) flags |= model::kNodeFlagCompleting;
  flags |= usage.resv_flags;
  if (!status.alive && base != model::NodeState::kFuture) flags |= model::kNodeFlagNotResponding;
  info.set_name(n.name);
  info.set_state(model::NodeStateComplete(base, flags));
  info.set_state_flags(flags);
  info.set_reason(n.reason);
  if (status.reason_time != 0) {
    info.set_reason_uid(status.reason_uid);
    info.set_reason_user(status.reason_user);
    info.set_reason_time(status.reason_time);
  }
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
  if (gpu_tres) cfg.Set(core::kTresGpu, n.capacity.gpus);
  info.set_cfg_tres(core::FormatTres(cfg));
  core::TresVector alloc;
  alloc.Set(core::kTresCpu, usage.alloc.cpus);
  alloc.Set(core::kTresMem, usage.alloc.mem_mb);
  if (gpu_tres) alloc.Set(core::kTresGpu, usage.alloc.gpus);
  info.set_alloc_tres(core::FormatTres(alloc));
  return info;
}

v1::PartitionInfo FromPartition(const sched::Cluster& cluster, int32_t index, bool gpu_tres) {
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
  if (gpu_tres) tres.Set(core::kTresGpu, gpus);
  info.set_tres(core::FormatTres(tres));
  return info;
}

std::vector<v1::PartitionInfo> FromPartitions(const sched::Cluster& cluster, bool gpu_tres) {
  std::vector<v1::PartitionInfo> out;
  for (size_t i = 0; i < cluster.partitions.size(); ++i) {
    out.push_back(FromPartition(cluster, static_cast<int32_t>(i), gpu_tres));
  }
  return out;
}

std::vector<v1::JobInfo> JobsOf(const ControllerCore& core, const JobInfoOptions& options) {
  return FromEntries(core.jobs(), core.cluster(), options);
}

v1::NodeInfo NodeOf(const ControllerCore& core, int32_t node, const NodeUsage& usage,
                    bool gpu_tres) {
  NodeStatus status;
  status.alive = core.NodeUp(node);
  status.reason_uid = core.node_admin(node).reason_uid;
  status.reason_user = core.node_admin(node).reason_user;
  status.reason_time = core.node_admin(node).reason_time;
  return FromNode(core.cluster(), node, usage, status, gpu_tres);
}

NodeInfos RefreshNodes(const ControllerCore& core, const std::vector<NodeUsage>& usage,
                       const NodeInfos* before, const std::vector<NodeUsage>& before_usage,
                       bool gpu_tres,
                       const std::function<void(int32_t node, v1::NodeInfo*)>& finish) {
  const bool all =
      before == nullptr || before->size() != usage.size() || before_usage.size() != usage.size();
  NodeInfos out;
  out.reserve(usage.size());
  for (size_t i = 0; i < usage.size(); ++i) {
    if (!all && usage[i] == before_usage[i]) {
      out.push_back((*before)[i]);
      continue;
    }
    v1::NodeInfo n = NodeOf(core, static_cast<int32_t>(i), usage[i], gpu_tres);
    if (finish) finish(static_cast<int32_t>(i), &n);
    out.push_back(std::make_shared<const v1::NodeInfo>(std::move(n)));
  }
  return out;
}

std::vector<v1::NodeInfo> NodesOf(const ControllerCore& core, bool gpu_tres) {
  const std::vector<NodeUsage> usage = NodeUsageOf(core.LiveEntries(), core.cluster().nodes.size());
  std::vector<v1::NodeInfo> out;
  out.reserve(usage.size());
  for (size_t i = 0; i < usage.size(); ++i) {
    out.push_back(NodeOf(core, static_cast<int32_t>(i), usage[i], gpu_tres));
  }
  return out;
}

bool TracksGpuTres(const conf::ClusterConfig& config) {
  return std::find(config.accounting_storage_tres.begin(), config.accounting_storage_tres.end(),
                   "gres/gpu") != config.accounting_storage_tres.end();
}

std::vector<v1::PartitionInfo> PartitionsOf(const ControllerCore& core) {
  std::vector<v1::PartitionInfo> out =
      FromPartitions(core.cluster(), TracksGpuTres(core.site().cluster));
  auto all_or = [](const std::vector<std::string>& list) {
    return list.empty() ? std::string("ALL") : core::Join(list, ",");
  };
  for (v1::PartitionInfo& info : out) {
    const conf::PartitionConfig* p = core.site().cluster.FindPartition(info.name());
    if (p == nullptr) continue;
    info.set_allow_groups(all_or(p->allow_groups));
    info.set_allow_accounts(all_or(p->allow_accounts));
    // A Deny list is not read beside an Allow list: it is not shown either.
    if (p->allow_accounts.empty()) info.set_deny_accounts(core::Join(p->deny_accounts, ","));
    info.set_allow_qos(all_or(p->allow_qos));
    if (p->allow_qos.empty()) info.set_deny_qos(core::Join(p->deny_qos, ","));
    info.set_qos(p->qos);
  }
  return out;
}

v1::StepInfo StepInfoOf(const JobEntry& e, const StepRecord& step, const sched::Cluster& cluster,
                        const std::string& partition) {
  v1::StepInfo info;
  info.set_job_id(e.job.id);
  info.set_step_id(step.id);
  if (!step.resv_ports.empty()) info.set_resv_ports(core::FormatCpuList(step.resv_ports));
  info.set_name(step.name);
  info.set_state(std::string(model::JobStateName(step.state)));
  info.set_user(e.job.user);
  info.set_uid(e.job.uid);
  info.set_partition(partition);
  const sched::Allocation& alloc = e.placement();
  std::vector<std::string> names;
  int32_t cpus = 0;
  for (size_t i = 0; i < step.nodes.size(); ++i) {
    const int32_t n = step.nodes[i];
    if (static_cast<size_t>(n) < alloc.size()) names.push_back(cluster.nodes[alloc[n].node].name);
    info.add_tasks_per_node(step.tasks_per_node[i]);
    cpus += step.tasks_per_node[i] * step.cpus_per_task;
  }
  for (const std::string& n : names) info.add_nodes(n);
  info.set_node_list(core::CompressHostlist(names));
  info.set_num_tasks(model::TaskTotal(step.tasks_per_node));
  info.set_num_cpus(cpus);
  info.set_start_time(step.start_time);
  info.set_end_time(step.end_time);
  info.set_exit_code(step.status.wait_status());
  info.set_distribution(model::DistributionName(step.distribution));
  info.set_time_limit_s(e.job.time_limit_s);
  info.set_cpu_bind(step.cpu_bind);
  info.set_gpu_bind(step.gpu_bind);
  info.set_gpus_per_task(step.gpus_per_task);
  info.set_cpus_per_task(step.cpus_per_task);
  info.set_launch_failed_node(step.launch_failed_node);
  info.set_launch_error(step.launch_error);
  info.set_command(step.command);
  return info;
}

std::string PartitionOf(const JobEntry& e, const sched::Cluster& cluster) {
  if (e.partition >= 0 && static_cast<size_t>(e.partition) < cluster.partitions.size()) {
    return cluster.partitions[e.partition].name;
  }
  return "";
}

v1::ReservationInfo ReservationToInfo(const ReservationRecord& r, Time now) {
  v1::ReservationInfo info;
  info.set_name(r.name);
  info.set_start_time(r.start);
  info.set_end_time(r.end);
  info.set_nodes(core::CompressHostlist(r.nodes));
  info.set_node_count(static_cast<int32_t>(r.nodes.size()));
  info.set_partition(r.partition);
  info.set_features(r.features);
  info.set_users(AccessListString(r.users, r.users_deny));
  info.set_accounts(AccessListString(r.accounts, r.accounts_deny));
  info.set_flags(ReservationFlagsString(r.flags, r.purge_after_s));
  info.set_purge_after_s(r.purge_after_s);
  info.set_state(r.start <= now && now < r.end ? "ACTIVE" : "INACTIVE");
  return info;
}

StatusOr<ReservationRecord> ReservationFromInfo(const v1::ReservationInfo& info) {
  ReservationRecord r;
  r.name = info.name();
  r.start = info.start_time();
  r.end = info.end_time();
  if (!info.nodes().empty()) {
    StatusOr<std::vector<std::string>> names = core::ExpandHostlist(info.nodes());
    if (!names.ok()) return names.status();
    r.nodes = *std::move(names);
  }
  r.partition = info.partition();
  r.features = info.features();
  RETURN_IF_ERROR(ReadAccessList("Users", info.users(), &r.users, &r.users_deny));
  RETURN_IF_ERROR(ReadAccessList("Accounts", info.accounts(), &r.accounts, &r.accounts_deny));
  r.flags = ReservationFlagsFrom(info.flags());
  r.purge_after_s = info.purge_after_s() > 0 ? info.purge_after_s() : 300;
  return r;
}

}  // namespace loom::ctld
