#include "core/interned.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace loom::core {
namespace {

TEST(InternedTest, EqualStringsAreOneString) {
  const std::string alice = "alice";
  Interned a(alice);
  Interned b(std::string_view("alice"));
  Interned c;
  c = "alice";
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_EQ(&a.str(), &c.str());
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a == std::string_view("alice"));
  EXPECT_TRUE(a == "alice");
  EXPECT_TRUE(a == alice);
  EXPECT_FALSE(a == Interned("bob"));
  const std::string& as_string = a;
  EXPECT_EQ(as_string, "alice");
}

TEST(InternedTest, DefaultIsTheEmptyString) {
  Interned none;
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none == Interned(""));
  Interned later = none;
  later = "batch";
  EXPECT_EQ(later.str(), "batch");
  EXPECT_TRUE(none.empty());
}

TEST(InternedTest, ThreadsInterningTheSameNamesGetTheSameStrings) {
  constexpr int kThreads = 8;
  std::vector<std::vector<const std::string*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < 1000; ++i) {
        seen[t].push_back(&Interned("user" + std::to_string(i % 50)).str());
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
}

}  // namespace
}  // namespace loom::core
