#include "cli/format/sstat_format.h"

#include <gtest/gtest.h>

namespace loom::cli::format {
namespace {

std::vector<TaskUsageView> Tasks() {
  return {
      {"0", 0, "n1", 2'500'000, 10 << 20, 100 << 20, 3},
      {"0", 1, "n2", 1'500'000, 30 << 20, 50 << 20, 7},
      {"batch", 0, "n1", 40'000, 4 << 20, 20 << 20, 0},
  };
}

TEST(SstatFormatTest, MaxMinAndAverageOverTheStepsTasks) {
  SstatOptions o;
  o.fields = ParseSstatFormat("jobid,MaxRSS,maxrssnode,MaxRSSTask,AveRSS,MinCPU,MinCPUTask,"
                              "AveCPU,MaxPages,NTasks")
                 .value();
  o.delimiter = '|';
  EXPECT_EQ(RenderSstat(42, {"0", "batch"}, Tasks(), o),
            "JobID|MaxRSS|MaxRSSNode|MaxRSSTask|AveRSS|MinCPU|MinCPUTask|AveCPU|MaxPages|NTasks\n"
            "42.0|30720K|n2|1|20480K|00:01.500|1|00:02.000|7|2\n"
            "42.batch|4096K|n1|0|4096K|00:00.040|0|00:00.040|0|1\n");
  o.trailing_delimiter = true;
  o.header = false;
  o.fields = {"JobID", "NTasks"};
  EXPECT_EQ(RenderSstat(42, {"0"}, Tasks(), o), "42.0|2|\n");
}

TEST(SstatFormatTest, ColumnsAreSacctsAndUnknownFieldsAreRefused) {
  SstatOptions o;
  o.fields = {"JobID", "MaxRSS", "NTasks"};
  EXPECT_EQ(RenderSstat(7, {"1"}, {{"1", 0, "n1", 0, 2048, 0, 0}}, o),
            "       JobID     MaxRSS     NTasks \n"
            "------------ ---------- ---------- \n"
            "         7.1         2K          1 \n");
  EXPECT_EQ(ParseSstatFormat("JobID,Bogus").status().message(),
            "Invalid field requested: \"Bogus\"");
  EXPECT_EQ(SstatFields().front(), "JobID");
  EXPECT_EQ(FormatCpuTime(3'723'000'000), "01:02:03");
  EXPECT_EQ(FormatCpuTime(90'061'000'000), "1-01:01:01");
  EXPECT_EQ(FormatKib(0), "0");
  EXPECT_EQ(FormatKib(1), "1K");
}

}  // namespace
}  // namespace loom::cli::format
