#include "sched/priority/share_tree.h"

#include <algorithm>
#include <string_view>

namespace loom::sched {

ShareTable BuildShareTable(const model::AssociationTable& t, const UsageLedger& usage,
                           FairShareAlgorithm algorithm) {
  // Accounts first, each after its parent.
  std::vector<ShareAssoc> accounts;
  std::vector<int32_t> account_depth;
  std::map<std::string, int32_t, std::less<>> index;
  auto add = [&](ShareAssoc a, int32_t depth) {
    accounts.push_back(std::move(a));
    account_depth.push_back(depth);
    return static_cast<int32_t>(accounts.size() - 1);
  };
  index["root"] = add({"root", "", -1, 1, 0}, 0);
  for (const model::AccountAssociation& a : t.accounts) {
    if (a.name == "root") continue;
    auto parent = index.find(a.parent.empty() ? "root" : a.parent);
    if (parent == index.end()) continue;  // an orphan the tree will not hold
    index[a.name] =
        add({a.name, "", parent->second, a.shares, 0}, account_depth[parent->second] + 1);
  }
  // Then each account's users right after it.
  std::map<std::string_view, std::vector<const model::UserAssociation*>, std::less<>> users_of;
  for (const model::UserAssociation& u : t.associations) {
    if (u.partition.empty()) users_of[u.account].push_back(&u);
  }
  ShareTable out;
  std::vector<int32_t> moved(accounts.size());
  for (size_t i = 0; i < accounts.size(); ++i) {
    moved[i] = static_cast<int32_t>(out.tree.size());
    ShareAssoc a = accounts[i];
    if (a.parent >= 0) a.parent = moved[a.parent];
    out.tree.push_back(std::move(a));
    out.depth.push_back(account_depth[i]);
    std::vector<const model::UserAssociation*>& users = users_of[accounts[i].account];
    std::sort(users.begin(), users.end(), [](auto* x, auto* y) { return x->user < y->user; });
    for (const model::UserAssociation* u : users) {
      out.tree.push_back(
          {u->account, u->user, moved[i], u->shares, usage.UsageOf(u->account, u->user)});
      out.depth.push_back(account_depth[i] + 1);
    }
  }
  out.values = ComputeFairShare(out.tree, algorithm);
  for (size_t i = 0; i < out.tree.size(); ++i) {
    const ShareAssoc& a = out.tree[i];
    if (!a.user.empty()) out.factor[{a.account, a.user}] = out.values[i].fairshare;
  }
  return out;
}

}  // namespace loom::sched
