#include "sched/priority/fairshare.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace loom::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool IsUser(const ShareAssoc& a) { return !a.user.empty(); }

// The tree as the algorithms walk it: an account with Fairshare=parent is not a level of its
// own (its children join its parent's level), and a user with Fairshare=parent stands in for
// its account (it takes the account's place and values).
struct Levels {
  std::vector<int32_t> level_parent;           // the account whose level an association is in
  std::vector<std::vector<int32_t>> children;  // the members of each account's level
  std::vector<int32_t> stands_for;             // a Fairshare=parent user: its account; else -1
  std::vector<double> level_shares;            // the sum of the shares of each level
  std::vector<double> level_usage;             // the sum of the usage of each level
};

Levels LevelsOf(std::span<const ShareAssoc> tree, const std::vector<ShareValues>& v) {
  const size_t n = tree.size();
  Levels l;
  l.level_parent.assign(n, -1);
  l.children.resize(n);
  l.stands_for.assign(n, -1);
  l.level_shares.assign(n, 0);
  l.level_usage.assign(n, 0);
  auto transparent = [&](int32_t i) {
    return i > 0 && !IsUser(tree[i]) && tree[i].shares == kSharesParent;
  };
  auto opaque_ancestor = [&](int32_t p) {
    while (transparent(p)) p = tree[p].parent;
    return std::max<int32_t>(p, 0);
  };
  for (size_t i = 1; i < n; ++i) {
    const auto self = static_cast<int32_t>(i);
    if (transparent(self)) continue;
    int32_t account = opaque_ancestor(tree[i].parent);
    if (IsUser(tree[i]) && tree[i].shares == kSharesParent && account > 0) {
      l.stands_for[i] = account;
      l.level_parent[i] = l.level_parent[account] >= 0 ? l.level_parent[account]
                                                       : opaque_ancestor(tree[account].parent);
      continue;  // not a member in its own right: it borrows the account's place
    }
    l.level_parent[i] = account;
    l.children[account].push_back(self);
    l.level_shares[account] += static_cast<double>(std::max<int64_t>(tree[i].shares, 0));
    l.level_usage[account] += v[i].raw_usage;
  }
  return l;
}

// Usage of each association: its own plus its descendants' (parents come first).
void SumUsage(std::span<const ShareAssoc> tree, std::vector<ShareValues>* v) {
  for (size_t i = 0; i < tree.size(); ++i) (*v)[i].raw_usage = std::max(0.0, tree[i].usage);
  for (size_t i = tree.size(); i-- > 1;) {
    if (tree[i].parent >= 0) (*v)[tree[i].parent].raw_usage += (*v)[i].raw_usage;
  }
  const double total = (*v)[0].raw_usage;
  for (ShareValues& s : *v) s.norm_usage = total > 0 ? s.raw_usage / total : 0.0;
}

// Normalised shares: shares over the level's down from the root (1).
void NormShares(std::span<const ShareAssoc> tree, const Levels& l, std::vector<ShareValues>* v) {
  (*v)[0].norm_shares = 1.0;
  for (size_t i = 1; i < tree.size(); ++i) {
    if (l.stands_for[i] >= 0 || l.level_parent[i] < 0) continue;
    const int32_t p = l.level_parent[i];
    const double sum = l.level_shares[p];
    const auto shares = static_cast<double>(std::max<int64_t>(tree[i].shares, 0));
    (*v)[i].norm_shares = sum > 0 ? (*v)[p].norm_shares * shares / sum : 0.0;
  }
}

// Members of a level come after their level's account: filling in index order sees parents
// first, since every association comes after its parent.
void Borrow(const Levels& l, std::vector<ShareValues>* v) {
  for (size_t i = 0; i < v->size(); ++i) {
    if (const int32_t a = l.stands_for[i]; a >= 0) {
      const double usage = (*v)[i].raw_usage, norm = (*v)[i].norm_usage;
      (*v)[i] = (*v)[a];
      (*v)[i].raw_usage = usage;
      (*v)[i].norm_usage = norm;
    }
  }
}

void Classic(std::span<const ShareAssoc> tree, const Levels& l, std::vector<ShareValues>* v) {
  (*v)[0].effective_usage = 1.0;
  (*v)[0].fairshare = 0.5;  // 2^(-1/1), as for any association
  for (size_t i = 1; i < tree.size(); ++i) {
    if (l.stands_for[i] >= 0 || l.level_parent[i] < 0) continue;
    ShareValues& s = (*v)[i];
    const int32_t p = l.level_parent[i];
    const double sum = l.level_shares[p];
    const auto shares = static_cast<double>(std::max<int64_t>(tree[i].shares, 0));
    if (sum <= 0) {
      s.effective_usage = 0;
    } else if (p == 0) {
      s.effective_usage = s.norm_usage;  // under the root: its own usage
    } else {
      s.effective_usage = s.norm_usage + ((*v)[p].effective_usage - s.norm_usage) * (shares / sum);
    }
    s.fairshare = s.norm_shares > 0 ? std::exp2(-s.effective_usage / s.norm_shares) : 0.0;
  }
}

