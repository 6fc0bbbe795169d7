#include "model/binding.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace loom::core {
// Readable failures: CPU sets print as lists.
void PrintTo(const CpuSet& s, std::ostream* os) { *os << "{" << s.ToList() << "}"; }
}  // namespace loom::core

namespace loom::model {
namespace {

using core::CpuSet;

CpuSet Cpus(std::initializer_list<int32_t> ids) {
  CpuSet s;
  for (int32_t id : ids) s.set(id);
  return s;
}

CpuSet Range(int32_t lo, int32_t hi) {
  CpuSet s;
  for (int32_t c = lo; c <= hi; ++c) s.set(c);
  return s;
}

GpuMask Gpus(std::initializer_list<int32_t> ids) {
  GpuMask m = 0;
  for (int32_t id : ids) m |= GpuMask{1} << id;
  return m;
}

std::vector<int32_t> Ids(int32_t n, int32_t first = 0) {
  std::vector<int32_t> v;
  for (int32_t i = 0; i < n; ++i) v.push_back(first + i);
  return v;
}

// A small DGX-like node: 2 sockets (one NUMA node each) of 4 cores with 2 threads, so
// socket 0 has cores {0,8} {1,9} {2,10} {3,11} and socket 1 {4,12} ... {7,15}; 8 GPUs,
// 0-3 on NUMA node 0 and 4-7 on NUMA node 1.
BindNode SmallDgx() {
  BindNode n;
  n.name = "g1";
  n.cpus = CpuTopology::Uniform(2, 4, 2);
  n.gpus = CatalogTopology("dgx-a100")->gpus;
  return n;
}

// The real DGX A100: 2 x 64 cores x 2 threads, CPUs 0-63,128-191 on socket 0.
BindNode DgxA100() {
  BindNode n;
  n.name = "dgx01";
  n.cpus = CpuTopology::Uniform(2, 64, 2);
  n.gpus = CatalogTopology("dgx-a100")->gpus;
  return n;
}

BindNode CpuOnly() {
  BindNode n;
  n.name = "c1";
  n.cpus = CpuTopology::Uniform(1, 8, 1);
  return n;
}

StepOnNode Step(const CpuSet& cpus, GpuMask gpus, int32_t ntasks, std::string_view cpu_bind,
                std::string_view gpu_bind = "") {
  StepOnNode s;
  s.cpus = cpus;
  s.gpus = gpus;
  s.task_ids = Ids(ntasks);
  if (!cpu_bind.empty()) s.cpu_bind = ParseCpuBind(cpu_bind).value();
  if (!gpu_bind.empty()) s.gpu_bind = ParseGpuBind(gpu_bind).value();
  return s;
}

std::vector<CpuSet> TaskCpus(const StepBinding& b) {
  std::vector<CpuSet> v;
  for (const TaskBinding& t : b.tasks) v.push_back(t.cpus);
  return v;
}

std::vector<std::string> Visible(const StepBinding& b) {
  std::vector<std::string> v;
  for (const TaskBinding& t : b.tasks) v.push_back(t.cuda_visible_devices);
  return v;
}

// ---- CPU layout ----

TEST(CpuTopology, UniformNumbersFirstThreadsFirst) {
  CpuTopology t = CpuTopology::Uniform(2, 4, 2);
  ASSERT_EQ(t.cores.size(), 8u);
  EXPECT_EQ(t.cores[0].threads, (std::vector<int32_t>{0, 8}));
  EXPECT_EQ(t.cores[5].socket, 1);
  EXPECT_EQ(t.cores[5].threads, (std::vector<int32_t>{5, 13}));
  EXPECT_EQ(t.cpu_numa[13], 1);
  EXPECT_EQ(t.num_cpus(), 16);
  EXPECT_EQ(t.num_sockets(), 2);
  EXPECT_EQ(t.num_numa(), 2);
  CpuTopology four = CpuTopology::Uniform(2, 4, 1, 2);  // NPS2: two NUMA nodes per socket
  EXPECT_EQ(four.cpu_numa, (std::vector<int32_t>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_TRUE(ValidateCpuTopology(t).ok());
}

TEST(CpuTopology, FromACatalogTopology) {
  const NodeTopology& dgx = *CatalogTopology("dgx-a100");
  CpuTopology t = CpuTopologyFor(dgx, 2, 64, 2).value();
  EXPECT_EQ(t, CpuTopology::Uniform(2, 64, 2));
  EXPECT_EQ(t.cpu_numa[130], 0);
  EXPECT_EQ(t.cpu_numa[200], 1);
  StatusOr<CpuTopology> bad = CpuTopologyFor(dgx, 2, 32, 2);  // only 128 CPUs
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dgx-a100"), std::string::npos);
  EXPECT_FALSE(CpuTopologyFor(dgx, 2, 128, 2).ok());  // CPUs 256-511 in no NUMA node
}

TEST(CpuTopology, ValidationNamesTheFault) {
  CpuTopology t = CpuTopology::Uniform(1, 2, 1);
  t.cores[1].threads = {0};
  EXPECT_NE(ValidateCpuTopology(t).message().find("CPU 0"), std::string::npos);
  t = CpuTopology::Uniform(1, 2, 1);
  t.cpu_numa.pop_back();
  EXPECT_NE(ValidateCpuTopology(t).message().find("no NUMA node"), std::string::npos);
}

// ---- parsing ----

TEST(ParseCpuBind, TypesAndFlags) {
  EXPECT_EQ(ParseCpuBind("cores")->type, CpuBindType::kCores);
  EXPECT_FALSE(ParseCpuBind("cores")->verbose);
  CpuBind b = ParseCpuBind("verbose,threads").value();
  EXPECT_EQ(b.type, CpuBindType::kThreads);
  EXPECT_TRUE(b.verbose);
  EXPECT_EQ(ParseCpuBind("q,no")->type, CpuBindType::kNone);
  EXPECT_EQ(ParseCpuBind("Sockets")->type, CpuBindType::kSockets);
  EXPECT_EQ(ParseCpuBind("ldoms")->type, CpuBindType::kLdoms);
  EXPECT_EQ(ParseCpuBind("rank")->type, CpuBindType::kRank);
  EXPECT_TRUE(ParseCpuBind("verbose")->verbose);
  EXPECT_EQ(ParseCpuBind("verbose")->type, CpuBindType::kAuto);
}

TEST(ParseCpuBind, ListsWithRepetitionAndHex) {
  CpuBind b = ParseCpuBind("v,map_cpu:0,3*2,0x10").value();
  EXPECT_EQ(b.type, CpuBindType::kMapCpu);
  EXPECT_TRUE(b.verbose);
  EXPECT_EQ(b.list, (std::vector<CpuSet>{Cpus({0}), Cpus({3}), Cpus({3}), Cpus({16})}));
  b = ParseCpuBind("mask_cpu:0x3,c,10000000000000000000000000000001").value();
  EXPECT_EQ(b.list, (std::vector<CpuSet>{Cpus({0, 1}), Cpus({2, 3}), Cpus({0, 124})}));
  b = ParseCpuBind("map_ldom:1,0,verbose").value();
  EXPECT_EQ(b.type, CpuBindType::kMapLdom);
  EXPECT_TRUE(b.verbose);
  EXPECT_EQ(b.list, (std::vector<CpuSet>{Cpus({1}), Cpus({0})}));
  EXPECT_EQ(ParseCpuBind("mask_ldom:0x3")->list, (std::vector<CpuSet>{Cpus({0, 1})}));
}

TEST(ParseCpuBind, BadValuesGiveSlurmsErrorAndAHint) {
  for (const char* bad : {"bogus", "map_cpu:", "map_cpu:1,x", "mask_cpu:0xg", "cores,threads",
                          "map_cpu:1*0", "map_cpu:-1", "nonsense:1", "map_cpu:1*65536,2"}) {
    StatusOr<CpuBind> b = ParseCpuBind(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(b.status().message().rfind(std::string("Invalid --cpu-bind argument: ") + bad, 0), 0u)
        << b.status().message();
  }
  EXPECT_NE(ParseCpuBind("bogus").status().message().find("map_cpu:<list>"), std::string::npos);
}

TEST(ParseGpuBind, TypesListsAndErrors) {
  EXPECT_EQ(ParseGpuBind("closest")->type, GpuBindType::kClosest);
  EXPECT_EQ(ParseGpuBind("none")->type, GpuBindType::kNone);
  GpuBind b = ParseGpuBind("verbose,map_gpu:0,1*2").value();
  EXPECT_TRUE(b.verbose);
  EXPECT_EQ(b.list, (std::vector<GpuMask>{Gpus({0}), Gpus({1}), Gpus({1})}));
  EXPECT_EQ(ParseGpuBind("mask_gpu:0x3,c")->list, (std::vector<GpuMask>{0x3, 0xc}));
  EXPECT_EQ(ParseGpuBind("per_task:2")->gpus_per_task, 2);
  EXPECT_EQ(ParseGpuBind("verbose,per_task:1")->type, GpuBindType::kPerTask);
  b = ParseGpuBind("single:2").value();
  EXPECT_EQ(b.type, GpuBindType::kSingle);
  EXPECT_EQ(b.tasks_per_gpu, 2);
  for (const char* bad :
       {"single:0", "single:", "map_gpu:64", "nearest", "closest,none", "mask_gpu:zz",
        "per_task:0", "per_task:x", "per_task"}) {
    StatusOr<GpuBind> g = ParseGpuBind(bad);
    ASSERT_FALSE(g.ok()) << bad;
    EXPECT_EQ(g.status().message().rfind(std::string("Invalid --gpu-bind argument: ") + bad, 0), 0u)
        << g.status().message();
  }
}

TEST(ParseSocketDistribution, SecondLevel) {
  EXPECT_EQ(ParseSocketDistribution("block:block").value(), SocketDistribution::kBlock);
  EXPECT_EQ(ParseSocketDistribution("cyclic:fcyclic").value(), SocketDistribution::kFcyclic);
  EXPECT_EQ(ParseSocketDistribution("block").value(), SocketDistribution::kCyclic);
  EXPECT_EQ(ParseSocketDistribution("*:*").value(), SocketDistribution::kCyclic);
  EXPECT_EQ(ParseSocketDistribution("plane=4:block:cyclic,Pack").value(),
            SocketDistribution::kBlock);
  for (const char* bad :
       {"block:bogus", "diagonal", "block:cyclic,Packed", "plane=0", "a:b:c:d", ""}) {
    StatusOr<SocketDistribution> d = ParseSocketDistribution(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().message().rfind("Invalid --distribution specification", 0), 0u);
  }
}

// ---- CPU binding ----

TEST(BindCpus, NoMultithreadBindsOneThreadOfEachCore) {
  BindNode node;
  node.name = "t1";
  node.cpus = CpuTopology::Uniform(2, 4, 2);  // cores {0,8} {1,9} ... {7,15}
  StepOnNode step = Step(Range(0, 15), 0, 2, "");
  step.cpus_per_task = 4;
  // Every thread: two cores' four threads per task.
  auto all = BindTasks(node, step);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->cpu_bind, CpuBindType::kCores);
  EXPECT_EQ(TaskCpus(*all)[0].ToList(), "0-1,8-9");
  // --hint=nomultithread: four cores, one thread of each, bound to threads.
  step.threads_per_core = StepThreadsPerCore("nomultithread", std::nullopt);
  auto one = BindTasks(node, step);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->cpu_bind, CpuBindType::kThreads);
  EXPECT_EQ(TaskCpus(*one)[0].ToList(), "0-3");
  EXPECT_EQ(TaskCpus(*one)[1].ToList(), "4-7");
  // --cpu-bind=none binds nothing, hint or not.
  StepOnNode none = step;
  none.cpu_bind = ParseCpuBind("none").value();
  auto unbound = BindTasks(node, none);
  ASSERT_TRUE(unbound.ok()) << unbound.status();
  EXPECT_EQ(TaskCpus(*unbound)[0].ToList(), "0-15");
  // Too few cores for that: every thread after all.
  step.cpus = Range(0, 3);
  step.cpus |= Range(8, 11);
  step.task_ids = Ids(3);
  step.cpus_per_task = 2;
  step.cpu_bind = ParseCpuBind("threads").value();
  auto few = BindTasks(node, step);
  ASSERT_TRUE(few.ok()) << few.status();
  EXPECT_EQ(few->tasks.size(), 3u);
  EXPECT_EQ(TaskCpus(*few)[0].count(), 2);
}

TEST(Hint, ValuesAndThreadsPerCore) {
  EXPECT_TRUE(ValidateHint("compute_bound").ok());
  EXPECT_EQ(ValidateHint("fast").message(),
            "Invalid --hint argument: fast (use nomultithread, multithread, compute_bound or "
            "memory_bound)");
  EXPECT_EQ(StepThreadsPerCore("multithread", std::nullopt), 0);
  EXPECT_EQ(StepThreadsPerCore("memory_bound", std::nullopt), 1);
  EXPECT_EQ(StepThreadsPerCore("", 2), 2);
}

TEST(BindCpus, EightTasksOnAWholeDgxGetACoreAndTheGpusOfTheirSocket) {
  const BindNode node = DgxA100();
  StepOnNode step = Step(Range(0, 255), Gpus({0, 1, 2, 3, 4, 5, 6, 7}), 8, "cores", "closest");
  StepBinding b = BindTasks(node, step).value();
  ASSERT_EQ(b.tasks.size(), 8u);
  EXPECT_EQ(b.cpu_bind, CpuBindType::kCores);
  for (int32_t i = 0; i < 8; ++i) {
    const TaskBinding& t = b.tasks[i];
    const int32_t socket = i % 2;  // cyclic: tasks alternate sockets
    const int32_t core = socket * 64 + i / 2;
    EXPECT_EQ(t.cpus, Cpus({core, core + 128})) << "task " << i;
    EXPECT_EQ(t.gpus, socket == 0 ? Gpus({0, 1, 2, 3}) : Gpus({4, 5, 6, 7})) << "task " << i;
    EXPECT_EQ(t.cuda_visible_devices, socket == 0 ? "0,1,2,3" : "4,5,6,7");
  }
}

TEST(BindCpus, EightTasksOneGpuEachGetTheirOwnGpuOnTheirSocket) {
  StepOnNode step = Step(Range(0, 255), Gpus({0, 1, 2, 3, 4, 5, 6, 7}), 8, "cores", "closest");
  step.gpus_per_task = 1;
  StepBinding b = BindTasks(DgxA100(), step).value();
  GpuMask seen = 0;
  for (int32_t i = 0; i < 8; ++i) {
    const TaskBinding& t = b.tasks[i];
    ASSERT_EQ(GpuCount(t.gpus), 1);
    const int32_t gpu = std::countr_zero(t.gpus);
    EXPECT_EQ(gpu / 4, i % 2) << "task " << i << " got GPU " << gpu;
    seen |= t.gpus;
  }
  EXPECT_EQ(seen, 0xffu);
  EXPECT_EQ(Visible(b), (std::vector<std::string>{"0", "4", "1", "5", "2", "6", "3", "7"}));
}

TEST(BindCpus, BlockFillsTheFirstSocketFirst) {
  StepOnNode step = Step(Range(0, 15), 0, 4, "cores");
  step.distribution = SocketDistribution::kBlock;
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 8}), Cpus({1, 9}), Cpus({2, 10}), Cpus({3, 11})}));
}

