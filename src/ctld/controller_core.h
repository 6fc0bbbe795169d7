// The controller's state and rules, without threads, clocks or I/O: the job table, node
// liveness, submissions (arrays, dependencies, holds, begin times), cancellation, job ends,
// time limits, node failures and the scheduling pass. loomctld's state-owner thread is its
// only caller; it persists what changed (`Effects::changed`) before answering and carries
// out the effects (launches, signals) afterwards. Deterministic: the same calls with the
// same times give the same state. Thread-compatible.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/time/time.h"
#include "conf/site_config.h"
#include "core/status.h"
#include "ctld/limits_plan.h"
#include "ctld/reservations.h"
#include "model/association.h"
#include "model/job.h"
#include "model/job_request.h"
#include "model/step.h"
#include "sched/backfill/policy.h"
#include "sched/cadence.h"
#include "sched/priority/fairshare.h"
#include "sched/priority/priority.h"
#include "sched/priority/share_tree.h"
#include "sched/priority/usage.h"
#include "sched/types.h"

namespace loom::ctld {

using model::JobId;
using sched::Time;

// How far the tasks of a job srun submitted have come: the nodes that reported them all
// ended (by name), and their statuses added up by srun's rule.
struct StepProgress {
  std::set<std::string, std::less<>> nodes_done;
  model::StepStatus status;
  bool out_of_memory = false;  // some node said its tasks ran out of memory
};

// What a job's batch script, or a step's tasks, used: added up over the nodes that reported
// (CPU time), the largest resident set and where it was. For the accounting (sacct's
// TotalCPU, MaxRSS, MaxRSSNode); not kept across a controller restart.
struct ResourceUsage {
  bool known = false;
  int64_t user_cpu_usec = 0;
  int64_t system_cpu_usec = 0;
  int64_t max_rss_bytes = 0;
  std::string max_rss_node;
  void Add(std::string_view node, int64_t user_usec, int64_t system_usec, int64_t rss_bytes) {
    known = true;
    user_cpu_usec += user_usec;
    system_cpu_usec += system_usec;
    if (max_rss_node.empty() || rss_bytes > max_rss_bytes) {
      max_rss_bytes = rss_bytes;
      max_rss_node = std::string(node);
    }
  }
  friend bool operator==(const ResourceUsage&, const ResourceUsage&) = default;
};

// A step inside a running job's allocation (srun from a batch script or a salloc shell), as
// the controller keeps it. Stored with its job's other steps (persist.h, EncodeSteps).
struct StepRecord {
  uint32_t id = 0;  // 0, 1, 2, ... per job
  std::string name;
  std::string command;
  model::JobState state = model::JobState::kRunning;  // then COMPLETED, FAILED, CANCELLED
  std::vector<int32_t> nodes;           // indices into the job's allocation, step order
  std::vector<int32_t> tasks_per_node;  // per step node
  std::vector<int32_t> cpus_held;       // per step node: CPUs only it may use (--exclusive)
  int32_t cpus_per_task = 1;
  model::Distribution distribution = model::Distribution::kBlock;
  Time start_time = 0;
  Time end_time = 0;
  std::set<std::string, std::less<>> nodes_done;  // nodes that reported its tasks ended
  model::StepStatus status;
  bool cancelled = false;  // scancel JOB.STEP, or its job ended under it
  bool launch_failed = false;
  bool out_of_memory = false;  // some node's tasks met the OOM killer
  std::string launch_failed_node;  // the first node that could not start its tasks, and why
  std::string launch_error;
  std::string cpu_bind, gpu_bind, gpus_per_task;
  // MpiParams=ports: the ports reserved for it on each of its nodes (SLURM_STEP_RESV_PORTS).
  std::vector<int32_t> resv_ports;
  ResourceUsage usage;
};

// What a step asks for (v1::StepRequest's counts; 0: not given).
struct StepAsk {
  JobId job_id = 0;
  std::string name;
  std::string command;
  int32_t ntasks = 0;
  int32_t nodes = 0;
  int32_t ntasks_per_node = 0;
  int32_t cpus_per_task = 0;
  model::Distribution distribution = model::Distribution::kBlock;
  bool exclusive = false;
  std::string cpu_bind, gpu_bind, gpus_per_task;
};

// What a job keeps once it has started; most jobs of a long queue never did, and have none.
struct JobHistory {
  sched::Allocation alloc;  // while it holds nodes: where, with device ids
  // Once it ended: where it ran, for queries (Slurm keeps showing an ended job's nodes).
  sched::Allocation ran;
  // A job srun submitted runs tasks on every node and ends once every node has reported
  // (core_srun.cc); made when the first node reports, and replaced rather than changed, so
  // that copies of an entry may share it. Stored with the job's steps (persist.h), so that a
  // restarted controller counts the reports that came before it.
  std::shared_ptr<const StepProgress> step;
  Time kill_at = 0;      // when SIGKILL was due, 0: not yet known
  int32_t restarts = 0;  // times requeued (Slurm's Restarts)
  // Who cancelled it (sacct's "CANCELLED by UID"); kept for the accounting record made in
  // the same batch, not across a controller restart.
  std::optional<uint32_t> cancelled_by;
  // What its batch script (or, for a job srun submitted, its tasks) used.
  ResourceUsage usage;
  // With a Prolog or Epilog set, a job whose allocation ended keeps its nodes (COMPLETING)
  // until each has run its epilog: those still to report. Not stored: after a restart the
  // nodes are asked again.
  // Why a node could not launch it ("NODE: why"); empty when none failed. Not stored.
  std::string launch_error;
  // MpiParams=ports: those reserved for a job srun submitted (its step 0) on its nodes. Not
  // stored: a restarted controller may give them to another step.
  std::vector<int32_t> resv_ports;
  // PrologSlurmctld ran and succeeded for this run: its launch may go out.
  bool ctld_prolog_done = false;
  std::vector<int32_t> epilog_nodes;
  // Whether its nodes were asked for their epilogs and some have not answered yet.
  bool awaits_epilogs() const { return !epilog_nodes.empty(); }
  Time epilog_asked_at = 0;  // when the nodes were last asked (again each minute: Tick)
};

// A JobHistory held apart from its entry, made on first write; copying it copies the history.
class HistoryBox {
 public:
  HistoryBox() = default;
  HistoryBox(const HistoryBox& other)
      : p_(other.p_ ? std::make_unique<JobHistory>(*other.p_) : nullptr) {}
  HistoryBox& operator=(const HistoryBox& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<JobHistory>(*other.p_) : nullptr;
    return *this;
  }
  HistoryBox(HistoryBox&&) noexcept = default;
  HistoryBox& operator=(HistoryBox&&) noexcept = default;

