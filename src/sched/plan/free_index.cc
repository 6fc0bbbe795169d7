#include "sched/plan/free_index.h"

#include <algorithm>

namespace loom::sched {
namespace {

Resources Max(const Resources& a, const Resources& b) {
  return Resources{std::max(a.cpus, b.cpus), std::max(a.gpus, b.gpus),
                   std::max(a.mem_mb, b.mem_mb)};
}

// Below any real amount, so empty leaves never cover a need.
constexpr Resources kNone{-1, -1, -1};

}  // namespace

void FreeIndex::Build(const std::vector<Resources>& free) {
  n_ = static_cast<int32_t>(free.size());
  leaves_ = 1;
  while (leaves_ < n_) leaves_ *= 2;
  max_.assign(2 * static_cast<size_t>(leaves_), kNone);
  for (int32_t p = 0; p < n_; ++p) max_[leaves_ + p] = free[p];
  for (int32_t i = leaves_ - 1; i >= 1; --i) max_[i] = Max(max_[2 * i], max_[2 * i + 1]);
}

void FreeIndex::Set(int32_t pos, const Resources& free) {
  int32_t i = leaves_ + pos;
  max_[i] = free;
  for (i /= 2; i >= 1; i /= 2) max_[i] = Max(max_[2 * i], max_[2 * i + 1]);
}

int32_t FreeIndex::FirstCovering(const Resources& need, int32_t from) const {
  if (from >= n_ || n_ == 0) return -1;
  return Descend(1, 0, leaves_, need, from);
}

int32_t FreeIndex::Descend(int32_t node, int32_t lo, int32_t hi, const Resources& need,
                           int32_t from) const {
  if (hi <= from || !max_[node].Covers(need)) return -1;
  if (hi - lo == 1) return lo < n_ ? lo : -1;
  int32_t mid = (lo + hi) / 2;
  int32_t r = Descend(2 * node, lo, mid, need, from);
  if (r >= 0) return r;
  return Descend(2 * node + 1, mid, hi, need, from);
}

}  // namespace loom::sched
