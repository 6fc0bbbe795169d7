// TRES strings as slurmctld prints them, and billing as slurm.conf(5) documents it.
#include "core/tres.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace loom::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TresVector Tres(std::string_view text) {
  StatusOr<TresVector> tres = ParseTres(text);
  EXPECT_TRUE(tres.ok()) << text << ": " << tres.status();
  return tres.ok() ? *tres : TresVector();
}

TresBillingWeights Weights(std::string_view text) {
  StatusOr<TresBillingWeights> w = TresBillingWeights::Parse(text);
  EXPECT_TRUE(w.ok()) << text << ": " << w.status();
  return w.ok() ? *w : TresBillingWeights();
}

std::string ParseError(std::string_view text) {
  StatusOr<TresVector> tres = ParseTres(text);
  EXPECT_FALSE(tres.ok()) << text;
  return std::string(tres.status().message());
}

// Strings as slurmctld 22.05 prints them (bench/slurm-ref/reference-outputs).
TEST(TresTest, RoundTripsSlurmsOwnStrings) {
  for (const char* s :
       {"cpu=64,mem=500G,billing=64", "cpu=64,mem=500G,billing=64,gres/gpu=8",
        "cpu=8,mem=8000M,node=1,billing=8,gres/gpu=2", "cpu=1,mem=1000M,node=1,billing=1",
        "cpu=4,mem=2G,node=1,billing=4", "cpu=14,mem=12048M,gres/gpu=2",
        "cpu=1024,mem=8000G,node=16,billing=1024,gres/gpu=128", ""}) {
    EXPECT_EQ(FormatTres(Tres(s)), s);
  }
}

TEST(TresTest, ParsesAndNormalises) {
  TresVector t = Tres("cpu=4,mem=16G,gres/gpu:a100=2");
  EXPECT_EQ(t.Get(kTresCpu), 4);
  EXPECT_EQ(t.Get(kTresMem), 16 * 1024);
  EXPECT_EQ(t.Get("gres/gpu:a100"), 2);
  EXPECT_EQ(t.Get(kTresGpu), 0);
  // Slurm's order whatever the input order; types in any case.
  EXPECT_EQ(Tres("GRES/gpu=2,Billing=8,NODE=1,Mem=8000,CPU=8").ToString(),
            "cpu=8,mem=8000M,node=1,billing=8,gres/gpu=2");
  EXPECT_EQ(Tres("license/matlab=2,gres/gpu:a100=1,fs/disk=1,pages=3,vmem=1,gres/gpu=1,energy=5,"
                 "cpu=1")
                .ToString(),
            "cpu=1,energy=5,fs/disk=1,vmem=1,pages=3,gres/gpu=1,gres/gpu:a100=1,license/matlab=2");
  // Zero counts are dropped, as in Slurm's strings.
  EXPECT_EQ(Tres("cpu=0,mem=0,node=1").ToString(), "node=1");
}

TEST(TresTest, MemoryUnits) {
  EXPECT_EQ(Tres("mem=512000").ToString(), "mem=500G");
  EXPECT_EQ(Tres("mem=1024G").ToString(), "mem=1T");
  EXPECT_EQ(Tres("mem=1P").Get(kTresMem), int64_t{1} << 30);
  EXPECT_EQ(Tres("mem=1P").ToString(), "mem=1P");
  EXPECT_EQ(Tres("mem=2048K").Get(kTresMem), 2);
  EXPECT_EQ(Tres("mem=1K").Get(kTresMem), 1);  // kilobytes round up to a megabyte
  EXPECT_EQ(Tres("mem=1536M").ToString(), "mem=1536M");
  EXPECT_EQ(Tres("bb/cray=2G").ToString(), "bb/cray=2G");
  EXPECT_EQ(Tres("fs/disk=2048").ToString(), "fs/disk=2K");
}

TEST(TresTest, ClearErrors) {
  EXPECT_THAT(ParseError("cpu"), HasSubstr("'cpu' is not NAME=COUNT"));
  EXPECT_THAT(ParseError("cpu=x"), HasSubstr("invalid count 'x' for cpu"));
  EXPECT_THAT(ParseError("cpu=-1"), HasSubstr("non-negative"));
  EXPECT_THAT(ParseError("cpu=1G"), HasSubstr("without a unit"));
  EXPECT_THAT(ParseError("mem=1Q"), HasSubstr("unknown unit"));
  EXPECT_THAT(ParseError("mem=99999999999P"), HasSubstr("too large"));
  EXPECT_THAT(ParseError("foo=1"), HasSubstr("unknown TRES 'foo'"));
  EXPECT_THAT(ParseError("gres/=1"), HasSubstr("unknown TRES 'gres/'"));
  EXPECT_THAT(ParseError("gpu/a100=1"), HasSubstr("gres/gpu:a100"));
  EXPECT_THAT(ParseError("cpu=1,,mem=1"), HasSubstr("empty item"));
  EXPECT_THAT(ParseError("cpu=1,CPU=2"), HasSubstr("cpu appears twice"));
}