TEST(BindCpus, CyclicKeepsAMultiCpuTaskOnOneSocket) {
  StepOnNode step = Step(Range(0, 15), 0, 2, "cores");
  step.cpus_per_task = 4;  // two cores each
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 1, 8, 9}), Cpus({4, 5, 12, 13})}));
}

TEST(BindCpus, FcyclicSpreadsEachTasksCpusOverTheSockets) {
  StepOnNode step = Step(Range(0, 15), 0, 2, "threads");
  step.cpus_per_task = 2;
  step.distribution = SocketDistribution::kFcyclic;
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 4}), Cpus({8, 12})}));
}

TEST(BindCpus, CyclicMovesATaskToASocketWithRoomAndSpillsWhenNoneHas) {
  // Socket 0 holds one core, socket 1 three; tasks of two cores each.
  StepOnNode step = Step(Cpus({0, 8, 4, 12, 5, 13, 6, 14}), 0, 2, "cores");
  step.cpus_per_task = 4;
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({4, 5, 12, 13}), Cpus({0, 6, 8, 14})}));
}

TEST(BindCpus, FcyclicTakesWholeCoresFromAlternateSockets) {
  StepOnNode step = Step(Range(0, 15), 0, 2, "cores");
  step.cpus_per_task = 4;
  step.distribution = SocketDistribution::kFcyclic;
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 4, 8, 12}), Cpus({1, 5, 9, 13})}));
}

