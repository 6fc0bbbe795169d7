// CPU lists as nvidia-smi and gres.conf write them: ranges, overlaps, and the errors.
#include "core/cpu_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace loom::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorText(const StatusOr<std::vector<int32_t>>& r) {
  return r.ok() ? "<ok>" : std::string(r.status().message());
}

TEST(CpuList, RangesComeBackAscendingWithoutDuplicates) {
  EXPECT_THAT(ParseCpuList("3").value(), ElementsAre(3));
  EXPECT_THAT(ParseCpuList("6-7, 0-2,1-3").value(), ElementsAre(0, 1, 2, 3, 6, 7));
  EXPECT_THAT(ParseCpuList("4,4,2-4").value(), ElementsAre(2, 3, 4));
  EXPECT_EQ(ParseCpuList("0-63,128-191").value().size(), 128u);
}

TEST(CpuList, Errors) {
  EXPECT_THAT(ErrorText(ParseCpuList("")), HasSubstr("the CPU list is empty"));
  EXPECT_THAT(ErrorText(ParseCpuList("0,,2")), HasSubstr("'0,,2' has an empty item"));
  EXPECT_THAT(ErrorText(ParseCpuList("5-2")), HasSubstr("range '5-2' ends before it starts"));
  EXPECT_THAT(ErrorText(ParseCpuList("a-3")), HasSubstr("'a-3' is not a CPU id or range"));
  EXPECT_THAT(ErrorText(ParseCpuList("-1")), HasSubstr("is not a CPU id or range"));
  EXPECT_THAT(ErrorText(ParseCpuList("0-65536")),
              HasSubstr("CPU id 65536 in '0-65536' is beyond the largest allowed, 65535"));
}

TEST(CpuList, FormatsRanges) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({}), "");
}

}  // namespace
}  // namespace loom::core
