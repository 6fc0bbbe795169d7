// The account tree as fair share reads it, built from the association table (the controller's
// copy of loomdbd's, or the simulator's shares file) and the usage ledger, with the values of
// every association and the factor of each user's. One builder for both drivers, so that a
// simulated cluster ranks its users exactly as a running one would. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/association.h"
#include "sched/priority/fairshare.h"
#include "sched/priority/usage.h"

namespace loom::sched {

struct ShareTable {
  // The root's association first, each account after its parent with its users right after
  // it (in name order), before its sub-accounts: the order sshare prints.
  std::vector<ShareAssoc> tree;
  std::vector<ShareValues> values;  // by index of `tree`
  std::vector<int32_t> depth;       // levels below the root
  // The factor of each user association, by (account, user).
  std::map<std::pair<std::string, std::string>, double> factor;
};

// Accounts whose parent is not in the table are left out, with their users. User
// associations made for one partition are not levels of the tree.
ShareTable BuildShareTable(const model::AssociationTable& table, const UsageLedger& usage,
                           FairShareAlgorithm algorithm);

}  // namespace loom::sched
