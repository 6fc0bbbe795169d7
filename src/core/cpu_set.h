// A set of CPU ids of one node (any size), as a job's CPU mask. Pure value; thread-compatible.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::core {

class CpuSet {
 public:
  CpuSet() = default;

  bool empty() const {
    for (uint64_t w : words_) {
      if (w) return false;
    }
    return true;
  }
  int32_t count() const {
    int32_t n = 0;
    for (uint64_t w : words_) n += std::popcount(w);
    return n;
  }
  bool test(int32_t cpu) const {
    size_t w = static_cast<size_t>(cpu) / 64;
    return w < words_.size() && (words_[w] >> (cpu % 64) & 1);
  }
  void set(int32_t cpu) {
    size_t w = static_cast<size_t>(cpu) / 64;
    if (w >= words_.size()) words_.resize(w + 1, 0);
    words_[w] |= uint64_t{1} << (cpu % 64);
  }
  void reset(int32_t cpu) {
    size_t w = static_cast<size_t>(cpu) / 64;
    if (w < words_.size()) words_[w] &= ~(uint64_t{1} << (cpu % 64));
  }
  bool Intersects(const CpuSet& o) const {
    for (size_t i = 0; i < words_.size() && i < o.words_.size(); ++i) {
      if (words_[i] & o.words_[i]) return true;
    }
    return false;
  }
  CpuSet& operator|=(const CpuSet& o) {
    if (o.words_.size() > words_.size()) words_.resize(o.words_.size(), 0);
    for (size_t i = 0; i < o.words_.size(); ++i) words_[i] |= o.words_[i];
    return *this;
  }
  // Removes every CPU of `o`.
  CpuSet& Subtract(const CpuSet& o) {
    for (size_t i = 0; i < words_.size() && i < o.words_.size(); ++i) words_[i] &= ~o.words_[i];
    return *this;
  }
  // The CPU ids in ascending order.
  std::vector<int32_t> ToVector() const {
    std::vector<int32_t> v;
    for (size_t i = 0; i < words_.size(); ++i) {
      for (uint64_t w = words_[i]; w; w &= w - 1) {
        v.push_back(static_cast<int32_t>(i * 64 + std::countr_zero(w)));
      }
    }
    return v;
  }
  // "0-3,8,10-11": the list form cpuset files and taskset use.
  std::string ToList() const {
    std::string s;
    std::vector<int32_t> v = ToVector();
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
      if (!s.empty()) s += ',';
      s += std::to_string(v[i]);
      if (j > i) s += '-' + std::to_string(v[j]);
      i = j + 1;
    }
    return s;
  }
  friend bool operator==(const CpuSet& a, const CpuSet& b) {
    size_t n = std::max(a.words_.size(), b.words_.size());
    for (size_t i = 0; i < n; ++i) {
      uint64_t x = i < a.words_.size() ? a.words_[i] : 0;
      uint64_t y = i < b.words_.size() ? b.words_[i] : 0;
      if (x != y) return false;
    }
    return true;
  }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace loom::core
