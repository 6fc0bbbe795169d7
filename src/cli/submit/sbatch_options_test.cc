#include "cli/submit/sbatch_options.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/submit/testing/sbatch_parse.h"
#include "core/strings.h"
#include "core/time_format.h"

namespace loom::cli::submit {
namespace {

using sbatch_test::Argv;
using sbatch_test::Env;
using sbatch_test::ExpectError;
using sbatch_test::JobRequest;
using sbatch_test::kNow;
using sbatch_test::kScript;
using sbatch_test::Parse;
using sbatch_test::Request;

std::string Directives(std::initializer_list<std::string_view> lines,
                       std::string_view body = "srun hostname") {
  std::string s = "#!/bin/bash\n";
  for (std::string_view l : lines) s += core::StrCat("#SBATCH ", l, "\n");
  return core::StrCat(s, body, "\n");
}

TEST(ParseSbatch, DefaultsForAPlainScript) {
  StatusOr<SbatchInput> in = Parse({"job.sh", "a", "b"});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->action, SbatchInput::Action::kSubmit);
  const JobRequest& r = in->request;
  EXPECT_EQ(r.name, "job.sh");
  EXPECT_EQ(r.script, kScript);
  EXPECT_EQ(r.script_args, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(r.time_limit_s.has_value());
  EXPECT_EQ(r.shape, model::JobShape{});
  EXPECT_EQ(r.EffectiveStdout(), "slurm-%j.out");
  EXPECT_EQ(r.export_policy.mode, model::ExportPolicy::Mode::kAll);
  EXPECT_TRUE(in->warnings.empty());
  EXPECT_EQ(in->error_exit, 1);
  EXPECT_EQ(Request({"dir/sub/run.sh"}).name, "run.sh");
  EXPECT_EQ(Request({}).name, "sbatch");  // read from stdin
}

TEST(ParseSbatch, Precedence) {
  std::string script = Directives({"-J fromscript -t 10 -p scriptpart", "--mem=3G"});
  // Script alone.
  JobRequest s = Request({"job.sh"}, script);
  EXPECT_EQ(s.name, "fromscript");
  EXPECT_EQ(s.time_limit_s, 600);
  EXPECT_EQ(s.partitions, std::vector<std::string>{"scriptpart"});
  // The environment over the script.
  Env env = {{"SBATCH_TIMELIMIT", "20"}, {"SBATCH_JOB_NAME", "fromenv"}};
  JobRequest e = Request({"job.sh"}, script, env);
  EXPECT_EQ(e.name, "fromenv");
  EXPECT_EQ(e.time_limit_s, 1200);
  EXPECT_EQ(e.partitions, std::vector<std::string>{"scriptpart"});
  // The command line over both.
  JobRequest c = Request({"-t", "30", "-J", "fromcli", "job.sh"}, script, env);
  EXPECT_EQ(c.name, "fromcli");
  EXPECT_EQ(c.time_limit_s, 1800);
  EXPECT_EQ(c.mem_per_node_mb, 3072);
  // The last of one source wins.
  EXPECT_EQ(Request({"-J", "a", "-J", "b"}).name, "b");
  EXPECT_EQ(Request({}, Directives({"-J a", "-J b"})).name, "b");
}

TEST(ParseSbatch, EverySourceIsCheckedEvenWhenOverridden) {
  ExpectError({"-t", "5", "job.sh"}, "sbatch: error: Invalid --time specification", 255,
              Directives({"-t abc"}));
  ExpectError({"-t", "5", "job.sh"}, "sbatch: error: Invalid --time specification", 255, kScript,
              {{"SBATCH_TIMELIMIT", "abc"}});
}

TEST(ParseSbatch, DirectivesEndAtTheFirstCommand) {
  std::string script =
      "#!/bin/bash\n\n# a comment\n   # indented comment\n#SBATCH -J first\n"
      "  #SBATCH -J indented-is-a-comment\n#sbatch -J lowercase\necho hi\n#SBATCH -J late\n";
  JobRequest r = Request({"job.sh"}, script);
  EXPECT_EQ(r.name, "first");
}

TEST(ParseSbatch, DirectiveWords) {
  EXPECT_EQ(Request({}, Directives({"--job-name=\"my job\" # a comment -t 5"})).name, "my job");
  EXPECT_EQ(Request({}, Directives({"-J 'it''s'"})).name, "its");
  EXPECT_EQ(Request({}, Directives({"-J a#b"})).name, "a");
  EXPECT_EQ(Request({}, "#!/bin/sh\n#SBATCH-J tight\ntrue\n").name, "tight");
  JobRequest many = Request({}, Directives({"--nodes=4 --ntasks-per-node=8 --gpus-per-node=8"}));
  EXPECT_EQ(many.min_nodes, 4);
  EXPECT_EQ(many.ntasks_per_node, 8);
  EXPECT_EQ(many.shape.gpus_per_node, 8);
  ExpectError({}, "sbatch: error: Invalid directive found in batch script: foo", 255,
              Directives({"-J x foo"}));
  ExpectError({"job.sh"}, "sbatch: fatal: job.sh: line 2: Unmatched `\"` in [ \"abc]", 1,
              Directives({"-J \"abc"}));
  ExpectError({},
              "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information",
              255, Directives({"--bogus"}));
}

TEST(ParseSbatch, WrapBuildsTheScript) {
  StatusOr<SbatchInput> in = Parse({"--wrap=hostname; sleep 1", "-t", "1"}, "ignored");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->request.name, "wrap");
  EXPECT_EQ(in->request.wrap, "hostname; sleep 1");
  EXPECT_EQ(in->request.script,
            "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nhostname; sleep 1\n");
  ExpectError({"--wrap=true", "job.sh"},
              "sbatch: error: Script arguments not permitted with --wrap option", 1);
  // In a script --wrap is ignored, with a warning.
  StatusOr<SbatchInput> script = Parse({}, Directives({"--wrap=hostname"}));
  ASSERT_TRUE(script.ok());
  EXPECT_TRUE(script->request.wrap.empty());
  EXPECT_EQ(script->warnings.size(), 1u);
}

TEST(ParseSbatch, ScriptChecks) {
  ExpectError({}, "sbatch: error: Batch script is empty!", 1, "");
  ExpectError({}, "sbatch: error: Batch script contains only whitespace!", 1, " \n\t\n");
  ExpectError({"job.sh"},
              "sbatch: error: This does not look like a batch script.  The first\n"
              "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
              "sbatch: error: For instance: #!/bin/sh",
              1, "echo hi\n");
  ExpectError({"job.sh"},
              "sbatch: error: The Slurm controller does not allow scripts that\n"
              "sbatch: error: contain a NULL character '\\0'.",
              1, std::string_view("#!/bin/sh\n\0\n", 12));
  ExpectError({"job.sh"},
              "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
              "sbatch: error: instead of expected UNIX line breaks (\\n).",
              1, "#!/bin/sh\r\ntrue\r\n");
  // Option errors come first.
  ExpectError({"--time=x", "job.sh"}, "sbatch: error: Invalid --time specification", 255, "");
}

TEST(ParseSbatch, ExitStatusFromTheEnvironment) {
  ExpectError({}, "sbatch: error: Batch script is empty!", 7, "", {{"SLURM_EXIT_ERROR", "7"}});
  // Malformed options keep 255 and fatal errors 1.
  ExpectError({"--time=x"}, "sbatch: error: Invalid --time specification", 255, kScript,
              {{"SLURM_EXIT_ERROR", "7"}});
  ExpectError({"-n", "0"}, "sbatch: error: Invalid numeric value \"0\" for --ntasks.", 1, kScript,
              {{"SLURM_EXIT_ERROR", "7"}});
  StatusOr<SbatchInput> zero = Parse({}, kScript, {{"SLURM_EXIT_ERROR", "0"}});
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->error_exit, 1);
  EXPECT_EQ(zero->warnings,
            std::vector<std::string>{"sbatch: error: SLURM_EXIT_ERROR has zero value"});
  EXPECT_EQ(Parse({}, kScript, {{"SLURM_EXIT_ERROR", "3"}})->error_exit, 3);
  EXPECT_EQ(SbatchExitCode(absl::OkStatus()), 0);
  EXPECT_EQ(SbatchExitCode(absl::InternalError("x")), 1);
}

