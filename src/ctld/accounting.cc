#include "ctld/accounting.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <functional>
#include <set>
#include <unordered_set>
#include <utility>

#include "core/hostlist.h"
#include "core/log.h"
#include "core/strings.h"
#include "rpc/convert.h"
#include "rpc/frame_call.h"

namespace loom::ctld {
namespace {

void SetUsage(const ResourceUsage& u, v1::AcctStep* s) {
  if (!u.known) return;
  s->set_usage_known(true);
  s->set_user_cpu_usec(u.user_cpu_usec);
  s->set_system_cpu_usec(u.system_cpu_usec);
  s->set_max_rss_bytes(u.max_rss_bytes);
  s->set_max_rss_node(u.max_rss_node);
}

// A job's batch step as Slurm accounts it: it ends as the job does, except that a job that
// was cancelled, timed out or preempted had its script killed by SIGTERM.
v1::AcctStep BatchStepOf(const v1::JobInfo& info, const model::Job& j) {
  v1::AcctStep s;
  s.set_id("batch");
  s.set_name("batch");
  s.set_start_time(j.start_time);
  s.set_end_time(model::IsFinal(j.state) ? j.end_time : 0);
  s.set_node_list(info.batch_host().empty() ? info.node_list() : info.batch_host());
  s.set_num_nodes(1);
  s.set_num_tasks(1);
  s.set_num_cpus(info.allocation_size() > 0 ? info.allocation(0).cpus() : info.num_cpus());
  switch (j.state) {
    case model::JobState::kRunning:
    case model::JobState::kSuspended:
      s.set_state("RUNNING");
      break;
    case model::JobState::kCompleted:
    case model::JobState::kFailed:
    case model::JobState::kOutOfMemory:
      s.set_state(std::string(model::JobStateName(j.state)));
      s.set_exit_code(j.exit_code);
      break;
    default:
      s.set_state("CANCELLED");
      s.set_exit_code(SIGTERM);
      break;
  }
  if (info.allocation_size() > 0) {
    const v1::NodeAllocation& a = info.allocation(0);
    s.set_tres_alloc(core::StrCat("cpu=", a.cpus(), ",mem=", a.mem_mb(), "M,node=1"));
  }
  return s;
}

// The bits of a record that change on every scheduling pass without meaning anything to
// the accounting, cleared before the record is compared with the last one queued.
uint64_t Digest(v1::AcctJob copy) {
  copy.mutable_job()->set_priority(0);
  copy.mutable_job()->set_last_sched_eval(0);
  copy.mutable_job()->set_reason("");
  std::string bytes;
  google::protobuf::io::StringOutputStream out(&bytes);
  google::protobuf::io::CodedOutputStream coded(&out);
  coded.SetSerializationDeterministic(true);
  copy.SerializeToCodedStream(&coded);
  coded.Trim();
  return std::hash<std::string>{}(bytes);
}

}  // namespace

std::string AcctKey(const AcctRecord& r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(r.seq));
  return core::StrCat(r.event ? kAcctEventKeyPrefix : kAcctKeyPrefix, buf);
}

std::optional<AcctRecord> AcctRecordOf(std::string_view key) {
  AcctRecord r;
  if (key.starts_with(kAcctKeyPrefix)) {
    key.remove_prefix(kAcctKeyPrefix.size());
  } else if (key.starts_with(kAcctEventKeyPrefix)) {
    key.remove_prefix(kAcctEventKeyPrefix.size());
    r.event = true;
  } else {
    return std::nullopt;
  }
  auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), r.seq);
  if (ec != std::errc() || p != key.data() + key.size()) return std::nullopt;
  return r;
}

namespace {

// What the accounting keeps of a node's state: "DOWN", "DRAIN", "DOWN+DRAIN", or "" when
// it is up.
std::string EventStateOf(const model::Node& n) {
  const bool down = n.state == model::NodeState::kDown;
  if (down && n.drain) return "DOWN+DRAIN";
  if (down) return "DOWN";
  return n.drain ? "DRAIN" : "";
}

std::string NodeTres(const model::Node& n) {
  std::string out = core::StrCat("cpu=", n.capacity.cpus, ",mem=", n.capacity.mem_mb,
                                 "M,node=1,billing=", n.capacity.cpus);
  if (n.capacity.gpus > 0) out += core::StrCat(",gres/gpu=", n.capacity.gpus);
  return out;
}

}  // namespace

