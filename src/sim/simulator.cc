#include "sim/simulator.h"

#include <algorithm>
#include <queue>

#include "core/strings.h"

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
      : cluster_(cluster), jobs_(jobs), policy_(policy), opts_(opts) {
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
    running_pos_.assign(jobs_.size(), -1);
    result_.samples.reserve(2 * jobs_.size() + 1);
  }

  StatusOr<SimResult> Run() {
    const int64_t interval = policy_.periodic_interval();
    size_t next = 0;
    Time last = jobs_.empty() ? 0 : jobs_.front().submit;
    int64_t events = 0;
    while (next < jobs_.size() || !terms_.empty() || !pending_.empty()) {
      Time t = kNever;
      if (next < jobs_.size()) t = std::min(t, jobs_[next].submit);
      if (!terms_.empty()) t = std::min(t, terms_.top().time);
      Time tick = kNever;
      if (interval > 0 && !pending_.empty()) tick = (last / interval + 1) * interval;
      t = std::min({t, tick, wakeup_});
      if (t >= kNever) {
        return absl::FailedPreconditionError(core::StrCat(
            pending_.size(), " jobs can never start under policy ", policy_.name(),
            " (first: job ", jobs_[pending_job_.front()].id, ")"));
      }
      now_ = t;
      while (next < jobs_.size() && jobs_[next].submit == t) {
        Submit(static_cast<int32_t>(next++));
        RETURN_IF_ERROR(Pass(sched::PassTrigger::kSubmit));
      }
      while (!terms_.empty() && terms_.top().time == t) {
        Terminate(terms_.top().job);
        terms_.pop();
        RETURN_IF_ERROR(Pass(sched::PassTrigger::kTermination));
      }
      if (t == tick || t == wakeup_) {
        RETURN_IF_ERROR(Pass(sched::PassTrigger::kPeriodic));
      }
      // An idle periodic policy with nothing left to wait for would tick forever.
      if (t == tick && next == jobs_.size() && terms_.empty() && wakeup_ >= kNever &&
          !started_in_pass_ && !pending_.empty()) {
        return absl::FailedPreconditionError(core::StrCat(
            pending_.size(), " jobs can never start under policy ", policy_.name(),
            " (first: job ", jobs_[pending_job_.front()].id, ")"));
      }
      last = t;
      result_.samples.push_back(Sample{t, busy_.cpus, busy_.gpus,
                                       static_cast<int64_t>(pending_.size())});
      if (opts_.progress && (++events & 4095) == 0) {
        opts_.progress(static_cast<double>(finished_) / std::max<size_t>(1, jobs_.size()));
      }
    }
    if (opts_.progress) opts_.progress(1.0);
    return std::move(result_);
  }

 private:
  void Submit(int32_t j) {
    const SimJob& job = jobs_[j];
    sched::PendingJob p;
    p.id = job.id;
    p.submit = job.submit;
    p.priority = job.priority;
    p.partition = job.partition;
    p.constraint = job.constraint;
    p.shape = job.shape;
    p.estimate = job.estimate;
    pending_.push_back(std::move(p));
    pending_job_.push_back(j);
  }

  void Terminate(int32_t j) {
    int32_t pos = running_pos_[j];
    for (const sched::NodeAlloc& a : running_[pos].alloc) {
      node_used_[a.node] -= a.amount;
      busy_ -= a.amount;
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

  Status Pass(sched::PassTrigger trigger) {
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
    for (const sched::NodeAlloc& a : s.alloc) {
      node_used_[a.node] += a.amount;
      busy_ += a.amount;
      if (!cluster_.nodes[a.node].capacity.Covers(node_used_[a.node]) &&
          !cluster_.nodes[a.node].capacity.Covers(UsedExceptEndingNow(a.node))) {
        return absl::InternalError(core::StrCat("policy ", policy_.name(), " over-allocated node ",
                                                cluster_.nodes[a.node].name, " at time ", now_,
                                                " starting job ", job.id));
      }
      r.cpus += a.amount.cpus;
      r.gpus += a.amount.gpus;
      ++r.nodes;
    }
    removed_[s.pending_index] = 1;
    r.start = now_;
    r.backfilled = s.backfilled;
    running_pos_[j] = static_cast<int32_t>(running_.size());
    running_.push_back(sched::RunningJob{job.id, s.alloc, now_,
                                         sched::SaturatingAdd(now_, job.estimate)});
    running_job_.push_back(j);
    terms_.push(Termination{now_ + job.run, start_seq_++, j});
    return absl::OkStatus();
  }

  // What `node` holds for jobs that do not end at now. A job whose time is up at now is
  // free for the scheduler before its own termination is handled (SIM-CONVENTIONS.md,
  // rule 11), so its successor may start first.
  sched::Resources UsedExceptEndingNow(int32_t node) const {
    sched::Resources used;
    for (size_t k = 0; k < running_.size(); ++k) {
      const sched::RunningJob& r = running_[k];
      if (r.start + jobs_[running_job_[k]].run <= now_) continue;
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
  SimResult result_;

  Time now_ = 0;
  uint64_t start_seq_ = 0;
  uint64_t decision_seq_ = 0;
  Time wakeup_ = kNever;
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
  sched::PassOutput out_;
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