TEST(ParseSbatch, GetoptErrors) {
  const std::string kTry = "\nTry \"sbatch --help\" for more information";
  ExpectError({"--no-such-option"}, "sbatch: unrecognized option '--no-such-option'" + kTry, 255);
  ExpectError({"-f"}, "sbatch: invalid option -- 'f'" + kTry, 255);
  ExpectError({"--a=5"},
              "sbatch: option '--a=5' is ambiguous; possibilities: '--account' '--acctg-freq' "
              "'--array'" +
                  kTry,
              255);
  ExpectError({"--job-name"}, "sbatch: option '--job-name' requires an argument" + kTry, 255);
  ExpectError({"-HJ"}, "sbatch: option requires an argument -- 'J'" + kTry, 255);
  ExpectError({"--hold=1"}, "sbatch: option '--hold' doesn't allow an argument" + kTry, 255);
  // In command-line order: a bad value before a bad option is reported first, and after it not.
  ExpectError({"--time=x", "--foo"}, "sbatch: error: Invalid --time specification", 255);
  ExpectError({"--foo", "--time=x"}, "sbatch: unrecognized option '--foo'" + kTry, 255);
  ExpectError({"-v", "-Q"}, "sbatch: error: don't specify both --verbose (-v) and --quiet (-Q)", 1);
}

TEST(ParseSbatch, HelpUsageVersion) {
  EXPECT_EQ(Parse({"--help", "--foo"})->action, SbatchInput::Action::kHelp);
  EXPECT_EQ(Parse({"-h"})->action, SbatchInput::Action::kHelp);
  EXPECT_EQ(Parse({"--usage"})->action, SbatchInput::Action::kUsage);
  EXPECT_EQ(Parse({"-V"}, "")->action, SbatchInput::Action::kVersion);
  EXPECT_EQ(Parse({"--gres=help"}, "")->action, SbatchInput::Action::kGresHelp);
  EXPECT_EQ(GresHelpText(std::vector<std::string>{"gpu"}),
            "Valid gres options are:\ngpu[[:type]:count]\n");
  ExpectError({"--time=x", "--help"}, "sbatch: error: Invalid --time specification", 255);
  // Not from a script.
  EXPECT_EQ(Parse({}, Directives({"--help"}))->action, SbatchInput::Action::kSubmit);
}

