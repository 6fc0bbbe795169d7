// An index over nodes in selection order that finds the first node, at or after a given
// position, with at least a given amount free right now. A segment tree of per-component
// maxima: a subtree whose maxima fall short in any component holds no such node, so a
// busy cluster answers in O(log n) instead of a scan. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/types.h"

namespace loom::sched {

class FreeIndex {
 public:
  // `free[p]` is what is free now on the node at position p.
  void Build(const std::vector<Resources>& free);
  void Set(int32_t pos, const Resources& free);
  // The first position >= from whose free amount covers `need`, or -1.
  int32_t FirstCovering(const Resources& need, int32_t from) const;
  int32_t size() const { return n_; }

 private:
  int32_t Descend(int32_t node, int32_t lo, int32_t hi, const Resources& need,
                  int32_t from) const;

  int32_t n_ = 0;
  int32_t leaves_ = 1;
  std::vector<Resources> max_;  // heap layout, root at 1
};

}  // namespace loom::sched