  const JobHistory& get() const {
    static const JobHistory kNone;
    return p_ ? *p_ : kNone;
  }
  JobHistory& mutable_get() {
    if (p_ == nullptr) p_ = std::make_unique<JobHistory>();
    return *p_;
  }

 private:
  std::unique_ptr<JobHistory> p_;
};

// One job, or one task of a job array (each task is a job of its own once it runs).
struct JobEntry {
  // Fields in an order that leaves no padding, and what only started jobs need kept apart
  // (JobHistory): the table holds one entry per job, ended ones included, for MinJobAge.
  model::Job job;  // id (array tasks: the array's id + the task's place), state, times,
                   // the time limit in effect (the partition default if not asked)
  // The submission without its script and environment, which only the store keeps (they
  // are read back to launch the job). Shared by the tasks of an array.
  std::shared_ptr<const model::JobRequest> request;
  // When the scheduler last looked at it: its submission, then each pass that considered
  // it (Slurm's LastSchedEval). Stored with the job's other changes, not on every pass.
  Time last_sched_eval = 0;
  HistoryBox history_box;  // history(), mutable_history()
  // An array task (SetArrayTask): its place in the array plus one, its id being the array's
  // plus its place, and its index (below MaxArraySize, which is at most 4000001). 0 and 0
  // for a job that is no array task.
  uint32_t array_place = 0;
  int32_t array_task = 0;
  int32_t partition = -1;  // index into the cluster's partitions
  // Ended (cancelled, timed out) but its processes may still run: it keeps its nodes
  // until loomd reports them gone or KillWait passes twice (Slurm's COMPLETING flag). The
  // one place COMPLETING lives: no job's state is ever kCompleting, queries show it
  // (shown_state()).
  bool completing = false;

  // The array it is a task of (0: none) and its index there; `job.id` must be set.
  JobId array_job_id() const { return array_place == 0 ? 0 : job.id - (array_place - 1); }
  std::optional<int32_t> array_task_id() const {
    return array_place == 0 ? std::nullopt : std::optional<int32_t>(array_task);
  }
  // Makes it task `task` of the array `array_id`, which is at most its own id, by less than
  // 2^32 - 1 (array ids are consecutive).
  void SetArrayTask(JobId array_id, int32_t task) {
    array_place = static_cast<uint32_t>(job.id - array_id + 1);
    array_task = task;
  }

  const JobHistory& history() const { return history_box.get(); }
  JobHistory& mutable_history() { return history_box.mutable_get(); }
  // The nodes it holds (running, or completing), with device ids; empty otherwise.
  const sched::Allocation& alloc() const { return history().alloc; }
  sched::Allocation& mutable_alloc() { return mutable_history().alloc; }
  // It holds no nodes any more; with `keep`, they stay named as where it ran (placement()).
  void DropAlloc(bool keep) {
    if (alloc().empty()) return;
    JobHistory& h = mutable_history();
    if (keep) h.ran = std::move(h.alloc);
    h.alloc.clear();
  }
  // Where it runs, or where it ran once it ended.
  const sched::Allocation& placement() const { return alloc().empty() ? history().ran : alloc(); }