TEST(ParseSbatch, Abbreviations) {
  JobRequest r = Request({"--job=abbrev", "--ntasks-per-n=2", "--part", "p1,p2", "--qo=high"});
  EXPECT_EQ(r.name, "abbrev");
  EXPECT_EQ(r.ntasks_per_node, 2);
  EXPECT_EQ(r.partitions, (std::vector<std::string>{"p1", "p2"}));
  EXPECT_EQ(r.qos, "high");
  ExpectError({"--ti=5"},
              "sbatch: option '--ti=5' is ambiguous; possibilities: '--time' '--time-min'\n"
              "Try \"sbatch --help\" for more information",
              255);
  EXPECT_EQ(Request({"--tasks-per-node=3"}).ntasks_per_node, 3);
}

TEST(ParseSbatch, ShortOptionForms) {
  JobRequest r = Request({"-N2", "-n", "8", "-c4", "-J", "-dash-name", "-HO", "-p", "gpu"});
  EXPECT_EQ(r.min_nodes, 2);
  EXPECT_EQ(r.ntasks, 8);
  EXPECT_EQ(r.cpus_per_task, 4);
  EXPECT_EQ(r.name, "-dash-name");
  EXPECT_TRUE(r.hold);
  EXPECT_TRUE(r.overcommit);
  // "--" ends the options; what follows is the script and its arguments.
  StatusOr<SbatchInput> in = Parse({"-t", "1", "--", "job.sh", "-t", "2"});
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->request.time_limit_s, 60);
  EXPECT_EQ(in->request.script_args, (std::vector<std::string>{"-t", "2"}));
}

TEST(ParseSbatch, TimeLimits) {
  EXPECT_EQ(Request({"-t", "90"}).time_limit_s, 90 * 60);
  EXPECT_EQ(Request({"-t", "1:30"}).time_limit_s, 120);  // seconds round up to a minute
  EXPECT_EQ(Request({"-t", "2-00:00:00"}).time_limit_s, 2 * 86400);
  EXPECT_EQ(Request({"-t", "1-2"}).time_limit_s, 26 * 3600);
  EXPECT_EQ(Request({"-t", "0"}).time_limit_s, core::kUnlimitedSeconds);
  EXPECT_EQ(Request({"-t", "infinite"}).time_limit_s, core::kUnlimitedSeconds);
  EXPECT_EQ(Request({"--time-min=1:00:00"}).time_min_s, 3600);
  for (std::string bad : {"abc", "1:2:3:4", "5m", "", " 5", "1.5", "+5", "1-2-3"}) {
    ExpectError({"--time=" + bad}, "sbatch: error: Invalid --time specification", 255);
  }
  ExpectError({"--time-min=x"}, "sbatch: error: Invalid --time-min specification", 255);
}

TEST(ParseSbatch, Counts) {
  JobRequest r = Request({"-N", "2-4", "-n", "+8", "--ntasks-per-node=2", "--mincpus=2"});
  EXPECT_EQ(r.min_nodes, 2);
  EXPECT_EQ(r.max_nodes, 4);
  EXPECT_EQ(r.ntasks, 8);
  EXPECT_EQ(r.mincpus, 2);
  EXPECT_EQ(Request({"-N", "2k"}).min_nodes, 2048);
  ExpectError({"-N", "4-2"},
              "sbatch: error: Maximum node count 2 is less than minimum node count 4", 255);
  ExpectError({"-N", "2-"},
              "sbatch: error: Maximum node count -1 is less than minimum node count 2", 255);
  ExpectError({"-N", "abc"}, "sbatch: error: \"abc\" is not a valid node count", 255);
  ExpectError({"-N", "2-x"}, "sbatch: error: \"x\" is not a valid node count", 255);
  ExpectError({"-N", "0"}, "sbatch: error: \"0\" is not a valid node count", 255);
  for (auto [opt, name] : std::vector<std::pair<std::string, std::string>>{
           {"-n", "--ntasks"},
           {"-c", "--cpus-per-task"},
           {"--ntasks-per-node", "--ntasks-per-node"},
           {"--tasks-per-node", "--ntasks-per-node"},
           {"--cpus-per-gpu", "--cpus-per-gpu"},
           {"--mincpus", "--mincpus"},
           {"--switches", "--switches"},
           {"--ntasks-per-core", "--ntasks-per-core"},
           {"--threads-per-core", "--threads-per-core"}}) {
    for (std::string bad : {"0", "-1", "x", "2k", "1.5", "99999999999"}) {
      ExpectError({opt, bad},
                  "sbatch: error: Invalid numeric value \"" + bad + "\" for " + name + ".", 1);
    }
  }
  // Fewer tasks than nodes: Slurm lowers the node count, with a warning.
  StatusOr<SbatchInput> few = Parse({"-N", "2", "-n", "1"});
  ASSERT_TRUE(few.ok());
  EXPECT_EQ(few->request.min_nodes, 1);
  EXPECT_EQ(few->request.max_nodes, 1);
  EXPECT_EQ(few->warnings,
            std::vector<std::string>{
                "sbatch: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1"});
}