TEST(BindCpus, CoresRoundUpToWholeCores) {
  StepOnNode step = Step(Range(0, 15), 0, 2, "cores");
  step.cpus_per_task = 3;
  step.distribution = SocketDistribution::kBlock;
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 1, 8, 9}), Cpus({2, 3, 10, 11})}));
}

TEST(BindCpus, ThreadsTakeSingleHardwareThreadsCoresTakeWholeCores) {
  StepOnNode step = Step(Range(0, 15), 0, 3, "threads");
  step.distribution = SocketDistribution::kBlock;
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0}), Cpus({8}), Cpus({1})}));
  step.cpu_bind = ParseCpuBind("cores").value();
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 8}), Cpus({1, 9}), Cpus({2, 10})}));
}

TEST(BindCpus, MoreTasksThanCoresShareCoresThreadByThread) {
  // The step holds two cores (four threads) and runs four tasks bound to cores.
  StepOnNode step = Step(Cpus({0, 1, 8, 9}), 0, 4, "cores");
  step.distribution = SocketDistribution::kBlock;
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 8}), Cpus({0, 8}), Cpus({1, 9}), Cpus({1, 9})}));
}

TEST(BindCpus, AskingMoreCpusThanHeldIsAnErrorUnlessOvercommitted) {
  StepOnNode step = Step(Cpus({0, 1, 8, 9}), 0, 5, "threads");
  StatusOr<StepBinding> b = BindTasks(SmallDgx(), step);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("5 tasks of 1 CPUs need 5 CPUs but the step holds 4"),
            std::string::npos)
      << b.status().message();
  EXPECT_NE(b.status().message().find("--overcommit"), std::string::npos);
  step.overcommit = true;
  step.distribution = SocketDistribution::kBlock;
  std::vector<CpuSet> cpus = TaskCpus(BindTasks(SmallDgx(), step).value());
  ASSERT_EQ(cpus.size(), 5u);
  EXPECT_EQ(cpus[4], cpus[0]);  // the fifth task wraps around
  step.cpu_bind = ParseCpuBind("cores").value();
  step.overcommit = false;
  step.cpus_per_task = 2;
  step.task_ids = Ids(3);
  EXPECT_FALSE(BindTasks(SmallDgx(), step).ok());
}