  // The state queries show: COMPLETING while its processes are being killed, as Slurm
  // prints a job with its COMPLETING flag; else its state.
  model::JobState shown_state() const {
    return completing ? model::JobState::kCompleting : job.state;
  }
  // Whether it holds its nodes: running, or ended with its processes still being killed.
  bool holds_nodes() const { return job.state == model::JobState::kRunning || completing; }
  // Not over yet: pending, running, or ended with its processes still being killed.
  bool live() const { return !model::IsFinal(job.state) || completing; }
  // The id the submission is stored under: the array's for its tasks, else the job's own.
  JobId submission_id() const { return array_place != 0 ? array_job_id() : job.id; }
};
static_assert(sizeof(JobEntry) <= 136, "one per job: keep it small");

// Every entry by its job id, which is unique and ascends with submission (every task of an
// array has its own), so that table order is submission order. Entries lie in B-tree nodes,
// several to an allocation: adding or purging an entry moves others, so a pointer into the
// table lasts only until the next Submit, Restore or Tick.
using JobTable = absl::btree_map<JobId, JobEntry>;

// The highest priority `scontrol update job Priority=` may set (Slurm's).
inline constexpr int64_t kMaxJobPriority = 4294967293LL;

// A job's priority under priority/basic, as submitted: the one it asked for (--priority),
// else earlier submissions first, --nice N putting it N places back (forward when negative).
int64_t DefaultPriority(const model::JobRequest& r, JobId id);

// What `scontrol update job` asks to change; unset fields stay as they are.
struct JobEdit {
  std::optional<int64_t> time_limit_s;
  std::optional<int64_t> priority;
  std::optional<std::string> name, comment, account, partition, features, qos;
  std::optional<std::string> nodelist, exclude;  // ReqNodeList, ExcNodeList (hostlists)
  std::optional<int32_t> nice;                   // Nice: a new --nice (below 0: admins only)
  std::optional<model::Dependency> dependency;  // empty: none
  std::optional<std::pair<int32_t, int32_t>> nodes;  // NumNodes=MIN[-MAX]
  std::optional<int32_t> ntasks;
  std::optional<int64_t> mem_per_node_mb, mem_per_cpu_mb;
  std::optional<bool> requeue;
  std::optional<int64_t> begin_time;  // StartTime=, Unix seconds
};

// The fields as scontrol sends them (Key=Value, keys in any case; StartTime as Unix seconds).
// Errors in Slurm's words: "Update of this parameter is not supported: Key=Value", "Invalid
// time limit specification", ...
StatusOr<JobEdit> ParseJobEdit(const std::vector<std::pair<std::string, std::string>>& fields);

// A new submission, for the store: kept once, whole, for all the jobs made from it.
struct Submission {
  JobId id = 0;  // JobEntry::submission_id() of its jobs
  std::shared_ptr<const model::JobRequest> request;  // as the jobs hold it
  std::string script;                                // what the jobs do not hold
  std::map<std::string, std::string> environment;
};

// What the caller must do after a call.
struct Launch {
  JobId job_id = 0;
  bool after_prolog = false;  // its PrologSlurmctld ended: counted when it first started
};
struct SignalJob {
  JobId job_id = 0;
  int32_t signal = 0;
  std::vector<int32_t> nodes;  // node indices
  std::optional<uint32_t> step;  // only this step's tasks; unset: the whole job's
};
struct Effects {
  std::vector<Launch> launches;
  std::vector<SignalJob> signals;
  // Jobs whose allocation ended, for each of their nodes to end what is left of them and run
  // the epilog (JobHistory::epilog_nodes).
  std::vector<JobId> terminations;
  std::vector<Submission> submitted;  // to store before the jobs that name them
  // Stored submissions whose request changed (scontrol update): to store again, with the
  // script and environment the store holds (empty here).
  std::vector<Submission> resubmitted;
  std::vector<JobId> created;  // entries new in this round; also in `changed`
  std::vector<JobId> changed;  // entries to persist, in change order
  // Entries whose listing changed without a change to persist (a pending job's reason), and
  // entries purged from the table: what queries see besides `changed`.
  std::vector<JobId> touched;
  std::vector<JobId> deleted;     // jobs purged from the table (after MinJobAge)
  std::vector<JobId> forgotten;   // submissions whose last job was purged
  std::vector<model::JobState> ended;  // the final state of each job that ended, once each
  std::vector<JobId> finished;         // and the job, in the same order (EpilogSlurmctld)
  std::vector<int32_t> nodes_changed;  // nodes whose administrative state changed (indices)
  std::vector<JobId> steps_changed;    // jobs whose steps changed (to store again)
  std::vector<std::string> reservations_changed;  // made, changed or deleted (by name)
  bool next_id_changed = false;
};

// The steps inside one job's allocation.
struct JobSteps {
  uint32_t next_id = 0;
  std::map<uint32_t, StepRecord> steps;
};

// What an administrator set on a node (scontrol update NodeName=): kept across restarts.
struct NodeAdmin {
  bool down = false;        // State=DOWN: no work until State=RESUME
  uint32_t reason_uid = 0;  // who gave the reason
  std::string reason_user;  // their user name
  Time reason_time = 0;     // when; 0: no reason set by an administrator
};

// A job's multifactor priority, factor by factor (sprio): each in [0, 1].
struct PriorityFactors {
  double age = 0, assoc = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0;
  std::vector<std::pair<std::string, double>> tres;  // PriorityWeightTRES, by TRES
  int64_t nice = 0;
  int64_t priority = 0;
};

// sbatch --test-only: when and where a job would start if submitted now.
struct WillRun {
  JobId job_id = 0;  // the id it spent
  Time start = 0;
  int32_t cpus = 0;
  std::string nodes;  // hostlist expression
  std::string partition;
};

// Who asks: the identity a MUNGE credential proved.
struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
};

