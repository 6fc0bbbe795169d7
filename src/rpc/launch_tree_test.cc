#include "rpc/launch_tree.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/strings.h"

namespace loom::rpc {
namespace {

std::vector<v1::ForwardedLaunch> Launches(int n) {
  std::vector<v1::ForwardedLaunch> out;
  for (int i = 0; i < n; ++i) {
    v1::ForwardedLaunch f;
    f.set_node(core::StrCat("n", i));
    f.set_address(core::StrCat("127.0.0.1:", 7000 + i));
    f.mutable_request()->set_job_id(42);
    f.mutable_request()->set_step_node_index(i);
    out.push_back(std::move(f));
  }
  return out;
}

TEST(LaunchTreeTest, WideEnoughTheSenderTalksToEveryNode) {
  auto roots = LaunchTree(Launches(3), 50);
  ASSERT_EQ(roots.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(roots[i].node(), core::StrCat("n", i));
    EXPECT_EQ(roots[i].request().step_node_index(), i);
    EXPECT_TRUE(roots[i].request().forward().empty());
  }
}

TEST(LaunchTreeTest, NarrowTheNodesPassItOnAndEachNodeGetsItsOwnRequest) {
  auto roots = LaunchTree(Launches(7), 2);
  ASSERT_EQ(roots.size(), 2u);
  EXPECT_EQ(roots[0].node(), "n0");
  EXPECT_EQ(roots[1].node(), "n4");
  std::vector<std::string> all;
  for (const auto& r : roots) {
    for (const std::string& n : NodesUnder(r)) all.push_back(n);
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"n0", "n1", "n2", "n3", "n4", "n5", "n6"}));
  EXPECT_EQ(NodesUnder(roots[1]), (std::vector<std::string>{"n4", "n5", "n6"}));
  // n0 passes the launch on to n1 (which passes it to n2) and n3, each request its own.
  const auto& under0 = roots[0].request().forward();
  ASSERT_EQ(under0.size(), 2);
  EXPECT_EQ(under0[0].node(), "n1");
  EXPECT_EQ(under0[0].request().step_node_index(), 1);
  EXPECT_EQ(under0[0].request().forward(0).node(), "n2");
  EXPECT_EQ(under0[1].address(), "127.0.0.1:7003");
}

}  // namespace
}  // namespace loom::rpc
