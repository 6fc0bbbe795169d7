#include "core/fanout.h"

#include <algorithm>

namespace loom::core {
namespace {

// The nodes first..first+count-1, cut into at most `width` spans, each headed by its first.
std::vector<FanoutNode> Split(int32_t first, int32_t count, int32_t width) {
  std::vector<FanoutNode> out;
  if (count <= 0) return out;
  const int32_t spans = std::min(count, width);
  const int32_t base = count / spans;
  const int32_t longer = count % spans;  // the first `longer` spans get one more node
  int32_t next = first;
  for (int32_t s = 0; s < spans; ++s) {
    const int32_t size = base + (s < longer ? 1 : 0);
    FanoutNode head;
    head.index = next;
    head.children = Split(next + 1, size - 1, width);
    out.push_back(std::move(head));
    next += size;
  }
  return out;
}

}  // namespace

std::vector<FanoutNode> FanoutTree(int32_t count, int32_t width) {
  return Split(0, count, std::max(width, 2));
}

int32_t FanoutDepth(const std::vector<FanoutNode>& tree) {
  int32_t depth = 0;
  for (const FanoutNode& n : tree) depth = std::max(depth, 1 + FanoutDepth(n.children));
  return depth;
}

}  // namespace loom::core