TEST(ParseSbatch, Memory) {
  EXPECT_EQ(Request({"--mem=2G"}).mem_per_node_mb, 2048);
  EXPECT_EQ(Request({"--mem=0"}).mem_per_node_mb, 0);  // all of each node's memory
  EXPECT_EQ(Request({"--mem-per-cpu=1024K"}).mem_per_cpu_mb, 1);
  EXPECT_EQ(Request({"--mem-per-gpu=80G"}).mem_per_gpu_mb, 80 * 1024);
  EXPECT_EQ(Request({"--tmp=10G"}).tmp_mb, 10 * 1024);
  ExpectError({"--mem=2.5G"}, "sbatch: error: Invalid --mem specification", 255);
  ExpectError({"--mem-per-cpu=-1"}, "sbatch: error: Invalid --mem-per-cpu specification", 255);
  ExpectError({"--mem-per-gpu=1P"}, "sbatch: error: Invalid --mem-per-gpu specification", 255);
  ExpectError({"--tmp=x"}, "sbatch: error: Invalid --tmp specification", 255);
  const std::string kMutex =
      "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.";
  ExpectError({"--mem=1G", "--mem-per-cpu=1G"}, kMutex, 1);
  ExpectError({"--mem=1G"}, kMutex, 1, Directives({"--mem-per-gpu=1G"}));
}

TEST(ParseSbatch, MemoryFromTheEnvironment) {
  // Gives way to a different memory option in the script or on the command line...
  EXPECT_EQ(Request({}, Directives({"--mem=3G"}), {{"SBATCH_MEM_PER_CPU", "1G"}}).mem_per_cpu_mb,
            std::nullopt);
  JobRequest cli = Request({"--mem=2G"}, kScript, {{"SBATCH_MEM_PER_CPU", "1G"}});
  EXPECT_EQ(cli.mem_per_node_mb, 2048);
  EXPECT_FALSE(cli.mem_per_cpu_mb.has_value());
  // ...and overrides the same one.
  EXPECT_EQ(Request({}, Directives({"--mem=3G"}), {{"SBATCH_MEM_PER_NODE", "5G"}}).mem_per_node_mb,
            5120);
  ExpectError({},
              "sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are "
              "mutually exclusive.",
              1, kScript, {{"SBATCH_MEM_PER_GPU", "3G"}, {"SBATCH_MEM_PER_CPU", "1G"}});
}

TEST(ParseSbatch, Gpus) {
  JobRequest gres = Request({"--gres=gpu:a100:2", "-N", "2"});
  ASSERT_EQ(gres.gres.size(), 1u);
  EXPECT_EQ(gres.gres[0], (model::TypedCount{"gpu", "a100", 2}));
  EXPECT_EQ(gres.shape.gpus_per_node, 2);
  EXPECT_EQ(gres.shape.gpu_type, "a100");
  EXPECT_EQ(Request({"--gres=gpu"}).shape.gpus_per_node, 1);
  EXPECT_EQ(Request({"--gres=gpu:1k"}).gres[0].count, 1024);

  JobRequest per_node = Request({"--gpus-per-node=h100:8", "-N", "4"});
  EXPECT_EQ(per_node.shape.gpus_per_node, 8);
  EXPECT_EQ(per_node.shape.gpu_type, "h100");

  JobRequest per_task = Request({"-n", "4", "--gpus-per-task=1"});
  EXPECT_EQ(per_task.shape.gpus_per_task, 1);
  EXPECT_EQ(per_task.shape.ntasks, 4);

  // --gpus=N alone: N one-GPU tasks on 1 to N nodes.
  JobRequest total = Request({"--gpus=4", "-c", "16"});
  EXPECT_EQ(total.gpus, (std::vector<model::TypedCount>{{"gpu", "", 4}}));
  EXPECT_EQ(total.shape.ntasks, 4);
  EXPECT_EQ(total.shape.gpus_per_task, 1);
  EXPECT_EQ(total.shape.min_nodes, 1);
  EXPECT_EQ(total.shape.max_nodes, 4);
  // With -n, spread over the tasks.
  EXPECT_EQ(Request({"--gpus=8", "-n", "4"}).shape.gpus_per_task, 2);
  StatusOr<SbatchInput> uneven = Parse({"--gpus=4", "-n", "3"});
  ASSERT_TRUE(uneven.ok());
  EXPECT_EQ(uneven->request.shape.gpus_per_task, 2);
  EXPECT_EQ(uneven->warnings.size(), 1u);
  StatusOr<SbatchInput> mixed = Parse({"--gpus-per-node=a100:2,v100:1"});
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->request.shape.gpus_per_node, 3);
  EXPECT_EQ(mixed->request.shape.gpu_type, "");
  EXPECT_EQ(mixed->warnings.size(), 1u);
  EXPECT_EQ(Request({"--cpus-per-gpu=12", "--gpus=2"}).cpus_per_gpu, 12);

  const std::string kGres = "sbatch: error: Invalid generic resource (gres) specification";
  ExpectError({"--gres=foo:2"}, kGres, 1);
  ExpectError({"--gres=gpu:x:y"}, kGres, 1);
  ExpectError({"--gres=gpu:-1"}, kGres, 1);
  ExpectError({"--gpus=a:b:c"}, kGres, 1);
  ExpectError({"-c", "2", "--cpus-per-gpu=4"},
              "sbatch: error: --cpus-per-gpu is mutually exclusive with --cpus-per-task\n" + kGres,
              1);
  ExpectError({"--gpus-per-task=2"},
              "sbatch: error: Failed to validate job spec. --gpus-per-task used without either "
              "--gpus or -n/--ntasks is not allowed.\n" +
                  kGres,
              1);
  ExpectError({"-n", "4", "--ntasks-per-gpu=2", "--gpus-per-task=1"},
              "sbatch: fatal: --gpus-per-task is mutually exclusive with --ntasks-per-gpu and "
              "SLURM_NTASKS_PER_GPU",
              1);
  // Another site's GRES types.
  SbatchSettings settings;
  settings.gres_types = {"gpu", "mps"};
  EXPECT_TRUE(Parse({"--gres=mps:50"}, kScript, {}, settings).ok());
}