TEST(BindCpus, SocketsAndLdomsWidenToTheAllocatedCpusThere) {
  StepOnNode step = Step(Range(0, 15), 0, 2, "sockets");
  EXPECT_EQ(
      TaskCpus(BindTasks(SmallDgx(), step).value()),
      (std::vector<CpuSet>{Cpus({0, 1, 2, 3, 8, 9, 10, 11}), Cpus({4, 5, 6, 7, 12, 13, 14, 15})}));
  // Four NUMA nodes (two per socket) of two cores; only part of socket 0 is held.
  BindNode nps2 = SmallDgx();
  nps2.cpus = CpuTopology::Uniform(2, 4, 2, 2);
  step = Step(Cpus({0, 2, 3, 8, 10, 11}), 0, 2, "ldoms");
  step.distribution = SocketDistribution::kBlock;
  EXPECT_EQ(TaskCpus(BindTasks(nps2, step).value()),
            (std::vector<CpuSet>{Cpus({0, 8}), Cpus({2, 3, 10, 11})}));
}

TEST(BindCpus, MapCpuAndMaskCpuCycleThroughTheirLists) {
  StepOnNode step = Step(Range(0, 15), 0, 5, "map_cpu:0,5");
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0}), Cpus({5}), Cpus({0}), Cpus({5}), Cpus({0})}));
  step = Step(Range(0, 15), 0, 3, "mask_cpu:0x3,0xf0");
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 1}), Cpus({4, 5, 6, 7}), Cpus({0, 1})}));
  EXPECT_EQ(BindTasks(SmallDgx(), step)->cpu_bind, CpuBindType::kMaskCpu);
}