TEST(TresTest, CanonicalNames) {
  EXPECT_EQ(*CanonicalTresName("CPU"), "cpu");
  EXPECT_EQ(*CanonicalTresName("GRES/gpu:A100"), "gres/gpu:A100");
  EXPECT_EQ(*CanonicalTresName("License/matlab"), "license/matlab");
  EXPECT_FALSE(CanonicalTresName("gres/gpu:").ok());
  EXPECT_FALSE(CanonicalTresName("license/a:b").ok());
  EXPECT_FALSE(CanonicalTresName("cpu/x").ok());
}

TEST(TresTest, Arithmetic) {
  TresVector node = Tres("cpu=64,mem=500G,gres/gpu=8");
  TresVector job = Tres("cpu=8,mem=8000M,gres/gpu=2");
  EXPECT_TRUE(job.FitsIn(node));
  EXPECT_FALSE(node.FitsIn(job));
  EXPECT_THAT(node.Exceeding(job), ElementsAre("cpu", "mem", "gres/gpu"));
  TresVector free = node - job;
  EXPECT_EQ(free.ToString(), "cpu=56,mem=504000M,gres/gpu=6");
  EXPECT_EQ((free + job), node);
  EXPECT_EQ((job * 4).ToString(), "cpu=32,mem=32000M,gres/gpu=8");
  EXPECT_TRUE((job * 8).FitsIn(node) == false);
  EXPECT_TRUE((node - node).empty());
  EXPECT_FALSE((job - node).IsNonNegative());
  EXPECT_TRUE(Tres("license/x=1").FitsIn(Tres("license/x=1")));
  EXPECT_FALSE(Tres("license/x=1").FitsIn(Tres("cpu=1")));
  TresVector copy = job;
  copy.Add(kTresNode, 1);
  EXPECT_EQ(job.Get(kTresNode), 0);
  EXPECT_EQ(copy.Get(kTresNode), 1);
}

TEST(TresBillingWeightsTest, SlurmDocumentationExample) {
  // slurm.conf(5): 1 CPU and 8 GB with "CPU=1.0,Mem=0.25G,GRES/gpu=2.0" bills 3.0, or 2.0
  // with PriorityFlags=MAX_TRES.
  TresBillingWeights w = Weights("\"CPU=1.0,Mem=0.25G,GRES/gpu=2.0\"");
  TresVector job = Tres("cpu=1,mem=8G");
  EXPECT_DOUBLE_EQ(w.Billing(job), 3.0);
  EXPECT_DOUBLE_EQ(w.Billing(job, /*max_tres=*/true), 2.0);
  // "mem=.25" bills per megabyte: 8192 * .25.
  EXPECT_DOUBLE_EQ(Weights("mem=.25").Billing(job), 2048.0);
}

TEST(TresBillingWeightsTest, GpuTypesAndLicenses) {
  TresBillingWeights w = Weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0,gres/gpu:a100=64.0,license/x=10");
  TresVector job = Tres("cpu=8,mem=64G,gres/gpu=2,gres/gpu:a100=2,license/x=1,billing=99");
  EXPECT_DOUBLE_EQ(w.WeightFor("gres/gpu:A100"), 64.0);
  EXPECT_DOUBLE_EQ(w.WeightFor(kTresMem), 0.25 / 1024);
  EXPECT_DOUBLE_EQ(w.Billing(job), 8 + 16 + 4 + 128 + 10);
  // MAX_TRES: the largest per-node product (a100: 128) plus the licenses.
  EXPECT_DOUBLE_EQ(w.Billing(job, true), 128 + 10);
  EXPECT_EQ(w.BillingCount(Tres("cpu=3,mem=1G")), 3);  // 3.25, truncated
}

TEST(TresBillingWeightsTest, WithoutWeightsBillsCpus) {
  TresBillingWeights none = Weights("");
  EXPECT_TRUE(none.empty());
  EXPECT_DOUBLE_EQ(none.Billing(Tres("cpu=8,mem=8000M,gres/gpu=2")), 8.0);
  EXPECT_EQ(none.BillingCount(Tres("cpu=64,mem=500G")), 64);
}

TEST(TresBillingWeightsTest, UnitsAndNegativeWeights) {
  EXPECT_DOUBLE_EQ(Weights("mem=1T").WeightFor("mem"), 1.0 / (1024 * 1024));
  EXPECT_DOUBLE_EQ(Weights("mem=1M").WeightFor("mem"), 1.0);
  EXPECT_DOUBLE_EQ(Weights("mem=2K").WeightFor("mem"), 2.0);  // below the unit: ignored
  EXPECT_DOUBLE_EQ(Weights("cpu=1K").WeightFor("cpu"), 1.0 / 1024);
  EXPECT_DOUBLE_EQ(Weights("cpu=2,node=-1").Billing(Tres("cpu=4,node=2")), 6.0);
}

TEST(TresBillingWeightsTest, Errors) {
  for (const char* bad :
       {"CPU", "CPU=", "CPU=abc", "CPU=1X", "CPU=1GB", "Foo=1", "CPU=1,cpu=2", "CPU=1,,Mem=1"}) {
    EXPECT_FALSE(TresBillingWeights::Parse(bad).ok()) << bad;
  }
  EXPECT_THAT(std::string(TresBillingWeights::Parse("CPU=1X").status().message()),
              HasSubstr("unknown unit"));
}

}  // namespace
}  // namespace loom::core
