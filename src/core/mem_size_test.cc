#include "core/mem_size.h"

#include <gtest/gtest.h>

namespace loom::core {
namespace {

TEST(ParseMemoryMb, UnitsAndDefault) {
  EXPECT_EQ(*ParseMemoryMb("512"), 512);
  EXPECT_EQ(*ParseMemoryMb("512M"), 512);
  EXPECT_EQ(*ParseMemoryMb("16G"), 16 * 1024);
  EXPECT_EQ(*ParseMemoryMb("16g"), 16 * 1024);
  EXPECT_EQ(*ParseMemoryMb("1T"), 1024 * 1024);
  EXPECT_EQ(*ParseMemoryMb("2048K"), 2);
  EXPECT_EQ(*ParseMemoryMb("1K"), 1);
  EXPECT_EQ(*ParseMemoryMb("4GB"), 4096);
}

TEST(ParseMemoryMb, Rejects) {
  for (const char* bad : {"", "G", "12X", "-5", "1.5G", "12 G"}) {
    EXPECT_FALSE(ParseMemoryMb(bad).ok()) << bad;
  }
}

TEST(FormatMemoryMb, LargestExactUnit) {
  EXPECT_EQ(FormatMemoryMb(512000), "500G");
  EXPECT_EQ(FormatMemoryMb(1024 * 1024), "1T");
  EXPECT_EQ(FormatMemoryMb(1000), "1000M");
}

}  // namespace
}  // namespace loom::core