TEST(ParseSbatch, ShapeDerivation) {
  model::JobShape s = Request({"-N", "4", "--ntasks-per-node=8", "-c", "2", "--exclusive",
                               "--switches=1@30:00", "--mem-per-cpu=4G"})
                          .shape;
  EXPECT_EQ(s.min_nodes, 4);
  EXPECT_EQ(s.max_nodes, 4);
  EXPECT_EQ(s.ntasks, 32);
  EXPECT_EQ(s.ntasks_per_node, 8);
  EXPECT_EQ(s.cpus_per_task, 2);
  EXPECT_TRUE(s.exclusive);
  EXPECT_EQ(s.switches, 1);
  EXPECT_EQ(s.switches_wait_s, 1800);
  EXPECT_EQ(s.mem_per_cpu_mb, 4096);
  // Without -N the tasks may spread, one per node at most as many nodes as tasks.
  model::JobShape spread = Request({"-n", "6"}).shape;
  EXPECT_EQ(spread.min_nodes, 1);
  EXPECT_EQ(spread.max_nodes, 6);
  model::JobShape packed = Request({"-n", "16", "--ntasks-per-node=8"}).shape;
  EXPECT_EQ(packed.min_nodes, 2);
  // One task per node by default.
  EXPECT_EQ(Request({"-N", "3"}).shape.ntasks, 3);
  // CPUs and memory that follow the GPUs; segments of a topology/block cluster.
  model::JobShape g = Request({"--gpus-per-node=4", "--cpus-per-gpu=12", "--mem-per-gpu=100G", "-N",
                               "4", "--segment=2"})
                          .shape;
  EXPECT_EQ(g.cpus_per_gpu, 12);
  EXPECT_EQ(g.mem_per_gpu_mb, 100 * 1024);
  EXPECT_EQ(g.segment, 2);
  ExpectError({"--segment=0"}, "sbatch: error: Invalid numeric value \"0\" for --segment.", 1);
}

TEST(ParseSbatch, Scheduling) {
  JobRequest r =
      Request({"-H", "--nice=10", "--priority=TOP", "--requeue", "--kill-on-invalid-dep=no",
               "--dependency=afterok:1:2,afterany:3", "--array=0-99%5", "-k"});
  EXPECT_TRUE(r.hold);
  EXPECT_EQ(r.nice, 10);
  EXPECT_EQ(r.priority, model::kPriorityTop);
  EXPECT_EQ(r.requeue, true);
  EXPECT_EQ(r.kill_on_invalid_dep, false);
  EXPECT_EQ(r.dependency.ToString(), "afterok:1:2,afterany:3");
  ASSERT_TRUE(r.array.has_value());
  EXPECT_EQ(r.array->max_running, 5);
  EXPECT_EQ(r.array->Count(), 100);
  EXPECT_TRUE(r.no_kill);
  EXPECT_EQ(r.EffectiveStdout(), "slurm-%A_%a.out");
  EXPECT_EQ(Request({"--nice"}).nice, 100);
  EXPECT_EQ(Request({"--nice=-5"}).nice, -5);
  EXPECT_EQ(Request({"--requeue", "--no-requeue"}).requeue, false);
  EXPECT_EQ(Request({"--priority=7"}).priority, 7);
  EXPECT_EQ(Request({"--dependency=singleton"}).dependency.clauses[0].type,
            model::DependencyType::kSingleton);
  EXPECT_EQ(Request({"-d", "after:1+10"}).dependency.clauses[0].jobs[0].delay_s, 600);
  EXPECT_EQ(Request({"-d", "afterok:1?afterok:2"}).dependency.combine,
            model::Dependency::Combine::kAny);
  ExpectError({"--nice=2147483646"},
              "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)", 255);
  ExpectError({"--nice=x"}, "sbatch: error: Invalid --nice value", 255);
  ExpectError({"--kill-on-invalid-dep=x"},
              "sbatch: error: Invalid --kill-on-invalid-dep specification", 255);
  ExpectError({"-kfoo"}, "sbatch: error: Invalid --no-kill specification", 255);
  ExpectError({"--priority=x"},
              "sbatch: error: Invalid --priority value 'x': expected a number from 0 to 4294967292 "
              "or TOP",
              255);
}

