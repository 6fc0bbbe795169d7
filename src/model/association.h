// The accounting's association tree as the controller uses it at submission (Slurm's
// assoc_mgr cache): each user's default account, the user associations (account, user,
// partition) with the QOS they may use, and the QOS that exist. Filled from loomdbd; a value
// type, immutable once built, shared by snapshots. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace loom::model {

// Fairshare=parent.
inline constexpr int64_t kFairshareParent = -1;

// Limits as sacctmgr sets them on an association or a QOS. TRES limits in sacctmgr's form
// ("cpu=16,gres/gpu=4"); empty strings and counts of -1: none.
struct Limits {
  std::string grp_tres;          // GrpTRES: the jobs of the QOS / account subtree together
  int64_t grp_jobs = -1;         // GrpJobs
  int64_t grp_submit_jobs = -1;  // GrpSubmitJobs
  std::string max_tres_per_job;  // MaxTRESPerJob (MaxTRES)
  int64_t max_wall_s = -1;       // MaxWall
  // Per user: a QOS's MaxTRESPerUser, MaxJobsPerUser, MaxSubmitJobsPerUser; a user
  // association's own MaxJobs and MaxSubmitJobs.
  std::string max_tres_per_user;
  int64_t max_jobs = -1;
  int64_t max_submit_jobs = -1;
  std::string min_tres_per_job;  // a QOS's MinTRESPerJob: the least a job of it must ask for
  // GrpTRESMins: TRES-minutes the jobs of the QOS / account subtree may use, decayed usage
  // of past jobs and what running jobs may still use counted.
  std::string grp_tres_mins;
  bool any() const {
    return !grp_tres.empty() || grp_jobs >= 0 || grp_submit_jobs >= 0 ||
           !max_tres_per_job.empty() || max_wall_s >= 0 || !max_tres_per_user.empty() ||
           max_jobs >= 0 || max_submit_jobs >= 0 || !min_tres_per_job.empty() ||
           !grp_tres_mins.empty();
  }
};

struct UserAssociation {
  std::string account;
  std::string user;
  std::string partition;         // empty: every partition
  std::vector<std::string> qos;  // the QOS its jobs may ask for
  std::string default_qos;       // empty: "normal" when allowed
  int64_t shares = 1;            // Fairshare=N, or kFairshareParent
  Limits limits;
  int64_t priority = 0;  // Priority (PriorityWeightAssoc); 0: its account's
};

// An account's own association: where it sits in the tree and its part of its parent's.
struct AccountAssociation {
  std::string name;
  std::string parent;  // empty for root
  int64_t shares = 1;  // Fairshare=N, or kFairshareParent
  Limits limits;
  int64_t priority = 0;  // Priority (PriorityWeightAssoc); 0: its parent's
};

// What fair share and the multifactor formula read from a QOS.
struct QosPolicy {
  int64_t priority = 0;
  double usage_factor = 1.0;  // UsageFactor: how its jobs' usage counts
  Limits limits;
  bool deny_on_limit = false;  // Flags=DenyOnLimit: refuse at submission what a limit holds
};

struct AssociationTable {
  std::map<std::string, std::string, std::less<>> default_account;  // user -> account
  std::vector<UserAssociation> associations;
  std::set<std::string, std::less<>> qos;
  // The accounts of this cluster, parents before their children (root first).
  std::vector<AccountAssociation> accounts;
  std::map<std::string, QosPolicy, std::less<>> qos_policy;

  // The association of `user` with `account` for `partition`: one made for that partition
  // first, else one for every partition; null when there is none.
  const UserAssociation* Find(std::string_view user, std::string_view account,
                              std::string_view partition) const;
  // The QOS a job of `a` gets when it asks for none: its DefaultQOS, else "normal" when `a`
  // may use it, else its only QOS; empty when none of these holds.
  static std::string DefaultQos(const UserAssociation& a);
};

}  // namespace loom::model
