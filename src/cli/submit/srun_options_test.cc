#include "cli/submit/srun_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/submit/internal/sbatch_getopt.h"
#include "core/time_format.h"

namespace loom::cli::submit {
namespace {

using testing::StartsWith;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1700000000;

StatusOr<SrunInput> Parse(std::vector<std::string> args,
                          std::map<std::string, std::string> env = {{"PWD", "/home/alice"}}) {
  args.insert(args.begin(), "srun");
  return ParseSrun(args, env, kNow);
}

std::string ErrorOf(const StatusOr<SrunInput>& r) { return std::string(r.status().message()); }

TEST(SrunOptions, AllocationOptionsAsSbatchTakesThem) {
  auto in = Parse({"-N2", "-n4", "-c", "2", "--mem=4G", "-t", "1", "-p", "batch", "-w", "gpu01",
                   "--exclusive", "-C", "gpu", "--gpus-per-node=2", "-l", "hostname", "-f"});
  ASSERT_TRUE(in.ok()) << in.status();
  const model::JobRequest& r = in->request;
  EXPECT_EQ(r.min_nodes, 2);
  EXPECT_EQ(r.ntasks, 4);
  EXPECT_EQ(r.cpus_per_task, 2);
  EXPECT_EQ(r.mem_per_node_mb, 4096);
  EXPECT_EQ(r.time_limit_s, 60);
  EXPECT_THAT(r.partitions, ElementsAre("batch"));
  EXPECT_EQ(r.nodelist, "gpu01");
  EXPECT_EQ(r.sharing, model::SharingMode::kExclusive);
  EXPECT_EQ(r.constraint, "gpu");
  EXPECT_EQ(r.shape.gpus_per_node, 2);
  EXPECT_EQ(r.shape.min_nodes, 2);
  EXPECT_EQ(r.shape.ntasks, 4);
  EXPECT_TRUE(in->label);
  ASSERT_TRUE(r.srun);
  // Options end at the command: "-f" belongs to hostname.
  EXPECT_THAT(r.srun->argv, ElementsAre("hostname", "-f"));
  EXPECT_FALSE(r.srun->unbuffered);
  EXPECT_EQ(in->ntasks, 4);
}

TEST(SrunOptions, DefaultsOfAnInteractiveJob) {
  auto in = Parse({"/usr/bin/python3", "x.py"});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->request.name, "python3");  // the command's base name
  EXPECT_EQ(in->request.work_dir, "/home/alice");
  EXPECT_EQ(in->request.requeue, false);
  EXPECT_EQ(in->request.environment.at("PWD"), "/home/alice");  // --export=ALL
  EXPECT_EQ(in->out.kind, IoTarget::Kind::kSrun);
  EXPECT_EQ(in->err.kind, IoTarget::Kind::kSrun);
  EXPECT_EQ(in->ntasks, 1);
  EXPECT_FALSE(in->label);
  EXPECT_FALSE(in->quiet);
}

TEST(SrunOptions, JobNameChdirUnbufferedQuietExport) {
  auto in = Parse({"-J", "train", "-D", "run", "-u", "-Q", "--export=NONE,A=1", "true"},
                  {{"PWD", "/w"}, {"HOME", "/home/alice"}});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->request.name, "train");
  EXPECT_EQ(in->request.work_dir, "/w/run");
  EXPECT_TRUE(in->request.srun->unbuffered);
  EXPECT_TRUE(in->quiet);
  EXPECT_EQ(in->request.environment.count("HOME"), 0u);
  EXPECT_EQ(in->request.environment.at("A"), "1");
}

TEST(SrunOptions, NtasksFromNodesAndTasksPerNode) {
  EXPECT_EQ(Parse({"-N3", "true"})->ntasks, 3);
  EXPECT_EQ(Parse({"-N2", "--ntasks-per-node=4", "true"})->ntasks, 8);
}

TEST(SrunOptions, MissingCommandAndUnknownOption) {
  auto none = Parse({"-N2"});
  EXPECT_EQ(ErrorOf(none), "srun: fatal: No command given to execute.");
  EXPECT_EQ(SbatchExitCode(none.status()), 1);
  auto bad = Parse({"--frobnicate", "true"});
  EXPECT_EQ(ErrorOf(bad),
            "srun: unrecognized option '--frobnicate'\nTry \"srun --help\" for more information");
  EXPECT_EQ(SbatchExitCode(bad.status()), 1);
  EXPECT_EQ(ErrorOf(Parse({"-y", "true"})),
            "srun: invalid option -- 'y'\nTry \"srun --help\" for more information");
}

