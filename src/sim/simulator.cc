#include "sim/simulator.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <queue>
#include <unordered_map>

#include "core/hostlist.h"
#include "core/strings.h"
#include "model/constraint.h"
#include "sched/cadence.h"
#include "sched/deps/gate.h"
#include "sched/select/devices.h"

namespace loom::sim {
namespace {

using sched::kNever;

struct Termination {
  Time time;
  uint64_t start_seq;
  int32_t job;
  bool operator>(const Termination& o) const {
    return time != o.time ? time > o.time : start_seq > o.start_seq;
  }
};

class Engine {
 public:
  Engine(const sched::Cluster& cluster, std::span<const SimJob> jobs, sched::Policy& policy,
         const SimOptions& opts)
      : cluster_(cluster), jobs_(jobs), policy_(policy), opts_(opts), cadence_(policy),
        jobs_view_(*this) {
    result_.policy = std::string(policy.name());
    result_.jobs.resize(jobs_.size());
    for (size_t i = 0; i < jobs_.size(); ++i) {
      JobRecord& r = result_.jobs[i];
      r.id = jobs_[i].id;
      r.submit = jobs_[i].submit;
      r.run = jobs_[i].run;
      r.estimate = jobs_[i].estimate;
    }
    for (const model::Node& n : cluster.nodes) {
      result_.total_cpus += n.capacity.cpus;
      result_.total_gpus += n.capacity.gpus;
    }
    node_used_.assign(cluster.nodes.size(), sched::Resources{});
    // Advance reservations (maintenance windows): a pass when each begins and ends.
    for (const sched::AdvanceReservation& r : cluster.reservations) {
      resv_bounds_.push_back(r.start);
      resv_bounds_.push_back(r.end);
    }
    std::sort(resv_bounds_.begin(), resv_bounds_.end());
    resv_bounds_.erase(std::unique(resv_bounds_.begin(), resv_bounds_.end()), resv_bounds_.end());
    running_pos_.assign(jobs_.size(), -1);
    submitted_.assign(jobs_.size(), 0);
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (!jobs_[i].gated()) continue;
      gated_ = true;
      break;
    }
    if (gated_) {
      for (size_t i = 0; i < jobs_.size(); ++i) {
        index_of_.emplace(jobs_[i].id, static_cast<int32_t>(i));
        if (jobs_[i].array_id != 0) array_tasks_[jobs_[i].array_id].push_back(static_cast<int32_t>(i));
      }
    }
    InitDevices();
    result_.samples.reserve(2 * jobs_.size() + 1);
    if (opts.priority) {
      fs_.emplace(*opts.priority, cluster, jobs_);
      billing_.assign(jobs_.size(), 0);
    }
  }

