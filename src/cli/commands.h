// Entry points of the commands in the `loom` multi-call binary. Each takes the arguments
// that follow the command name (argv[0] is the command's own name, as a user typed it)
// and returns the process exit code.
#pragma once

#include <string>

namespace loom::cli {

int RunSim(int argc, char** argv);       // loom sim
int RunScontrol(int argc, char** argv);  // scontrol / loom scontrol
int RunSbatch(int argc, char** argv);
int RunSrun(int argc, char** argv);
int RunSalloc(int argc, char** argv);
int RunCluster(int argc, char** argv);  // loom cluster up|status|down|demo
// loom cluster demo: up, the example job scripts, squeue and sinfo (`self`: this binary).
int RunDemo(const std::string& dir, const std::string& examples, const std::string& self);
int RunSqueue(int argc, char** argv);
int RunSinfo(int argc, char** argv);
int RunScancel(int argc, char** argv);
int RunSdiag(int argc, char** argv);
int RunSstat(int argc, char** argv);
int RunSacct(int argc, char** argv);
int RunSacctmgr(int argc, char** argv);
int RunSreport(int argc, char** argv);
int RunSshare(int argc, char** argv);
int RunSprio(int argc, char** argv);

}  // namespace loom::cli