TEST(BindCpus, ListsNamingCpusOutsideTheStepAreErrors) {
  StepOnNode step = Step(Range(0, 3), 0, 2, "map_cpu:0,5");
  StatusOr<StepBinding> b = BindTasks(SmallDgx(), step);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("local task 1 is given CPUs 5"), std::string::npos)
      << b.status().message();
  EXPECT_NE(b.status().message().find("0-3"), std::string::npos);
  step = Step(Range(0, 3), 0, 1, "mask_cpu:0x1f");
  EXPECT_FALSE(BindTasks(SmallDgx(), step).ok());
  step = Step(Range(0, 3), 0, 1, "map_ldom:1");  // NUMA node 1 holds none of the step's CPUs
  b = BindTasks(SmallDgx(), step);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("NUMA node 1"), std::string::npos);
}

TEST(BindCpus, MapLdomAndMaskLdomGiveTheHeldCpusOfThoseNumaNodes) {
  StepOnNode step = Step(Cpus({0, 1, 4, 5}), 0, 3, "map_ldom:1,0");
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({4, 5}), Cpus({0, 1}), Cpus({4, 5})}));
  step = Step(Cpus({0, 1, 4, 5}), 0, 1, "mask_ldom:0x3");
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 1, 4, 5})}));
}

TEST(BindCpus, RankTakesTheHeldCpusInOrder) {
  StepOnNode step = Step(Cpus({2, 3, 6, 7}), 0, 2, "rank");
  step.cpus_per_task = 2;
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({2, 3}), Cpus({6, 7})}));
}