  StatusOr<SimResult> Run() {
    size_t next = 0;
    Time last = jobs_.empty() ? 0 : jobs_.front().submit;
    int64_t events = 0;
    while (next < jobs_.size() || !terms_.empty() || !pending_.empty()) {
      Time t = kNever;
      if (next < jobs_.size()) t = std::min(t, jobs_[next].submit);
      if (!terms_.empty()) t = std::min(t, terms_.top().time);
      // Timed passes fall on the policy's grid while jobs wait (sched/cadence.h).
      const bool waiting = !pending_.empty();
      t = std::min({t, cadence_.NextTick(last, waiting), wakeup_,
                    deferred_ ? cadence_.allowed_at() : gate_wake_});
      // Priorities are recalculated while jobs run or are still to come.
      if (fs_ && (next < jobs_.size() || !terms_.empty())) t = std::min(t, fs_->next_calc());
      while (resv_next_ < resv_bounds_.size() && resv_bounds_[resv_next_] <= last) ++resv_next_;
      const Time resv_wake =
          resv_next_ < resv_bounds_.size() && waiting ? resv_bounds_[resv_next_] : kNever;
      t = std::min(t, resv_wake);
      if (t >= kNever) {
        return absl::FailedPreconditionError(core::StrCat(
            pending_.size(), " jobs can never start under policy ", policy_.name(),
            " (first: job ", jobs_[pending_job_.front()].id, ")"));
      }
      now_ = t;
      while (next < jobs_.size() && jobs_[next].submit == t) {
        Submit(static_cast<int32_t>(next++));
        RETURN_IF_ERROR(EventPass(sched::PassTrigger::kSubmit));
      }
      while (!terms_.empty() && terms_.top().time == t) {
        Terminate(terms_.top().job);
        terms_.pop();
        RETURN_IF_ERROR(EventPass(sched::PassTrigger::kTermination));
      }
      // An event pass that waited for sched_min_interval, or a wait that time alone ended
      // (a begin time, a release, an `after:` delay): the job is as good as submitted.
      if (deferred_) {
        if (cadence_.EventPassAllowed(t)) RETURN_IF_ERROR(EventPass(*deferred_));
      } else if (gate_wake_ <= t) {
        RETURN_IF_ERROR(EventPass(sched::PassTrigger::kSubmit));
      }
      // A reservation began or ended: what it held is free to others now.
      if (t == resv_wake) RETURN_IF_ERROR(EventPass(sched::PassTrigger::kTermination));
      if (fs_ && t == fs_->next_calc()) RETURN_IF_ERROR(Recalculate(/*period=*/true));
      const std::optional<sched::PassTrigger> timed = cadence_.TimedPass(last, t, waiting);
      if (timed == sched::PassTrigger::kPeriodic || t == wakeup_) {
        RETURN_IF_ERROR(Pass(sched::PassTrigger::kPeriodic));
      } else if (timed) {
        RETURN_IF_ERROR(Pass(*timed));
      }
      // An idle periodic policy with nothing left to wait for would tick forever.
      if (timed && next == jobs_.size() && terms_.empty() && wakeup_ >= kNever &&
          gate_wake_ >= kNever && !deferred_ && !started_in_pass_ && !pending_.empty() &&
          resv_next_ + 1 >= resv_bounds_.size()) {
        return absl::FailedPreconditionError(core::StrCat(
            pending_.size(), " jobs can never start under policy ", policy_.name(),
            " (first: job ", jobs_[pending_job_.front()].id, ")"));
      }
      last = t;
      result_.samples.push_back(Sample{t, busy_.cpus, busy_.gpus,
                                       static_cast<int64_t>(pending_.size()), stranded_});
      if (fs_) fs_->MaybeSample(t, pending_job_);
      if (opts_.progress && (++events & 4095) == 0) {
        opts_.progress(static_cast<double>(finished_) / std::max<size_t>(1, jobs_.size()));
      }
    }
    if (opts_.progress) opts_.progress(1.0);
    if (fs_) result_.shares = fs_->history();
    return std::move(result_);
  }

 private:
  void Submit(int32_t j) {
    const SimJob& job = jobs_[j];
    sched::PendingJob p;
    p.id = job.id;
    p.submit = job.submit;
    p.priority = fs_ ? fs_->PriorityOf(j) : job.priority;
    p.partition = job.partition;
    p.constraint = job.constraint;
    p.shape = job.shape;
    p.estimate = job.estimate;
    pending_.push_back(std::move(p));
    pending_job_.push_back(j);
    submitted_[j] = 1;
  }

  // ------------------------------------------------------------------ what keeps jobs waiting

  // Judges every waiting job of a gated workload as the controller does (sched/deps), in
  // queue order, and marks the blocked ones for the pass.
  void JudgeWaits(sched::deps::Gate* gate) {
    for (int32_t j : running_job_) {
      if (jobs_[j].array_id != 0) gate->Running(jobs_[j].array_id);
    }
    release_wake_ = kNever;
    for (size_t i = 0; i < pending_.size(); ++i) {
      const SimJob& job = jobs_[pending_job_[i]];
      if (!job.gated()) continue;
      sched::deps::Candidate c;
      c.id = job.id;
      c.uid = job.uid;
      c.name = job.name;
      c.held = now_ < job.release_at;
      if (c.held) release_wake_ = std::min(release_wake_, job.release_at);
      c.dependency = &job.dependency;
      c.eligible_time = job.begin;
      c.array_id = job.array_id;
      c.array_max_running = job.array_max_running;
      pending_[i].blocked = gate->Judge(c);
    }
  }