TEST(SrunOptions, BadValuesSpeakAsSrun) {
  auto t = Parse({"-t", "soon", "true"});
  EXPECT_EQ(ErrorOf(t), "srun: error: Invalid --time specification");
  auto n = Parse({"-n", "x", "true"});
  EXPECT_EQ(ErrorOf(n), "srun: error: Invalid numeric value \"x\" for --ntasks.");
  EXPECT_THAT(ErrorOf(Parse({"--mem=1G", "--mem-per-cpu=1G", "true"})),
              HasSubstr("srun: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually"));
  EXPECT_THAT(ErrorOf(Parse({"--gres=gpu:x:y:z", "true"})), HasSubstr("srun: error:"));
  EXPECT_EQ(SbatchExitCode(Parse({"-t", "soon", "true"}).status()), 255);
}

TEST(SrunOptions, InsideAnAllocationAsksForAStepOfThatJob) {
  auto in = Parse({"-n4", "-N2", "-m", "cyclic", "--cpu-bind=cores", "--gpu-bind=closest", "-K",
                   "--exclusive", "hostname"},
                  {{"SLURM_JOB_ID", "12"}, {"SLURM_NTASKS", "8"}});
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_TRUE(in->step.has_value());
  EXPECT_EQ(in->step->job_id, 12u);
  EXPECT_EQ(in->step->ntasks, 4);  // the command line over SLURM_NTASKS
  EXPECT_EQ(in->step->nodes, 2);
  EXPECT_EQ(in->step->distribution, "cyclic");
  EXPECT_EQ(in->step->cpu_bind, "cores");
  EXPECT_EQ(in->step->gpu_bind, "closest");
  EXPECT_TRUE(in->step->kill_on_bad_exit);
  EXPECT_TRUE(in->step->exclusive);
  EXPECT_TRUE(in->warnings.empty());
  EXPECT_EQ(in->request.srun->argv, std::vector<std::string>{"hostname"});
  EXPECT_FALSE(Parse({"true"})->step.has_value());  // no allocation: a new one
  EXPECT_EQ(Parse({"--jobid=5", "true"})->step->job_id, 5u);
  EXPECT_THAT(ErrorOf(Parse({"--jobid=x", "true"})), HasSubstr("Invalid job id specified: x"));
  EXPECT_THAT(ErrorOf(Parse({"--pty", "bash"})), HasSubstr("--pty is not supported"));
}

TEST(SrunOptions, JobOptionsGivenToAStepAreSaidToHaveNoEffect) {
  auto in = Parse({"-t", "5", "-w", "n1", "-t", "6", "-l", "-n2", "true"}, {{"SLURM_JOB_ID", "7"}});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_THAT(in->warnings, ElementsAre("srun: warning: --time has no effect on a step inside an "
                                        "allocation in Loom (the job's own applies)",
                                        "srun: warning: --nodelist has no effect on a step inside "
                                        "an allocation in Loom (the job's own applies)"));
  EXPECT_THAT(ErrorOf(Parse({"-t", "soon", "true"}, {{"SLURM_JOB_ID", "7"}})),
              HasSubstr("srun: error:"));  // still checked
}

TEST(SrunOptions, AStepTakesItsShapeFromTheAllocationWhenNotGiven) {
  auto in = Parse({"hostname"}, {{"SLURM_JOB_ID", "12"},
                                 {"SLURM_NTASKS", "8"},
                                 {"SLURM_NTASKS_PER_NODE", "4"},
                                 {"SLURM_CPUS_PER_TASK", "2"}});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->step->ntasks, 8);
  EXPECT_EQ(in->step->ntasks_per_node, 4);
  EXPECT_EQ(in->step->cpus_per_task, 2);
  EXPECT_EQ(in->ntasks, 8);
  auto one = Parse({"-N1", "hostname"}, {{"SLURM_JOB_ID", "12"}, {"SLURM_NTASKS", "8"}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->step->ntasks, 0);  // -N alone: the allocation's task count does not apply
  EXPECT_EQ(one->step->nodes, 1);
}

