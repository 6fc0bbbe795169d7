// loomctld's wiring: one thread owns the ControllerCore; gRPC threads post commands to it
// and wait. The owner applies the waiting commands as one batch, runs the clock (time
// limits, node timeouts) and a scheduling pass, commits everything that changed to the
// store in one transaction, publishes a snapshot that queries read without waiting, and
// only then answers; then it hands the batch's launches and signals to the dispatcher
// thread, which reads each launched job's script and environment from the store and sends
// them to the node daemons in order.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "auth/munge_auth.h"
#include "conf/show_config.h"
#include "conf/site_config.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "ctld/accounting.h"
#include "ctld/controller_core.h"
#include "ctld/job_submit_pool.h"
#include "ctld/listing.h"
#include "ctld/node_links.h"
#include "ctld/script_runner.h"
#include "ctld/wire.h"
#include "loom/v1/loom.grpc.pb.h"
#include "rpc/frame_server.h"
#include "store/store.h"

namespace loom::ctld {

class ControllerApi;

struct ControllerOptions {
  std::string slurm_conf;      // path of slurm.conf
  std::string munge_socket;    // empty: libmunge's default
  std::string listen_address;  // empty: SlurmctldHost's address and SlurmctldPort
  // Opens the store the controller keeps its state in; unset: SQLite in StateSaveLocation.
  std::function<StatusOr<std::unique_ptr<store::Store>>(const conf::ClusterConfig&)> open_store;
  // What the controller reads the time from: job times, time limits, node timeouts, the
  // store's retry pause. It must outlive the controller.
  const core::Clock* clock = &core::RealClock();
  // The loom-lua-helper binary job_submit.lua runs in; empty: the one beside this program.
  std::string lua_helper;
};

// The steps of each job that has any, by job id, as `scontrol show step` lists them.
using StepListing = std::map<JobId, std::shared_ptr<const std::vector<v1::StepInfo>>>;

// What queries read: the state after the last batch. Successive snapshots share what did
// not change between them (the listing's unchanged chunks, the nodes, the partitions, each
// job's steps, the configuration). No query waits for the owner thread.
struct Snapshot {
  int64_t time = 0;
  std::shared_ptr<const JobListing> jobs;
  std::shared_ptr<const NodeInfos> nodes;
  std::shared_ptr<const std::vector<v1::PartitionInfo>> partitions;
  std::shared_ptr<const StepListing> steps;
  // `scontrol show config`: the entries of the configuration in force (the log level and
  // flags, which change without a batch, are filled in when asked).
  std::shared_ptr<const conf::ConfigEntries> config;
  sched::PassStats last_pass;
  int64_t batches = 0;  // batches the owner thread ran, since the start
  int64_t passes = 0;
  int64_t last_pass_us = 0;
  int64_t max_pass_us = 0;
  int64_t total_pass_us = 0;
  int64_t submitted = 0, started = 0, completed = 0, cancelled = 0, failed = 0;
  int64_t start_time = 0;  // when the controller started
  int64_t backfilled = 0;  // jobs started out of priority order, since the start
};

class Controller {
 public:
  // Loads the configuration, opens the store in StateSaveLocation and recovers every job,
  // starts the owner thread and the gRPC server. Fails with a clear error when any of
  // that fails (and then nothing keeps running).
  static StatusOr<std::unique_ptr<Controller>> Start(const ControllerOptions& options);
  ~Controller();

  static constexpr int kMaxStoreBackoffMs = 5000;
  // How long a controller with accounting and no stored association tree waits at the
  // start for loomdbd's.
  static constexpr std::chrono::seconds kFirstTreeWait{5};

  void Wait();      // until Shutdown
  void Shutdown();  // stops serving, then the owner thread
  const std::string& address() const { return address_; }
  // The port the controller listens on (the one the system chose for port 0).
  int port() const { return frames_ ? frames_->port() : 0; }

  // Runs `fn` on the owner thread in the next batch and returns its status once the batch
  // is durable. When the store refuses the batch (a full disk, an I/O error, a read-only
  // file), every command of it gets the store's error and none of them happened: the
  // controller forgets the batch by reading its state back from the store, keeps answering
  // queries, and tries the store again after a pause that doubles up to kMaxStoreBackoffMs
  // while it keeps failing (commands that change nothing are answered all along).
  using Command = std::function<Status(ControllerCore&, Effects&, Time now)>;
  Status Post(Command fn);
  // Runs `fn` in the next batch without waiting for it; for callers that must not block.
  void PostNoWait(Command fn);

  // Sends the tasks of a step just created inside job `e`'s allocation to its nodes. Only on
  // the owner thread (inside Post).
  void LaunchStep(const JobEntry& e, const v1::StepInfo& info, const v1::StepRequest& step);