struct CoreOptions {
  int64_t kill_wait_s = 30;        // KillWait
  int64_t slurmd_timeout_s = 300;  // SlurmdTimeout
  int64_t min_job_age_s = 300;     // MinJobAge: how long ended jobs stay listed
  uint32_t slurm_user_uid = 0;     // SlurmUser: may act on any job
  std::string slurm_user_name = "root";
  bool config_overrides = false;   // SlurmdParameters=config_overrides: trust slurm.conf
  bool requeue_by_default = true;  // JobRequeue
  // A Prolog or Epilog is set: nodes run them, and an ended allocation waits for the epilogs.
  bool node_scripts = false;
  bool nohold_on_prolog_fail = false;  // SchedulerParameters=nohold_on_prolog_fail
  int64_t max_array_size = 1001;
  int64_t resv_over_run_s = 0;  // ResvOverRun
  // The controller's time zone: which day it is for WEEKDAY and WEEKEND reservations.
  absl::TimeZone zone = absl::UTCTimeZone();
};

class ControllerCore {
 public:
  ControllerCore(const conf::SiteConfig& site, CoreOptions options, JobId first_job_id);

  // A new job (or array). Fails, changing nothing, for an unknown partition or a request
  // no node could ever run. The script and environment go to fx->submitted, not into the
  // table.
  StatusOr<JobId> Submit(model::JobRequest request, const Caller& who, Time now, Effects* fx);

  // sbatch --test-only: the earliest start of `request` among the running jobs (pending jobs
  // are not counted, as in Slurm), without submitting it. Spends a job id, as Slurm does.
  StatusOr<WillRun> TestOnly(const model::JobRequest& request, Time now, Effects* fx);

  // scancel: `task` selects one array task (nullopt: the whole job or array). `signal` 0
  // cancels (SIGTERM now, SIGKILL after KillWait); another signal is only delivered.
  Status Signal(JobId id, std::optional<int64_t> task, int32_t signal, const Caller& who, Time now,
                Effects* fx);
  // scontrol requeue / requeue_hold: a running job is killed (SIGTERM, SIGKILL after
  // KillWait) and goes back to the queue once its processes are gone; an ended one goes
  // back at once. `hold` also holds it. Refused for a pending job, as in Slurm.
  Status Requeue(JobId id, bool hold, const Caller& who, Time now, Effects* fx);
  Status Hold(JobId id, const Caller& who, Effects* fx);
  Status Release(JobId id, const Caller& who, Effects* fx);
  // scontrol update job (core_update.cc): `edit` applied to the job `id` names (every task,
  // for an array's id), all of it or nothing. Owner, root or SlurmUser; Priority only root
  // and SlurmUser (0 holds the job as an administrator's hold), and only they may raise a
  // TimeLimit. Fields of the submission, and Priority and StartTime, change pending jobs only
  // ("Job is no longer pending execution" when none is); JobName, Comment, Requeue and
  // TimeLimit also running ones. A changed submission is checked as a new one would be
  // (partition, features, node configuration) and goes to fx->resubmitted; for an array it
  // changes for all its waiting tasks at once.
  Status UpdateJob(JobId id, const JobEdit& edit, const Caller& who, Time now, Effects* fx);

  // loomd said the batch script of `id` ended with wait() status `status`.
  // For a job srun submitted, `node` says which node's tasks ended: the job ends once every
  // node of it has reported (COMPLETED when every task exited 0, else FAILED); until then a
  // report only counts the node done.
  void JobEnded(JobId id, int32_t status, bool out_of_memory, Time now, Effects* fx,
                std::string_view node = {});
  // loomd could not start the job at all (bad work dir, user unknown on the node): FAILED.
  // With `node_unreachable` the node's daemon could not be reached: the job is requeued
  // where it allows it, else NODE_FAIL, as when its node dies under it. A job srun submitted
  // is never requeued; its tasks on the other nodes are ended, and `node` (the one that
  // failed, when known) counts as done.
  void LaunchFailed(JobId id, const std::string& why, Time now, Effects* fx,
                    bool node_unreachable = false, std::string_view node = {});
  // `node`'s prolog for job `id` failed: the node drains ("Prolog error") and the job goes
  // back to the queue held ("launch failed requeued held"; not held under
  // SchedulerParameters=nohold_on_prolog_fail); a job srun or salloc made, which cannot be
  // requeued, ends FAILED.
  void PrologFailed(JobId id, std::string_view node, const std::string& why, Time now, Effects* fx);
  // PrologSlurmctld ended for job `id` (started with its launch, which waited): `ok`, the
  // launch goes out now; else a batch job goes back to the queue (not held) and a job srun
  // or salloc made is cancelled, saying why (`why`).
  void CtldPrologDone(JobId id, bool ok, const std::string& why, Time now, Effects* fx);
  // `node` ended what was left of job `id` and ran its epilog (`failed`: it failed, and
  // the node drains, "Epilog error"). The job leaves COMPLETING once every node has.
  void EpilogComplete(JobId id, std::string_view node, bool failed, const std::string& why,
                      Time now, Effects* fx);
  // `node`'s daemon refused to launch `id` because an earlier run of it is still there (a
  // run from before a requeue, on a node that was away). Not the job's fault: it goes back
  // to the queue, and is not launched on that node again until the node stops reporting the
  // earlier run (which NodeReportsJobs kills).
  void LaunchCollided(JobId id, const std::string& node, Time now, Effects* fx);

