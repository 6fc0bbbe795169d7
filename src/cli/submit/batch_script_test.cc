#include "cli/submit/batch_script.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace loom::cli::submit {
namespace {

using Words = std::vector<std::string>;

Words Only(std::string_view script) {
  StatusOr<std::vector<Directive>> d = ExtractDirectives(script, "job.sh");
  EXPECT_TRUE(d.ok()) << d.status();
  Words all;
  if (d.ok()) {
    for (const Directive& x : *d) all.insert(all.end(), x.words.begin(), x.words.end());
  }
  return all;
}

TEST(ExtractDirectives, LinesAndNumbers) {
  StatusOr<std::vector<Directive>> d =
      ExtractDirectives("#!/bin/sh\n#SBATCH -J a\n\n# note\n#SBATCH -t 5 -N 2\nhostname\n", "x");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0], (Directive{2, {"-J", "a"}}));
  EXPECT_EQ((*d)[1], (Directive{5, {"-t", "5", "-N", "2"}}));
}

TEST(ExtractDirectives, StopsAtTheFirstCommand) {
  EXPECT_EQ(Only("#!/bin/sh\n#SBATCH -J a\necho\n#SBATCH -J b\n"), (Words{"-J", "a"}));
  EXPECT_EQ(Only("#!/bin/sh\n   \n\t# c\n#SBATCH -J a\n"), (Words{"-J", "a"}));
  // Only "#SBATCH" in the first column is a directive; the rest are comments.
  EXPECT_EQ(Only("#!/bin/sh\n  #SBATCH -J a\n#sbatch -J b\n# SBATCH -J c\n#SBATCH -J d\n"),
            (Words{"-J", "d"}));
  EXPECT_EQ(Only("#!/bin/sh\n#SBATCH\n"), Words{});
}

TEST(ExtractDirectives, Words) {
  EXPECT_EQ(Only("#SBATCH-J x\n"), (Words{"-J", "x"}));
  EXPECT_EQ(Only("#SBATCH\t-J\tx  -t 5\n"), (Words{"-J", "x", "-t", "5"}));
  EXPECT_EQ(Only("#SBATCH -J \"my job\" --comment='a \"b\"'\n"),
            (Words{"-J", "my job", "--comment=a \"b\""}));
  EXPECT_EQ(Only("#SBATCH --comment=x\"y z\"w\n"), (Words{"--comment=xy zw"}));
  EXPECT_EQ(Only("#SBATCH -J a\\\"b\n"), (Words{"-J", "a\"b"}));
  EXPECT_EQ(Only("#SBATCH -J a\\\\b\n"), (Words{"-J", "a\\b"}));
  EXPECT_EQ(Only("#SBATCH -J a\\ b\n"), (Words{"-J", "a", "b"}));  // not an escaped blank
  EXPECT_EQ(Only("#SBATCH -J x # -t 5\n"), (Words{"-J", "x"}));
  EXPECT_EQ(Only("#SBATCH -J a#b -t 5\n"), (Words{"-J", "a"}));
  EXPECT_EQ(Only("#SBATCH -J \"a#b\" -t 5\n"), (Words{"-J", "a#b", "-t", "5"}));
  EXPECT_EQ(Only("#SBATCH -J \"\"\n"), (Words{"-J", ""}));
  EXPECT_EQ(Only("#SBATCH --gres=gpu:8 # 整节点 8 卡\n"), (Words{"--gres=gpu:8"}));
}

TEST(ExtractDirectives, UnmatchedQuotes) {
  auto error = [](std::string_view script, std::string_view name) {
    return std::string(ExtractDirectives(script, name).status().message());
  };
  EXPECT_EQ(error("#!/bin/sh\n#SBATCH \"abc\n", "job.sh"),
            "sbatch: fatal: job.sh: line 2: Unmatched `\"` in [\"abc]");
  EXPECT_EQ(error("#!/bin/sh\n#SBATCH -J x  --comment=\"abc\n", "stdin"),
            "sbatch: fatal: stdin: line 2: Unmatched `\"` in [  --comment=\"abc]");
  EXPECT_EQ(error("#SBATCH -J 'a\\'b -t 5\n", "j"),
            "sbatch: fatal: j: line 1: Unmatched `'` in [ 'a\\'b -t 5]");
}

TEST(CheckBatchScript, SlurmsChecks) {
  EXPECT_TRUE(CheckBatchScript("#!/bin/sh\n").ok());
  EXPECT_TRUE(CheckBatchScript("#!").ok());
  EXPECT_EQ(std::string(CheckBatchScript("").message()), "sbatch: error: Batch script is empty!");
  EXPECT_EQ(std::string(CheckBatchScript("\n \t").message()),
            "sbatch: error: Batch script contains only whitespace!");
  EXPECT_NE(std::string(CheckBatchScript(" #!/bin/sh\n").message()).find("does not look like"),
            std::string::npos);
  EXPECT_NE(std::string(CheckBatchScript(std::string_view("#!/bin/sh\0", 10)).message())
                .find("NULL character"),
            std::string::npos);
  EXPECT_NE(std::string(CheckBatchScript("#!/bin/sh\r\n").message()).find("DOS line breaks"),
            std::string::npos);
}

TEST(WrapCommand, SlurmsWrapper) {
  EXPECT_EQ(WrapCommand("hostname"),
            "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nhostname\n");
}

// Command= as Slurm 22.05's sbatch records it (checked against a real sbatch): a bare name is
// looked up from the working directory, then along $PATH; './' and '/' paths stay as given.
TEST(RecordedCommand, SearchesLikeSbatch) {
  auto in = [](std::initializer_list<std::string> files) {
    return [files](const std::string& p) {
      return std::find(files.begin(), files.end(), p) != files.end();
    };
  };
  const Words none;
  EXPECT_EQ(RecordedCommand("job.sh", none, "/w", "/usr/bin", in({"/w/job.sh"})), "/w/job.sh");
  EXPECT_EQ(RecordedCommand("sub/job.sh", none, "/w", "", in({"/w/sub/job.sh"})), "/w/sub/job.sh");
  EXPECT_EQ(RecordedCommand("../job.sh", none, "/w", "", in({"/job.sh"})), "../job.sh");
  EXPECT_EQ(RecordedCommand("./job.sh", none, "/w", "", in({"/w/job.sh"})), "./job.sh");
  EXPECT_EQ(RecordedCommand("/a/job.sh", none, "/w", "", in({})), "/a/job.sh");
  // -D elsewhere: not found there, nor along $PATH.
  EXPECT_EQ(RecordedCommand("job.sh", Words{"a b", "c"}, "/tmp", "/usr/bin", in({"/w/job.sh"})),
            "job.sh a b c");
  EXPECT_EQ(RecordedCommand("job.sh", none, "/tmp", "::/opt/bin:rel", in({"/opt/bin/job.sh"})),
            "/opt/bin/job.sh");
  EXPECT_EQ(RecordedCommand("job.sh", none, "/tmp", "./rel", in({"/tmp/./rel/job.sh"})),
            "/tmp/./rel/job.sh");
}

}  // namespace
}  // namespace loom::cli::submit