TEST(BindCpus, NoneGivesEveryTaskAllTheStepsCpus) {
  StepOnNode step = Step(Cpus({0, 1, 8}), 0, 2, "none");
  EXPECT_EQ(TaskCpus(BindTasks(SmallDgx(), step).value()),
            (std::vector<CpuSet>{Cpus({0, 1, 8}), Cpus({0, 1, 8})}));
}

TEST(BindCpus, AutoBindingMatchesTheTasksToCoresThreadsOrSockets) {
  // Four tasks in four whole cores: bound to cores.
  StepOnNode step = Step(Cpus({0, 1, 4, 5, 8, 9, 12, 13}), 0, 4, "");
  StepBinding b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(b.cpu_bind, CpuBindType::kCores);
  EXPECT_EQ(b.tasks[1].cpus, Cpus({4, 12}));
  // Eight tasks in the same eight threads: bound to threads.
  step.task_ids = Ids(8);
  EXPECT_EQ(BindTasks(SmallDgx(), step)->cpu_bind, CpuBindType::kThreads);
  // Two tasks on a whole node: one socket each.
  step = Step(Range(0, 15), 0, 2, "");
  EXPECT_EQ(BindTasks(SmallDgx(), step)->cpu_bind, CpuBindType::kSockets);
  // Three tasks match nothing: the configured default, here none.
  step.task_ids = Ids(3);
  b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(b.cpu_bind, CpuBindType::kNone);
  EXPECT_EQ(b.tasks[2].cpus, Range(0, 15));
  step.default_cpu_bind = CpuBindType::kCores;
  EXPECT_EQ(BindTasks(SmallDgx(), step)->tasks[2].cpus, Cpus({1, 9}));
}

TEST(BindCpus, EveryTypeAndDistributionStaysInsideTheStep) {
  const BindNode node = SmallDgx();
  const CpuSet held = Cpus({1, 2, 3, 6, 9, 10, 11, 14});
  for (const char* bind : {"threads", "cores", "sockets", "ldoms", "rank", "none", ""}) {
    for (SocketDistribution d :
         {SocketDistribution::kBlock, SocketDistribution::kCyclic, SocketDistribution::kFcyclic}) {
      for (int32_t ntasks : {1, 3, 8}) {
        StepOnNode step = Step(held, Gpus({1, 5}), ntasks, bind, "closest");
        step.distribution = d;
        StepBinding b = BindTasks(node, step).value();
        ASSERT_EQ(b.tasks.size(), static_cast<size_t>(ntasks));
        for (const TaskBinding& t : b.tasks) {
          CpuSet outside = t.cpus;
          outside.Subtract(held);
          EXPECT_FALSE(t.cpus.empty()) << bind;
          EXPECT_TRUE(outside.empty()) << bind << " task " << t.local_id;
          EXPECT_NE(t.gpus, 0u);
          EXPECT_EQ(t.gpus & ~Gpus({1, 5}), 0u);
        }
      }
    }
  }
}

// ---- GPU binding ----

TEST(BindGpus, TwoTasksWithTwoGpusEach) {
  // The job holds GPUs 0, 1, 4 and 5 and four cores on each socket.
  StepOnNode step = Step(Range(0, 15), Gpus({0, 1, 4, 5}), 2, "cores", "closest");
  step.gpus_per_task = 2;
  StepBinding b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(b.tasks[0].gpus, Gpus({0, 1}));
  EXPECT_EQ(b.tasks[1].gpus, Gpus({4, 5}));
  EXPECT_EQ(Visible(b), (std::vector<std::string>{"0,1", "4,5"}));
  step.constrain_devices = true;  // the step sees its four GPUs as 0-3
  EXPECT_EQ(Visible(BindTasks(SmallDgx(), step).value()), (std::vector<std::string>{"0,1", "2,3"}));
  // Without --gpu-bind, --gpus-per-task still gives each task its own GPUs.
  step.gpu_bind = GpuBind{};
  EXPECT_EQ(BindTasks(SmallDgx(), step)->tasks[1].gpus, Gpus({4, 5}));
  // --gpu-bind=none: every task sees all of the step's GPUs.
  step.gpu_bind = ParseGpuBind("none").value();
  EXPECT_EQ(BindTasks(SmallDgx(), step)->tasks[1].gpus, Gpus({0, 1, 4, 5}));
}