  // The workload's jobs as dependencies see them: those submitted so far.
  class JobsView final : public sched::deps::JobsView {
   public:
    explicit JobsView(const Engine& e) : e_(e) {}
    void ForEachNamed(sched::JobId id,
                      const std::function<void(const sched::deps::JobView&)>& fn) const override {
      if (auto a = e_.array_tasks_.find(id); a != e_.array_tasks_.end()) {
        for (int32_t j : a->second) {
          if (e_.submitted_[j]) fn(e_.ViewOf(j));
        }
      } else if (auto it = e_.index_of_.find(id); it != e_.index_of_.end() && e_.submitted_[it->second]) {
        fn(e_.ViewOf(it->second));
      }
    }
    void ForEachLive(const std::function<void(const sched::deps::JobView&)>& fn) const override {
      for (int32_t j : e_.pending_job_) fn(e_.ViewOf(j));
      for (int32_t j : e_.running_job_) fn(e_.ViewOf(j));
    }

   private:
    const Engine& e_;
  };

  sched::deps::JobView ViewOf(int32_t j) const {
    const SimJob& job = jobs_[j];
    const JobRecord& r = result_.jobs[j];
    sched::deps::JobView v;
    v.id = job.id;
    if (job.array_id != 0) v.array_task = job.array_task;
    v.uid = job.uid;
    v.name = job.name;
    v.started = r.start >= 0;
    v.start_time = r.start;
    v.exit_code = job.exit_status;
    v.state = r.end >= 0 ? (job.exit_status == 0 ? model::JobState::kCompleted
                                                  : model::JobState::kFailed)
              : v.started ? model::JobState::kRunning
                          : model::JobState::kPending;
    return v;
  }

  // Fair share: the values anew from the usage charged so far (and, for a period
  // recalculation, the decay and the running jobs' usage up to now), and the waiting jobs'
  // priorities from them. A period recalculation that reorders the queue brings a pass, as
  // in the controller.
  Status Recalculate(bool period) {
    running_charge_.clear();
    for (size_t k = 0; k < running_.size(); ++k) {
      const int32_t j = running_job_[k];
      running_charge_.push_back({j, billing_[j], running_[k].start});
    }
    fs_->Recalculate(now_, period, running_charge_);
    if (!fs_->multifactor()) return absl::OkStatus();
    bool changed = false;
    for (size_t i = 0; i < pending_.size(); ++i) {
      const int64_t priority = fs_->PriorityOf(pending_job_[i]);
      changed = changed || priority != pending_[i].priority;
      pending_[i].priority = priority;
    }
    if (period && changed) return EventPass(sched::PassTrigger::kSubmit);
    return absl::OkStatus();
  }

  void Terminate(int32_t j) {
    if (fs_) fs_->Charge(j, billing_[j], result_.jobs[j].start, now_);
    int32_t pos = running_pos_[j];
    for (const sched::NodeAlloc& a : running_[pos].alloc) {
      node_used_[a.node] -= a.amount;
      busy_ -= a.amount;
      CountDevices(a, -1);
    }
    result_.jobs[j].end = now_;
    ++finished_;
    int32_t last = static_cast<int32_t>(running_.size()) - 1;
    if (pos != last) {
      running_[pos] = std::move(running_[last]);
      running_job_[pos] = running_job_[last];
      running_pos_[running_job_[pos]] = pos;
    }
    running_.pop_back();
    running_job_.pop_back();
    running_pos_[j] = -1;
  }