  // sstat: what job `id`'s batch script and step tasks use now, asked of each node it runs
  // on (RunningNodes' errors; a node that does not answer is skipped, its name in the error
  // when none answers).
  Status StepUsage(JobId id, const Caller& who, v1::StepUsageReply* reply);

  std::shared_ptr<const Snapshot> snapshot() const;
  // Accounting records waiting for loomdbd; nullopt without accounting.
  std::optional<size_t> acct_queued() const {
    return acct_agent_ ? std::optional<size_t>(acct_agent_->queued()) : std::nullopt;
  }
  auth::MungeCredentials& munge() { return *munge_; }
  const core::Clock& clock() const { return *clock_; }
  // The configuration as loaded at the start. After a reconfigure, only the owner thread
  // (inside Post) may read it; others keep what they took at the start.
  const conf::SiteConfig& site() const { return site_; }
  const std::string& slurm_conf() const { return slurm_conf_; }  // the file it was read from

  // scontrol reconfigure: reads slurm.conf (and gres.conf, topology.conf) again and applies
  // it without dropping a job. A configuration with errors, or one that would strand a job,
  // is refused and nothing changes. Fills the new configuration's warnings and its
  // SlurmdTimeout, and when `applied` is given the cluster configuration now in force (what
  // the daemon re-reads its logging from on SIGHUP, without loading the files again).
  Status Reconfigure(std::vector<conf::Diagnostic>* warnings, int64_t* slurmd_timeout_s,
                     conf::ClusterConfig* applied = nullptr);

  // job_submit.lua (JobSubmitPlugins=lua), as last loaded; null without it. When the script
  // does not load and no earlier version of it did, null with `error` saying why
  // (submissions are then refused with it).
  std::shared_ptr<JobSubmitPool> job_submit(std::string* error) const;

 private:
  Controller() = default;
  // A ControllerCore holding what the store holds (at the start, and after the store
  // refused a batch).
  // With `acct_queued`, also the accounting records still waiting for loomdbd, in order.
  StatusOr<std::unique_ptr<ControllerCore>> RecoverCore(
      std::vector<AcctRecord>* acct_queued = nullptr);
  void OwnerLoop();
  // (Re)loads job_submit.lua beside slurm.conf as `site` says. A script that does not load
  // is logged with PATH:LINE; the version loaded before, if any, stays in force.
  void LoadJobSubmit(const conf::SiteConfig& site);
  Status Persist(const Effects& fx);
  // The store refused a batch with `why`: the core is read back from it.
  Status ForgetRefusedBatch(const Status& why, Time now);
  // Publishes the state after a batch: the jobs `fx` changed or touched are listed anew
  // (every job when `fx` is null or after a reconfigure), the nodes when their state or
  // usage may have changed.
  void Publish(int64_t now, const Effects* fx);
  // The steps part of Publish: every job's when `fx` is null or nothing was listed yet, else
  // those of the jobs `fx` changed.
  void PublishSteps(const Effects* fx);
  std::shared_ptr<const std::vector<v1::StepInfo>> StepsOfJob(JobId job) const;
  void CarryOut(const Effects& fx);
  // "host:port" of a node's daemon, by node index.
  const std::string& NodeAddress(int32_t node) const { return node_addresses_[node]; }
  // How jobs are described to queries and to the nodes that run them: one source for both.
  JobInfoOptions InfoOptions() const;
  // What a task launch on node `a` (`node_index` in the job's allocation) carries for job
  // `e`, described as `job`, whether srun submitted the job or started a step in it.
  template <typename Environment>
  static v1::LaunchTasksRequest TaskLaunch(const JobEntry& e, const v1::JobInfo& job,
                                           const sched::NodeAlloc& a, int32_t node_index,
                                           const Environment& environment,
                                           const std::string& work_dir,
                                           const std::string& io_key);
  // What the dispatcher sends, in the order the batches made it: a launch complete but for
  // what only the stored submission holds (the script and the environment), or a signal.
  struct Outgoing {
    JobId job = 0;
    JobId submission = 0;  // the stored submission a launch is completed from
    // A batch script's launch, to `node` at `address`.
    std::optional<v1::LaunchBatchRequest> batch;
    std::string node, address;
    // A job srun submitted: its tasks on each node, sent through the TreeWidth fan-out.
    std::vector<v1::ForwardedLaunch> tasks;
    int32_t tree_width = 0;
    // A signal, or an allocation's end, to the nodes at `addresses`.
    std::optional<v1::SignalTasksRequest> signal;
    std::optional<v1::TerminateJobRequest> terminate;
    // PrologFlags=Alloc: the job's prolog, to `node` at `address`.
    std::optional<v1::RunPrologRequest> prolog;
    std::vector<std::string> addresses;
  };
  // A job srun submitted: LaunchTasks to every node of it, each with its place in the job,
  // but for the environment.
  Outgoing TaskLaunches(const JobEntry& e);
  // Sends a step's launches, one per node, through the TreeWidth fan-out (rpc/launch_tree.h).
  void SendLaunches(std::vector<v1::ForwardedLaunch> launches, int32_t tree_width);
  void DispatchLoop();
  void Send(Outgoing& out);
  // PrologSlurmctld (`prolog`; its end decides the launch: CtldPrologDone) or
  // EpilogSlurmctld for job `job`, on a thread of ctld_scripts_.
  void RunCtldScript(bool prolog, v1::JobInfo job);