TEST(ParseSbatch, ArrayAndDependencyErrorsAreTheControllers) {
  const std::string kArray =
      "sbatch: error: Batch job submission failed: Invalid job array specification";
  for (std::string bad : {"x", "5-1", "1-10:0", "1-3%", "%2", "0-1001"}) {
    ExpectError({"--array=" + bad}, kArray, 1);
  }
  SbatchSettings big;
  big.max_array_size = 5001;
  EXPECT_TRUE(Parse({"--array=0-5000"}, kScript, {}, big).ok());
  ExpectError({"--array=x"}, kArray, 9, kScript, {{"SLURM_EXIT_ERROR", "9"}});
  const std::string kDep = "sbatch: error: Batch job submission failed: Job dependency problem";
  for (std::string bad :
       {"x", "afterok", "afterok:abc", "afterok:1,afterany:2?afterok:3", "afterok:1+10"}) {
    ExpectError({"--dependency=" + bad}, kDep, 1);
  }
  ExpectError({"--constraint=a&&b"},
              "sbatch: error: Batch job submission failed: Invalid feature specification", 1);
  EXPECT_EQ(Request({"-C", "(a100|h100)&ib"}).constraint, "(a100|h100)&ib");
  EXPECT_EQ(Request({"-C", "[rack1|rack2]"}).constraint, "[rack1|rack2]");
  StatusOr<SbatchInput> counts = Parse({"-C", "[rack1*2&rack2*4]"});
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(std::string(counts.status().message()).find("not supported yet"), std::string::npos);
}

TEST(ParseSbatch, BeginAndDeadline) {
  EXPECT_EQ(Request({"--begin=now+1hour"}).begin_time, kNow + 3600);
  EXPECT_EQ(Request({"--begin=now+60"}).begin_time, kNow + 60);
  EXPECT_EQ(Request({"--begin=2027-02-01T10:00:00"}).begin_time, 1801476000);
  EXPECT_EQ(Request({"--deadline=now+2days"}).deadline, kNow + 2 * 86400);
  ExpectError({"--begin=now+10min"},
              "Invalid time specification (pos=5): now+10min\n"
              "sbatch: error: Invalid --begin specification",
              255);
  ExpectError({"--begin="}, "sbatch: error: Invalid --begin specification", 255);
  ExpectError(
      {"--deadline=x"},
      "Invalid time specification (pos=0): x\nsbatch: error: Invalid --deadline specification",
      255);
}

TEST(ParseSbatch, Sharing) {
  EXPECT_EQ(Request({"--exclusive"}).sharing, model::SharingMode::kExclusive);
  EXPECT_EQ(Request({"--exclusive=user"}).sharing, model::SharingMode::kExclusiveUser);
  EXPECT_EQ(Request({"--exclusive=MCS"}).sharing, model::SharingMode::kExclusiveMcs);
  EXPECT_EQ(Request({"--exclusive", "-s"}).sharing, model::SharingMode::kOversubscribe);
  EXPECT_EQ(Request({"-s", "--exclusive"}).sharing, model::SharingMode::kExclusive);
  ExpectError({"--exclusive=foo"}, "sbatch: error: Invalid --exclusive specification", 255);
}

TEST(ParseSbatch, FilesAndDirectories) {
  SbatchSettings settings;
  settings.submit_dir = "/home/alice/run";
  StatusOr<SbatchInput> in = Parse(
      {"-D", "sub", "-o", "out-%j.txt", "-e", "/abs/err", "-i", "none"}, kScript, {}, settings);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->request.work_dir, "/home/alice/run/sub");
  EXPECT_EQ(in->request.stdout_pattern, "/home/alice/run/sub/out-%j.txt");
  EXPECT_EQ(in->request.stderr_pattern, "/abs/err");
  EXPECT_EQ(in->request.stdin_pattern, "/dev/null");
  // $PWD stands in for the submit directory; without either, paths stay as written.
  JobRequest pwd = Request({"-o", "o.txt"}, kScript, {{"PWD", "/tmp/w"}});
  EXPECT_EQ(pwd.work_dir, "/tmp/w");
  EXPECT_EQ(pwd.stdout_pattern, "/tmp/w/o.txt");
  JobRequest bare = Request({"-o", "o.txt"});
  EXPECT_EQ(bare.stdout_pattern, "o.txt");
  EXPECT_EQ(bare.work_dir, "");
  EXPECT_EQ(Request({"--open-mode=append"}).open_mode, model::OpenMode::kAppend);
  EXPECT_EQ(Request({"--open-mode=t"}).open_mode, model::OpenMode::kTruncate);
  ExpectError({"--open-mode=x"}, "sbatch: error: Invalid --open-mode specification", 255);
}

TEST(ParseSbatch, Export) {
  Env env = {{"HOME", "/home/a"}, {"SLURM_CONF", "/etc/slurm.conf"}, {"EDITOR", "vi"}};
  EXPECT_EQ(Request({}, kScript, env).environment, env);
  EXPECT_EQ(Request({"--export=NONE"}, kScript, env).environment,
            (Env{{"SLURM_CONF", "/etc/slurm.conf"}}));
  EXPECT_EQ(Request({"--export=EDITOR,X=1"}, kScript, env).environment,
            (Env{{"EDITOR", "vi"}, {"SLURM_CONF", "/etc/slurm.conf"}, {"X", "1"}}));
  JobRequest all = Request({"--export=ALL,EDITOR=emacs,X=1"}, kScript, env);
  EXPECT_EQ(all.environment.at("EDITOR"), "vi");
  EXPECT_EQ(all.environment.at("X"), "1");
  Env from_env = env;
  from_env["SBATCH_EXPORT"] = "NONE";
  EXPECT_EQ(Request({}, kScript, from_env).export_policy.mode, model::ExportPolicy::Mode::kNone);
  ExpectError({"--export=1BAD"},
              "sbatch: error: invalid --export entry '1BAD' in '1BAD': expected ALL, NONE, NAME or "
              "NAME=value",
              255);
}