  // A pass for an event, unless sched_min_interval defers it (then the strongest deferred
  // trigger runs when the gap has passed).
  Status EventPass(sched::PassTrigger trigger) {
    if (!cadence_.EventPassAllowed(now_)) {
      deferred_ = deferred_ ? sched::Stronger(*deferred_, trigger) : trigger;
      return absl::OkStatus();
    }
    deferred_.reset();
    cadence_.EventPassRan(now_);
    return Pass(trigger);
  }

  Status Pass(sched::PassTrigger trigger) {
    // A job that ended changed fair share: the pass goes by the priorities that follow.
    if (fs_ && fs_->stale()) RETURN_IF_ERROR(Recalculate(/*period=*/false));
    std::optional<sched::deps::Gate> gate;
    if (gated_) JudgeWaits(&gate.emplace(jobs_view_, now_));
    sched::PassInput in;
    in.cluster = &cluster_;
    in.running = running_;
    in.pending = pending_;
    in.now = now_;
    in.trigger = trigger;
    in.next_decision_seq = decision_seq_;
    policy_.Pass(in, &out_);
    ++result_.passes;
    decision_seq_ = out_.next_decision_seq;
    result_.totals.jobs_tested += out_.stats.jobs_tested;
    result_.totals.reservations += out_.stats.reservations;
    result_.totals.started += out_.stats.started;
    result_.totals.backfilled += out_.stats.backfilled;
    started_in_pass_ = !out_.starts.empty();
    if (gate) gate_wake_ = std::min(gate->wake(started_in_pass_), release_wake_);

    for (const auto& [idx, res] : out_.transient_reservations) {
      JobRecord& r = result_.jobs[pending_job_[idx]];
      if (res.start < r.promised_start) {
        r.promised_start = res.start;
        r.promised_as_head = out_.reasons[idx] == model::PendingReason::kResources;
      }
    }
    if (had_reservations_) {
      for (sched::PendingJob& p : pending_) p.reservation.reset();
    }
    had_reservations_ = !out_.reservations.empty();
    wakeup_ = kNever;
    for (auto& [idx, res] : out_.reservations) {
      JobRecord& r = result_.jobs[pending_job_[idx]];
      if (res.start < r.promised_start) {
        r.promised_start = res.start;
        r.promised_as_head = out_.reasons[idx] == model::PendingReason::kResources;
      }
      if (res.start > now_) wakeup_ = std::min(wakeup_, res.start);
      pending_[idx].reservation = std::move(res);
    }
    if (out_.starts.empty()) return absl::OkStatus();
    removed_.assign(pending_.size(), 0);
    for (const sched::JobStart& s : out_.starts) {
      RETURN_IF_ERROR(StartJob(s));
    }
    // Drop started jobs from the queue, keeping its order.
    size_t w = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      if (removed_[i]) continue;
      if (w != i) {
        pending_[w] = std::move(pending_[i]);
        pending_job_[w] = pending_job_[i];
      }
      ++w;
    }
    pending_.resize(w);
    pending_job_.resize(w);
    return absl::OkStatus();
  }

  // No job holds a reserved node inside the reservation's window, over its time limit.
  Status CheckReservations(const SimJob& job, const sched::Allocation& alloc) const {
    const Time end = sched::SaturatingAdd(now_, job.estimate);
    for (const sched::AdvanceReservation& r : cluster_.reservations) {
      if (end <= r.start || now_ >= r.end) continue;
      for (const sched::NodeAlloc& a : alloc) {
        if (std::find(r.nodes.begin(), r.nodes.end(), a.node) == r.nodes.end()) continue;
        return absl::InternalError(core::StrCat("policy ", policy_.name(), " started job ", job.id,
                                                " on node ", cluster_.nodes[a.node].name,
                                                " at time ", now_, " over reservation ", r.name,
                                                " [", r.start, ", ", r.end, ")"));
      }
    }
    return absl::OkStatus();
  }