  // srun inside the allocation of job `ask.job_id`: a new step on all or part of its nodes.
  // Only the job's owner, root and SlurmUser; the job must be running. Errors in Slurm's
  // words ("Invalid job id specified", "Job is pending execution", "Job/step already
  // completing or completed", "Requested node configuration is not available", "More
  // processors requested than permitted"). nullopt: an --exclusive step whose CPUs other
  // steps hold now (srun asks again).
  StatusOr<std::optional<StepRecord>> CreateStep(const StepAsk& ask, const Caller& who, Time now,
                                                 Effects* fx);
  // A node reported that its tasks of step `step` ended (`status` their wait statuses added
  // up). The step ends once all its nodes have; the job goes on. `launch_error` not empty:
  // the node could not start them, and why (the step's other tasks are then killed).
  // `out_of_memory`: the OOM killer ended some task of it there (the step then ends
  // OUT_OF_MEMORY).
  // What the processes of job `job` (its batch script, a job srun submitted's tasks, or with
  // `step` that step's tasks) used on `node`, as its daemon reported when they ended; kept for
  // the accounting record. Call before JobEnded or StepNodeEnded for the same report.
  void RecordUsage(JobId job, std::optional<uint32_t> step, std::string_view node,
                   int64_t user_cpu_usec, int64_t system_cpu_usec, int64_t max_rss_bytes);
  void StepNodeEnded(JobId job, uint32_t step, std::string_view node, int32_t status,
                     std::string_view launch_error, Time now, Effects* fx,
                     bool out_of_memory = false);
  // salloc's command ended with wait(2) status `status`: its allocation-only job ends,
  // COMPLETED for 0, else FAILED. Only the job's owner, root and SlurmUser.
  Status ReleaseAllocation(JobId job, int32_t status, const Caller& who, Time now, Effects* fx);
  // scancel JOB.STEP: `signal` 0 ends the step (SIGTERM, SIGKILL after KillWait); another
  // signal is only delivered to its tasks.
  Status SignalStep(JobId job, uint32_t step, int32_t signal, const Caller& who, Time now,
                    Effects* fx);
  // The nodes (indices) job `id` runs on, for sstat: only its owner, root and SlurmUser;
  // "Invalid job id specified" for an unknown job, "Job is not running" (Slurm's words for
  // sstat) for one that is not running.
  StatusOr<std::vector<int32_t>> RunningNodes(JobId id, const Caller& who) const;
  // The steps of `job` (every job's when 0), by job then step id.
  std::vector<std::pair<const JobEntry*, const StepRecord*>> Steps(JobId job) const;
  // The step table of `job`, to store; null when it has none.
  const JobSteps* StepsOf(JobId job) const;
  // Every job's step table, by job id.
  const std::map<JobId, JobSteps>& step_tables() const { return steps_; }
  // After a restart: the stored steps of `job`, and for a job srun submitted the reports of
  // its nodes so far. Ignored for a job not in the table.
  void RestoreSteps(JobId job, JobSteps steps, std::optional<StepProgress> srun = std::nullopt);

  // A node's daemon registered or reported in.
  void NodeAlive(const std::string& node, Time now, Effects* fx);

  // What a node's daemon says it still runs there (batch scripts under their supervisors,
  // `running`). A job the controller does not run on that node any more (it ended, failed
  // with the node or was requeued while the daemon was away, or is long forgotten) is an
  // orphan: it is killed there (SIGKILL), as slurmctld kills jobs a slurmd reports that it
  // does not know. Until the node stops reporting it, the job is not started on that node
  // again (its new run would meet the old one there). Returns the orphans.
  std::vector<JobId> NodeReportsJobs(const std::string& node, const std::vector<JobId>& running,
                                     Effects* fx);
  // The other way round: a batch job (not salloc's, not srun's) the controller runs on `node` (its
  // batch host) that the node's daemon does not report, kLaunchGraceS after it started, never
  // reached the node (its launch was lost, e.g. with a controller killed between storing the start
  // and sending it) or ended unreported: it goes back to the queue (or ends NODE_FAIL), as a job on
  // a failed node does. Returns those jobs.
  static constexpr Time kLaunchGraceS = 30;
  // How long a job waits for a node's epilog before that node is asked again.
  static constexpr Time kEpilogAskAgainS = 60;
  // How long a job whose PrologSlurmctld failed waits before it may start again (BeginTime).
  static constexpr Time kCtldPrologRetryS = 5;
  std::vector<JobId> NodeMissesJobs(const std::string& node, const std::vector<JobId>& running,
                                    Time now, Effects* fx);

  // A node's daemon registered with what it found on its node. Unless
  // SlurmdParameters=config_overrides, a node with less than slurm.conf and gres.conf give
  // it is drained with Slurm's reason (model::CapacityShortfall), unless it is already
  // drained or down by an administrator.
  void NodeRegistered(const std::string& node, const model::Resources& reported, Time now,
                      Effects* fx);

  // scontrol update NodeName=`names` State=`state` Reason=`reason`: DRAIN (no new work;
  // running jobs go on), DOWN (its jobs end as NODE_FAIL or are requeued), RESUME (back to
  // service), UNDRAIN. Only root and SlurmUser; DRAIN and DOWN need a reason. All or nothing.
  Status UpdateNodes(const std::vector<std::string>& names, std::string_view state,
                     const std::string& reason, const Caller& who, Time now, Effects* fx);
  // scontrol reconfigure: the new configuration's nodes and partitions, with every job kept
  // (matched by node and partition name) and each node's liveness and administrative state
  // carried over. Refused, changing nothing, when a job holds a node or waits in a partition
  // that the new configuration lacks.
  Status Reconfigure(const conf::SiteConfig& site, CoreOptions options);

