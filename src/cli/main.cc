// The `loom` multi-call binary. Invoked as `loom <command> ...`, or through a link named
// after a Slurm command (`scontrol ...`), it dispatches on that name.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "cli/commands.h"

namespace {

struct Command {
  std::string_view name;
  int (*run)(int, char**);
  std::string_view help;
};

constexpr Command kCommands[] = {
    {"sim", loom::cli::RunSim, "replay a workload trace through the scheduler and report"},
    {"scontrol", loom::cli::RunScontrol, "Slurm's scontrol (offline: show hostnames|hostlist)"},
    {"cluster", loom::cli::RunCluster, "a local cluster: up, status, down"},
    {"sbatch", loom::cli::RunSbatch, "submit a batch script to loomctld, as Slurm's sbatch"},
    {"srun", loom::cli::RunSrun, "run a command as the tasks of a new job, as Slurm's srun"},
    {"salloc", loom::cli::RunSalloc,
     "obtain an allocation and run a command in it, as Slurm's salloc"},
    {"squeue", loom::cli::RunSqueue, "list jobs, as Slurm's squeue"},
    {"sinfo", loom::cli::RunSinfo, "list partitions and nodes, as Slurm's sinfo"},
    {"scancel", loom::cli::RunScancel, "cancel or signal jobs, as Slurm's scancel"},
    {"sdiag", loom::cli::RunSdiag, "the controller's counters and cycle times, as Slurm's sdiag"},
    {"sstat", loom::cli::RunSstat, "what running job steps use now, as Slurm's sstat"},
    {"sacct", loom::cli::RunSacct,
     "jobs and steps as the accounting recorded them, as Slurm's sacct"},
    {"sacctmgr", loom::cli::RunSacctmgr,
     "clusters, accounts, users and QOS in the accounting, as Slurm's sacctmgr"},
    {"sreport", loom::cli::RunSreport, "usage reports from the accounting, as Slurm's sreport"},
    {"sshare", loom::cli::RunSshare, "fair-share shares, usage and factors, as Slurm's sshare"},
    {"sprio", loom::cli::RunSprio, "pending jobs' priority factors, as Slurm's sprio"},
};

std::string_view BaseName(const char* path) {
  std::string_view p(path);
  size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: loom <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands) {
    std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.help.size()), c.help.data());
  }
  std::fprintf(out, "\n`loom <command> --help` describes each command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view self = argc > 0 ? BaseName(argv[0]) : "loom";
  for (const Command& c : kCommands) {
    if (self == c.name) return c.run(argc, argv);
  }
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string_view sub = argv[1];
  if (sub == "-h" || sub == "--help" || sub == "help") {
    PrintUsage(stdout);
    return 0;
  }
  if (sub == "--version" || sub == "-V") {
    std::printf("loom 0.1.0\n");
    return 0;
  }
  for (const Command& c : kCommands) {
    if (sub == c.name) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "loom: unknown command '%s'\n\n", argv[1]);
  PrintUsage(stderr);
  return 2;
}