  Status StartJob(const sched::JobStart& s) {
    const int32_t j = pending_job_[s.pending_index];
    const SimJob& job = jobs_[j];
    if (removed_[s.pending_index]) {
      return absl::InternalError(core::StrCat("job ", job.id, " started twice in one pass"));
    }
    if (now_ < job.submit) {
      return absl::InternalError(
          core::StrCat("job ", job.id, " started at ", now_, " before its submission"));
    }
    JobRecord& r = result_.jobs[j];
    RETURN_IF_ERROR(CheckReservations(job, s.alloc));
    for (const sched::NodeAlloc& a : s.alloc) {
      node_used_[a.node] += a.amount;
      busy_ += a.amount;
      if (!cluster_.nodes[a.node].capacity.Covers(node_used_[a.node]) &&
          !cluster_.nodes[a.node].capacity.Covers(UsedExceptEndingNow(a.node))) {
        return absl::InternalError(core::StrCat("policy ", policy_.name(), " over-allocated node ",
                                                cluster_.nodes[a.node].name, " at time ", now_,
                                                " starting job ", job.id));
      }
      RETURN_IF_ERROR(CheckDevices(job, a, &r));
      r.cpus += a.amount.cpus;
      r.gpus += a.amount.gpus;
      ++r.nodes;
    }
    for (const sched::NodeAlloc& a : s.alloc) CountDevices(a, +1);
    DescribePlacement(job, s.alloc, &r);
    if (opts_.record_nodes) {
      std::vector<std::string> names;
      for (const sched::NodeAlloc& a : s.alloc) names.push_back(cluster_.nodes[a.node].name);
      r.node_list = core::CompressHostlistSorted(std::move(names));
    }
    if (fs_) {
      billing_[j] = fs_->BillingPerSecond(r.cpus, r.gpus, r.nodes);
      r.account = fs_->TopAccountOf(j);
    }
    removed_[s.pending_index] = 1;
    r.start = now_;
    r.backfilled = s.backfilled;
    running_pos_[j] = static_cast<int32_t>(running_.size());
    running_.push_back(sched::RunningJob{job.id, s.alloc, now_,
                                         sched::SaturatingAdd(now_, job.estimate)});
    running_job_.push_back(j);
    terms_.push(Termination{now_ + r.run, start_seq_++, j});
    if (opts_.on_start) opts_.on_start(r, s.alloc);
    return absl::OkStatus();
  }

  // ------------------------------------------------------------------- devices and placement

  // Whether the planner tracks GPU (and CPU) ids on a node: its topology describes exactly
  // its GPUs (and CPUs).
  bool HasDevices(int32_t n) const {
    const model::NodeTopology* t = cluster_.nodes[n].topology.get();
    return t && t->num_gpus() == cluster_.nodes[n].capacity.gpus;
  }
  bool TracksCpus(int32_t n) const {
    return HasDevices(n) &&
           cluster_.nodes[n].topology->num_cpus() == cluster_.nodes[n].capacity.cpus;
  }