TEST(ParseSbatch, EnvironmentVariables) {
  JobRequest r = Request({}, kScript,
                         {{"SBATCH_ACCOUNT", "acct"},
                          {"SBATCH_PARTITION", "p"},
                          {"SBATCH_QOS", "q"},
                          {"SBATCH_ARRAY_INX", "1-3"},
                          {"SBATCH_GPUS_PER_NODE", "2"},
                          {"SBATCH_EXCLUSIVE", ""},
                          {"SBATCH_OUTPUT", "/o"},
                          {"SBATCH_ERROR", "/e"},
                          {"SBATCH_INPUT", "/i"},
                          {"SBATCH_REQ_SWITCH", "2"},
                          {"SBATCH_WAIT4SWITCH", "10"},
                          {"SBATCH_CONSTRAINT", "ib"},
                          {"SBATCH_RESERVATION", "r"},
                          {"SBATCH_WCKEY", "w"},
                          {"SBATCH_SIGNAL", "USR1@60"},
                          {"SBATCH_OPEN_MODE", "append"},
                          {"SBATCH_TIMELIMIT", "1:00:00"},
                          // Not sbatch input variables: ignored.
                          {"SBATCH_NODES", "9"},
                          {"SBATCH_NTASKS", "9"}});
  EXPECT_EQ(r.account, "acct");
  EXPECT_EQ(r.partitions, std::vector<std::string>{"p"});
  EXPECT_EQ(r.qos, "q");
  EXPECT_EQ(r.array->Count(), 3);
  EXPECT_EQ(r.shape.gpus_per_node, 2);
  EXPECT_EQ(r.sharing, model::SharingMode::kExclusive);
  EXPECT_EQ(r.stdout_pattern, "/o");
  EXPECT_EQ(r.stderr_pattern, "/e");
  EXPECT_EQ(r.stdin_pattern, "/i");
  EXPECT_EQ(r.switches, 2);
  EXPECT_EQ(r.switches_wait_s, 600);
  EXPECT_EQ(r.constraint, "ib");
  EXPECT_EQ(r.reservation, "r");
  EXPECT_EQ(r.wckey, "w");
  EXPECT_EQ(r.signal, "USR1@60");
  EXPECT_EQ(r.open_mode, model::OpenMode::kAppend);
  EXPECT_EQ(r.time_limit_s, 3600);
  EXPECT_FALSE(r.min_nodes.has_value());
  EXPECT_FALSE(r.ntasks.has_value());
}

TEST(ParseSbatch, EnvironmentFlags) {
  // Set by "", "yes" or a non-zero number; any other value resets the option.
  StatusOr<SbatchInput> in = Parse({}, kScript,
                                   {{"SBATCH_WAIT", "yes"},
                                    {"SBATCH_OVERCOMMIT", "1"},
                                    {"SBATCH_SPREAD_JOB", ""},
                                    {"SBATCH_DEBUG", "1"}});
  ASSERT_TRUE(in.ok());
  EXPECT_TRUE(in->wait);
  EXPECT_TRUE(in->request.overcommit);
  EXPECT_TRUE(in->request.spread_job);
  EXPECT_EQ(in->verbose, 1);
  EXPECT_EQ(Request({}, Directives({"--requeue"}), {{"SBATCH_REQUEUE", "no"}}).requeue,
            std::nullopt);
  EXPECT_EQ(Request({}, kScript, {{"SBATCH_NO_REQUEUE", "1"}}).requeue, false);
  EXPECT_EQ(Request({"-O"}, kScript, {{"SBATCH_OVERCOMMIT", "no"}}).overcommit, true);
  ExpectError({"-Q"}, "sbatch: error: don't specify both --verbose (-v) and --quiet (-Q)", 1,
              kScript, {{"SBATCH_DEBUG", "1"}});
}

TEST(ParseSbatch, ReportingOptions) {
  StatusOr<SbatchInput> in = Parse({"--parsable", "--test-only", "-W", "-vv"});
  ASSERT_TRUE(in.ok());
  EXPECT_TRUE(in->parsable);
  EXPECT_TRUE(in->request.test_only);
  EXPECT_TRUE(in->wait);
  EXPECT_EQ(in->verbose, 2);
  EXPECT_TRUE(Parse({"-Q"})->quiet);
}

