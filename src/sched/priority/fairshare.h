// Fair share: the fair-share factor of each user association from the account tree's shares
// and the usage charged to it, by Slurm's two algorithms. Fair Tree (the default) ranks users
// so that every user under an account that is ahead of a sibling account comes before every
// user under the sibling; classic (PriorityFlags=NO_FAIR_TREE) gives each association
// 2^(-effective usage / normalised shares). Pure functions over a value snapshot, so the
// controller and the simulator compute the same factors; thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace loom::sched {

// Fairshare=parent: the association has no shares of its own and counts as its parent.
inline constexpr int64_t kSharesParent = -1;

// One association of the tree: an account's own (user empty) or a user's in an account.
// Index 0 is the root account's; every other names its parent account's index, which comes
// before it.
struct ShareAssoc {
  std::string account;
  std::string user;     // empty: the account itself
  int32_t parent = -1;  // the parent account's index; -1 only for the root
  int64_t shares = 1;   // raw shares (Fairshare=N), or kSharesParent
  double usage = 0;     // decayed usage charged to this association itself (billing-seconds)
};

// What sshare shows for one association.
struct ShareValues {
  // Classic: its part of the machine (shares / siblings' down the tree); Fair Tree: its part
  // of its level's shares (0 for the root).
  double norm_shares = 0;
  double raw_usage = 0;        // its own usage plus its children's
  double norm_usage = 0;       // raw_usage / the root's
  double effective_usage = 0;  // classic: with its parent's; Fair Tree: its part of its level's
  // Fair Tree: its shares among its siblings over its usage among them; +inf without usage.
  double level_fs = std::numeric_limits<double>::infinity();
  double fairshare = 0;  // the factor in [0, 1]; users (classic: every association)
};

enum class FairShareAlgorithm { kFairTree, kClassic };

// The values of every association of `tree`, by index. Associations with zero shares get a
// factor of 0; Fair Tree ranks users from user_count down to 1 (ties share a rank) and
// divides by user_count.
std::vector<ShareValues> ComputeFairShare(std::span<const ShareAssoc> tree,
                                          FairShareAlgorithm algorithm);

// The factor by which usage decays over `seconds` with half-life `half_life_s` (0: none).
double DecayFactor(int64_t seconds, int64_t half_life_s);

}  // namespace loom::sched
