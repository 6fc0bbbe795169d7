#include "cli/format/text.h"

#include <gtest/gtest.h>

namespace loom::cli::format {
namespace {

TEST(TimeText, IsoAndCtimeInAFixedZone) {
  EXPECT_EQ(FormatIsoTime(1795978578, 0), "2026-11-29T18:56:18");
  EXPECT_EQ(FormatCtime(1795978578, 0), "Sun Nov 29 18:56:18 2026");
  EXPECT_EQ(FormatIsoTime(1795978578, 3600), "2026-11-29T19:56:18");
  EXPECT_EQ(FormatIsoTime(1795978578, -19 * 3600), "2026-11-28T23:56:18");
  EXPECT_EQ(FormatIsoTime(0, 0), "1970-01-01T00:00:00");
  EXPECT_EQ(FormatCtime(0, 0), "Thu Jan  1 00:00:00 1970");
  EXPECT_EQ(FormatIsoTime(-1, 0), "1969-12-31T23:59:59");
  EXPECT_EQ(FormatCtime(951782400, 0), "Tue Feb 29 00:00:00 2000");  // leap day
  EXPECT_EQ(FormatIsoTime(4102444800, 0), "2100-01-01T00:00:00");
}

TEST(Columns, PadCutAndAlign) {
  std::string out;
  AppendColumn(&out, "abc", 5, false);
  AppendColumn(&out, "abc", 5, true);
  AppendColumn(&out, "abcdef", 4, true);
  AppendColumn(&out, "abcdef", 4, false);
  AppendColumn(&out, "abcdef", 0, true);
  EXPECT_EQ(out, "abc    abcabcdabcdabcdef");
}

TEST(Memory, SlurmUnits) {
  EXPECT_EQ(FormatMemory(0), "0");
  EXPECT_EQ(FormatMemory(1000), "1000M");
  EXPECT_EQ(FormatMemory(2048), "2G");
  EXPECT_EQ(FormatMemory(1024 * 1024), "1T");
}

TEST(Json, LayoutLikeSlurm) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.BeginArray("empty");
  w.EndArray();
  w.BeginObject("o");
  w.String("path", "/a/b");
  w.Double("d", 1);
  w.Double("e", 0.5);
  w.Null("n");
  w.Bool("b", true);
  w.EndObject();
  w.BeginArray("list");
  w.String("x");
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(out,
            "{\n"
            "  \"empty\": [\n"
            "  ],\n"
            "  \"o\": {\n"
            "    \"path\": \"\\/a\\/b\",\n"
            "    \"d\": 1.0,\n"
            "    \"e\": 0.5,\n"
            "    \"n\": null,\n"
            "    \"b\": true\n"
            "  },\n"
            "  \"list\": [\n"
            "    \"x\"\n"
            "  ]\n"
            "}");
}

TEST(AcctTableTest, ColumnsCutWithAPlusAndParsableJoins) {
  std::string out;
  const std::vector<AcctCell> header = {{"JobID", 6, true}, {"State", 10}};
  AppendAcctHeader(&out, header, {});
  AppendAcctRow(&out, {{"12.batch", 6, true}, {"CANCELLED by 0", 10}}, {});
  AppendAcctRow(&out, {{"7", 6, true}, {"RUNNING", 10}}, {});
  EXPECT_EQ(out,
            "JobID       State \n"
            "------ ---------- \n"
            "12.ba+ CANCELLED+ \n"
            "7         RUNNING \n");
  out.clear();
  AppendAcctHeader(&out, header, {'|', true});
  AppendAcctRow(&out, {{"7", 6}, {"CANCELLED by 0", 10}}, {'|', false});
  EXPECT_EQ(out, "JobID|State|\n7|CANCELLED by 0\n");
}

}  // namespace
}  // namespace loom::cli::format