TEST(SrunOptions, BindingAndDistributionValuesAreChecked) {
  const std::map<std::string, std::string> job = {{"SLURM_JOB_ID", "3"}};
  // The nodes' own parsers (model/binding.h) judge the values, in Slurm's words first.
  EXPECT_THAT(ErrorOf(Parse({"--cpu-bind=corez", "true"}, job)),
              StartsWith("srun: error: Invalid --cpu-bind argument: corez (use none, "));
  EXPECT_THAT(ErrorOf(Parse({"--gpu-bind=near", "true"}, job)),
              StartsWith("srun: error: Invalid --gpu-bind argument: near (use none, "));
  EXPECT_EQ(ErrorOf(Parse({"-m", "zigzag", "true"}, job)),
            "srun: error: Invalid --distribution specification");
  EXPECT_THAT(ErrorOf(Parse({"-m", "plane=2", "true"}, job)), HasSubstr("not supported by Loom"));
  EXPECT_EQ(Parse({"--cpu-bind=help", "true"}, job)->action, SrunInput::Action::kCpuBindHelp);
  auto gpus = Parse({"--gpus-per-task=2", "-n2", "true"}, job);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_EQ(gpus->step->gpus_per_task, "2");
}

TEST(SrunOptions, ANewAllocationsStepIsBoundAsSrunSays) {
  auto in = Parse({"-n4", "-m", "cyclic", "--cpu-bind=verbose,cores", "--gpu-bind=closest",
                   "true"});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_TRUE(in->warnings.empty()) << in->warnings.front();
  ASSERT_TRUE(in->request.srun.has_value());
  EXPECT_EQ(in->request.srun->cpu_bind, "verbose,cores");
  EXPECT_EQ(in->request.srun->gpu_bind, "closest");
  EXPECT_EQ(in->request.srun->distribution, "cyclic");
}

TEST(SrunOptions, IgnoredOptionsWarnOnce) {
  auto in = Parse({"--resv-ports", "--bcast", "--resv-ports", "-K", "true"});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_THAT(in->warnings,
              ElementsAre("srun: warning: --resv-ports is accepted but has no effect in Loom",
                          "srun: warning: --bcast is accepted but has no effect in Loom"));
  EXPECT_TRUE(in->kill_on_bad_exit);  // acted on: no warning
  EXPECT_EQ(in->request.ignored_options.count("resv-ports"), 1u);
  // --hint says how many threads of each core the tasks use: acted on.
  auto hint = Parse({"--hint=nomultithread", "true"});
  ASSERT_TRUE(hint.ok());
  EXPECT_TRUE(hint->warnings.empty());
  EXPECT_EQ(hint->request.srun->threads_per_core, 1);
}

TEST(SrunOptions, HelpVersionAndEnvironment) {
  EXPECT_EQ(Parse({"--help"})->action, SrunInput::Action::kHelp);
  EXPECT_EQ(Parse({"-V"})->action, SrunInput::Action::kVersion);
  auto in = Parse({"true"},
                  {{"SLURM_PARTITION", "gpu"}, {"SLURM_LABELIO", "1"}, {"SLURM_TIMELIMIT", "5"}});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_THAT(in->request.partitions, ElementsAre("gpu"));
  EXPECT_TRUE(in->label);
  EXPECT_EQ(in->request.time_limit_s, 300);
  // The command line wins over the environment.
  EXPECT_THAT(Parse({"-p", "cpu", "true"}, {{"SLURM_PARTITION", "gpu"}})->request.partitions,
              ElementsAre("cpu"));
}

TEST(SrunIo, ClassifiedBySlurmsRules) {
  using K = IoTarget::Kind;
  EXPECT_EQ(ClassifyIo("", 4).kind, K::kSrun);
  EXPECT_EQ(ClassifyIo("all", 4).kind, K::kSrun);
  EXPECT_EQ(ClassifyIo("-", 4).kind, K::kSrun);
  EXPECT_EQ(ClassifyIo("none", 4), (IoTarget{K::kPerTask, "/dev/null", -1}));
  EXPECT_EQ(ClassifyIo("2", 4), (IoTarget{K::kOneTask, "", 2}));
  EXPECT_EQ(ClassifyIo("4", 4), (IoTarget{K::kFile, "4", -1}));  // no such task: a file name
  EXPECT_EQ(ClassifyIo("out-%j.txt", 4), (IoTarget{K::kFile, "out-%j.txt", -1}));
  EXPECT_EQ(ClassifyIo("out-%t.txt", 4).kind, K::kPerTask);
  EXPECT_EQ(ClassifyIo("out-%4n.txt", 4).kind, K::kPerTask);
  EXPECT_EQ(ClassifyIo("%N.log", 4).kind, K::kPerTask);
  EXPECT_EQ(ClassifyIo("100%%t.log", 4).kind, K::kFile);  // "%%" is a '%'
  EXPECT_EQ(ClassifyIo("a\\%t", 4).kind, K::kFile);       // a backslash: not expanded
}

