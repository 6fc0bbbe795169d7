// Disjoint sets over 0..n-1, for grouping GPUs into NVLink domains, PCIe switches and
// NUMA nodes. Internal to the conf readers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace loom::conf::internal {

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) {
    for (size_t i = 0; i < n; ++i) parent_[i] = i;
  }
  size_t Find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(size_t a, size_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }
  // Group ids numbered in the order of each group's first member.
  std::vector<int32_t> Groups() {
    std::vector<int32_t> id_of_root(parent_.size(), -1), out(parent_.size());
    int32_t next = 0;
    for (size_t i = 0; i < parent_.size(); ++i) {
      size_t r = Find(i);
      if (id_of_root[r] < 0) id_of_root[r] = next++;
      out[i] = id_of_root[r];
    }
    return out;
  }

 private:
  std::vector<size_t> parent_;
};

}  // namespace loom::conf::internal
