// What loomdbd's service files share about the entities they store: keys, the stored form,
// and new records with Slurm's defaults. Not part of loom_dbd's interface. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/strings.h"
#include "loom/v1/loom.pb.h"
#include "store/acct_store.h"

namespace loom::dbd::internal {

inline constexpr int kRpcVersion = 9728;  // Slurm 22.05's protocol number, as sacctmgr shows it

inline std::string AssocKey(const v1::AcctAssoc& a) {
  return core::StrCat(a.cluster(), "/", a.account(), "/", a.user(), "/", a.partition());
}

template <typename M>
store::AcctEntity Entity(std::string kind, std::string name, const M& m) {
  return {std::move(kind), std::move(name), m.SerializeAsString()};
}

inline v1::AcctQos NewQos(const std::string& name, uint32_t id) {
  v1::AcctQos q;
  q.set_name(name);
  q.set_max_wall_min(-1);
  q.set_max_jobs_per_user(-1);
  q.set_max_submit_jobs_per_user(-1);
  q.set_grp_jobs(-1);
  q.set_grp_submit_jobs(-1);
  q.set_usage_factor(1);
  q.set_id(id);
  return q;
}

inline v1::AcctAssoc NewAssoc(const std::string& cluster, const std::string& account,
                              const std::string& user, uint32_t id) {
  v1::AcctAssoc a;
  a.set_cluster(cluster);
  a.set_account(account);
  a.set_user(user);
  a.set_shares(1);
  a.set_grp_jobs(-1);
  a.set_grp_submit_jobs(-1);
  a.set_max_jobs(-1);
  a.set_max_submit_jobs(-1);
  a.set_max_wall_min(-1);
  a.add_qos("normal");
  a.set_id(id);
  return a;
}

}  // namespace loom::dbd::internal