TEST(BindGpus, GpusPerTaskBeyondTheClosestTakeTheLeastUsed) {
  // Four tasks all on socket 0, one GPU each: two close GPUs, then the far ones.
  StepOnNode step = Step(Range(0, 15), Gpus({0, 1, 4, 5}), 4, "cores", "closest");
  step.distribution = SocketDistribution::kBlock;
  step.gpus_per_task = 1;
  StepBinding b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(Visible(b), (std::vector<std::string>{"0", "1", "4", "5"}));
  step.gpus_per_task = 5;
  StatusOr<StepBinding> bad = BindTasks(SmallDgx(), step);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--gpus-per-task=5: the step holds 4 GPUs"),
            std::string::npos);
}

TEST(BindGpus, ATaskOfSeveralGpusKeepsThemUnderOnePcieSwitch) {
  // GPUs 2 and 3 share a PCIe switch, GPU 0 does not.
  StepOnNode step = Step(Range(0, 15), Gpus({0, 2, 3}), 1, "cores", "closest");
  step.gpus_per_task = 2;
  EXPECT_EQ(BindTasks(SmallDgx(), step)->tasks[0].gpus, Gpus({2, 3}));
  step.gpus = Gpus({1, 2, 3, 4});  // closest first: the three on NUMA node 0, 2 and 3 paired
  EXPECT_EQ(BindTasks(SmallDgx(), step)->tasks[0].gpus, Gpus({2, 3}));
}

TEST(BindGpus, MapGpuIndexesByLocalTaskRelativeWhenConfined) {
  StepOnNode step = Step(Range(0, 15), Gpus({2, 3, 6, 7}), 3, "cores", "map_gpu:1,0");
  step.constrain_devices = true;
  StepBinding b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(b.tasks[0].gpus, Gpus({3}));
  EXPECT_EQ(b.tasks[1].gpus, Gpus({2}));
  EXPECT_EQ(b.tasks[2].gpus, Gpus({3}));
  EXPECT_EQ(Visible(b), (std::vector<std::string>{"1", "0", "1"}));
  // Without confinement the ids are the node's: GPU 1 is not the step's.
  step.constrain_devices = false;
  StatusOr<StepBinding> bad = BindTasks(SmallDgx(), step);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("indices 2,3,6,7"), std::string::npos)
      << bad.status().message();
  step.gpu_bind = ParseGpuBind("map_gpu:6,2").value();
  EXPECT_EQ(Visible(BindTasks(SmallDgx(), step).value()),
            (std::vector<std::string>{"6", "2", "6"}));
  step.constrain_devices = true;
  step.gpu_bind = ParseGpuBind("map_gpu:4").value();  // only 0-3 exist in the step
  EXPECT_FALSE(BindTasks(SmallDgx(), step).ok());
}

TEST(BindGpus, MaskGpu) {
  StepOnNode step = Step(Range(0, 15), Gpus({2, 3, 6, 7}), 2, "cores", "mask_gpu:0x3,0xc");
  step.constrain_devices = true;
  StepBinding b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(b.tasks[0].gpus, Gpus({2, 3}));
  EXPECT_EQ(b.tasks[1].gpus, Gpus({6, 7}));
  EXPECT_EQ(Visible(b), (std::vector<std::string>{"0,1", "2,3"}));
}

TEST(BindGpus, SingleDealsTasksSharingASocketOntoItsGpus) {
  StepOnNode step = Step(Range(0, 15), Gpus({0, 1, 2, 3, 4, 5, 6, 7}), 8, "cores", "single:1");
  StepBinding b = BindTasks(SmallDgx(), step).value();
  // Cyclic: even tasks on socket 0, odd on socket 1, each on its own GPU there.
  EXPECT_EQ(Visible(b), (std::vector<std::string>{"0", "4", "1", "5", "2", "6", "3", "7"}));
  step.gpu_bind = ParseGpuBind("single:2").value();
  EXPECT_EQ(Visible(BindTasks(SmallDgx(), step).value()),
            (std::vector<std::string>{"0", "4", "0", "4", "1", "5", "1", "5"}));
}

TEST(BindGpus, PerTaskDealsTheStepsGpusInOrder) {
  StepOnNode step = Step(Range(0, 15), Gpus({1, 2, 5, 6}), 4, "cores", "per_task:2");
  StepBinding b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(b.tasks[0].gpus, Gpus({1, 2}));
  EXPECT_EQ(b.tasks[1].gpus, Gpus({5, 6}));
  EXPECT_EQ(b.tasks[2].gpus, Gpus({1, 2}));  // round again
  EXPECT_EQ(Visible(b), (std::vector<std::string>{"1,2", "5,6", "1,2", "5,6"}));
  step.gpu_bind = ParseGpuBind("per_task:5").value();
  const std::string why(BindTasks(SmallDgx(), step).status().message());
  EXPECT_NE(why.find("--gpu-bind=per_task:5: the step holds 4 GPUs on node"), std::string::npos)
      << why;
}