  // After a restart: the administrative state the store kept (unknown names are skipped).
  void RestoreNode(const std::string& name, bool drain, bool down, const std::string& reason,
                   uint32_t reason_uid, const std::string& reason_user, Time reason_time);
  const NodeAdmin& node_admin(int32_t node) const { return node_admin_[node]; }

  // Advance reservations (core_resv.cc). scontrol create reservation: its name (given or
  // made up); update and delete name it (ReservationName=). Only root and SlurmUser; errors
  // as Slurm words them.
  using Words = std::vector<std::pair<std::string, std::string>>;
  StatusOr<std::string> CreateReservation(const Words& words, const Caller& who, Time now,
                                          Effects* fx);
  Status UpdateReservation(const Words& words, const Caller& who, Time now, Effects* fx);
  Status DeleteReservation(std::string_view name, const Caller& who, Effects* fx);
  const std::map<std::string, ReservationRecord, std::less<>>& reservations() const {
    return reservations_;
  }
  // After a restart: one the store kept.
  void RestoreReservation(ReservationRecord r);

  // Time limits, KillWait expiry, node timeouts, begin times, reservations that begin, end
  // or recur, and purging of old ended jobs.
  void Tick(Time now, Effects* fx);
  // The scheduling passes due at `now`; started jobs become RUNNING and appear in
  // fx->launches. First an event pass, when something it looks at changed since the last
  // pass (a job but new held ones, a node) or a job's begin time or `after:` delay has come:
  // kTermination when jobs released nodes or nodes changed, else kSubmit; not sooner than
  // sched_min_interval after the last one. Then the policy's timed pass when its tick came
  // (sched::Cadence: the `slurm` policy's backfill every bf_interval, its main pass every
  // sched_interval), as the simulator runs them. Returns whether any pass ran.
  bool Schedule(Time now, Effects* fx);
  // Its two halves: the event pass, and the timed pass with the look that ends a second's
  // events. A driver that orders events as the simulator does (one pass per event, then the
  // timed pass) calls them apart.
  bool ScheduleEvents(Time now, Effects* fx);
  bool ScheduleTimed(Time now, Effects* fx);

  // After a restart: the jobs the store held and the next job id.
  // A job that ended while its processes were still being killed keeps its nodes until
  // its node reports or KillWait passes; running ones keep running.
  void Restore(std::vector<JobEntry> entries, JobId next_job_id);

  const JobTable& jobs() const { return jobs_; }
  // The entries that are live(), in table order: what a scheduling pass and node usage look
  // at, without walking the jobs that ended and stay listed for MinJobAge.
  std::vector<const JobEntry*> LiveEntries() const;
  const JobEntry* Find(JobId id) const;
  const sched::Cluster& cluster() const { return cluster_; }
  const conf::SiteConfig& site() const { return site_; }
  // The association tree loomdbd last gave (null: none yet, or no accounting).
  const model::AssociationTable* associations() const { return associations_.get(); }
  void SetAssociations(std::shared_ptr<const model::AssociationTable> table) {
    associations_ = std::move(table);
    fair_share_stale_ = true;
    // AccountingStorageEnforce=limits: the tree's limits, parsed once per tree.
    limit_rules_ = associations_ != nullptr && site_.cluster.Enforces("limits")
                       ? std::make_shared<const LimitRules>(*associations_, site_.cluster)
                       : nullptr;
  }

  // Fair share and multifactor priority (core_priority.cc). Usage is charged to a job's
  // association as it runs: up to each recalculation (PriorityCalcPeriod) and, when it
  // stops running, for the rest. Each recalculation decays the usage and recomputes the
  // fair-share values and every pending job's priority; a job's end or a new tree makes the
  // next Tick recompute them too.
  const sched::UsageLedger& usage() const { return usage_; }
  // The usage stored before a restart.
  void RestoreUsage(sched::UsageLedger ledger);
  // Whether usage changed since the store last took it (UsageStored).
  bool usage_unstored() const { return usage_changed_; }
  void UsageStored() { usage_changed_ = false; }
  // The fair-share values of every association of the tree (sshare), in tree order.
  const sched::ShareTable& fair_share() const { return fair_share_; }
  // The factors of job `e`'s multifactor priority as last calculated (sprio).
  PriorityFactors FactorsOf(const JobEntry& e) const;
  // What a second of job `e` costs: its allocation's billing TRES (TRESBillingWeights of its
  // partition, else the cluster's; PriorityFlags=MAX_TRES), the CPU count without weights.
  double BillingOf(const JobEntry& e) const;
  // What job `e`'s allocation holds: cpu, mem, node, gres/gpu and gres/gpu:TYPE.
  core::TresVector TresOf(const JobEntry& e) const;
  const CoreOptions& options() const { return opt_; }
  JobId next_job_id() const { return next_id_; }
  bool NodeUp(int32_t node) const { return node_alive_[node] != kNodeSilent; }
  // Whether the node's daemon has said anything since this controller started.
  bool NodeSeen(int32_t node) const { return last_seen_[node] > 0; }
  const sched::PassStats& last_pass() const { return last_pass_; }
  // State changes the state machine refused (Move): each one is a bug.
  int64_t refused_transitions() const { return refused_transitions_; }

