#include "cli/submit/internal/sbatch_getopt.h"

#include <gtest/gtest.h>

#include <set>

namespace loom::cli::submit::internal {
namespace {

using Words = std::vector<std::string>;

ScanResult Scan(Words w) { return ScanOptions(w); }

TEST(OptionTable, NamesAndShortLettersAreUnique) {
  std::set<std::string_view> names;
  std::set<char> letters;
  for (const OptionSpec& o : OptionTable()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name;
    if (o.short_name != 0) {
      EXPECT_TRUE(letters.insert(o.short_name).second) << o.short_name;
    }
  }
  EXPECT_EQ(LongName(Opt::kNtasksPerNode), "ntasks-per-node");
  EXPECT_EQ(LongName(Opt::kClusters), "cluster");
}

TEST(ScanOptions, Forms) {
  ScanResult r = Scan({"-N2", "-n", "4", "--time=5", "--job-name", "x", "-Hv", "--exclusive",
                       "--nice", "script.sh", "-N", "3"});
  ASSERT_TRUE(r.error.ok()) << r.error;
  EXPECT_EQ(r.options, (std::vector<ParsedOption>{{Opt::kNodes, "2"},
                                                  {Opt::kNtasks, "4"},
                                                  {Opt::kTime, "5"},
                                                  {Opt::kJobName, "x"},
                                                  {Opt::kHold, std::nullopt},
                                                  {Opt::kVerbose, std::nullopt},
                                                  {Opt::kExclusive, std::nullopt},
                                                  {Opt::kNice, std::nullopt}}));
  EXPECT_EQ(r.rest, (Words{"script.sh", "-N", "3"}));
  // Optional arguments only with '=' (or attached to a short option).
  ScanResult opt = Scan({"--exclusive=user", "-koff", "--nice", "5"});
  EXPECT_EQ(opt.options[0], (ParsedOption{Opt::kExclusive, "user"}));
  EXPECT_EQ(opt.options[1], (ParsedOption{Opt::kNoKill, "off"}));
  EXPECT_EQ(opt.rest, (Words{"5"}));
  EXPECT_EQ(Scan({"--", "-x"}).rest, (Words{"-x"}));
  EXPECT_EQ(Scan({"-"}).rest, (Words{"-"}));
  EXPECT_EQ(Scan({"-J", "-x"}).options[0], (ParsedOption{Opt::kJobName, "-x"}));
}

TEST(ScanOptions, Abbreviations) {
  EXPECT_EQ(Scan({"--hol"}).options[0].id, Opt::kHold);
  EXPECT_EQ(Scan({"--ntasks-per-n=2"}).options[0].id, Opt::kNtasksPerNode);
  EXPECT_EQ(Scan({"--tasks=2"}).options[0].id, Opt::kNtasksPerNode);
  // An exact name wins over longer ones.
  EXPECT_EQ(Scan({"--mem=1"}).options[0].id, Opt::kMem);
  EXPECT_EQ(Scan({"--time=1"}).options[0].id, Opt::kTime);
  EXPECT_EQ(Scan({"--cluster=c"}).options[0].id, Opt::kClusters);
  // --cluster and --clusters are one option, so "--clusters" prefixes are not ambiguous...
  EXPECT_EQ(Scan({"--clusters=c"}).options[0].id, Opt::kClusters);
  // ...but "--clus" also matches --cluster-constraint.
  EXPECT_EQ(std::string(Scan({"--clus=x"}).error.message()),
            "sbatch: option '--clus=x' is ambiguous; possibilities: '--cluster-constraint' "
            "'--cluster' '--clusters'");
}

TEST(ScanOptions, Errors) {
  auto error = [](Words w) { return std::string(ScanOptions(w).error.message()); };
  EXPECT_EQ(error({"--foo=bar"}), "sbatch: unrecognized option '--foo=bar'");
  EXPECT_EQ(error({"-y"}), "sbatch: invalid option -- 'y'");
  EXPECT_EQ(error({"--job"}), "sbatch: option '--job-name' requires an argument");
  EXPECT_EQ(error({"-J"}), "sbatch: option requires an argument -- 'J'");
  EXPECT_EQ(error({"--hol=1"}), "sbatch: option '--hold' doesn't allow an argument");
  EXPECT_EQ(error({"--n"}),
            "sbatch: option '--n' is ambiguous; possibilities: '--network' '--nice' '--no-kill' "
            "'--no-requeue' '--nodefile' '--nodelist' '--nodes' '--ntasks' '--ntasks-per-core' "
            "'--ntasks-per-gpu' '--ntasks-per-node' '--ntasks-per-socket' '--ntasks-per-tres'");
  // What came before the error is kept.
  ScanResult r = Scan({"-t", "5", "--bogus", "-J", "x"});
  EXPECT_FALSE(r.error.ok());
  EXPECT_EQ(r.options, (std::vector<ParsedOption>{{Opt::kTime, "5"}}));
}

TEST(ScanOptions, HelpEndsTheScan) {
  ScanResult r = Scan({"-t", "5", "--help", "--bogus"});
  EXPECT_TRUE(r.error.ok());
  ASSERT_EQ(r.options.size(), 2u);
  EXPECT_EQ(r.options[1].id, Opt::kHelp);
  EXPECT_EQ(Scan({"-hV"}).options.size(), 1u);
}

}  // namespace
}  // namespace loom::cli::submit::internal