TEST(BindGpus, ClosestFallsBackToAllGpusWhenNoneIsNear) {
  // Tasks on socket 1 only, GPUs only on NUMA node 0.
  StepOnNode step = Step(Cpus({4, 5}), Gpus({0, 1}), 2, "threads", "closest");
  EXPECT_EQ(BindTasks(SmallDgx(), step)->tasks[0].gpus, Gpus({0, 1}));
}

TEST(BindGpus, CpuOnlyNodeHasNoGpusAndNoCudaVariable) {
  StepOnNode step = Step(Range(0, 7), 0, 4, "cores", "closest");
  step.task_ids = Ids(4, 12);
  StepBinding b = BindTasks(CpuOnly(), step).value();
  ASSERT_EQ(b.tasks.size(), 4u);
  EXPECT_EQ(b.tasks[3].task_id, 15);
  EXPECT_EQ(b.tasks[3].local_id, 3);
  EXPECT_EQ(b.tasks[3].cpus, Cpus({3}));
  EXPECT_EQ(b.tasks[3].gpus, 0u);
  EXPECT_EQ(b.tasks[3].cuda_visible_devices, "");
  step.gpus_per_task = 1;
  EXPECT_FALSE(BindTasks(CpuOnly(), step).ok());
  step.gpus_per_task = 0;
  step.gpu_bind = ParseGpuBind("map_gpu:0").value();
  EXPECT_FALSE(BindTasks(CpuOnly(), step).ok());
}

TEST(BindTasks, RejectsAStepOutsideTheNode) {
  EXPECT_FALSE(BindTasks(CpuOnly(), Step(Range(0, 8), 0, 1, "cores")).ok());
  EXPECT_FALSE(BindTasks(CpuOnly(), Step(CpuSet(), 0, 1, "cores")).ok());
  EXPECT_FALSE(BindTasks(CpuOnly(), Step(Range(0, 7), Gpus({0}), 1, "cores")).ok());
}

// ---- verbose lines ----

TEST(VerboseLines, CpuBindAsSlurmPrintsIt) {
  StepOnNode step = Step(Range(0, 255), Gpus({0, 1, 2, 3, 4, 5, 6, 7}), 2, "verbose,cores");
  step.task_ids = {10, 11};
  StepBinding b = BindTasks(DgxA100(), step).value();
  EXPECT_EQ(
      CpuBindVerboseLine(b, b.tasks[0], "dgx01", 4242),
      "cpu-bind-cores=MASK - dgx01, task 10  0 [4242]: mask 0x1" + std::string(31, '0') + "1 set");
  EXPECT_EQ(CpuBindVerboseLine(b, b.tasks[1], "dgx01", 7),
            "cpu-bind-cores=MASK - dgx01, task 11  1 [7]: mask 0x1" + std::string(31, '0') + "1" +
                std::string(16, '0') + " set");
  step = Step(Range(0, 15), 0, 1, "map_cpu:3");
  b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(CpuBindVerboseLine(b, b.tasks[0], "g1", 99),
            "cpu-bind=MAP  - g1, task  0  0 [99]: mask 0x8 set");
  step = Step(Range(0, 15), 0, 1, "none");
  b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(CpuBindVerboseLine(b, b.tasks[0], "g1", 1),
            "cpu-bind=NONE - g1, task  0  0 [1]: mask 0xffff");
  EXPECT_EQ(HexMask(CpuSet()), "0");
  EXPECT_EQ(HexMask(Cpus({4})), "10");
}

TEST(VerboseLines, GpuBindAsSlurmPrintsIt) {
  StepOnNode step = Step(Range(0, 15), Gpus({0, 1, 2, 3}), 2, "cores", "verbose,map_gpu:1,3");
  step.constrain_devices = true;
  StepBinding b = BindTasks(SmallDgx(), step).value();
  EXPECT_EQ(GpuBindVerboseLine(step, b.tasks[1]),
            "gpu-bind: usable_gres=0x8; bit_alloc=0xf; local_inx=4; global_list=3; local_list=3");
}

}  // namespace
}  // namespace loom::model