  void InitDevices() {
    const size_t n = cluster_.nodes.size();
    gpu_holders_.resize(n);
    cpu_holders_.resize(n);
    domain_used_.resize(n);
    domain_size_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const model::Node& node = cluster_.nodes[i];
      if (HasDevices(static_cast<int32_t>(i))) {
        const model::NodeTopology& t = *node.topology;
        gpu_holders_[i].assign(t.num_gpus(), 0);
        domain_size_[i].assign(t.num_domains(), 0);
        for (const model::Gpu& g : t.gpus) ++domain_size_[i][g.domain];
      } else if (node.capacity.gpus > 0) {
        domain_size_[i].assign(1, node.capacity.gpus);  // unknown inside: one domain
      }
      if (TracksCpus(static_cast<int32_t>(i))) cpu_holders_[i].assign(node.capacity.cpus, 0);
      domain_used_[i].assign(domain_size_[i].size(), 0);
      node_max_domain_.push_back(0);
      for (int32_t size : domain_size_[i]) {
        node_max_domain_[i] = std::max(node_max_domain_[i], size);
      }
    }
    // NVLink that spans the nodes of a block (NVL72) makes the block one domain.
    const model::ClusterTopology& topo = cluster_.topology;
    if (topo.kind == model::ClusterTopology::Kind::kBlock) {
      for (const model::Block& b : topo.blocks) {
        int32_t gpus = 0;
        bool spans = !b.nodes.empty();
        for (int32_t m : b.nodes) {
          const model::NodeTopology* t = cluster_.nodes[m].topology.get();
          spans = spans && t && t->nvlink_spans_nodes;
          gpus += cluster_.nodes[m].capacity.gpus;
        }
        if (!spans) continue;
        for (int32_t m : b.nodes) node_max_domain_[m] = std::max(node_max_domain_[m], gpus);
        max_leaf_nodes_ = std::max(max_leaf_nodes_, static_cast<int32_t>(b.nodes.size()));
      }
    } else if (topo.kind == model::ClusterTopology::Kind::kTree) {
      for (const model::Switch& sw : topo.switches) {
        max_leaf_nodes_ = std::max(max_leaf_nodes_, static_cast<int32_t>(sw.nodes.size()));
      }
    } else {
      max_leaf_nodes_ = static_cast<int32_t>(n);  // flat: one switch for all
    }
  }

  // Holders of the GPUs and CPUs `a` names that do not end now (see UsedExceptEndingNow).
  bool HeldByOthers(int32_t node, model::GpuMask gpus, const core::CpuSet& cpus) const {
    for (size_t k = 0; k < running_.size(); ++k) {
      const sched::RunningJob& r = running_[k];
      if (r.start + result_.jobs[running_job_[k]].run <= now_) continue;
      for (const sched::NodeAlloc& b : r.alloc) {
        if (b.node == node && ((b.gpu_ids & gpus) != 0 || b.cpu_ids.Intersects(cpus))) {
          return true;
        }
      }
    }
    return false;
  }

  Status CheckDevices(const SimJob& job, const sched::NodeAlloc& a, JobRecord* r) {
    if (!HasDevices(a.node)) return absl::OkStatus();
    const std::string& name = cluster_.nodes[a.node].name;
    if (model::GpuCount(a.gpu_ids) != a.amount.gpus) {
      return absl::InternalError(core::StrCat("job ", job.id, " started on ", name, " with ",
                                              model::GpuCount(a.gpu_ids), " GPU ids for ",
                                              a.amount.gpus, " GPUs"));
    }
    const bool cpus = TracksCpus(a.node);
    if (cpus && a.cpu_ids.count() != a.amount.cpus) {
      return absl::InternalError(core::StrCat("job ", job.id, " started on ", name, " with ",
                                              a.cpu_ids.count(), " CPU ids for ", a.amount.cpus,
                                              " CPUs"));
    }
    bool clash = false;
    for (model::GpuMask m = a.gpu_ids; m; m &= m - 1) {
      clash = clash || gpu_holders_[a.node][std::countr_zero(m)] > 0;
    }
    if (cpus) {
      for (int32_t c : a.cpu_ids.ToVector()) clash = clash || cpu_holders_[a.node][c] > 0;
    }
    if (clash && HeldByOthers(a.node, a.gpu_ids, a.cpu_ids)) {
      return absl::InternalError(core::StrCat("policy ", policy_.name(), " gave job ", job.id,
                                              " a GPU or CPU of ", name,
                                              " that another job holds, at time ", now_));
    }
    // CPUs near the GPUs, whenever enough were free there.
    if (cpus && a.gpu_ids != 0) {
      const model::NodeTopology& t = *cluster_.nodes[a.node].topology;
      int32_t free_near = 0;
      std::vector<char> near(t.num_numa(), 0);
      for (model::GpuMask m = a.gpu_ids; m; m &= m - 1) near[t.gpus[std::countr_zero(m)].numa] = 1;
      for (int32_t numa = 0; numa < t.num_numa(); ++numa) {
        if (!near[numa]) continue;
        for (int32_t c : t.numa_cpus[numa]) free_near += cpu_holders_[a.node][c] == 0;
      }
      bool local = true;
      for (int32_t c : a.cpu_ids.ToVector()) {
        int32_t numa = t.NumaOfCpu(c);
        local = local && numa >= 0 && near[numa];
      }
      if (free_near >= a.amount.cpus && r->numa_local != 0) r->numa_local = local ? 1 : 0;
    }
    return absl::OkStatus();
  }

  // Adds (+1) or removes (-1) `a`'s hold on its devices and NVLink domains.
  void CountDevices(const sched::NodeAlloc& a, int delta) {
    const int32_t n = a.node;
    if (!gpu_holders_[n].empty()) {
      const model::NodeTopology& t = *cluster_.nodes[n].topology;
      for (model::GpuMask m = a.gpu_ids; m; m &= m - 1) {
        int32_t g = std::countr_zero(m);
        gpu_holders_[n][g] += delta;
        AddToDomain(n, t.gpus[g].domain, delta);
      }
    } else if (a.amount.gpus > 0) {
      AddToDomain(n, 0, delta * a.amount.gpus);
    }
    if (!cpu_holders_[n].empty()) {
      for (int32_t c : a.cpu_ids.ToVector()) cpu_holders_[n][c] += delta;
    }
  }

  void AddToDomain(int32_t n, int32_t d, int32_t delta) {
    auto stranded = [&]() -> int64_t {
      int32_t used = std::clamp(domain_used_[n][d], 0, domain_size_[n][d]);
      return used > 0 && used < domain_size_[n][d] ? domain_size_[n][d] - used : 0;
    };
    stranded_ -= stranded();
    domain_used_[n][d] += delta;
    stranded_ += stranded();
  }

  // The largest NVLink domain among the nodes `job` may use (its partition, constraint and
  // GPU type), remembered per kind of job.
  int32_t LargestDomainFor(const SimJob& job) {
    std::string key = core::StrCat(job.partition, "\x1f", job.constraint, "\x1f",
                                   job.shape.gpu_type);
    auto [it, inserted] = largest_domain_.try_emplace(std::move(key), 0);
    if (!inserted) return it->second;
    auto expr = model::FeatureExpr::Parse(job.constraint);
    const auto& parts = cluster_.partitions;
    if (!expr.ok() || job.partition < 0 || job.partition >= static_cast<int32_t>(parts.size())) {
      return 0;
    }
    for (int32_t n : parts[job.partition].nodes) {
      const model::Node& node = cluster_.nodes[n];
      if (!expr->Matches(node.features)) continue;
      if (!job.shape.gpu_type.empty() && node.gpu_type != job.shape.gpu_type) continue;
      it->second = std::max(it->second, node_max_domain_[n]);
    }
    return it->second;
  }

  // Records how the job was placed, and what the communication model makes of it.
  void DescribePlacement(const SimJob& job, const sched::Allocation& alloc, JobRecord* r) {
    r->run = job.run;
    if (r->gpus > 0) {
      r->domains = sched::DomainsSpanned(cluster_, alloc);
      r->one_domain_possible = r->gpus <= LargestDomainFor(job);
    }
    r->leaves = sched::LeavesSpanned(cluster_, alloc);
    r->multi_node = job.shape.min_nodes > 1;
    r->one_leaf_possible = r->multi_node && job.shape.min_nodes <= max_leaf_nodes_;
    if (opts_.comm_fraction <= 0 || r->gpus < 2) return;
    const int32_t largest = std::max(1, LargestDomainFor(job));
    const int32_t best_domains = (r->gpus + largest - 1) / largest;
    double bandwidth_loss = 1.0;
    if (r->domains > best_domains) bandwidth_loss *= 2.0;
    if (r->multi_node && r->one_leaf_possible && r->leaves > 1) bandwidth_loss *= 1.5;
    r->slowdown = 1.0 + opts_.comm_fraction * (bandwidth_loss - 1.0);
    const double run = std::ceil(static_cast<double>(job.run) * r->slowdown);
    r->run = std::min<int64_t>(std::max<int64_t>(job.estimate, job.run), static_cast<int64_t>(run));
  }

  // What `node` holds for jobs that do not end at now. A job whose time is up at now is
  // free for the scheduler before its own termination is handled (SIM-CONVENTIONS.md,
  // rule 11), so its successor may start first.
  sched::Resources UsedExceptEndingNow(int32_t node) const {
    sched::Resources used;
    for (size_t k = 0; k < running_.size(); ++k) {
      const sched::RunningJob& r = running_[k];
      if (r.start + result_.jobs[running_job_[k]].run <= now_) continue;
      for (const sched::NodeAlloc& a : r.alloc) {
        if (a.node == node) used += a.amount;
      }
    }
    return used;
  }

  const sched::Cluster& cluster_;
  std::span<const SimJob> jobs_;  // sorted by submit time
  sched::Policy& policy_;
  const SimOptions& opts_;
  sched::Cadence cadence_;
  SimResult result_;
  // An event pass sched_min_interval deferred, with the trigger it will run with.
  std::optional<sched::PassTrigger> deferred_;
  // Jobs that something but resources may keep waiting (sched/deps), when any job may be.
  bool gated_ = false;
  std::vector<char> submitted_;
  std::unordered_map<sched::JobId, int32_t> index_of_;
  std::unordered_map<sched::JobId, std::vector<int32_t>> array_tasks_;
  JobsView jobs_view_;
  Time gate_wake_ = kNever;     // when a wait that time alone ends is over
  Time release_wake_ = kNever;  // the earliest release of a held job

  Time now_ = 0;
  uint64_t start_seq_ = 0;
  uint64_t decision_seq_ = 0;
  Time wakeup_ = kNever;
  std::vector<Time> resv_bounds_;  // every reservation's start and end, in order
  size_t resv_next_ = 0;           // the first of them after the last event
  bool started_in_pass_ = false;
  bool had_reservations_ = false;
  size_t finished_ = 0;
  std::vector<sched::PendingJob> pending_;   // queue order
  std::vector<int32_t> pending_job_;         // job index of each pending entry
  std::vector<char> removed_;
  std::vector<sched::RunningJob> running_;
  std::vector<int32_t> running_job_;
  std::vector<int32_t> running_pos_;         // job index -> position in running_, or -1
  std::priority_queue<Termination, std::vector<Termination>, std::greater<>> terms_;
  std::vector<sched::Resources> node_used_;
  sched::Resources busy_;
  // Jobs holding each GPU / CPU, by node (empty where ids are not tracked).
  std::vector<std::vector<int16_t>> gpu_holders_;
  std::vector<std::vector<int16_t>> cpu_holders_;
  // GPUs in use and in all, per NVLink domain of each node.
  std::vector<std::vector<int32_t>> domain_used_;
  std::vector<std::vector<int32_t>> domain_size_;
  int64_t stranded_ = 0;
  std::vector<int32_t> node_max_domain_;  // largest NVLink domain a node's GPUs are in
  std::unordered_map<std::string, int32_t> largest_domain_;
  int32_t max_leaf_nodes_ = 0;
  sched::PassOutput out_;
  // Fair share, when the run has a priority setup: the clock, what a second of each job
  // costs, and the running jobs as the clock charges them.
  std::optional<FairShareClock> fs_;
  std::vector<double> billing_;
  std::vector<FairShareClock::Running> running_charge_;
};

}  // namespace

StatusOr<SimResult> Simulate(const sched::Cluster& cluster, std::span<const SimJob> jobs,
                             sched::Policy& policy, const SimOptions& opts) {
  auto by_submit = [](const SimJob& a, const SimJob& b) { return a.submit < b.submit; };
  std::vector<SimJob> sorted;
  if (!std::is_sorted(jobs.begin(), jobs.end(), by_submit)) {
    sorted.assign(jobs.begin(), jobs.end());
    std::stable_sort(sorted.begin(), sorted.end(), by_submit);
    jobs = sorted;
  }
  Engine engine(cluster, jobs, policy, opts);
  return engine.Run();
}

}  // namespace loom::sim
