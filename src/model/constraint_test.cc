#include "model/constraint.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace loom::model {
namespace {

TEST(FeatureExpr, AndOrParentheses) {
  auto e = FeatureExpr::Parse("a100&(ib|roce)");
  ASSERT_TRUE(e.ok()) << e.status();
  std::vector<std::string> n1 = {"a100", "ib"}, n2 = {"a100"}, n3 = {"h100", "roce"};
  EXPECT_TRUE(e->Matches(n1));
  EXPECT_FALSE(e->Matches(n2));
  EXPECT_FALSE(e->Matches(n3));
  auto o = FeatureExpr::Parse("h100|a100&bigmem");  // & binds tighter
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->Matches(n3));
  EXPECT_FALSE(o->Matches(n2));
  EXPECT_TRUE(FeatureExpr::Parse("")->Matches(n2));
}

TEST(FeatureExpr, ErrorsSayWhere) {
  for (const char* bad : {"a&", "(a|b", "a||b", "a*2", "a b", "&a"}) {
    auto e = FeatureExpr::Parse(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(std::string(e.status().message()).find("position"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace loom::model