 private:
  JobEntry* FindMutable(JobId id);
  // The partition a request goes to and the request as the job keeps it (with the
  // cluster's defaults filled in), once some node of the partition could ever run it.
  struct Admitted {
    int32_t partition = -1;
    std::shared_ptr<model::JobRequest> request;
  };
  // The nodes a hostlist (-w, -x) names, by index; "Invalid node name specified" for a
  // name the cluster does not have.
  StatusOr<std::vector<int32_t>> NodesNamed(const std::string& hostlist) const;
  StatusOr<Admitted> Admit(model::JobRequest request) const;
  // With accounting: the job's account (the user's default when it names none, lower-cased
  // as Slurm keeps them) and QOS (its association's default); with AccountingStorageEnforce
  // =associations (or qos) a job whose user has no association with the account in
  // `partition` (or whose QOS the association may not use) is refused with Slurm's error.
  Status ApplyAssociation(const Caller& who, const std::string& partition,
                          model::JobRequest* request) const;
  // The partition's AllowAccounts/DenyAccounts and AllowQos/DenyQos for the job's account
  // and QOS (once ApplyAssociation has filled them in), refused with Slurm's errors.
  Status CheckPartitionAccess(const model::JobRequest& r, const std::string& partition) const;
  bool MayActOn(const Caller& who, const JobEntry& e) const;
  void Changed(const JobEntry& e, Effects* fx);
  void End(JobEntry& e, model::JobState state, int32_t exit_code, Time now, Effects* fx);
  void Kill(JobEntry& e, model::JobState as, Time now, Effects* fx);
  // A completing job's processes are gone: its nodes run their epilogs first when the site
  // has one (AwaitEpilogs), then they are free.
  void Release(JobEntry& e, Effects* fx);
  void AwaitEpilogs(JobEntry& e, Effects* fx);
  void FreeNodes(JobEntry& e, Effects* fx);
  // MpiParams=ports: `count` ports of the range that no running step uses on any of `nodes`
  // (cluster indices), lowest first; an error when the range has not that many free.
  StatusOr<std::vector<int32_t>> ReservePorts(const std::vector<int32_t>& nodes,
                                              int32_t count) const;
  // Drains node `n` for `reason`, given by SlurmUser (prolog and epilog failures).
  void DrainNode(int32_t n, const std::string& reason, Time now, Effects* fx);
  // Jobs srun submitted (core_srun.cc). Node `node` (a name) of such a job has no task
  // running any more; the job ends, or is released, once that holds for all its nodes.
  void StepNodeEnded(JobEntry& e, std::string_view node, int32_t status, bool out_of_memory,
                     Time now, Effects* fx);
  // The job cannot go on (a node could not start its tasks, or was lost): it ends `as`, its
  // other nodes' tasks are ended, and `node` counts as done with `status`.
  void EndStep(JobEntry& e, model::JobState as, std::string_view node, int32_t status, Time now,
               Effects* fx);
  // Job `e` is ending: its running steps end with it (CANCELLED); with `kill`, their tasks
  // are killed (the job's own end does not reach them: the batch script ended first).
  void EndSteps(JobEntry& e, bool kill, Time now, Effects* fx);
  // Node `n` is gone (daemon silent, or set DOWN): its jobs fail or go back to the queue.
  void LoseJobsOn(int32_t n, Time now, Effects* fx);
  void LoseJob(JobEntry& e, Time now, Effects* fx);
  // Node `n`'s daemon refused a connection: no new work there until it reports again.
  void Unreachable(int32_t n, Time now);
  // The index of the node named `node`; -1 when there is none.
  int32_t NodeIndex(std::string_view node) const;
  // Whether `e` holds node `node` (an index) now.
  bool RunsOn(const JobEntry& e, int32_t node) const;
  // Keeps job `id` off node `node` until the node stops reporting an earlier run of it.
  void RememberStaleRun(JobId id, int32_t node);
  // A started job goes back to the queue (counting a restart), `held` as the reason when it
  // is held (kNone: not held). With `kill` its processes are ended first (it stays
  // completing until they are); without, nothing of it runs (its launch failed).
  void RequeueStarted(JobEntry& e, model::PendingReason held, bool kill, Time now, Effects* fx);
  // A started job goes back to the queue (without counting a restart).
  void BackToQueue(JobEntry& e, Time now, Effects* fx);
  // Every change of a job's state goes through here (model::Job::Transition): a step the
  // state machine forbids is refused, counted and logged as the bug it is. Returns whether
  // the job moved. A job that stops running is charged its usage.
  bool Move(JobEntry& e, model::JobState to, Time now);
  // Fair share (core_priority.cc). The priority a job that waits gets now: the one given
  // with it, else priority/multifactor's (as of the last calculation) or basic's.
  int64_t InitialPriority(const JobEntry& e) const;
  // Adds running job `e`'s billing x seconds since it started or was last charged, to `until`.
  void ChargeUsage(const JobEntry& e, Time until);
  // At a PriorityCalcPeriod (`period`): charges running jobs, decays usage and moves the time
  // age counts to. Then, and whenever usage or the tree changed: recomputes the fair-share
  // values and pending jobs' priorities.
  void Recalculate(Time now, bool period, Effects* fx);
  void ComputeFairShare();
  bool multifactor() const {
    return site_.cluster.priority.type == conf::PriorityType::kMultifactor;
  }
  // The scheduling pass (core_schedule.cc): one pass at `now`, of the `timed` trigger, or
  // for events (nullopt: kTermination when resources were freed, else kSubmit); and the
  // job table as dependencies see it.
  void RunPass(std::optional<sched::PassTrigger> timed, Time now, Effects* fx);
  class TableView;
  std::vector<const JobEntry*> JobsWithId(JobId id) const;
  // Whether any job made from the submission `submission` is still in the table.
  bool AnyJobOf(JobId submission) const;

