// `loom cluster demo`: what a new user would do first, in one command. Brings up the local
// cluster (unless one already runs under --dir), submits the example job scripts (hello, a
// throttled array, a dependency chain, a GPU job) exactly as a user would with this build's
// sbatch, waits until they are done, then shows squeue, sinfo and the jobs' output. The
// cluster stays up afterwards, with the line to reach it and the one to stop it.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "core/clock.h"
#include "core/strings.h"

namespace loom::cli {
namespace {

namespace fs = std::filesystem;

// Runs `command` with /bin/sh; returns its exit status and stdout.
int Shell(const std::string& command, std::string* out) {
  out->clear();
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return 127;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// Prints "$ command" and what it prints, as a terminal session would show it.
int Show(const std::string& command, std::string* out = nullptr) {
  std::string text;
  std::printf("$ %s\n", command.c_str());
  std::fflush(stdout);
  const int rc = Shell(command + " 2>&1", &text);
  std::fputs(text.c_str(), stdout);
  if (out) *out = text;
  return rc;
}

// The examples: next to the working directory (a source checkout), else next to the binary
// (build/bin -> examples, or an installed share/loom/examples).
std::string FindExamples(const std::string& given, const std::string& self_dir) {
  if (!given.empty()) return given;
  for (const fs::path& p : {fs::current_path() / "examples/jobs",
                            fs::path(self_dir) / "../../examples/jobs",
                            fs::path(self_dir) / "../share/loom/examples/jobs"}) {
    std::error_code ec;
    if (fs::exists(p / "hello.sh", ec)) return fs::weakly_canonical(p, ec).string();
  }
  return "";
}

}  // namespace

int RunDemo(const std::string& dir, const std::string& examples_arg, const std::string& self) {
  const std::string self_dir = fs::path(self).parent_path().string();
  const std::string examples = FindExamples(examples_arg, self_dir);
  if (examples.empty()) {
    std::fprintf(stderr,
                 "loom cluster demo: cannot find the example job scripts (examples/jobs); run "
                 "it from the source tree or give --examples DIR\n");
    return 1;
  }
  // This build's commands first on PATH, so the scripts' own sbatch calls reach Loom.
  const char* path = std::getenv("PATH");
  ::setenv("PATH", core::StrCat(self_dir, ":", path ? path : "/usr/bin:/bin").c_str(), 1);
  std::string out;
  if (Shell(core::StrCat("loom cluster status --dir '", dir, "' >/dev/null 2>&1"), &out) != 0 &&
      Show(core::StrCat("loom cluster up --dir '", dir, "'")) != 0) {
    return 1;
  }
  const std::string conf = dir + "/etc/slurm.conf";
  ::setenv("SLURM_CONF", conf.c_str(), 1);
  const std::string work = dir + "/demo";
  std::error_code ec;
  fs::create_directories(work, ec);
  for (const char* script : {"hello.sh", "array.sh", "chain.sh", "gpu.sh"}) {
    fs::copy_file(fs::path(examples) / script, fs::path(work) / script,
                  fs::copy_options::overwrite_existing, ec);
    if (ec) {
      std::fprintf(stderr, "loom cluster demo: cannot copy %s/%s: %s\n", examples.c_str(), script,
                   ec.message().c_str());
      return 1;
    }
  }
  if (::chdir(work.c_str()) != 0) return 1;
  std::printf("\n# The example job scripts, submitted as a user would (in %s):\n", work.c_str());
  int failures = 0;
  failures += Show("sbatch hello.sh") != 0;
  failures += Show("sbatch array.sh") != 0;
  failures += Show("bash chain.sh") != 0;
  failures += Show("sbatch gpu.sh") != 0;
  if (failures) return 1;

  // Done when nothing is left but jobs that can never run.
  std::printf("\n# Waiting for them to finish...\n");
  std::fflush(stdout);
  const auto deadline = core::RealClock().Monotonic() + std::chrono::seconds(120);
  while (core::RealClock().Monotonic() < deadline) {
    Shell("squeue -h -o '%r' 2>/dev/null | grep -vc DependencyNeverSatisfied", &out);
    if (core::Trim(out) == "0") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  std::printf("\n");
  Show("squeue");
  Show("squeue -t all -o '%.8i %.10j %.10T %.10M %.6D %R'");
  Show("sinfo");
  std::printf("\n# What the jobs wrote:\n");
  Show("head -n 3 hello-*.out gpu-*.out array-*_0.out chain-*.out");
  std::printf("\nThe cluster is still up. To use it:\n  export SLURM_CONF=%s\n"
              "To stop it:\n  loom cluster down --dir %s\n", conf.c_str(), dir.c_str());
  return 0;
}

}  // namespace loom::cli