// Level fair share of every member: its part of its level's shares over its part of the
// level's usage.
void LevelFs(std::span<const ShareAssoc> tree, const Levels& l, std::vector<ShareValues>* v) {
  for (size_t i = 1; i < tree.size(); ++i) {
    if (l.stands_for[i] >= 0 || l.level_parent[i] < 0) continue;
    ShareValues& s = (*v)[i];
    const int32_t p = l.level_parent[i];
    const double shares_sum = l.level_shares[p], usage_sum = l.level_usage[p];
    const double part_shares =
        shares_sum > 0 ? static_cast<double>(std::max<int64_t>(tree[i].shares, 0)) / shares_sum
                       : 0.0;
    const double part_usage = usage_sum > 0 ? s.raw_usage / usage_sum : 0.0;
    s.effective_usage = part_usage;
    if (part_shares <= 0) {
      s.level_fs = 0;
    } else {
      s.level_fs = part_usage > 0 ? part_shares / part_usage : kInf;
    }
  }
}

// Fair Tree's ranking: the members of `group` in order of level fair share, higher first;
// users take the next rank (tied users the same one), tied accounts pool their members and
// are ranked as one group.
class Ranker {
 public:
  Ranker(std::span<const ShareAssoc> tree, const Levels& l, std::vector<ShareValues>* v,
         int64_t users)
      : tree_(tree), l_(l), v_(*v), users_(users), rank_(users) {
    for (size_t i = 0; i < tree.size(); ++i) {
      if (l.stands_for[i] >= 0) proxies_[l.stands_for[i]].push_back(static_cast<int32_t>(i));
    }
  }

  void Rank(std::vector<int32_t> group) {
    std::stable_sort(group.begin(), group.end(),
                     [&](int32_t a, int32_t b) { return v_[a].level_fs > v_[b].level_fs; });
    for (size_t begin = 0; begin < group.size();) {
      size_t end = begin + 1;
      while (end < group.size() && v_[group[end]].level_fs == v_[group[begin]].level_fs) ++end;
      // Users of the tie first, all at one rank; users standing in for a tied account too.
      std::vector<int32_t> tied_users, pooled;
      for (size_t k = begin; k < end; ++k) {
        const int32_t m = group[k];
        if (IsUser(tree_[m])) {
          tied_users.push_back(m);
          continue;
        }
        if (auto it = proxies_.find(m); it != proxies_.end()) {
          tied_users.insert(tied_users.end(), it->second.begin(), it->second.end());
        }
        pooled.insert(pooled.end(), l_.children[m].begin(), l_.children[m].end());
      }
      if (!tied_users.empty()) {
        for (int32_t u : tied_users) {
          v_[u].fairshare = tree_[u].shares == 0 || users_ == 0
                                ? 0.0
                                : static_cast<double>(rank_) / static_cast<double>(users_);
        }
        rank_ -= static_cast<int64_t>(tied_users.size());
      }
      if (!pooled.empty()) Rank(std::move(pooled));
      begin = end;
    }
  }

 private:
  std::span<const ShareAssoc> tree_;
  const Levels& l_;
  std::vector<ShareValues>& v_;
  const int64_t users_;
  int64_t rank_;
  std::map<int32_t, std::vector<int32_t>> proxies_;  // account -> users standing in for it
};

}  // namespace

std::vector<ShareValues> ComputeFairShare(std::span<const ShareAssoc> tree,
                                          FairShareAlgorithm algorithm) {
  std::vector<ShareValues> v(tree.size());
  if (tree.empty()) return v;
  SumUsage(tree, &v);
  const Levels l = LevelsOf(tree, v);
  NormShares(tree, l, &v);
  if (algorithm == FairShareAlgorithm::kClassic) {
    Classic(tree, l, &v);
    Borrow(l, &v);
    return v;
  }
  LevelFs(tree, l, &v);
  // Fair Tree shows shares among siblings, as it weighs them; the root has no siblings.
  for (size_t i = 1; i < tree.size(); ++i) {
    if (l.stands_for[i] >= 0 || l.level_parent[i] < 0) continue;
    const double sum = l.level_shares[l.level_parent[i]];
    v[i].norm_shares =
        sum > 0 ? static_cast<double>(std::max<int64_t>(tree[i].shares, 0)) / sum : 0.0;
  }
  v[0].norm_shares = 0;
  v[0].effective_usage = 1.0;
  int64_t users = 0;
  for (const ShareAssoc& a : tree) users += IsUser(a) ? 1 : 0;
  // Standing in for an account: its level values, then its own rank below.
  Borrow(l, &v);
  Ranker(tree, l, &v, users).Rank(l.children[0]);
  return v;
}

double DecayFactor(int64_t seconds, int64_t half_life_s) {
  if (half_life_s <= 0 || seconds <= 0) return 1.0;
  return std::exp2(-static_cast<double>(seconds) / static_cast<double>(half_life_s));
}

}  // namespace loom::sched