  const core::Clock* clock_ = &core::RealClock();
  conf::SiteConfig site_;
  // The configuration before a reconfigure in the batch being run (owner thread only): a
  // refused batch did not happen, its reconfigure included.
  std::optional<conf::SiteConfig> site_before_batch_;
  std::string slurm_conf_;  // where the configuration was read from
  std::string lua_helper_;
  mutable core::Mutex policy_mu_;
  std::shared_ptr<JobSubmitPool> job_submit_ ABSL_GUARDED_BY(policy_mu_);
  std::string job_submit_error_ ABSL_GUARDED_BY(policy_mu_);
  std::unique_ptr<ControllerCore> core_;
  // The owner thread commits to the store and reads it back; the dispatcher reads launched
  // jobs' submissions from it.
  mutable core::Mutex store_mu_;
  std::unique_ptr<store::Store> store_ ABSL_GUARDED_BY(store_mu_);
  std::unique_ptr<auth::MungeCredentials> munge_;
  std::unique_ptr<ControllerApi> api_;
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<rpc::FrameServer> frames_;
  std::string address_;
  std::vector<std::string> node_addresses_;

  struct Pending {
    Command fn;
    std::promise<Status> done;
  };
  // The owner waits on mu_ for commands or stop_, Wait() for stop_.
  mutable core::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); }
  std::once_flag shutdown_once_;
  std::thread owner_;
  // The owner thread once it runs; what only it may do aborts elsewhere (CheckOwner).
  std::atomic<std::thread::id> owner_id_{};
  void CheckOwner(const char* what) const;
  std::shared_ptr<const Snapshot> snapshot_ ABSL_GUARDED_BY(mu_);
  Snapshot stats_;  // counters kept by the owner thread
  // What the last Publish() built, reused by the next (owner thread only).
  std::shared_ptr<const JobListing> listing_;
  // A job that starts or ends changes the nodes it holds: only nodes whose usage differs
  // from the one they were built with (node_usage_, by node) are built again.
  std::shared_ptr<const NodeInfos> nodes_;
  std::vector<NodeUsage> node_usage_;
  std::shared_ptr<const std::vector<v1::PartitionInfo>> partitions_;
  std::shared_ptr<const StepListing> steps_;
  std::shared_ptr<const conf::ConfigEntries> config_;
  uint64_t nodes_generation_ = 0;  // the cluster's generation when nodes_ was built
  bool publish_all_ = true;        // the next Publish() lists every job again
  // After the store refused a batch (owner thread only): its error, and when to try again.
  Status store_error_;
  std::chrono::steady_clock::time_point store_retry_at_;
  std::chrono::steady_clock::time_point batch_monotonic_;  // when the current batch began
  int store_backoff_ms_ = 0;
  // Launches and signals to the node daemons; in order per node, nodes independent.
  std::unique_ptr<NodeLinks> links_;
  ScriptRunner ctld_scripts_;
  // The dispatcher: what the owner handed it, sent in order until stopped.
  core::Mutex dispatch_mu_;
  std::deque<Outgoing> dispatch_ ABSL_GUARDED_BY(dispatch_mu_);
  bool dispatch_stop_ ABSL_GUARDED_BY(dispatch_mu_) = false;
  std::thread dispatcher_;
  // Accounting (AccountingStorageType=accounting_storage/slurmdbd; null otherwise): what to
  // queue (owner thread), the records loomdbd stored whose queue entries go in the next
  // batch (owner thread), and the agent that sends them.
  std::unique_ptr<AcctOutbox> acct_outbox_;
  std::vector<std::string> acct_acked_;  // store keys of records loomdbd stored
  // The association tree as last read from loomdbd (owner thread), given to every core
  // (a recovered one too) and kept in the store (kAcctTreeKey) so that a controller
  // restarted while loomdbd is away still applies it; `acct_tree_unstored_` is set while
  // the store has not taken the latest.
  std::shared_ptr<const model::AssociationTable> associations_;
  std::string acct_tree_bytes_;
  bool acct_tree_unstored_ = false;
  std::unique_ptr<AcctAgent> acct_agent_;
};

}  // namespace loom::ctld