v1::AcctJob AcctJobOf(const JobEntry& e, const ControllerCore& core, const JobInfoOptions& o) {
  v1::AcctJob a;
  v1::JobInfo& info = *a.mutable_job();
  info = FromEntry(e, core.cluster(), o);
  a.set_cluster(core.site().cluster.cluster_name);
  a.set_qos(info.spec().qos());
  a.set_wckey(info.spec().wckey());
  const model::Job& j = e.job;
  // What a query shows for a job being killed (COMPLETING) is, to the accounting, the state
  // it ended in.
  info.set_state(std::string(model::JobStateName(j.state)));
  // A job that has not ended has no end yet (queries show when its time limit runs out).
  if (!model::IsFinal(j.state)) info.set_end_time(0);
  // A job ended by scancel, its time limit or preemption did not exit by itself: its own
  // exit code stays 0:0 (its batch step shows the signal).
  if (j.state == model::JobState::kCancelled || j.state == model::JobState::kTimeout ||
      j.state == model::JobState::kPreempted) {
    info.set_exit_code(0);
    info.set_exit_signal(0);
  }
  if (j.state == model::JobState::kCancelled && e.history().cancelled_by) {
    a.set_cancelled_by(*e.history().cancelled_by);
  }
  int32_t derived = 0;
  if (j.start_time > 0 && !info.spec().has_srun()) {
    v1::AcctStep& batch = *a.add_steps();
    batch = BatchStepOf(info, j);
    SetUsage(e.history().usage, &batch);
  }
  if (info.spec().has_srun() && j.start_time > 0) {
    v1::AcctStep& s = *a.add_steps();
    s.set_id("0");
    s.set_name(info.name());
    s.set_start_time(j.start_time);
    s.set_end_time(info.end_time());
    s.set_node_list(info.node_list());
    s.set_num_nodes(info.num_nodes());
    s.set_num_tasks(info.num_tasks());
    s.set_num_cpus(info.num_cpus());
    s.set_tres_alloc(info.tres_alloc());
    const bool ended = model::IsFinal(j.state);
    s.set_state(!ended                                 ? "RUNNING"
                : j.state == model::JobState::kTimeout ? "CANCELLED"
                                                       : std::string(model::JobStateName(j.state)));
    s.set_exit_code(j.exit_code);
    SetUsage(e.history().usage, &s);
    derived = std::max(derived, j.exit_code);
  }
  if (const JobSteps* steps = core.StepsOf(e.job.id)) {
    const std::string partition = PartitionOf(e, core.cluster());
    for (const auto& [id, step] : steps->steps) {
      const v1::StepInfo si = StepInfoOf(e, step, core.cluster(), partition);
      v1::AcctStep& s = *a.add_steps();
      s.set_id(core::StrCat(id));
      s.set_name(step.name);
      s.set_state(si.state());
      s.set_exit_code(si.exit_code());
      s.set_start_time(si.start_time());
      s.set_end_time(si.end_time());
      s.set_node_list(si.node_list());
      s.set_num_nodes(si.nodes_size());
      s.set_num_tasks(si.num_tasks());
      s.set_num_cpus(si.num_cpus());
      SetUsage(step.usage, &s);
      derived = std::max(derived, si.exit_code());
    }
  }
  a.set_derived_exit_code(derived);
  return a;
}

