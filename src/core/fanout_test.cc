#include "core/fanout.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace loom::core {
namespace {

void Collect(const std::vector<FanoutNode>& tree, std::vector<int32_t>* out) {
  for (const FanoutNode& n : tree) {
    out->push_back(n.index);
    Collect(n.children, out);
  }
}

// Each node's children hold the consecutive indices after it, up to its next sibling.
void ExpectSpans(const std::vector<FanoutNode>& tree, int32_t first, int32_t end) {
  int32_t next = first;
  for (size_t i = 0; i < tree.size(); ++i) {
    EXPECT_EQ(tree[i].index, next);
    const int32_t span_end = i + 1 < tree.size() ? tree[i + 1].index : end;
    ExpectSpans(tree[i].children, next + 1, span_end);
    next = span_end;
  }
  EXPECT_EQ(next, end);
}

TEST(FanoutTest, FewNodesAreAllTheSendersOwn) {
  auto tree = FanoutTree(3, 50);
  ASSERT_EQ(tree.size(), 3u);
  for (int32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(tree[i].index, i);
    EXPECT_TRUE(tree[i].children.empty());
  }
  EXPECT_EQ(FanoutDepth(tree), 1);
  EXPECT_TRUE(FanoutTree(0, 50).empty());
  EXPECT_EQ(FanoutDepth({}), 0);
}

TEST(FanoutTest, SpansAreEvenAndEarlierOnesLonger) {
  // 7 nodes, width 2: {0..3} and {4..6}; 0 passes on to {1, 2} (headed by 1) and {3};
  // 4 to {5} and {6}.
  auto tree = FanoutTree(7, 2);
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree[0].index, 0);
  EXPECT_EQ(tree[1].index, 4);
  ASSERT_EQ(tree[0].children.size(), 2u);
  EXPECT_EQ(tree[0].children[0].index, 1);
  ASSERT_EQ(tree[0].children[0].children.size(), 1u);
  EXPECT_EQ(tree[0].children[0].children[0].index, 2);
  EXPECT_EQ(tree[0].children[1].index, 3);
  ASSERT_EQ(tree[1].children.size(), 2u);
  EXPECT_EQ(tree[1].children[0].index, 5);
  EXPECT_EQ(tree[1].children[1].index, 6);
  EXPECT_EQ(FanoutDepth(tree), 3);
}

TEST(FanoutTest, EveryNodeOnceAtAnyWidth) {
  for (int32_t count : {1, 2, 5, 16, 17, 100, 513}) {
    for (int32_t width : {0, 1, 2, 3, 8, 50}) {
      auto tree = FanoutTree(count, width);
      std::vector<int32_t> seen;
      Collect(tree, &seen);
      std::sort(seen.begin(), seen.end());
      ASSERT_EQ(static_cast<int32_t>(seen.size()), count) << count << " " << width;
      for (int32_t i = 0; i < count; ++i) EXPECT_EQ(seen[i], i);
      EXPECT_LE(static_cast<int32_t>(tree.size()), std::max(width, 2));
      ExpectSpans(tree, 0, count);
    }
  }
  // Wider trees are shallower.
  EXPECT_LT(FanoutDepth(FanoutTree(513, 8)), FanoutDepth(FanoutTree(513, 2)));
  EXPECT_EQ(FanoutDepth(FanoutTree(50, 50)), 1);
}

}  // namespace
}  // namespace loom::core