TEST(SrunIo, PerTaskPatternsGoToTheNodesAndStderrFollowsStdout) {
  auto in = Parse({"-n2", "-o", "out-%t.txt", "true"});
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->request.srun->stdout_pattern, "/home/alice/out-%t.txt");
  EXPECT_EQ(in->request.srun->stderr_pattern, "/home/alice/out-%t.txt");
  EXPECT_EQ(in->request.stdout_pattern, "");  // not a batch job's output

  auto split = Parse({"-n2", "-o", "out-%t", "-e", "all", "true"});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->request.srun->stdout_pattern, "/home/alice/out-%t");
  EXPECT_EQ(split->request.srun->stderr_pattern, "");
  EXPECT_EQ(split->err.kind, IoTarget::Kind::kSrun);

  auto local = Parse({"-o", "log-%j.txt", "true"});
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->out, (IoTarget{IoTarget::Kind::kFile, "/home/alice/log-%j.txt", -1}));
  EXPECT_EQ(local->err, local->out);
  EXPECT_EQ(local->request.srun->stdout_pattern, "");

  auto in_file = Parse({"-i", "data-%t", "true"});
  ASSERT_TRUE(in_file.ok());
  EXPECT_EQ(in_file->request.srun->stdin_pattern, "/home/alice/data-%t");
}

TEST(SrunOptionTable, NamesAndShortLettersAreUnique) {
  std::set<std::string_view> names;
  std::set<char> letters;
  for (const internal::OptionSpec& o : internal::SrunOptionTable()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name;
    if (o.short_name != 0) EXPECT_TRUE(letters.insert(o.short_name).second) << o.short_name;
  }
  EXPECT_EQ(internal::LongName(internal::Opt::kLabel), "label");
}

TEST(SrunOptions, MpiTypeFromTheCommandLineOrTheEnvironmentElseMpiDefault) {
  auto given = Parse({"--mpi=pmix", "--mpi=pmi2", "true"});
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_TRUE(given->warnings.empty());
  EXPECT_EQ(given->mpi, "pmi2");  // the last one given
  ResolveMpi("none", &*given);
  EXPECT_EQ(given->request.environment.at("SLURM_MPI_TYPE"), "pmi2");
  // One failing rank would leave the others waiting in a collective: the step ends.
  EXPECT_TRUE(given->kill_on_bad_exit);

  auto from_env = ParseSrun(std::vector<std::string>{"srun", "true"},
                            {{"SLURM_MPI_TYPE", "pmix_v4"}, {"PWD", "/tmp"}}, 0);
  ASSERT_TRUE(from_env.ok()) << from_env.status();
  EXPECT_EQ(from_env->mpi, "pmix_v4");

  auto by_default = Parse({"-K0", "true"});
  ASSERT_TRUE(by_default.ok());
  ResolveMpi("pmix", &*by_default);
  EXPECT_EQ(by_default->request.environment.at("SLURM_MPI_TYPE"), "pmix");
  EXPECT_FALSE(by_default->kill_on_bad_exit);  // -K0 said so

  auto none = Parse({"true"});
  ASSERT_TRUE(none.ok());
  ResolveMpi("none", &*none);
  EXPECT_EQ(none->request.environment.at("SLURM_MPI_TYPE"), "none");
  EXPECT_FALSE(none->kill_on_bad_exit);
}

TEST(SrunOptions, AnUnknownMpiTypeIsRefusedAndListNamesThem) {
  auto bad = Parse({"--mpi=openmpi", "true"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "srun: error: Invalid MPI type 'openmpi', --mpi=list for acceptable types");
  auto list = Parse({"--mpi=list"});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->action, SrunInput::Action::kMpiList);
  EXPECT_EQ(MpiListText(),
            "MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\n"
            "specific pmix plugin versions available: pmix_v4\n");
}

}  // namespace
}  // namespace loom::cli::submit