std::vector<AcctRecord> AcctOutbox::AddTo(const Effects& fx, const ControllerCore& core,
                                          const JobInfoOptions& o, Time now, store::Batch* batch) {
  std::vector<AcctRecord> out;
  std::set<JobId> ids(fx.changed.begin(), fx.changed.end());
  ids.insert(fx.steps_changed.begin(), fx.steps_changed.end());
  for (JobId id : ids) {
    const JobEntry* e = core.Find(id);
    if (e == nullptr) continue;
    const v1::AcctJob job = AcctJobOf(*e, core, o);
    const uint64_t digest = Digest(job);
    auto last = sent_.find(id);
    if (last != sent_.end() && last->second == digest) continue;
    AcctRecord r{next_seq_++, job.SerializeAsString(), false};
    batch->Add(store::PutValue{AcctKey(r), r.bytes});
    in_flight_[r.seq] = {id, digest};
    out.push_back(std::move(r));
  }
  for (JobId id : fx.deleted) sent_.erase(id);
  const sched::Cluster& cluster = core.cluster();
  if (started_ == 0) started_ = now;
  // Until SlurmdTimeout has passed, a node that has not registered since this controller
  // started is not known to be down: it is left out (its last event stays as it was).
  const bool waiting = now - started_ <= core.site().cluster.slurmd_timeout_s;
  if (node_generation_ == cluster.generation && !(waiting_for_nodes_ && !waiting)) return out;
  node_generation_ = cluster.generation;
  waiting_for_nodes_ = false;
  for (size_t n = 0; n < cluster.nodes.size(); ++n) {
    const model::Node& node = cluster.nodes[n];
    const NodeAdmin& admin = core.node_admin(static_cast<int32_t>(n));
    if (waiting && !core.NodeSeen(static_cast<int32_t>(n)) && !admin.down && !node.drain) {
      waiting_for_nodes_ = true;
      continue;
    }
    const std::string state = EventStateOf(node);
    const std::string view = core::StrCat(state, "|", state.empty() ? "" : node.reason);
    auto last = node_sent_.find(node.name);
    if (last != node_sent_.end() && last->second == view) continue;
    v1::AcctEvent e;
    e.set_cluster(core.site().cluster.cluster_name);
    e.set_node(node.name);
    e.set_state(state);
    e.set_time_start(!state.empty() && admin.reason_time > 0 ? admin.reason_time : now);
    if (!state.empty()) {
      e.set_reason(node.reason);
      e.set_reason_uid(admin.reason_uid);
    }
    e.set_tres(NodeTres(node));
    AcctRecord r{next_seq_++, e.SerializeAsString(), true};
    batch->Add(store::PutValue{AcctKey(r), r.bytes});
    node_in_flight_[r.seq] = {node.name, view};
    out.push_back(std::move(r));
  }
  return out;
}

void AcctOutbox::Committed(const std::vector<AcctRecord>& records) {
  for (const AcctRecord& r : records) {
    auto it = in_flight_.find(r.seq);
    if (it == in_flight_.end()) continue;
    sent_[it->second.first] = it->second.second;
    in_flight_.erase(it);
  }
  for (const AcctRecord& r : records) {
    auto it = node_in_flight_.find(r.seq);
    if (it == node_in_flight_.end()) continue;
    node_sent_[it->second.first] = it->second.second;
    node_in_flight_.erase(it);
  }
  // Records of a refused batch never became durable: forget them, and look at the nodes
  // again with the next batch.
  const bool lost_events = !node_in_flight_.empty();
  in_flight_.clear();
  node_in_flight_.clear();
  if (lost_events) node_generation_.reset();
}

AcctAgent::AcctAgent(AcctAgentOptions options, std::vector<AcctRecord> queued,
                     std::function<void(std::vector<std::string>)> acked)
    : options_(std::move(options)), acked_(std::move(acked)) {
  {
    core::MutexLock lock(&mu_);
    for (AcctRecord& r : queued) queue_.push_back(std::move(r));
  }
  thread_ = std::thread([this] { Loop(); });
}

AcctAgent::~AcctAgent() { Stop(); }

