#include "stepd/mpi/exchange.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace loom::stepd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(StepTreeLinks, OneNodeIsAloneAtTheRoot) { EXPECT_EQ(StepTreeLinks(1, 50, 0), TreeLinks{}); }

TEST(StepTreeLinks, TheRootTalksToAtMostWidthNodes) {
  // Nodes 1..6 below node 0 in two spans of three: 1 heads 2,3 and 4 heads 5,6.
  EXPECT_EQ(StepTreeLinks(7, 2, 0).children, (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(StepTreeLinks(7, 2, 1), (TreeLinks{0, {2, 3}}));
  EXPECT_EQ(StepTreeLinks(7, 2, 4), (TreeLinks{0, {5, 6}}));
  EXPECT_EQ(StepTreeLinks(7, 2, 6), (TreeLinks{4, {}}));
}

TEST(StepTreeLinks, EveryNodeButTheRootHasOneParentThatListsIt) {
  for (int32_t count : {2, 5, 16, 64, 257}) {
    for (int32_t width : {1, 2, 3, 50}) {
      for (int32_t n = 1; n < count; ++n) {
        const TreeLinks mine = StepTreeLinks(count, width, n);
        ASSERT_GE(mine.parent, 0);
        const TreeLinks up = StepTreeLinks(count, width, mine.parent);
        EXPECT_EQ(std::count(up.children.begin(), up.children.end(), n), 1);
        EXPECT_LE(static_cast<int32_t>(up.children.size()), std::max(width, 2));
      }
    }
  }
}

// Several nodes' exchanges wired to each other through a queue delivered in random order, as
// loomds would deliver them (each message once, in no particular order between links).
class Cluster {
 public:
  Cluster(int32_t count, int32_t width, uint32_t seed) : rng_(seed) {
    for (int32_t n = 0; n < count; ++n) {
      nodes_.push_back(std::make_unique<StepExchange>(
          count, width, n, [this, n](const std::vector<int32_t>& to, const v1::StepMessage& m) {
            for (int32_t t : to) queue_.push_back({n, t, m});
          }));
    }
  }
  StepExchange& node(int32_t n) { return *nodes_[static_cast<size_t>(n)]; }
  // Delivers everything queued, and what that sends, in random order.
  void Run() {
    while (!queue_.empty()) {
      std::uniform_int_distribution<size_t> pick(0, queue_.size() - 1);
      const size_t i = pick(rng_);
      Message m = queue_[i];
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
      ++delivered_;
      node(m.to).Receive(m.from, m.message);
    }
  }
  int delivered() const { return delivered_; }

 private:
  struct Message {
    int32_t from, to;
    v1::StepMessage message;
  };
  std::mt19937 rng_;
  std::vector<std::unique_ptr<StepExchange>> nodes_;
  std::deque<Message> queue_;
  int delivered_ = 0;
};

std::string Sorted(std::string s) {
  std::sort(s.begin(), s.end());
  return s;
}

TEST(StepExchange, AFenceGivesEveryNodeEveryNodesPart) {
  for (int32_t count : {1, 2, 7, 40}) {
    for (int32_t width : {2, 3, 50}) {
      Cluster c(count, width, 7u * static_cast<uint32_t>(count + width));
      std::vector<std::string> got(static_cast<size_t>(count));
      std::string expected;
      // The parts go in from the last node to the first, each delivered before the next.
      for (int32_t n = count - 1; n >= 0; --n) {
        const std::string part(1, static_cast<char>('A' + n % 26));
        expected += part;
        c.node(n).Fence(part, [&got, n](std::string all) { got[static_cast<size_t>(n)] = all; });
        c.Run();
      }
      for (int32_t n = 0; n < count; ++n) {
        EXPECT_EQ(Sorted(got[static_cast<size_t>(n)]), Sorted(expected))
            << count << " nodes, width " << width << ", node " << n;
      }
      // Each node but the root sends one contribution up; each release goes one hop down.
      EXPECT_EQ(c.delivered(), 2 * (count - 1));
    }
  }
}

TEST(StepExchange, FencesFollowEachOtherInOrderEvenWhenPartsComeEarly) {
  Cluster c(5, 2, 1);
  std::vector<std::vector<std::string>> got(5);
  auto record = [&got](int32_t n) {
    return [&got, n](std::string all) { got[static_cast<size_t>(n)].push_back(Sorted(all)); };
  };
  // Nodes 1-4 make both fences before node 0 makes its first.
  for (int32_t n = 1; n < 5; ++n) {
    c.node(n).Fence("a", record(n));
    c.node(n).Fence("b", record(n));
  }
  c.Run();
  for (const auto& g : got) EXPECT_THAT(g, IsEmpty());
  c.node(0).Fence("a", record(0));
  c.Run();
  c.node(0).Fence("b", record(0));
  c.Run();
  for (const auto& g : got) EXPECT_THAT(g, ElementsAre("aaaaa", "bbbbb"));
}

TEST(StepExchange, ADirectModexAsksTheNodeThatHoldsTheRank) {
  Cluster c(3, 2, 5);
  c.node(2).SetModexServe([](uint32_t rank, StepExchange::ModexDone reply) {
    reply(0, "data of rank " + std::to_string(rank));
  });
  int32_t status = -1;
  std::string data;
  c.node(0).Modex(2, 5, [&](int32_t s, std::string d) {
    status = s;
    data = std::move(d);
  });
  c.Run();
  EXPECT_EQ(status, 0);
  EXPECT_EQ(data, "data of rank 5");
  // A node that serves nothing answers with an error rather than leaving the asker waiting.
  c.node(2).Modex(1, 0, [&](int32_t s, std::string) { status = s; });
  c.Run();
  EXPECT_NE(status, 0);
}

TEST(StepExchange, AnAbortReachesEveryOtherNode) {
  Cluster c(4, 2, 9);
  std::vector<int32_t> heard;
  for (int32_t n = 0; n < 4; ++n) {
    c.node(n).SetOnAbort([&heard, n](const v1::StepMessage::Abort& a) {
      EXPECT_EQ(a.rank(), 3u);
      heard.push_back(n);
    });
  }
  v1::StepMessage::Abort a;
  a.set_rank(3);
  a.set_status(1);
  c.node(2).Abort(a);
  c.Run();
  std::sort(heard.begin(), heard.end());
  EXPECT_THAT(heard, ElementsAre(0, 1, 3));
}

}  // namespace
}  // namespace loom::stepd
