// Job records from the controller to loomdbd (Slurm's DBD agent), when slurm.conf sets
// AccountingStorageType=accounting_storage/slurmdbd. Nothing is lost while loomdbd is down
// or slow: every record goes into the controller's own store in the same batch as the change
// it describes (a named value under kAcctKeyPrefix, in sequence order), and leaves it only
// once loomdbd has stored it. After a restart the queued records are sent again, in order;
// loomdbd stores each job by its key, so a record sent twice changes nothing.
//
// The outbox (owner thread) decides what to queue; the agent (its own thread) sends.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "auth/munge_auth.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "ctld/controller_core.h"
#include "ctld/wire.h"
#include "loom/v1/loom.pb.h"
#include "model/association.h"
#include "store/store.h"

namespace loom::ctld {

inline constexpr std::string_view kAcctKeyPrefix = "acct/";
// Node events (a v1::AcctEvent) share the sequence and are kept under their own prefix.
inline constexpr std::string_view kAcctEventKeyPrefix = "acct-event/";
// The store key of the association tree last read from loomdbd (a v1::AcctShowReply).
inline constexpr std::string_view kAcctTreeKey = "acct_tree";
struct AcctRecord {
  uint64_t seq = 0;
  std::string bytes;  // a serialized v1::AcctJob, or v1::AcctEvent when `event`
  bool event = false;
};

// The store key of a record: zero-padded, so the store's key order is the send order.
std::string AcctKey(const AcctRecord& r);
// The record a key AcctKey made stands for (its seq and kind, bytes empty); nullopt for any
// other key.
std::optional<AcctRecord> AcctRecordOf(std::string_view key);

// What the accounting keeps of job `e` now: the job as queries show it, and its steps (the
// batch script as step "batch", the steps inside its allocation, and for a job srun
// submitted its one step "0").
v1::AcctJob AcctJobOf(const JobEntry& e, const ControllerCore& core, const JobInfoOptions& o);

// Owner thread only.
class AcctOutbox {
 public:
  // Continues after the records a restarted controller found queued in its store.
  explicit AcctOutbox(uint64_t next_seq) : next_seq_(next_seq) {}

  // A record for each job `fx` changed (or whose steps changed) whose accounting view
  // differs from the last one queued, and for each node that went down, was drained or
  // came back (an event, from `now` unless the node's reason says when), added to `batch`;
  // returned to hand to the agent once the batch is durable (Committed).
  std::vector<AcctRecord> AddTo(const Effects& fx, const ControllerCore& core,
                                const JobInfoOptions& o, Time now, store::Batch* batch);
  // The batch holding `records` is durable: they count as queued.
  void Committed(const std::vector<AcctRecord>& records);

 private:
  uint64_t next_seq_;
  // Per job: the digest of the view last queued, and of views in a batch not yet durable.
  std::unordered_map<JobId, uint64_t> sent_;
  std::unordered_map<uint64_t, std::pair<JobId, uint64_t>> in_flight_;  // seq -> job, digest
  // Per node (by name): its state and reason as last queued ("" when up), and those of
  // events in a batch not yet durable. Nodes are looked at when the cluster's generation
  // moved (a restarted controller tells loomdbd every node's state once).
  std::unordered_map<std::string, std::string> node_sent_;
  std::unordered_map<uint64_t, std::pair<std::string, std::string>> node_in_flight_;
  std::optional<uint64_t> node_generation_;
  Time started_ = 0;                // the first batch's time
  bool waiting_for_nodes_ = false;  // nodes were left out as not registered yet
};

struct AcctAgentOptions {
  std::string cluster;
  std::string host;  // loomdbd's address and port
  int port = 6819;
  std::string control_host;  // where this controller listens, for `sacctmgr show cluster`
  int control_port = 0;
  std::string cluster_tres;  // what the cluster has (sreport's capacity)
  const auth::MungeCredentials* munge = nullptr;
  const core::Clock* clock = &core::RealClock();
  size_t max_records_per_request = 500;
  int timeout_ms = 10000;
  // Called on the agent's thread with loomdbd's association tree, read at the start and
  // then every `refresh_associations` (sacctmgr's changes reach submissions that soon).
  std::function<void(const v1::AcctShowReply&)> associations;
  std::chrono::milliseconds refresh_associations{5000};
};

// What `cluster`'s nodes have, as a TRES string ("cpu=48,mem=192000M,node=2,billing=48,
// gres/gpu=8").
std::string ClusterTres(const conf::ClusterConfig& cluster);

// The association tree of `cluster` in `reply`, as submissions use it.
std::shared_ptr<const model::AssociationTable> AssociationsOf(const v1::AcctShowReply& reply,
                                                              const std::string& cluster);

class AcctAgent {
 public:
  // `acked` is called on the agent's thread with the store keys of the records loomdbd
  // stored.
  AcctAgent(AcctAgentOptions options, std::vector<AcctRecord> queued,
            std::function<void(std::vector<std::string>)> acked);
  ~AcctAgent();
  AcctAgent(const AcctAgent&) = delete;
  AcctAgent& operator=(const AcctAgent&) = delete;

  void Enqueue(std::vector<AcctRecord> records);
  // Records waiting for loomdbd (sdiag's "DBD Agent queue size").
  size_t queued() const;
  void Stop();

 private:
  void Loop();

  const AcctAgentOptions options_;
  std::function<void(std::vector<std::string>)> acked_;
  mutable core::Mutex mu_;
  std::deque<AcctRecord> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace loom::ctld
