// The job scripts of real documents parse as Slurm parses them: the seed scripts Loom was
// created from, and every #SBATCH block of the shared documents when they are there.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/submit/testing/sbatch_parse.h"
#include "core/strings.h"

namespace loom::cli::submit {
namespace {

using sbatch_test::ExpectError;
using sbatch_test::JobRequest;
using sbatch_test::Parse;
using sbatch_test::Request;

// The job scripts of the documents Loom was created from (tests/data/sbatch/seeds, copied from
// ../shared/seeds; see tests/data/sbatch/README.md) parse as Slurm parses them.
TEST(ParseSbatch, SeedScripts) {
  auto read = [](std::string_view name) {
    std::ifstream in(core::StrCat(LOOM_SOURCE_DIR, "/tests/data/sbatch/seeds/", name));
    EXPECT_TRUE(in.good()) << name;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  JobRequest ddp = Request({"ddp-train.sh"}, read("ddp-train.sh"));
  EXPECT_EQ(ddp.name, "ddp-train");
  EXPECT_EQ(ddp.shape.min_nodes, 4);
  EXPECT_EQ(ddp.shape.ntasks, 32);
  EXPECT_EQ(ddp.shape.gpus_per_node, 8);
  EXPECT_EQ(ddp.partitions, std::vector<std::string>{"train"});
  EXPECT_EQ(ddp.time_limit_s, 2 * 86400);

  JobRequest training = Request({"gpu-training.sh"}, read("gpu-training.sh"));
  EXPECT_EQ(training.partitions, std::vector<std::string>{"training"});
  EXPECT_EQ(training.shape.gpus_per_node, 8);
  EXPECT_EQ(training.shape.min_nodes, 4);
  EXPECT_TRUE(training.shape.exclusive);
  EXPECT_EQ(training.time_limit_s, 48 * 3600);

  JobRequest cpu = Request({"cpu-preprocess.sh"}, read("cpu-preprocess.sh"));
  EXPECT_EQ(cpu.shape.cpus_per_task, 16);
  EXPECT_EQ(cpu.mem_per_node_mb, 64 * 1024);
  EXPECT_EQ(cpu.time_limit_s, 12 * 3600);

  JobRequest hello = Request({"hello.sh"}, read("hello.sh"));
  EXPECT_EQ(hello.name, "hello");
  EXPECT_EQ(hello.time_limit_s, 300);

  JobRequest llama = Request({}, read("llama-training.sh"));  // from a heredoc: stdin
  EXPECT_EQ(llama.name, "llama-training");
  EXPECT_EQ(llama.shape.min_nodes, 16);
  EXPECT_EQ(llama.shape.gpus_per_node, 8);
  EXPECT_EQ(llama.shape.gpu_type, "h100");
  EXPECT_EQ(llama.time_limit_s, 7 * 86400);
  EXPECT_EQ(llama.stdout_pattern, "train_%j.out");
  EXPECT_EQ(llama.stderr_pattern, "train_%j.err");

  JobRequest l70 = Request({"llama70b.sh"}, read("llama70b.sh"));
  EXPECT_EQ(l70.shape.min_nodes, 8);
  EXPECT_EQ(l70.shape.gpu_type, "h100");

  JobRequest llm = Request({"llm-train.sh"}, read("llm-train.sh"));
  EXPECT_EQ(llm.shape.ntasks, 128);
  EXPECT_EQ(llm.shape.cpus_per_task, 8);
  EXPECT_EQ(llm.time_limit_s, 72 * 3600);

  // The inference fragment of document 001 has no "#!" line (and its last directive runs
  // into the following text): Slurm refuses it, and so does Loom.
  ExpectError({"infer.sh"},
              "sbatch: error: This does not look like a batch script.  The first\n"
              "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
              "sbatch: error: For instance: #!/bin/sh",
              1, "#SBATCH --partition=compute\n#SBATCH --gres=gpu:1\n");
}

// The same, straight from the shared documents when they are there: every block that starts
// with a "#!/bin/bash" line followed by #SBATCH lines parses.
TEST(ParseSbatch, SharedSeedDocuments) {
  std::filesystem::path dir = std::filesystem::path(LOOM_SHARED_DIR) / "seeds";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no " << dir;
  int blocks = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      if (core::Trim(lines[i]) != "#!/bin/bash" || lines[i + 1].rfind("#SBATCH", 0) != 0) continue;
      std::string script = "#!/bin/bash\n";
      for (size_t j = i + 1; j < lines.size() && lines[j].rfind("#SBATCH", 0) == 0; ++j) {
        script += lines[j] + "\n";
      }
      script += "true\n";
      SCOPED_TRACE(entry.path().filename().string() + ":" + std::to_string(i + 1));
      StatusOr<SbatchInput> parsed = Parse({"job.sh"}, script);
      EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << script;
      ++blocks;
    }
  }
  EXPECT_GE(blocks, 5);
}

}  // namespace
}  // namespace loom::cli::submit