void AcctAgent::Stop() {
  {
    core::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void AcctAgent::Enqueue(std::vector<AcctRecord> records) {
  if (records.empty()) return;
  core::MutexLock lock(&mu_);
  for (AcctRecord& r : records) queue_.push_back(std::move(r));
}

size_t AcctAgent::queued() const {
  core::MutexLock lock(&mu_);
  return queue_.size();
}

std::string ClusterTres(const conf::ClusterConfig& cluster) {
  int64_t cpus = 0, mem = 0, gpus = 0;
  for (const conf::NodeConfig& n : cluster.nodes) {
    cpus += n.cpus;
    mem += n.real_memory_mb;
    gpus += n.GpuCount();
  }
  std::string out =
      core::StrCat("cpu=", cpus, ",mem=", mem, "M,node=", cluster.nodes.size(), ",billing=", cpus);
  if (gpus > 0) out += core::StrCat(",gres/gpu=", gpus);
  return out;
}

std::shared_ptr<const model::AssociationTable> AssociationsOf(const v1::AcctShowReply& reply,
                                                              const std::string& cluster) {
  auto t = std::make_shared<model::AssociationTable>();
  for (const v1::AcctUser& u : reply.users()) t->default_account[u.name()] = u.default_account();
  auto minutes = [](int64_t m) { return m < 0 ? int64_t{-1} : m * 60; };
  for (const v1::AcctQos& q : reply.qos()) {
    t->qos.insert(q.name());
    model::QosPolicy& p = t->qos_policy[q.name()];
    p.priority = q.priority();
    p.usage_factor = q.usage_factor();
    p.limits.grp_tres = q.grp_tres();
    p.limits.grp_jobs = q.grp_jobs();
    p.limits.grp_submit_jobs = q.grp_submit_jobs();
    p.limits.max_tres_per_job = q.max_tres_per_job();
    p.limits.max_wall_s = minutes(q.max_wall_min());
    p.limits.max_tres_per_user = q.max_tres_per_user();
    p.limits.max_jobs = q.max_jobs_per_user();
    p.limits.max_submit_jobs = q.max_submit_jobs_per_user();
    p.limits.min_tres_per_job = q.min_tres_per_job();
    p.limits.grp_tres_mins = q.grp_tres_mins();
    for (const std::string& f : q.flags()) {
      if (core::EqualsIgnoreCase(f, "DenyOnLimit")) p.deny_on_limit = true;
    }
  }
  auto limits_of = [&](const v1::AcctAssoc& a) {
    model::Limits l;
    l.grp_tres = a.grp_tres();
    l.grp_tres_mins = a.grp_tres_mins();
    l.grp_jobs = a.grp_jobs();
    l.grp_submit_jobs = a.grp_submit_jobs();
    l.max_tres_per_job = a.max_tres_per_job();
    l.max_wall_s = minutes(a.max_wall_min());
    l.max_jobs = a.max_jobs();
    l.max_submit_jobs = a.max_submit_jobs();
    return l;
  };
  // Accounts in tree order: each after its parent, whatever order loomdbd lists them in.
  std::map<std::string, std::vector<model::AccountAssociation>> children;
  for (const v1::AcctAssoc& a : reply.assocs()) {
    if (a.cluster() != cluster) continue;
    if (!a.user().empty()) {
      model::UserAssociation u;
      u.account = a.account();
      u.user = a.user();
      u.partition = a.partition();
      u.qos.assign(a.qos().begin(), a.qos().end());
      u.default_qos = a.default_qos();
      u.shares = a.shares();
      u.limits = limits_of(a);
      u.priority = a.priority();
      t->associations.push_back(std::move(u));
      continue;
    }
    const std::string parent =
        a.account() == "root" ? "" : (a.parent().empty() ? "root" : a.parent());
    children[parent].push_back(
        model::AccountAssociation{a.account(), parent, a.shares(), limits_of(a), a.priority()});
  }
  // Depth first, siblings by name: the order sshare lists them in. Each parent's list is
  // taken once, so a cycle loomdbd let through cannot loop.
  std::function<void(const std::string&)> visit = [&](const std::string& parent) {
    auto it = children.find(parent);
    if (it == children.end()) return;
    std::vector<model::AccountAssociation> list = std::move(it->second);
    children.erase(it);
    std::sort(list.begin(), list.end(),
              [](const auto& x, const auto& y) { return x.name < y.name; });
    for (model::AccountAssociation& acc : list) {
      const std::string name = acc.name;
      t->accounts.push_back(std::move(acc));
      visit(name);
    }
  };
  visit("");
  return t;
}

void AcctAgent::Loop() {
  std::optional<rpc::FrameConnection> conn;
  int backoff_ms = 0;
  bool reported_down = false;
  std::optional<std::chrono::steady_clock::time_point> last_refresh;
  // One call on the agent's connection (made when there is none).
  auto call = [&](std::string_view method, const std::string& body) -> StatusOr<std::string> {
    if (!conn) {
      ASSIGN_OR_RETURN(
          rpc::FrameConnection c,
          rpc::FrameConnection::Connect(options_.host, options_.port, options_.timeout_ms));
      conn.emplace(std::move(c));
    }
    StatusOr<std::string> bytes =
        rpc::CallFrame(*conn, *options_.munge, method, body, options_.timeout_ms);
    if (!bytes.ok()) conn.reset();
    return bytes;
  };
  // The cluster registers itself first (its root associations are made then), so that the
  // first tree read holds them.
  bool registered = false;
  while (true) {
    if (!registered) {
      v1::AcctRecordRequest hello;
      hello.set_cluster(options_.cluster);
      hello.set_control_host(options_.control_host);
      hello.set_control_port(options_.control_port);
      hello.set_cluster_tres(options_.cluster_tres);
      StatusOr<std::string> bytes = call("AcctRecord", hello.SerializeAsString());
      v1::AcctRecordReply reply;
      registered = bytes.ok() && reply.ParseFromString(*bytes) && rpc::FromWire(reply.error()).ok();
      if (registered) last_refresh.reset();
    }
    if (options_.associations && (!last_refresh || options_.clock->Monotonic() - *last_refresh >=
                                                       options_.refresh_associations)) {
      last_refresh = options_.clock->Monotonic();
      v1::AcctShowReply tree;
      StatusOr<std::string> bytes = call("AcctShow", v1::AcctShowRequest().SerializeAsString());
      if (bytes.ok() && tree.ParseFromString(*bytes) && rpc::FromWire(tree.error()).ok()) {
        options_.associations(tree);
      }
    }
    v1::AcctRecordRequest req;
    std::vector<uint64_t> seqs;
    std::vector<std::string> keys;
    {
      core::MutexLock lock(&mu_);
      // While loomdbd does not answer, wait before trying again (or until stopped).
      if (backoff_ms > 0) {
        mu_.AwaitFor([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; },
                     std::chrono::milliseconds(backoff_ms));
      }
      // Until the cluster has registered, try again soon: submissions wait for the tree.
      mu_.AwaitFor([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); },
                   registered ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(200));
      if (stop_) return;
      for (const AcctRecord& r : queue_) {
        if (seqs.size() >= options_.max_records_per_request) break;
        if (r.event) {
          if (!req.add_events()->ParseFromString(r.bytes)) {
            req.mutable_events()->RemoveLast();  // unreadable: dropped below with its ack
          }
        } else if (!req.add_jobs()->ParseFromString(r.bytes)) {
          req.mutable_jobs()->RemoveLast();
        }
        seqs.push_back(r.seq);
        keys.push_back(AcctKey(r));
      }
    }
    if (seqs.empty()) continue;
    req.set_cluster(options_.cluster);
    req.set_control_host(options_.control_host);
    req.set_control_port(options_.control_port);
    req.set_cluster_tres(options_.cluster_tres);
    Status sent = [&]() -> Status {
      ASSIGN_OR_RETURN(std::string bytes, call("AcctRecord", req.SerializeAsString()));
      v1::AcctRecordReply reply;
      if (!reply.ParseFromString(bytes)) {
        return absl::DataLossError("loomdbd's answer cannot be read");
      }
      return rpc::FromWire(reply.error());
    }();
    if (!sent.ok()) {
      conn.reset();
      if (!reported_down) {
        core::LogError(
            "accounting: loomdbd at {}:{} did not take {} job records ({}); they stay "
            "queued in the controller's store and are sent when it answers",
            options_.host, options_.port, seqs.size(), sent.message());
        reported_down = true;
      }
      backoff_ms = std::clamp(backoff_ms * 2, 250, 5000);
      continue;
    }
    if (reported_down) {
      core::LogInfo("accounting: loomdbd at {}:{} takes job records again", options_.host,
                    options_.port);
    }
    reported_down = false;
    backoff_ms = 0;
    {
      core::MutexLock lock(&mu_);
      const std::unordered_set<uint64_t> done(seqs.begin(), seqs.end());
      while (!queue_.empty() && done.count(queue_.front().seq)) queue_.pop_front();
    }
    acked_(std::move(keys));
  }
}

}  // namespace loom::ctld