  conf::SiteConfig site_;
  std::shared_ptr<const model::AssociationTable> associations_;
  CoreOptions opt_;
  sched::Cluster cluster_;
  std::unique_ptr<sched::Policy> policy_;
  JobTable jobs_;
  // The ids of every live() entry, and of some that ended since the last pass, which
  // drops them (LiveMutable): entries join on creation and on every Changed().
  absl::btree_set<JobId> live_;
  std::vector<JobEntry*> LiveMutable();
  JobId next_id_;
  // Runs of jobs that nodes still report where the job no longer runs (being killed): the
  // job is kept off those nodes until they stop reporting it. Not durable: after a restart
  // the nodes' reports rebuild it.
  absl::btree_map<JobId, std::vector<int32_t>> stale_runs_;
  // Per node: kNodeSilent (never registered, or SlurmdTimeout passed without a word),
  // kNodeAlive, or kNodeUnreachable: it reports, but its daemon refused a launch's
  // connection, so it takes no new work until it reports again (else a requeued job would be
  // sent back to it in a loop); its jobs go on until SlurmdTimeout says otherwise.
  static constexpr char kNodeSilent = 0, kNodeAlive = 1, kNodeUnreachable = 2;
  std::vector<char> node_alive_;
  std::vector<Time> last_seen_;
  std::vector<NodeAdmin> node_admin_;
  // The same request as one of the last few submissions shares its copy: loops of one
  // sbatch command then cost one request, not one each.
  std::shared_ptr<const model::JobRequest> Intern(std::shared_ptr<const model::JobRequest> r);
  std::array<std::shared_ptr<const model::JobRequest>, 16> recent_requests_;
  size_t next_recent_ = 0;
  sched::PassStats last_pass_;
  int64_t refused_transitions_ = 0;
  bool pass_due_ = true;  // something a pass looks at changed since the last one
  // When passes run (sched/cadence.h): the time of the last look and whether jobs waited
  // then, whether jobs waited after the last pass, how many jobs held nodes then (fewer now:
  // resources were freed).
  sched::Cadence cadence_;
  Time last_look_ = 0;
  bool look_waiting_ = false;
  bool waiting_ = false;
  int64_t holding_after_pass_ = 0;
  Time wake_ = 0;  // when the earliest wait that time alone ends is over (from the last pass)
  uint64_t last_pass_generation_ = 0;
  uint64_t decision_seq_ = 0;
  // Steps inside allocations, by job (core_steps.cc); dropped with their job.
  std::map<JobId, JobSteps> steps_;
  // Submission limits (core_priority.cc): DenyOnLimit, MaxSubmitJobs, GrpSubmitJobs for
  // `count` new jobs of `r` from `who`.
  Status CheckSubmitLimits(const model::JobRequest& r, const std::string& partition,
                           const Caller& who, int64_t time_limit_s, int64_t count) const;
  std::shared_ptr<const LimitRules> limit_rules_;
  // Fair share (core_priority.cc).
  sched::UsageLedger usage_;
  sched::ShareTable fair_share_;
  bool fair_share_stale_ = true;  // usage or the tree changed since the values were computed
  bool usage_changed_ = false;    // to store with the next batch
  Time calculated_at_ = 0;        // the last PriorityCalcPeriod's recalculation
  // What the multifactor formula reads besides the job, as of the last ComputeFairShare.
  sched::MultifactorWeights weights_;
  sched::ClusterTotals totals_;
  int64_t highest_qos_priority_ = 0;
  // PriorityWeightAssoc: each user association's Priority over the highest, by (account,
  // user); PriorityWeightTRES: each partition's TRES, by index.
  std::map<std::pair<std::string, std::string>, double> assoc_factor_;
  std::vector<core::TresVector> partition_tres_;
  // Advance reservations by name (core_resv.cc); cluster_.reservations is their view for
  // the scheduler, in the same order (SyncReservations).
  std::map<std::string, ReservationRecord, std::less<>> reservations_;
  std::map<std::string, Time, std::less<>> resv_idle_since_;  // PURGE_COMP: idle from when
  int64_t resv_serial_ = 0;                                   // for made-up names
  Time resv_tick_at_ = 0;                                     // the last ReservationTick
  // Jobs that ran in a reservation that has ended, and when ResvOverRun ends them. Not
  // stored: after a restart they run on to their own time limits.
  std::map<JobId, Time> resv_deadlines_;
  void SyncReservations();
  void ReservationTick(Time now, Effects* fx);
  // The index of `name` in cluster_.reservations, or -1.
  int32_t ReservationIndex(std::string_view name) const;
  // Whether a job that has not ended (pending, running, completing) names `name`.
  bool ReservationBusy(std::string_view name) const;
  // Checks a new or changed reservation against the cluster and the others; fills its nodes
  // from NodeCnt= when it names none.
  Status PlaceReservation(ReservationRecord* r, const ReservationAsk& ask) const;
};

}  // namespace loom::ctld
