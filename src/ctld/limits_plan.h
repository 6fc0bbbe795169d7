// Association and QOS limits as the controller applies them (AccountingStorageEnforce=
// limits): the tree's limits parsed once per tree (LimitRules), and per scheduling pass the
// scopes the jobs count against with what running jobs use (LimitsPlan, feeding
// sched::LimitTally). Limits on one job alone (MaxTRESPerJob, MaxWall) hold it with their
// reason, or refuse it at submission under a QOS with Flags=DenyOnLimit; MaxSubmitJobs and
// GrpSubmitJobs refuse a submission over them. Thread-compatible.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conf/cluster_config.h"
#include "core/tres.h"
#include "model/association.h"
#include "model/job_request.h"
#include "sched/limits/limits.h"
#include "sched/priority/usage.h"

namespace loom::ctld {

// What a waiting job counts against limits: CPUs, memory, nodes and GPUs (and GPUs of its
// type) it asks for; billing as its CPUs.
core::TresVector RequestTres(const model::JobShape& shape);

// One holder of limits, parsed.
struct ParsedLimits {
  std::vector<sched::TresCap> grp_tres, max_tres_per_job, max_tres_per_user, min_tres_per_job;
  std::vector<sched::TresCap> grp_tres_mins;
  model::Limits raw;
  bool group() const { return !grp_tres.empty() || raw.grp_jobs >= 0 || !grp_tres_mins.empty(); }
};

class LimitRules {
 public:
  // Parses every limit of `table`; a TRES limit that does not parse is left out (sacctmgr
  // checks them when they are set). The partitions of `cluster` with a QOS= are the ones
  // whose jobs count against that QOS's limits too.
  LimitRules(const model::AssociationTable& table, const conf::ClusterConfig& cluster);

  const ParsedLimits* Qos(const std::string& name) const;
  const ParsedLimits* User(const std::string& account, const std::string& user) const;
  const ParsedLimits* Account(const std::string& name) const;
  // The account's ancestors, itself first, the root last.
  const std::vector<std::string>& Lineage(const std::string& account) const;
  // Flags=DenyOnLimit on the job's QOS or its partition's.
  bool deny_on_limit(const model::JobRequest& r, const std::string& partition) const;
  // The QOS of `partition` (its QOS= in slurm.conf), or "".
  const std::string& PartitionQos(const std::string& partition) const;
  // The QOS whose limits a job of `r` in `partition` counts against: its partition's QOS
  // first, then its own (once when they are the same).
  std::vector<const std::string*> QosOf(const model::JobRequest& r,
                                        const std::string& partition) const;

  // A limit on the job alone it goes over (or a QOS's MinTRESPerJob it falls short of), or
  // kNone: its partition's QOS's, its QOS's, then its association's, then its accounts'.
  model::PendingReason PerJob(const model::JobRequest& r, const std::string& user,
                              const std::string& partition, int64_t time_limit_s,
                              const core::TresVector& tres) const;

 private:
  std::map<std::string, ParsedLimits, std::less<>> qos_;
  std::map<std::pair<std::string, std::string>, ParsedLimits> users_;
  std::map<std::string, ParsedLimits, std::less<>> accounts_;
  std::map<std::string, std::vector<std::string>, std::less<>> lineage_;
  std::map<std::string, bool, std::less<>> deny_;
  std::map<std::string, std::string, std::less<>> partition_qos_;
};

// One pass's scopes: made as the jobs that count against them are met. GrpTRESMins scopes
// start from the decayed TRES usage of `usage` (null: none) of their QOS, association or
// account subtree; `safe` is AccountingStorageEnforce=safe.
class LimitsPlan {
 public:
  LimitsPlan(const LimitRules* rules, const sched::UsageLedger* usage, bool safe);
  // The scopes of a job of `user` with request `r` in `partition`.
  std::vector<int32_t> ScopesOf(const model::JobRequest& r, const std::string& user,
                                const std::string& partition);
  sched::LimitTable& table() { return table_; }

 private:
  // `used` gives the scope's decayed TRES usage when it is made with GrpTRESMins.
  int32_t Scope(const std::string& key, sched::LimitKind kind, const ParsedLimits& limits,
                const std::function<core::TresVector()>& used);
  int32_t Scope(const std::string& key, sched::LimitKind kind,
                const std::vector<sched::TresCap>& tres, int64_t max_jobs);
  // The decayed TRES-seconds of the associations under `account` (itself included).
  core::TresVector AccountUsage(const std::string& account) const;
  const LimitRules* rules_;
  const sched::UsageLedger* usage_;
  sched::LimitTable table_;
  std::map<std::string, int32_t> index_;
};

}  // namespace loom::ctld