TEST(ParseSbatch, OptionsLoomDoesNotActOn) {
  StatusOr<SbatchInput> in =
      Parse({"--mail-type=BEGIN,end", "--mail-user=a@b", "--cpu-freq=high", "--hint=compute_bound",
             "--gpu-bind=closest", "--mail-type=FAIL"});
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->request.ignored_options.at("mail-type"), "FAIL");
  EXPECT_EQ(in->request.ignored_options.at("cpu-freq"), "high");
  EXPECT_EQ(in->warnings,
            (std::vector<std::string>{
                "sbatch: warning: --mail-type is ignored: Loom does not send mail",
                "sbatch: warning: --mail-user is ignored: Loom does not send mail",
                "sbatch: warning: --cpu-freq is accepted but has no effect in Loom"}));
  // The defaults of the job's steps: acted on, no warning.
  EXPECT_EQ(in->request.hint, "compute_bound");
  EXPECT_EQ(in->request.gpu_bind, "closest");
  ExpectError({"--hint=fast"},
              "sbatch: error: Invalid --hint argument: fast (use nomultithread, multithread, "
              "compute_bound or memory_bound)",
              255);
  StatusOr<SbatchInput> near = Parse({"--gpu-bind=near"});
  ASSERT_FALSE(near.ok());
  EXPECT_EQ(std::string(near.status().message())
                .rfind("sbatch: error: Invalid --gpu-bind argument: near (", 0),
            0u)
      << near.status();
  ExpectError({"--mail-type=x"}, "sbatch: error: Invalid --mail-type specification", 255);
  ExpectError({"--wait-all-nodes=2"}, "sbatch: error: Invalid --wait-all-nodes specification", 255);
  ExpectError({"-S", "1", "--thread-spec=1"},
              "sbatch: fatal: -S/--core-spec and --thred-spec options are mutually exclusive", 1);
}

TEST(ParseSbatch, OtherOptions) {
  JobRequest r = Request({"-A",
                          "acct",
                          "-q",
                          "high",
                          "--reservation=r1",
                          "--wckey=w",
                          "--comment=c d",
                          "-L",
                          "matlab:2",
                          "-w",
                          "n[1-2]",
                          "-x",
                          "n3",
                          "--contiguous",
                          "--spread-job",
                          "--use-min-nodes",
                          "--prefer=fast",
                          "--uid=1000",
                          "--gid=100",
                          "--get-user-env",
                          "--export-file=/tmp/env",
                          "--signal=B:USR1@30",
                          "--ntasks-per-socket=2",
                          "--ntasks-per-gpu=1"});
  EXPECT_EQ(r.account, "acct");
  EXPECT_EQ(r.qos, "high");
  EXPECT_EQ(r.reservation, "r1");
  EXPECT_EQ(r.wckey, "w");
  EXPECT_EQ(r.comment, "c d");
  EXPECT_EQ(r.licenses, "matlab:2");
  EXPECT_EQ(r.nodelist, "n[1-2]");
  EXPECT_EQ(r.exclude, "n3");
  EXPECT_TRUE(r.contiguous);
  EXPECT_TRUE(r.spread_job);
  EXPECT_TRUE(r.use_min_nodes);
  EXPECT_EQ(r.prefer, "fast");
  EXPECT_EQ(r.uid, 1000u);
  EXPECT_EQ(r.gid, 100u);
  EXPECT_TRUE(r.get_user_env);
  EXPECT_EQ(r.export_file, "/tmp/env");
  EXPECT_EQ(r.signal, "B:USR1@30");
  EXPECT_EQ(r.ntasks_per_socket, 2);
  EXPECT_EQ(r.ntasks_per_gpu, 1);
  for (std::string ok : {"USR1", "SIGTERM", "10@0", "R:TERM", "usr2@65535"}) {
    EXPECT_TRUE(Parse({"--signal=" + ok}).ok()) << ok;
  }
  for (std::string bad : {"B:10@70000", "x", "Q:USR1", "0"}) {
    ExpectError({"--signal=" + bad}, "sbatch: error: Invalid --signal specification", 255);
  }
  ExpectError({"--uid=alice"}, "sbatch: error: Invalid --uid specification", 255);
  ExpectError({"--get-user-env=10X"}, "sbatch: error: Invalid --get-user-env specification", 255);
  ExpectError({"--switches=2@x"},
              "sbatch: error: Invalid --switches specification '2@x': the time after '@' must be a "
              "duration such as 10, 1:00:00 or 1-0",
              255);
}

TEST(ParseSbatch, HeterogeneousJobsAreRefused) {
  StatusOr<SbatchInput> in = Parse({"-N1", ":", "-N2", "job.sh"});
  ASSERT_FALSE(in.ok());
  EXPECT_NE(std::string(in.status().message()).find("heterogeneous"), std::string::npos);
}

TEST(ScanSbatchCommandLine, FindsTheScript) {
  SbatchCommandLine c =
      ScanSbatchCommandLine(Argv({"-N", "2", "--job-name", "x", "run.sh", "-N", "3"}));
  EXPECT_EQ(c.script_path, "run.sh");
  EXPECT_EQ(c.script_args, (std::vector<std::string>{"-N", "3"}));
  EXPECT_FALSE(c.wrap);
  SbatchCommandLine stdin_script = ScanSbatchCommandLine(Argv({"-t", "5"}));
  EXPECT_FALSE(stdin_script.script_path.has_value());
  EXPECT_TRUE(ScanSbatchCommandLine(Argv({"--wrap", "true"})).wrap);
  EXPECT_FALSE(ScanSbatchCommandLine({}).script_path.has_value());
  // A malformed option ends the scan; ParseSbatch reports it.
  EXPECT_FALSE(ScanSbatchCommandLine(Argv({"--bogus", "run.sh"})).script_path.has_value());
}

}  // namespace
}  // namespace loom::cli::submit
